// HostFacts: what the agent tells the collector about its host in Hello (kernel, OS,
// architecture, memory size, boot time), and SelfUsage: what the agent itself costs
// (CPU time, RSS), reported in AgentStatus so that the fleet can watch the watcher.
// Both read procfs under an injectable root so tests can use a fake tree.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace drip::agent {

struct HostFacts {
  std::string kernel;  // uname -r
  std::string os;      // PRETTY_NAME of os-release; "" when unknown
  std::string arch;    // uname -m
  uint64_t memory_total_bytes = 0;
  int64_t boot_time_ms = 0;

  // Fails only when /proc cannot be read at all; a missing os-release leaves os empty.
  static absl::StatusOr<HostFacts> Read(const std::string& proc_root,
                                        const std::string& os_release_path = "/etc/os-release");
};

// PRETTY_NAME from os-release text (quotes removed), or "".
std::string ParseOsReleasePrettyName(const std::string& text);

struct SelfUsage {
  double cpu_seconds = 0;  // user + system, since the agent started
  uint64_t rss_bytes = 0;

  // The calling process's usage, from `proc_root`/self.
  static absl::StatusOr<SelfUsage> Read(const std::string& proc_root);
};

}  // namespace drip::agent
