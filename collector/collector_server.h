// CollectorServer: drip-collector without its command line. Opens the store, serves
// drip.v1.AgentService (ingest) and drip.v1.QueryService on one gRPC port with health
// checking, exports /metrics, and runs storage maintenance (retention, size gauge).
// Tests run it in-process on port 0 with a temp store; main.cc runs it until a signal.
//
// Start() and Shutdown() are called from one owning thread. Shutdown order (also run by
// the destructor): refuse new streams and end open ones with UNAVAILABLE after their
// in-flight batch is acked, stop gRPC (cancelling what is left after the grace period),
// stop maintenance and workers, then close the store.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collector/access_policy.h"
#include "collector/collector_config.h"
#include "collector/collector_metrics.h"
#include "collector/connected_hosts.h"
#include "collector/ingest_service.h"
#include "collector/leak_report_book.h"
#include "collector/leak_report_metrics.h"
#include "collector/mitigation_coordinator.h"
#include "collector/online_detector.h"
#include "collector/query_service.h"
#include "collector/sample_validator.h"
#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/series_store.h"
#include "collector/storage_health.h"
#include "collector/storage_maintenance.h"
#include "collector/storage_recovery.h"
#include "collector/worker_pool.h"
#include "common/clock.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"

namespace drip::collector {

// What Start() bound, for the ready file and for tests.
struct ServingAddresses {
  int grpc_port = 0;
  int metrics_port = 0;  // 0: metrics disabled
  std::string grpc;      // an address a local client can dial, e.g. "127.0.0.1:41234"
  std::string metrics;   // same for /metrics; empty when disabled
};

// What the collector's config says about validating agents' messages; the collector and
// the agent message fuzzer build their validators from it.
SampleValidatorOptions ValidatorOptions(const CollectorConfig& c);

class CollectorServer {
 public:
  // How the server opens its store; tests wrap the real store to inject failures.
  using StoreOpener =
      std::function<absl::StatusOr<std::unique_ptr<SeriesStore>>(const RocksDbSeriesStoreOptions&)>;

  // `config` must have passed Validate(); `clock` (validation, retention) must outlive
  // the server.
  explicit CollectorServer(CollectorConfig config, const Clock* clock = SystemClock::Get(),
                           StoreOpener open_store = OpenRocksDbSeriesStore);
  ~CollectorServer();

  CollectorServer(const CollectorServer&) = delete;
  CollectorServer& operator=(const CollectorServer&) = delete;

  // Opens the store and starts serving. Fails, leaving nothing running, when the store
  // cannot be opened or an address cannot be bound; the message names the path or
  // address. Call at most once.
  absl::StatusOr<ServingAddresses> Start();

  // Idempotent; see the header comment for the order. `grace` bounds how long open
  // calls may take to end before gRPC cancels them.
  void Shutdown(std::chrono::milliseconds grace = std::chrono::seconds(5));

  // The registry behind /metrics, for tests that read metrics directly.
  prometheus::Registry& registry() { return *registry_; }
  const StorageHealth& health() const { return health_; }
  // When storage maintenance (retention, size gauge, the online detector's advance) last
  // went round: the collector's liveness for the systemd watchdog. Call between Start()
  // and Shutdown(); a zero time point when maintenance is not running.
  std::chrono::steady_clock::time_point last_maintenance() const {
    return maintenance_ ? maintenance_->last_run() : std::chrono::steady_clock::time_point();
  }

 private:
  void TearDown();
  // Builds access_ from auth.access_file (or the default for tls.plaintext); logs the
  // insecure modes once and sets drip_collector_plaintext.
  absl::Status LoadAccessPolicy();

  CollectorConfig config_;
  const Clock* clock_;
  StoreOpener open_store_;
  std::shared_ptr<prometheus::Registry> registry_;
  CollectorMetrics metrics_;
  StorageHealth health_;
  ConnectedHosts hosts_;
  SampleValidator validator_;
  std::unique_ptr<AccessPolicy> access_;

  void RefreshDetectorMetrics();

  std::unique_ptr<SeriesStore> store_;
  std::unique_ptr<OnlineDetector> detector_;
  std::unique_ptr<SnapshotScheduler> snapshots_;
  std::unique_ptr<LeakReportBook> reports_;
  std::unique_ptr<MitigationCoordinator> mitigations_;
  LeakReportMetrics report_metrics_{&metrics_};
  SnapshotScheduler::Counts snapshot_counts_;  // as of the last metrics refresh
  std::unique_ptr<WorkerPool> writers_;
  std::unique_ptr<WorkerPool> readers_;
  std::unique_ptr<IngestService> ingest_;
  std::unique_ptr<QueryServiceImpl> query_;
  std::unique_ptr<StorageRecovery> recovery_;
  std::unique_ptr<StorageMaintenance> maintenance_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace drip::collector
