#include "collector/storage_health.h"

#include <string>

#include "common/logging.h"

namespace drip::collector {

StorageHealth::StorageHealth(prometheus::Gauge* healthy_gauge) : gauge_(healthy_gauge) {
  gauge_->Set(1);
}

void StorageHealth::AttachHealthService(grpc::HealthCheckServiceInterface* service) {
  std::lock_guard<std::mutex> lock(mu_);
  service_ = service;
  ApplyLocked();
}

void StorageHealth::ReportWriteOk() {
  std::lock_guard<std::mutex> lock(mu_);
  if (healthy_) return;
  healthy_ = true;
  Logger("collector")->info("store writes succeed again; serving");
  ApplyLocked();
}

void StorageHealth::ReportWriteError(const absl::Status& error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!healthy_) return;
  healthy_ = false;
  Logger("collector")
      ->error("store write failed, reporting NOT_SERVING until a write succeeds: {}",
              std::string(error.message()));
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
