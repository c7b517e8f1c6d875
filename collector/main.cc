// drip-collector: receives agents' sample streams, stores them, and serves the query
// API and /metrics. This file only parses flags, loads the config and runs
// CollectorServer until SIGTERM or SIGINT; see docs/collector.md.
//
// Exit codes: 0 clean shutdown, 1 runtime failure (store or address unusable),
// 2 bad flags or config.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "collector/collector_config.h"
#include "collector/collector_server.h"
#include "common/base/exit_codes.h"
#include "common/daemon/command_line.h"
#include "common/daemon/listen_address.h"
#include "common/daemon/logging.h"
#include "common/daemon/ready_file.h"
#include "common/daemon/shutdown_signal.h"
#include "common/daemon/systemd_notifier.h"
#include "common/rpc/grpc_logging.h"
#include "common/version.h"
#include "fmt/format.h"

namespace {

using drip::kExitFailure;
using drip::kExitOk;
using drip::kExitUsage;

// The maintenance loop and the leak pipeline go round every 5 s; a retention pass over a
// large store, or a pass over a large fleet, can hold one for a while, but not for this
// long unless something hangs.
constexpr std::chrono::minutes kLoopStallLimit(2);

// Bad flags or config: one line on stderr.
int Usage(const std::string& message) {
  std::fprintf(stderr, "drip-collector: %s\n", message.c_str());
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists, so that every thread inherits the mask and the signal
  // reaches only WaitForShutdownSignal.
  drip::BlockShutdownSignals();

  CLI::App app{"drip-collector: stores Drip agents' memory samples and serves the query API"};
  app.set_version_flag("--version", drip::kVersion);
  std::string config_path;
  std::optional<std::string> listen;
  std::optional<std::string> storage_path;
  std::optional<std::string> metrics_listen;
  std::string ready_file;
  app.add_option("--config", config_path, "collector YAML config (docs/collector.md)")->required();
  app.add_option("--listen", listen, "gRPC HOST:PORT for agents and queries (grpc.listen_address)");
  app.add_option("--storage-path", storage_path, "store directory (storage.path)");
  app.add_option("--metrics-listen", metrics_listen,
                 "/metrics HOST:PORT, empty to disable (metrics.listen_address)");
  app.add_option("--ready-file", ready_file,
                 "once serving, write the bound addresses here as JSON");
  if (std::optional<int> ended = drip::ParseCommandLine(app, argc, argv, "drip-collector"))
    return *ended;

  absl::StatusOr<drip::collector::CollectorConfig> config =
      drip::collector::CollectorConfig::FromFile(config_path);
  if (!config.ok()) return Usage(std::string(config.status().message()));
  if (listen) {
    if (auto a = drip::ListenAddress::Parse(*listen); !a.ok()) {
      return Usage("--listen: " + std::string(a.status().message()));
    }
    config->grpc.listen_address = *listen;
  }
  if (storage_path) {
    if (storage_path->empty()) return Usage("--storage-path: must not be empty");
    config->storage.path = *storage_path;
  }
  if (metrics_listen) {
    if (!metrics_listen->empty()) {
      if (auto a = drip::ListenAddress::Parse(*metrics_listen); !a.ok()) {
        return Usage("--metrics-listen: " + std::string(a.status().message()));
      }
    }
    config->metrics.listen_address = *metrics_listen;
  }
  if (absl::Status valid = config->Validate(); !valid.ok()) {
    return Usage(std::string(valid.message()));
  }
  if (absl::Status logging = drip::InitLogging(config->log.level); !logging.ok()) {
    return Usage("log.level: " + std::string(logging.message()));
  }
  drip::RouteGrpcLogs();
  auto log = drip::Logger("collector");

  drip::collector::CollectorServer server(*config);
  absl::StatusOr<drip::collector::ServingAddresses> bound = server.Start();
  if (!bound.ok()) {
    log->error("cannot start: {}", std::string(bound.status().message()));
    return kExitFailure;
  }
  if (!ready_file.empty()) {
    std::map<std::string, std::string> fields = {{"grpc", bound->grpc}};
    if (!bound->metrics.empty()) fields["metrics"] = bound->metrics;
    if (absl::Status written = drip::WriteReadyFile(ready_file, fields); !written.ok()) {
      log->error("cannot write ready file: {}", std::string(written.message()));
      server.Shutdown();
      return kExitFailure;
    }
  }

  // Under systemd (Type=notify): READY=1 now that the ports are bound and the ready file
  // written; with WatchdogSec=, pings only while both background loops keep going round,
  // so a hung collector gets restarted. A no-op elsewhere.
  drip::SystemdNotifier notifier("collector");
  notifier.Ready(fmt::format("serving agents and queries on {}", bound->grpc));
  notifier.StartWatchdog([&server] {
    return std::chrono::steady_clock::now() - server.last_round() < kLoopStallLimit;
  });

  int signal = drip::WaitForShutdownSignal();
  log->info("received {}; shutting down", signal == SIGTERM ? "SIGTERM" : "SIGINT");
  // Before Shutdown(): stops the watchdog thread, which reads the server's loops.
  notifier.Stopping();
  server.Shutdown();
  log->info("stopped");
  return kExitOk;
}
