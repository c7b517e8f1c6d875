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

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "collector/collector_metrics.h"
#include "collector/storage/series_store.h"
#include "collector/storage_health.h"
#include "collector/storage_recovery.h"

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
  std::chrono::steady_clock::time_point last_run() const {
    return std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(last_run_.load()));
  }

 private:
  void Run();
  void EnforceRetention();

  SeriesStore* store_;
  CollectorMetrics* metrics_;
  StorageRecovery recovery_;
  std::chrono::milliseconds retention_interval_;
  std::chrono::milliseconds size_interval_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<std::chrono::steady_clock::rep> last_run_{0};
  std::thread thread_;
};

}  // namespace drip::collector
