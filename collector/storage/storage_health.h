// StorageHealth: whether the store currently takes writes, as the rest of the world
// sees it: gRPC health NOT_SERVING and drip_collector_healthy 0 while it does not, so
// that load balancers and alerts move agents elsewhere. It follows the store's own
// account (SeriesStore::WriteState): a failed batch sets it at once, StorageRecovery
// every second, and it turns healthy only when the store does, i.e. after a recovery or
// a write that went through — never because a read worked. Each transition logs one
// line, not each failure, so a broken disk does not flood the log.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <mutex>

#include "absl/status/status.h"
#include "grpcpp/health_check_service_interface.h"
#include "prometheus/gauge.h"

namespace drip::collector {

class StorageHealth {
 public:
  // `healthy_gauge` must outlive this object. Starts healthy.
  explicit StorageHealth(prometheus::Gauge* healthy_gauge);

  // Connects the gRPC health service once the server exists (nullptr disconnects,
  // before the server goes away). The current state is applied at once.
  void AttachHealthService(grpc::HealthCheckServiceInterface* service);

  // Healthy exactly when `write_state` (SeriesStore::WriteState) is OK.
  void Update(const absl::Status& write_state);

  bool healthy() const;

 private:
  void ApplyLocked();

  mutable std::mutex mu_;
  bool healthy_ = true;
  std::chrono::steady_clock::time_point unhealthy_since_;
  prometheus::Gauge* gauge_;
  grpc::HealthCheckServiceInterface* service_ = nullptr;
};

}  // namespace drip::collector
