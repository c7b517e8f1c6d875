// StorageMaintenance: the collector's background thread for the store, and only for the
// store (the leak pipeline has a thread of its own, leak_pipeline.h). It deletes samples
// past retention every `retention_interval` (once at start too, so a collector that was
// down for days catches up at once), refreshes drip_storage_size_bytes and
// drip_storage_free_bytes every `size_interval`, and every second lets its
// StorageRecovery check the store's writes and bring them back after a failure
// (storage_recovery.h). A failed retention pass is logged and counted, and retried at
// the next interval; the store keeps serving meanwhile.
//
// Start() and Stop() from one owning thread; Stop() is idempotent and returns promptly
// (a pass in progress completes first).
#pragma once

#include <chrono>

#include "collector/collector_metrics.h"
#include "collector/loop_thread.h"
#include "collector/storage/series_store.h"
#include "collector/storage/storage_health.h"
#include "collector/storage/storage_recovery.h"

namespace drip::collector {

class StorageMaintenance {
 public:
  // `store`, `health` and `metrics` must outlive this object.
  StorageMaintenance(SeriesStore* store, StorageHealth* health, CollectorMetrics* metrics,
                     std::chrono::milliseconds retention_interval,
                     std::chrono::milliseconds size_interval = std::chrono::seconds(5));
  ~StorageMaintenance();  // Stop()

  void Start();
  void Stop();

  // When the maintenance loop last went round (Start() before its first round): the
  // collector's liveness for the systemd watchdog, since a hung retention pass stops it.
  // Thread-safe.
  std::chrono::steady_clock::time_point last_run() const { return loop_.last_round(); }

 private:
  // One round: whatever is due; returns the wait until the next thing is.
  LoopThread::Duration Round();
  void EnforceRetention();

  SeriesStore* store_;
  CollectorMetrics* metrics_;
  StorageRecovery recovery_;
  std::chrono::milliseconds retention_interval_;
  std::chrono::milliseconds size_interval_;
  // When each task is next due; the loop's thread only.
  std::chrono::steady_clock::time_point next_retention_{};
  std::chrono::steady_clock::time_point next_size_{};
  std::chrono::steady_clock::time_point next_recovery_{};
  LoopThread loop_;
};

}  // namespace drip::collector
