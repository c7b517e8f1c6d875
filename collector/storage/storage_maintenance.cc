#include "collector/storage/storage_maintenance.h"

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
      size_interval_(size_interval),
      loop_("drip-maint", [this] { return Round(); }) {}

StorageMaintenance::~StorageMaintenance() { Stop(); }

void StorageMaintenance::Start() { loop_.Start(); }

void StorageMaintenance::Stop() { loop_.Stop(); }

LoopThread::Duration StorageMaintenance::Round() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  if (now >= next_recovery_) {
    recovery_.Tick(now);
    next_recovery_ = Clock::now() + kRecoveryInterval;
  }
  if (now >= next_retention_) {
    EnforceRetention();
    // From the end of the pass: a slow pass must not make the next start at once.
    next_retention_ = Clock::now() + retention_interval_;
  }
  if (now >= next_size_) {
    metrics_->storage_size_bytes.Set(static_cast<double>(store_->ApproximateSizeBytes()));
    metrics_->storage_corrupt_records.Set(static_cast<double>(store_->CorruptRecordsSkipped()));
    if (absl::StatusOr<uint64_t> free = store_->FreeDiskBytes(); free.ok()) {
      metrics_->storage_free_bytes.Set(static_cast<double>(*free));
    }
    next_size_ = Clock::now() + size_interval_;
  }
  return std::min({next_retention_, next_size_, next_recovery_}) - Clock::now();
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
