// StorageRecovery: brings a store whose writes fail back by itself, and keeps
// StorageHealth in step with the store. Tick() runs every second on the maintenance
// thread. It reads the store's write state, so that a failed background flush shows as
// NOT_SERVING before any batch fails, and calls SeriesStore::Recover() (cheap when
// nothing is wrong): every tick while Recover() only waits for free disk space, so that
// recovery follows within a second of space returning, and with exponential backoff
// after attempts that failed (each one reopens the database).
//
// Counts attempts in drip_storage_recoveries_total{outcome}; logs once when it starts
// waiting for space and once for the first failed attempt of an outage (later ones at
// debug); StorageHealth logs the transitions themselves.
//
// Not thread-safe: one thread calls Tick().
#pragma once

#include <chrono>

#include "collector/collector_metrics.h"
#include "collector/storage/series_store.h"
#include "collector/storage/storage_health.h"

namespace drip::collector {

struct StorageRecoveryOptions {
  // Delay after the first failed attempt, doubling up to `max_backoff`. The delay goes
  // back to `initial_backoff` once the store has taken writes for `max_backoff`, so a
  // store that recovers and fails again at once is not reopened every second.
  std::chrono::milliseconds initial_backoff = std::chrono::seconds(1);
  std::chrono::milliseconds max_backoff = std::chrono::minutes(1);
};

class StorageRecovery {
 public:
  // Every pointer must outlive this object.
  StorageRecovery(SeriesStore* store, StorageHealth* health, CollectorMetrics* metrics,
                  StorageRecoveryOptions options = {});

  void Tick(std::chrono::steady_clock::time_point now);

  // The delay the next failed attempt will wait; for tests.
  std::chrono::milliseconds backoff() const { return backoff_; }

 private:
  SeriesStore* store_;
  StorageHealth* health_;
  CollectorMetrics* metrics_;
  const StorageRecoveryOptions options_;

  std::chrono::milliseconds backoff_;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::steady_clock::time_point recovered_at_{};
  bool failing_ = false;         // Recover() has not succeeded since this outage began
  bool waiting_logged_ = false;  // "waiting for space" logged in this outage
  bool attempt_logged_ = false;  // a failed attempt logged in this outage
};

}  // namespace drip::collector
