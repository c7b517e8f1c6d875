// StorageMaintenance: the collector's background thread for the store. It deletes
// samples past retention every `retention_interval` (once at start too, so a collector
// that was down for days catches up at once) and refreshes drip_storage_size_bytes every
// `size_interval`. A failed retention pass is logged and counted, and retried at the
// next interval; the store keeps serving meanwhile.
//
// Start() and Stop() from one owning thread; Stop() is idempotent and returns promptly
// (a pass in progress completes first). `periodic`, when set, also runs every
// size_interval on this thread (the online detector's advance).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "collector/collector_metrics.h"
#include "collector/storage/series_store.h"

namespace drip::collector {

class StorageMaintenance {
 public:
  // `store` and `metrics` must outlive this object.
  StorageMaintenance(SeriesStore* store, CollectorMetrics* metrics,
                     std::chrono::milliseconds retention_interval,
                     std::chrono::milliseconds size_interval = std::chrono::seconds(5),
                     std::function<void()> periodic = nullptr);
  ~StorageMaintenance();  // Stop()

  void Start();
  void Stop();

 private:
  void Run();
  void EnforceRetention();

  SeriesStore* store_;
  CollectorMetrics* metrics_;
  std::chrono::milliseconds retention_interval_;
  std::chrono::milliseconds size_interval_;
  std::function<void()> periodic_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace drip::collector
