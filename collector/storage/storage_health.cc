#include "collector/storage/storage_health.h"

#include <string>

#include "common/base/duration.h"
#include "common/daemon/logging.h"

namespace drip::collector {

StorageHealth::StorageHealth(prometheus::Gauge* healthy_gauge) : gauge_(healthy_gauge) {
  gauge_->Set(1);
}

void StorageHealth::AttachHealthService(grpc::HealthCheckServiceInterface* service) {
  std::lock_guard<std::mutex> lock(mu_);
  service_ = service;
  ApplyLocked();
}

void StorageHealth::Update(const absl::Status& write_state) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool healthy = write_state.ok();
  if (healthy == healthy_) return;
  healthy_ = healthy;
  const auto now = std::chrono::steady_clock::now();
  if (!healthy) {
    unhealthy_since_ = now;
    Logger("collector")
        ->error(
            "store stopped taking writes; acknowledging nothing and reporting NOT_SERVING "
            "until it recovers: {}",
            std::string(write_state.message()));
  } else {
    Logger("collector")
        ->info("store takes writes again after {}; serving",
               FormatSpan(std::chrono::duration<double>(now - unhealthy_since_).count()));
  }
  ApplyLocked();
}

bool StorageHealth::healthy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return healthy_;
}

void StorageHealth::ApplyLocked() {
  gauge_->Set(healthy_ ? 1 : 0);
  // Sets every registered service and the overall ("") status together.
  if (service_ != nullptr) service_->SetServingStatus(healthy_);
}

}  // namespace drip::collector
