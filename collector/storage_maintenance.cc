#include "collector/storage_maintenance.h"

#include <pthread.h>

#include <algorithm>
#include <string>

#include "common/base/duration.h"
#include "common/daemon/logging.h"

namespace drip::collector {

namespace {

// How often StorageRecovery looks at the store: recovery follows returning disk space
// within about this long.
constexpr std::chrono::seconds kRecoveryInterval(1);

}  // namespace

StorageMaintenance::StorageMaintenance(SeriesStore* store, StorageHealth* health,
                                       CollectorMetrics* metrics,
                                       std::chrono::milliseconds retention_interval,
                                       std::chrono::milliseconds size_interval)
    : store_(store),
      metrics_(metrics),
      recovery_(store, health, metrics),
      retention_interval_(retention_interval),
      size_interval_(size_interval) {}

StorageMaintenance::~StorageMaintenance() { Stop(); }

void StorageMaintenance::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  last_run_ = std::chrono::steady_clock::now().time_since_epoch().count();
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "drip-maint");
    Run();
  });
}

void StorageMaintenance::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StorageMaintenance::Run() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point next_retention = Clock::now();
  Clock::time_point next_size = Clock::now();
  Clock::time_point next_recovery = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    Clock::time_point now = Clock::now();
    if (now >= next_recovery) {
      lock.unlock();
      recovery_.Tick(now);
      lock.lock();
      next_recovery = Clock::now() + kRecoveryInterval;
    }
    if (now >= next_retention) {
      lock.unlock();
      EnforceRetention();
      lock.lock();
      // From the end of the pass: a slow pass must not make the next start at once.
      next_retention = Clock::now() + retention_interval_;
    }
    if (now >= next_size) {
      lock.unlock();
      metrics_->storage_size_bytes.Set(static_cast<double>(store_->ApproximateSizeBytes()));
      if (absl::StatusOr<uint64_t> free = store_->FreeDiskBytes(); free.ok()) {
        metrics_->storage_free_bytes.Set(static_cast<double>(*free));
      }
      lock.lock();
      next_size = Clock::now() + size_interval_;
    }
    last_run_ = Clock::now().time_since_epoch().count();
    const Clock::time_point next = std::min({next_retention, next_size, next_recovery});
    cv_.wait_until(lock, next, [this] { return stop_; });
  }
}

void StorageMaintenance::EnforceRetention() {
  absl::StatusOr<uint64_t> deleted = store_->EnforceRetention();
  if (!deleted.ok()) {
    metrics_->retention_errors.Increment();
    Logger("collector")
        ->warn("retention pass failed (retrying in {}): {}", FormatDuration(retention_interval_),
               std::string(deleted.status().message()));
    return;
  }
  metrics_->retention_deleted_chunks.Increment(static_cast<double>(*deleted));
  if (*deleted > 0) Logger("collector")->info("retention deleted {} chunks", *deleted);
}

}  // namespace drip::collector
