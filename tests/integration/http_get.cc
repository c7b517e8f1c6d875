#include "tests/integration/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "fmt/format.h"

namespace drip::testing {

absl::StatusOr<std::string> HttpGet(const std::string& address, const std::string& path) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return absl::InvalidArgumentError("no port in " + address);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1)));
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError("not an IPv4 address: " + address);
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(fmt::format("connect {}: {}", address, std::strerror(err)));
  }
  const std::string request = fmt::format("GET {} HTTP/1.0\r\nHost: {}\r\n\r\n", path, address);
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("write failed");
  }
  std::string response;
  char buf[16384];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
    response.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.compare(0, 12, "HTTP/1.1 200") != 0 &&
      response.compare(0, 12, "HTTP/1.0 200") != 0) {
    return absl::UnavailableError("GET " + path + ": " + response.substr(0, response.find('\r')));
  }
  return body == std::string::npos ? "" : response.substr(body + 4);
}

absl::StatusOr<double> MetricValue(const std::string& metrics, const std::string& series_prefix) {
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#' || line.rfind(series_prefix, 0) != 0) continue;
    const size_t space = line.rfind(' ');
    return std::strtod(line.c_str() + space + 1, nullptr);
  }
  return absl::NotFoundError("no series " + series_prefix);
}

}  // namespace drip::testing
