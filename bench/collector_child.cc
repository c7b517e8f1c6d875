#include "bench/collector_child.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include "common/daemon/ready_file.h"
#include "fmt/format.h"

namespace drip::bench {

ProcFigures ReadProcFigures(pid_t pid) {
  ProcFigures f;
  {
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 > stat.size()) return f;
    // Fields after the parenthesised comm start at 3; utime and stime are 14 and 15.
    std::istringstream rest(stat.substr(paren + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i >= 14) ticks += std::stod(field);
    }
    f.cpu_seconds = ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) f.rss_bytes = std::stoull(line.substr(6)) * 1024;
    if (line.rfind("VmHWM:", 0) == 0) f.hwm_bytes = std::stoull(line.substr(6)) * 1024;
    if (line.rfind("Threads:", 0) == 0) f.threads = std::stoi(line.substr(8));
  }
  return f;
}

uint64_t DirectoryBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const uintmax_t size = it->file_size(size_ec);
      if (!size_ec) total += size;
    }
  }
  return total;
}

std::string ScrapeMetrics(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return "";
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr) != 1) return "";
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  std::string text;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    const std::string request =
        fmt::format("GET /metrics HTTP/1.0\r\nHost: {}\r\nConnection: close\r\n\r\n", address);
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buf[65536];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  const size_t body = text.find("\r\n\r\n");
  return body == std::string::npos ? "" : text.substr(body + 4);
}

double MetricValue(const std::string& exposition, const std::string& name,
                   const std::string& labels) {
  double sum = 0;
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name, 0) != 0 || line.size() <= name.size()) continue;
    const char next = line[name.size()];
    if (next != ' ' && next != '{') continue;  // another metric sharing the prefix
    if (!labels.empty() && line.find(labels) == std::string::npos) continue;
    const size_t space = line.rfind(' ');
    sum += std::stod(line.substr(space + 1));
  }
  return sum;
}

std::optional<CollectorChild> CollectorChild::Start(const std::string& binary,
                                                    const std::string& dir, bool sync_writes,
                                                    int write_threads,
                                                    const std::string& tls_section) {
  CollectorChild child;
  child.store_dir_ = dir + "/db";
  child.log_ = dir + "/collector.log";
  const std::string config = dir + "/collector.yaml";
  const std::string ready = dir + "/collector.ready";
  // A collector started again in the same directory must not be taken for ready on its
  // predecessor's file (and addresses).
  std::filesystem::remove(ready);
  std::ofstream(config) << fmt::format(
      "grpc:\n  listen_address: \"127.0.0.1:0\"\n"
      "storage:\n  path: \"{}\"\n  sync_writes: {}\n{}"
      "metrics:\n  listen_address: \"127.0.0.1:0\"\n"
      "log:\n  level: info\n{}",
      child.store_dir_, sync_writes ? "true" : "false",
      write_threads > 0 ? fmt::format("  write_threads: {}\n", write_threads) : "", tls_section);
  child.pid_ = fork();
  if (child.pid_ < 0) {
    std::perror("fork");
    return std::nullopt;
  }
  if (child.pid_ == 0) {
    const int log = open(child.log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    execl(binary.c_str(), binary.c_str(), "--config", config.c_str(), "--ready-file", ready.c_str(),
          nullptr);
    _exit(127);
  }
  for (int i = 0; i < 1200; ++i) {
    absl::StatusOr<std::map<std::string, std::string>> fields = ReadReadyFile(ready);
    if (fields.ok()) {
      child.grpc_ = (*fields)["grpc"];
      child.metrics_ = (*fields)["metrics"];
      return child;
    }
    int status = 0;
    if (waitpid(child.pid_, &status, WNOHANG) == child.pid_) {
      child.pid_ = -1;
      std::fprintf(stderr, "drip-collector exited at start (status %d); see %s\n", status,
                   child.log_.c_str());
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::fprintf(stderr, "drip-collector wrote no ready file in 60 s; see %s\n", child.log_.c_str());
  return std::nullopt;  // the destructor stops it
}

CollectorChild::CollectorChild(CollectorChild&& other) noexcept
    : pid_(other.pid_),
      grpc_(std::move(other.grpc_)),
      metrics_(std::move(other.metrics_)),
      store_dir_(std::move(other.store_dir_)),
      log_(std::move(other.log_)),
      shutdown_seconds_(other.shutdown_seconds_) {
  other.pid_ = -1;
}

CollectorChild::~CollectorChild() { Stop(); }

int CollectorChild::Stop() {
  if (pid_ <= 0) return -1;
  const auto start = std::chrono::steady_clock::now();
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  shutdown_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  pid_ = -1;
  return status;
}

}  // namespace drip::bench
