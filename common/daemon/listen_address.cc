#include "common/daemon/listen_address.h"

#include "common/base/strings.h"
#include "fmt/format.h"

namespace drip {

absl::StatusOr<ListenAddress> ListenAddress::Parse(std::string_view text) {
  auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("'{}' is not HOST:PORT ({})", text, why));
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return invalid("no port");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return invalid("an IPv6 host must be written in brackets, e.g. [::]:7070");
  }
  if (host.empty()) return invalid("empty host; use 0.0.0.0 to listen on every interface");
  int port = 0;
  if (!ParseNumber(port_text, &port) || port < 0 || port > 65535) {
    return invalid("port must be a number from 0 to 65535");
  }
  return ListenAddress{std::string(host), port};
}

std::string ListenAddress::LocalDialAddress(int bound_port) const {
  if (host == "0.0.0.0" || host == "::" || host == "localhost") {
    return fmt::format("127.0.0.1:{}", bound_port);
  }
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, bound_port);
  return fmt::format("{}:{}", host, bound_port);
}

}  // namespace drip
