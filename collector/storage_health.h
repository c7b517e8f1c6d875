// StorageHealth: whether the store currently takes writes, as the rest of the world
// sees it. A failed write marks the collector unhealthy (gRPC health NOT_SERVING and
// drip_collector_healthy 0) so that load balancers and alerts move agents elsewhere;
// the next successful write marks it healthy again. Each transition logs one line, not
// each failure, so a broken disk does not flood the log.
//
// Thread-safe.
#pragma once

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

  void ReportWriteOk();
  void ReportWriteError(const absl::Status& error);

  bool healthy() const;

 private:
  void ApplyLocked();

  mutable std::mutex mu_;
  bool healthy_ = true;
  prometheus::Gauge* gauge_;
  grpc::HealthCheckServiceInterface* service_ = nullptr;
};

}  // namespace drip::collector
