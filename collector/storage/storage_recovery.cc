#include "collector/storage/storage_recovery.h"

#include <algorithm>
#include <string>

#include "common/base/duration.h"
#include "common/daemon/logging.h"

namespace drip::collector {

StorageRecovery::StorageRecovery(SeriesStore* store, StorageHealth* health,
                                 CollectorMetrics* metrics, StorageRecoveryOptions options)
    : store_(store),
      health_(health),
      metrics_(metrics),
      options_(options),
      backoff_(options.initial_backoff) {}

void StorageRecovery::Tick(std::chrono::steady_clock::time_point now) {
  const absl::Status state = store_->WriteState();
  health_->Update(state);
  if (state.ok() && now - recovered_at_ >= options_.max_backoff) {
    backoff_ = options_.initial_backoff;
  }
  if (now < next_attempt_) return;

  // Also while writes work: Recover() is cheap when nothing is wrong, and it restarts
  // flushes and compactions that a soft error (a compaction out of space) stopped
  // before the memtables fill up and writes fail too.
  absl::Status recovered = store_->Recover();
  auto log = Logger("collector");
  if (recovered.ok()) {
    if (!state.ok()) {
      metrics_->storage_recoveries_succeeded.Increment();
      recovered_at_ = now;
      health_->Update(store_->WriteState());
    }
    failing_ = false;
    return;
  }
  if (!failing_) {
    // A new outage: its first wait and first failure are worth a line each.
    failing_ = true;
    waiting_logged_ = false;
    attempt_logged_ = false;
  }
  if (recovered.code() == absl::StatusCode::kResourceExhausted) {
    // Nothing was tried: look again next tick, so that recovery follows free space
    // within a second.
    if (!waiting_logged_) {
      log->warn("{}", std::string(recovered.message()));
      waiting_logged_ = true;
    }
    return;
  }
  metrics_->storage_recoveries_failed.Increment();
  log->log(attempt_logged_ ? spdlog::level::debug : spdlog::level::warn,
           "store recovery failed (next attempt in {}): {}", FormatDuration(backoff_),
           std::string(recovered.message()));
  attempt_logged_ = true;
  next_attempt_ = now + backoff_;
  backoff_ = std::min(backoff_ * 2, options_.max_backoff);
}

}  // namespace drip::collector
