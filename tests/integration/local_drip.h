// LocalDrip: a real drip-collector (RocksDB in a temp dir, gRPC and metrics on
// ephemeral loopback ports) and a real drip-agent streaming to it, as integration tests
// and the demo run them. Binaries come from the build tree (paths compiled in).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tests/integration/child_process.h"

namespace drip::testing {

std::string CollectorBinary();
std::string AgentBinary();
std::string DripctlBinary();
std::string TestAllocBinary();
std::string LeakyExampleBinary();

class LocalDrip {
 public:
  LocalDrip();
  ~LocalDrip();

  // Starts the collector; on restart, reuses the storage dir and the gRPC port.
  absl::Status StartCollector();
  absl::Status StartAgent(const std::string& host, std::chrono::milliseconds interval);
  void KillCollector(int sig);

  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& metrics_address() const { return metrics_address_; }
  ChildProcess* collector() { return collector_.get(); }
  ChildProcess* agent() { return agent_.get(); }
  TempDir& dir() { return dir_; }

  // Runs dripctl against this collector.
  CommandOutput Dripctl(std::vector<std::string> args);
  // `dripctl series --json` parsed; an error carries dripctl's stderr.
  absl::StatusOr<nlohmann::json> Series(const std::string& host, const std::string& component);

  // Logs of both daemons, for failure messages.
  std::string Logs() const;

 private:
  TempDir dir_;
  std::unique_ptr<ChildProcess> collector_;
  std::unique_ptr<ChildProcess> agent_;
  std::string grpc_address_;
  std::string metrics_address_;
  int collector_starts_ = 0;
};

// The component the agent gives process `pid`, read from `drip-agent sample --once --json`.
absl::StatusOr<std::string> ComponentOfPid(int pid);

}  // namespace drip::testing
