// RolloutCorrelation: tells a leak that arrived with a version from one that did not, the
// evidence a per-host tool cannot give. From what each host of a component ran (its
// instances' versions over time) and which hosts leak, it says which versions the leaking
// hosts run, whether each host's growth began when it changed to that version, and how the
// hosts on other versions behave: hosts on the old version that do not leak are evidence
// that the leak came with the new one; leaking hosts on both versions clear the rollout.
//
// Pure (no I/O): the collector feeds it the versions its agents report
// (docs/rollout.md), dripctl analyze the CSV's version column, tests drive it directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/suspect.h"

namespace drip::analyzer {

// One instance of the component on a host, and the version it ran from `since_s`.
struct VersionRun {
  std::string instance;
  std::string version;
  int64_t since_s = 0;
};

// What one host of the component ran, oldest instance first.
struct HostVersions {
  std::string host;
  std::vector<VersionRun> runs;
};

// Adds an instance to `runs` (oldest first): an instance of the version the latest run has
// continues that run (consecutive instances of one version are one era, which is what
// the correlation reads); another version starts a new one. An instance that started
// before the latest run did is dropped rather than reorder them. Returns whether a run
// was added.
bool AddVersionRun(std::vector<VersionRun>* runs, VersionRun run);

// A host the detector suspects, with what its suspect says about when growth began.
struct LeakingHost {
  std::string host;
  int64_t first_flagged_s = 0;
  int64_t growth_since_s = 0;         // Suspect::growth_since
  bool grows_every_instance = false;  // the restart-reset rule: each instance climbs anew
};

// What a suspect of the detector says about its host's growth.
LeakingHost LeakingHostOf(const Suspect& suspect);

struct HostVersionFinding {
  std::string host;
  std::string version;           // what the host ran when its growth began
  std::string previous_version;  // what the host ran before it changed to `version`; ""
  int64_t changed_s = 0;         // when it changed (the first instance of `version`)
  bool began_at_change = false;  // the growth began with the change
};

struct VersionShare {
  std::string version;
  int leaking_hosts = 0;
  int healthy_hosts = 0;    // hosts running it now that the detector does not suspect
  int began_at_change = 0;  // leaking hosts whose growth began at their change to it
};

enum class RolloutVerdict {
  kUnknown,               // no version known for any leaking host
  kArrivedWithVersion,    // the leaking hosts run one version that others do not leak on
  kAcrossVersions,        // the leaking hosts run different versions: not a rollout's leak
  kOneVersionEverywhere,  // every host runs one version and none changed: nothing to compare
};

// "unknown", "arrived-with-version", "across-versions", "one-version".
const char* RolloutVerdictName(RolloutVerdict verdict);

struct RolloutFinding {
  RolloutVerdict verdict = RolloutVerdict::kUnknown;
  std::string version;  // kArrivedWithVersion: the version the leak came with
  // Every version the component's hosts run, the leaking hosts' first (most first).
  std::vector<VersionShare> versions;
  // One per leaking host whose version is known, in the order given.
  std::vector<HostVersionFinding> hosts;
  std::string summary;  // one line for on-call
};

// `fleet`: every host of the component whose versions are known (leaking or not).
RolloutFinding CorrelateRollout(const std::vector<HostVersions>& fleet,
                                const std::vector<LeakingHost>& leaking);

}  // namespace drip::analyzer
