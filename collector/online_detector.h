// OnlineDetector: the collector's live run of the bucketed leak detector (analyzer/), the
// first stage of the leak pipeline (leak_pipeline.h). Every batch the store has made
// durable is fed to it, so suspects follow ingest with no extra read; the pipeline
// advances it so that quiet series are judged too; at start it is rebuilt by replaying
// the stored series of the last `detector.rebuild_window`, so suspects and the normal
// levels behind them survive a restart.
//
// The detector judges one level per (host, component): a unit's cgroup sample when the
// batch has one (the whole service), otherwise the sum of the component's processes,
// with the largest process's instance standing for restarts.
//
// Thread-safe (one mutex; the detector's per-sample work is a hash lookup and a min).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "analyzer/leak_detector.h"
#include "collector/fleet_suspects.h"
#include "collector/storage/series_store.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

class OnlineDetector {
 public:
  explicit OnlineDetector(const analyzer::DetectorConfig& config);

  // A batch of `host` that is durable in the store.
  void ObserveBatch(const std::string& host, const drip::v1::SampleBatch& batch);
  void SetHostMemory(const std::string& host, uint64_t bytes);
  // Judges epochs that ended before `now_s` (called by the pipeline).
  void AdvanceTo(int64_t now_s);

  // Replays every stored series with samples since `since_ms` (before serving), in time
  // order across hosts, up to `now_ms` and whatever is stored beyond it. Returns how many
  // samples it replayed.
  absl::StatusOr<uint64_t> Rebuild(SeriesStore* store, int64_t since_ms, int64_t now_ms);

  // Suspects and suspected components; only those of `component` unless it is empty.
  FleetSuspects Suspects(const std::string& component = "") const;

  size_t suspect_count() const;
  size_t series_count() const;
  uint64_t samples_observed() const;

 private:
  void ObserveLocked(const std::string& host, const drip::v1::Sample* samples[], size_t count);

  mutable std::mutex mu_;
  analyzer::LeakDetector detector_;  // guarded by mu_
  // (host, component) -> its largest process in the latest pass, for commands; guarded by mu_.
  std::map<std::pair<std::string, std::string>, std::string> largest_process_;
};

}  // namespace drip::collector
