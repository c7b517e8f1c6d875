// EtcdCluster: a real etcd cluster (Debian's etcd-server) of N members on loopback, each
// with its own client and peer ports and data directory, for the collectors' cluster
// tests. Members are ChildProcesses: they die with the test.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/integration/child_process.h"

namespace drip::testing {

class EtcdCluster {
 public:
  // Starts `members` etcd processes forming one cluster under `dir`, and waits until a
  // key can be written through every member. UNAVAILABLE (with the logs) if it cannot.
  static absl::StatusOr<std::unique_ptr<EtcdCluster>> Start(int members, const std::string& dir);

  // host:port of each member's client port, in member order.
  const std::vector<std::string>& endpoints() const { return endpoints_; }
  // `etcd_endpoints:` as a YAML flow list.
  std::string EndpointsYaml() const;
  void Kill(size_t member);
  std::string Logs() const;

 private:
  EtcdCluster() = default;
  std::vector<std::string> endpoints_;
  std::vector<std::unique_ptr<ChildProcess>> members_;
};

// A TCP port on 127.0.0.1 free a moment ago (for servers that cannot bind port 0).
absl::StatusOr<int> FreeLoopbackPort();

}  // namespace drip::testing
