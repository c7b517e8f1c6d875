// Logging for Drip's daemons and tools: one named spdlog logger per component that logs
// ("agent", "collector", "bpf", "grpc"; docs/logging.md lists them and what each level
// means), all writing to stderr in a journald-friendly format (no timestamps when run
// under systemd, which adds them). The analyzer and diagnoser are pure libraries and do
// not log: what they conclude, and why, is in their return values.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace drip {

// Sets the global level ("trace", "debug", "info", "warn", "error", "off") and format.
// Safe to call more than once; the last call wins. gRPC's own messages join these logs
// through RouteGrpcLogs() (common/rpc/grpc_logging.h).
absl::Status InitLogging(std::string_view level);

// Returns the logger named `component`, creating it on first use. Thread-safe.
std::shared_ptr<spdlog::logger> Logger(const std::string& component);

}  // namespace drip
