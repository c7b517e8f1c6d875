// SnapshotScheduler: the leak pipeline's second stage (leak_pipeline.h; the collector's
// half of the fleet flow in docs/snapshot.md). When the detector suspects a component, it picks a
// few of the component's suspect hosts — the fastest growing first, skipping hosts without enough
// free memory left — and commands their agents over the stream to snapshot the suspect process. The
// snapshot comes back in the command's result; the diagnoser ranks its stacks and the attempt,
// diagnosis and all, is attached to the suspect (Annotate), so that the report book and `dripctl
// suspects` show the leaking call stack. A snapshot that
// fails (or never answers) is attached with its reason. A component is not snapshotted
// again before its cool-down has passed.
//
// Thread-safe: Tick runs on the pipeline's thread, OnCommandResult on storage workers
// (agent sessions), Annotate on both the pipeline's and query threads; one mutex guards
// the state.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "collector/ingest/connected_hosts.h"
#include "collector/pipeline/fleet_suspects.h"
#include "diagnoser/diagnoser_config.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

struct SnapshotPolicy {
  bool enabled = true;
  uint64_t hosts_per_component = 2;
  // A host whose detector-estimated free memory is below this is left alone: a snapshot
  // costs the host a little memory, and that host needs mitigation, not diagnosis.
  uint64_t min_free_memory_bytes = 256ull << 20;
  std::chrono::milliseconds cooldown = std::chrono::hours(1);
  std::chrono::milliseconds duration = std::chrono::seconds(60);
  // While a snapshot's evidence is too short to decide, its agent keeps going up to this
  // long in all (at most its own snapshots.max_duration); shorter than duration: never.
  std::chrono::milliseconds extend_up_to = std::chrono::minutes(4);
  std::string mode;  // "", "attach" or "preload"
  // How long past `duration` an unanswered command is given before it counts as failed.
  std::chrono::milliseconds grace = std::chrono::seconds(60);
};

class SnapshotScheduler {
 public:
  SnapshotScheduler(const SnapshotPolicy& policy, const diagnoser::DiagnoserConfig& diagnoser,
                    ConnectedHosts* hosts);

  // Starts snapshots for suspects that need one and times out unanswered ones.
  void Tick(int64_t now_ms, const FleetSuspects& suspects);

  // A result from `host`'s agent. Results for commands this scheduler did not send (or
  // already timed out) are ignored and return false.
  bool OnCommandResult(const std::string& host, const drip::v1::CommandResult& result,
                       int64_t now_ms);

  // Sets each suspect's latest snapshot attempt, where there is one.
  void Annotate(FleetSuspects* suspects) const;

  struct Counts {
    uint64_t requested = 0;
    uint64_t succeeded = 0;
    uint64_t failed = 0;
  };
  Counts counts() const;

 private:
  using Key = std::pair<std::string, std::string>;  // host, component

  SnapshotPolicy policy_;
  diagnoser::DiagnoserConfig diagnoser_config_;
  ConnectedHosts* hosts_;
  mutable std::mutex mu_;
  std::map<Key, SnapshotAttempt> attempts_;           // the latest per (host, component)
  std::map<std::string, int64_t> component_started_;  // component -> last round start
  std::map<std::string, Key> by_command_;
  uint64_t next_id_ = 1;
  Counts counts_;
};

}  // namespace drip::collector
