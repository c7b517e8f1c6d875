// FleetSuspects: what one pass of the leak pipeline hands from stage to stage (docs/
// design.md, "The leak pipeline"). The detector produces the suspects; the snapshot
// scheduler picks hosts from them and attaches each host's latest snapshot attempt; the
// report book folds them into leak reports. The query API turns the same value into
// drip.v1.ListSuspectsResponse (suspects_proto.h) — the wire form is made once, at the
// edge, and never read back by a stage.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/suspect.h"
#include "diagnoser/diagnosis.h"

namespace drip::collector {

// A heap snapshot the collector commanded for a suspect, and how it went.
struct SnapshotAttempt {
  enum class State { kPending, kDone, kFailed };
  std::string command_id;
  State state = State::kPending;
  std::string error;     // kFailed: why
  std::string instance;  // the process snapshotted (PID@START)
  int64_t requested_ms = 0;
  int64_t deadline_ms = 0;
  int64_t finished_ms = 0;
  diagnoser::Diagnosis diagnosis;  // kDone
  // kDone: the snapshot as the agent sent it (a serialized drip.v1.HeapSnapshot), for the
  // report book to keep; dropped a cool-down (10 minutes at least) after it came, by when
  // the book has long kept it.
  std::shared_ptr<const std::string> snapshot;
};

// "pending", "done", "failed": the wire and the reports' spelling.
std::string_view SnapshotStateName(SnapshotAttempt::State state);

// One (host, component) the detector suspects, as the later stages act on it.
struct HostSuspect {
  analyzer::Suspect suspect;
  // The component's largest process on the host in the latest pass (PID@START): what a
  // snapshot or a signal-process command targets. Equals suspect.instance unless the
  // detector judges the unit's cgroup (instance "cg@ID").
  std::string process_instance;
  std::optional<SnapshotAttempt> snapshot;  // set once the collector asked for one

  const std::string& target_instance() const {
    return process_instance.empty() ? suspect.instance : process_instance;
  }
};

struct FleetSuspects {
  std::vector<HostSuspect> hosts;  // most urgent first
  std::vector<analyzer::ComponentSuspect> components;
};

// Adds the suspects another cluster member holds to `into` (this member's own), for the
// reports this member owns: a (host, component) suspected on both (a host that moved
// between them) keeps the fresher evidence; a component's counts add up, as the members'
// hosts are disjoint.
void AddPeerSuspects(const FleetSuspects& peer, FleetSuspects* into);

}  // namespace drip::collector
