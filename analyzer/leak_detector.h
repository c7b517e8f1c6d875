// LeakDetector: the bucketed leak detector (docs/detector.md), a pure library with no I/O.
// Feed it memory samples roughly in time order — per series, late samples within
// max_lateness_seconds are folded in, duplicates are harmless — and read its suspects.
// The collector runs one online as samples arrive; `dripctl analyze` replays a CSV
// through the same code; the tests and benchmarks drive it from a synthetic fleet.
//
// Per series ((host, component)) the detector keeps a few hundred bytes whatever the
// series' length: the open epoch, a ring of recent epoch floors, a coarse occupancy
// histogram of its levels (its normal range) and the state of its current climb. Per
// component it keeps small host counts that merge across shards (ComponentDrift).
//
// Not thread-safe: shard by host and give each shard its own detector, merging their
// component drift (see ComponentDrift) when one detector cannot keep up.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/component_drift.h"
#include "analyzer/detector_config.h"
#include "analyzer/limit_reading.h"
#include "analyzer/suspect.h"

namespace drip::analyzer {

class SeriesState;
struct EpochVerdict;

// What the detector counts about its input, for metrics and `dripctl analyze`.
struct DetectorCounters {
  uint64_t samples = 0;
  uint64_t late_samples_folded = 0;   // older than the open epoch, folded into it
  uint64_t late_samples_dropped = 0;  // older than max_lateness_seconds
  uint64_t restarts = 0;              // instance changes seen
  uint64_t gaps = 0;                  // silences longer than max_gap_seconds
  uint64_t epochs_closed = 0;
  uint64_t oom_kills = 0;  // of the series, each once (cgroup counters or victims)
};

// An instance's name and its hash: a caller that observes the same instances over and
// over (a replay of a file) hashes each name once.
struct InstanceName {
  // Implicit: a name is one. NOLINTNEXTLINE(google-explicit-constructor)
  InstanceName(std::string_view instance);
  // NOLINTNEXTLINE(google-explicit-constructor)
  InstanceName(const std::string& instance) : InstanceName(std::string_view(instance)) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  InstanceName(const char* instance) : InstanceName(std::string_view(instance)) {}
  std::string_view name;
  uint64_t hash;
};

class LeakDetector {
 public:
  using SeriesId = uint32_t;

  explicit LeakDetector(DetectorConfig config);
  ~LeakDetector();
  LeakDetector(const LeakDetector&) = delete;
  LeakDetector& operator=(const LeakDetector&) = delete;

  // The id of (host, component), registering it on first use. Ids are dense, from 0.
  SeriesId Series(std::string_view host, std::string_view component);
  // Whether (host, component) is registered, and how many series `host` has: what the
  // collector's per-host quota of components is checked against.
  bool HasSeries(std::string_view host, std::string_view component) const;
  size_t SeriesOfHost(std::string_view host) const;

  // One sample: `bytes` of unreclaimable memory (anonymous RSS + swap for a process) of
  // `instance` at `timestamp_s`. A new instance for the same series is a restart.
  // `limit`: the series' memory limit and OOM kills as read with the sample; the
  // detector asks for less evidence the closer the series is to its limit.
  void Observe(SeriesId series, int64_t timestamp_s, const InstanceName& instance, uint64_t bytes,
               const LimitReading& limit = {});
  void Observe(std::string_view host, std::string_view component, int64_t timestamp_s,
               std::string_view instance, uint64_t bytes, const LimitReading& limit = {}) {
    Observe(Series(host, component), timestamp_s, instance, bytes, limit);
  }
  // Starts bringing the series' state into the cache: a replay of millions of rows calls
  // this a few rows ahead of Observe.
  void Prefetch(SeriesId series) const;
  // A process of the series that the kernel's OOM killer chose as its victim (the agent
  // sees it through BPF as the process exits), at `timestamp_s`. A kill the series'
  // cgroup counter also shows is counted once.
  void ObserveOomVictim(SeriesId series, int64_t timestamp_s);

  // The host's total memory, for the ETA to OOM of its suspects.
  void SetHostMemory(std::string_view host, uint64_t bytes);
  // Whether `host`'s series count in this detector's share of the fleet drift (LocalDrift,
  // LocalDrifts, and the fleet rule's view with the peers' added). A cluster member keeps
  // copies of hosts other members own (docs/cluster.md, "Replication") and judges them,
  // but their owner counts them: counted twice, a component's climbing hosts would arm
  // the fleet rule with half the hosts it needs. Hosts count by default.
  void SetHostCounted(std::string_view host, bool counted);

  // Closes every epoch that ended before `now_s` (for series that went quiet), so that
  // a replay's last epoch is judged too.
  void AdvanceTo(int64_t now_s);
  // The same for one series. The online collector closes only the series whose samples
  // stopped arriving: one still catching up (an agent resending an outage's buffer) has
  // its epochs closed by its own next samples, as a replay would.
  void AdvanceSeriesTo(SeriesId series, int64_t now_s);

  // Suspects flagged so far, most urgent first (score, then growth). A suspect stays
  // once flagged; it is updated (instance, growth, ETA) while its series keeps growing.
  std::vector<Suspect> Suspects() const;
  // Components with at least one suspect, earliest first.
  std::vector<ComponentSuspect> ComponentSuspects() const;

  // Fleet drift of one component over this detector's hosts.
  ComponentDrift LocalDrift(std::string_view component) const;
  // The same for every component, over the series with a sample since `active_since_s`
  // only: what a shard tells the others. A host that moved to another shard stops
  // reporting here and must not be counted on both (its series stays here, judged and
  // counted locally, until forgotten).
  std::vector<std::pair<std::string, ComponentDrift>> LocalDrifts(int64_t active_since_s) const;
  // Detectors sharded by host (collectors of a cluster) judge a component by all its
  // hosts: each is told the merged drift of the component's hosts on the other shards,
  // which its fleet rule adds to its own from then on (until told again or cleared). Only
  // for a component this detector has a series of (false otherwise, nothing kept): the
  // fleet rule judges local hosts, and names another shard made up must not grow it.
  bool SetPeerDrift(std::string_view component, const ComponentDrift& peers);
  void ClearPeerDrift();
  // Local plus peers: what the fleet rule judges `component` by.
  ComponentDrift FleetDrift(std::string_view component) const;

  // Forgets every series whose newest sample is older than `before_s`, but suspects: its
  // state, its id (reused by a new series) and its share of its component's drift, as a
  // restart that replays only recent history would. Returns the (host, component) pairs
  // forgotten. A series that reports again starts afresh.
  std::vector<std::pair<std::string, std::string>> ForgetSilentBefore(int64_t before_s);
  // Forgets every series of `host`, suspects too, the same way, so that its history can be
  // replayed from the start (a member's copy repaired with older samples). Returns the
  // components forgotten.
  std::vector<std::string> ForgetHost(std::string_view host);

  const DetectorCounters& counters() const { return counters_; }
  size_t series_count() const;
  const DetectorConfig& config() const { return config_; }

  // Bytes of detector state per series (for docs/benchmarks and the bounded-state test).
  static size_t BytesPerSeries();

 private:
  struct Impl;
  void CloseEpoch(SeriesId series);
  // Drops the series' state and its share of its component's drift; returns its (host,
  // component).
  std::pair<std::string, std::string> Forget(SeriesId series);
  // Reads a sample's limit and kill count into `s`, counting the kills it adds.
  void ReadLimit(SeriesState& s, const LimitReading& limit);
  // The host's memory for a series (the config's default when unknown; 0: neither).
  uint64_t HostMemory(SeriesId series) const;
  // Turns a verdict into a suspect, or refreshes the suspect's evidence.
  void Judge(SeriesId series, const EpochVerdict& verdict, int64_t now);

  // A suspect's reason is written again at most every this many epochs (and whenever a
  // rule fires).
  static constexpr int64_t kReasonEpochs = 4;

  DetectorConfig config_;
  DetectorCounters counters_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace drip::analyzer
