#include "common/daemon/logging.h"

#include <cstdlib>
#include <mutex>

#include "spdlog/sinks/stdout_sinks.h"

namespace drip {
namespace {

std::mutex& LoggerMutex() {
  static std::mutex mu;
  return mu;
}

// Under systemd (JOURNAL_STREAM set) journald stamps time and unit itself, and reads
// the syslog-style "<N>" prefix as the priority; elsewhere humans want the time.
std::string Pattern() {
  if (std::getenv("JOURNAL_STREAM") != nullptr) return "%n %l: %v";
  return "%Y-%m-%dT%H:%M:%S.%e %n %l: %v";
}

}  // namespace

absl::Status InitLogging(std::string_view level) {
  spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  // from_str maps unknown names to "off"; only "off" itself may do so.
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError("log level '" + std::string(level) +
                                      "' is not one of trace, debug, info, warn, error, off");
  }
  std::lock_guard<std::mutex> lock(LoggerMutex());
  spdlog::set_level(parsed);
  spdlog::set_pattern(Pattern());
  return absl::OkStatus();
}

std::shared_ptr<spdlog::logger> Logger(const std::string& component) {
  std::lock_guard<std::mutex> lock(LoggerMutex());
  if (auto existing = spdlog::get(component)) return existing;
  auto logger = std::make_shared<spdlog::logger>(component,
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern(Pattern());
  logger->set_level(spdlog::get_level());
  spdlog::register_logger(logger);
  return logger;
}

}  // namespace drip
