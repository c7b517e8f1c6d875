// Logging for Drip's daemons and tools: one named spdlog logger per component
// ("agent", "collector", "analyzer", "diagnoser", "bpf", "cli"), all writing to stderr
// in a journald-friendly format (no timestamps when run under systemd, which adds them).
// What each level means is written down in docs/logging.md.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace drip {

// Sets the global level ("trace", "debug", "info", "warn", "error", "off") and format,
// and routes gRPC's own log messages to the "grpc" logger.
// Safe to call more than once; the last call wins.
absl::Status InitLogging(std::string_view level);

// For command-line tools whose errors reach the user as statuses: gRPC's own log lines
// (which InitLogging otherwise routes to the "grpc" logger) would only repeat them.
void SilenceGrpcLogs();

// Returns the logger named `component`, creating it on first use. Thread-safe.
std::shared_ptr<spdlog::logger> Logger(const std::string& component);

}  // namespace drip
