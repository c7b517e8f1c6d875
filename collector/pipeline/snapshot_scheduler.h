// SnapshotScheduler: the leak pipeline's second stage (leak_pipeline.h; the collector's
// half of the fleet flow in docs/snapshot.md). When the detector suspects a component, it
// picks a few of the component's suspect hosts — the fastest growing first, skipping hosts
// without enough free memory left — and commands their agents over the stream to snapshot
// the suspect process. The snapshot comes back in the command's result, which the command
// router (ingest/command_router.h) hands to this scheduler alone; it is parsed and
// diagnosed on the diagnosis pool, never on the ingest thread that received it, and the
// attempt, diagnosis and all, is attached to the suspect (Annotate), so that the report
// book and `dripctl suspects` show the leaking call stack. A snapshot that fails, never
// answers or finds the pool full is attached with its reason. A component is not
// snapshotted again before its cool-down has passed.
//
// Thread-safe: Tick runs on the pipeline's thread, answers arrive on ingest workers and at
// the pipeline's Expire, diagnoses finish on the pool, Annotate runs on the pipeline's and
// query threads; one mutex guards the state, never held while diagnosing.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "collector/ingest/command_router.h"
#include "collector/pipeline/fleet_suspects.h"
#include "collector/worker_pool.h"
#include "common/base/clock.h"
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
  // Every pointer must outlive the scheduler; `diagnoses` runs the parsing and diagnosis
  // of each snapshot that comes back (a bounded queue: past it the attempt fails), and
  // must be stopped before the scheduler goes. `clock` stamps when attempts finish.
  SnapshotScheduler(const SnapshotPolicy& policy, const diagnoser::DiagnoserConfig& diagnoser,
                    CommandRouter* commands, WorkerPool* diagnoses, const Clock* clock);

  // Starts snapshots for suspects that need one. Unanswered ones fail at the router's
  // Expire past their deadline (the longest the agent may take, plus the grace).
  void Tick(int64_t now_ms, const FleetSuspects& suspects);

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

  // The router's answer to the command `command_id` of `key`: diagnosed on the pool, or
  // the attempt failed with why.
  void OnAnswer(const Key& key, const std::string& command_id,
                absl::StatusOr<drip::v1::CommandResult> answer);
  // Parses and diagnoses a snapshot the agent sent (on the pool).
  void Diagnose(const Key& key, const std::string& command_id,
                const drip::v1::CommandResult& result);
  // Ends the attempt `command_id` of `key`, if it is still that one and pending: done with
  // `diagnosis` of `snapshot` when `error` is empty, else failed with it.
  void Finish(const Key& key, const std::string& command_id, std::string error,
              diagnoser::Diagnosis diagnosis,
              std::shared_ptr<const std::string> snapshot = nullptr);

  SnapshotPolicy policy_;
  diagnoser::DiagnoserConfig diagnoser_config_;
  CommandRouter* commands_;
  WorkerPool* diagnoses_;
  const Clock* clock_;
  mutable std::mutex mu_;
  std::map<Key, SnapshotAttempt> attempts_;           // the latest per (host, component)
  std::map<std::string, int64_t> component_started_;  // component -> last round start
  uint64_t next_id_ = 1;
  Counts counts_;
};

}  // namespace drip::collector
