// OnlineDetector: the collector's live run of the bucketed leak detector (analyzer/), the
// first stage of the leak pipeline (leak_pipeline.h). Every batch the store has made
// durable is fed to it, so suspects follow ingest with no extra read; the pipeline
// advances it so that quiet series are judged too (a series is quiet once no sample of it
// has arrived for kQuietAfter: one still arriving, even days old, as when an agent resends
// what it buffered through an outage, is judged by its own samples, exactly as a replay
// of the same data would judge it); at start it is rebuilt by replaying
// the stored series of the last `detector.rebuild_window`, so suspects and the normal
// levels behind them survive a restart.
//
// The detector judges one level per (host, component) per sampling pass: a unit's cgroup
// sample when the pass has one (the whole service), otherwise the sum of the component's
// processes, with the largest process's instance standing for restarts; and the memory
// limit and OOM kills that sample carries. A pass split over several batches is held
// until its last batch (SampleBatch.ends_pass) or a newer pass arrives, so that live
// detection groups samples as the rebuild from the store does. A process the OOM killer
// chose (its exit says so) is a kill of its series.
//
// Thread-safe (one mutex; the detector's per-sample work is a hash lookup and a min).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/leak_detector.h"
#include "collector/pipeline/fleet_suspects.h"
#include "collector/storage/series_store.h"
#include "common/base/clock.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

class OnlineDetector {
 public:
  // A series none of whose samples arrived for this long has gone quiet. Agents send
  // every 10 s by default; a minute is several batches missed.
  static constexpr int64_t kQuietAfterMs = 60 * 1000;

  // `clock` tells when batches arrive; it must outlive the detector.
  OnlineDetector(const analyzer::DetectorConfig& config, const Clock* clock);

  // The components of `batch` that `host` may not add: those it has not sent before, once
  // it has `max_components` (those of the batch count in its order). Empty when every
  // sample may be stored.
  std::set<std::string> ComponentsOverQuota(const std::string& host,
                                            const drip::v1::SampleBatch& batch,
                                            size_t max_components) const;

  // A batch of `host` that is durable in the store: from its agent's stream here
  // (`streamed`), or a copy of another member's (docs/cluster.md, "Replication"), judged
  // alike but left out of this member's share of the fleet drift, which its owner counts
  // (LeakDetector::SetHostCounted).
  void ObserveBatch(const std::string& host, const drip::v1::SampleBatch& batch,
                    bool streamed = true);
  void SetHostMemory(const std::string& host, uint64_t bytes);
  // Judges the epochs that ended before `now_s` of the series that went quiet (called by
  // the pipeline).
  void AdvanceTo(int64_t now_s);

  // Replays every stored series with samples since `since_ms` (before serving), in time
  // order across hosts, up to `now_ms` and whatever is stored beyond it. Returns how many
  // samples it replayed.
  absl::StatusOr<uint64_t> Rebuild(SeriesStore* store, int64_t since_ms, int64_t now_ms);
  // Rebuild for one host while serving: its series are forgotten, suspects too, and its
  // stored samples since `since_ms` replayed, once a repair has given this member's copy
  // history it had not seen: it is judged as a restart would judge it, not from the few
  // samples this member saw since it came back.
  absl::StatusOr<uint64_t> RebuildHost(SeriesStore* store, const std::string& host,
                                       int64_t since_ms, int64_t now_ms);

  // Forgets the series silent since before `before_s` (LeakDetector::ForgetSilentBefore);
  // returns how many.
  size_t ForgetSilentBefore(int64_t before_s);

  // Suspects and suspected components; only those of `component` unless it is empty.
  FleetSuspects Suspects(const std::string& component = "") const;

  // Fleet drift of every component over this collector's hosts still reporting (a sample
  // in the last kSharedDriftActiveMs), and the merged drift of their hosts on the other
  // members (a component absent there has none): in a cluster the fleet rule judges a
  // component by all its hosts, each counted once (docs/cluster.md).
  static constexpr int64_t kSharedDriftActiveMs = 10 * 60 * 1000;
  std::vector<std::pair<std::string, analyzer::ComponentDrift>> LocalDrifts() const;
  void SetPeerDrifts(const std::map<std::string, analyzer::ComponentDrift>& peers);

  size_t suspect_count() const;
  size_t series_count() const;
  uint64_t samples_observed() const;
  uint64_t oom_kills_counted() const;

 private:
  // Replays the stored samples of `series` (host, component) since `since_ms`, in time
  // order across them; under `held` (mu_) when given, else taking mu_ a window at a time.
  absl::StatusOr<uint64_t> Replay(SeriesStore* store,
                                  const std::vector<std::pair<std::string, std::string>>& series,
                                  int64_t since_ms, int64_t now_ms,
                                  std::unique_lock<std::mutex>* held);
  // `arrived_ms` is when the samples arrived, 0 for a replay of stored ones.
  void ObserveLocked(const std::string& host, const drip::v1::Sample* samples[], size_t count,
                     int64_t arrived_ms);
  // Groups `samples` by (timestamp, component) and observes each group, in time order.
  void ObservePassesLocked(const std::string& host, std::vector<const drip::v1::Sample*>* samples,
                           int64_t arrived_ms);
  // An exit the OOM killer caused: a kill of its series.
  void ObserveVictimLocked(const std::string& host, const drip::v1::Sample& exit);
  // Observes the held part of `host`'s pass, if any.
  void FlushPendingLocked(const std::string& host);

  // A host's pass whose last batch has not come yet: its samples of the newest timestamp.
  struct PendingPass {
    int64_t arrived_ms = 0;
    std::vector<drip::v1::Sample> samples;
  };

  const Clock* const clock_;
  mutable std::mutex mu_;
  analyzer::LeakDetector detector_;  // guarded by mu_
  // By series id: when its latest sample arrived (0: replayed at start); guarded by mu_.
  std::vector<int64_t> last_arrival_ms_;
  // (host, component) -> its largest process in the latest pass, for commands; guarded by mu_.
  std::map<std::pair<std::string, std::string>, std::string> largest_process_;
  std::map<std::string, PendingPass> pending_;  // by host; guarded by mu_
};

}  // namespace drip::collector
