// CollectorServer: drip-collector without its command line, and the one place that
// builds the collector's parts and hands each what it needs (docs/design.md, "The
// collector"). It wires; every behaviour lives in a part:
//
//   store (RocksDB) ◄── StorageMaintenance          (retention, size, recovery; own thread)
//        ▲    ▲
//        │    └──── LeakPipeline                    (detect → snapshot → report → mitigate;
//        │           ▲    ▲     ▲                    own thread)
//        │  DetectorFeed  │     └── ReportDesk ◄── QueryServiceImpl (dripctl)
//   IngestService         │                    ◄── MemberServiceImpl (the other members)
//   (agent streams) ──► CommandRouter (each command's answer to its sender)
//                                    ClusterPresence (etcd, placement, drift, report owners)
//
// The services share one gRPC port with health checking; /metrics is served from the
// registry every part counts into. Tests run the server in-process on port 0 with a
// temp store; main.cc runs it until a signal.
//
// Start() and Shutdown() are called from one owning thread. Shutdown order (also run by
// the destructor): refuse new streams and end open ones with UNAVAILABLE after their
// in-flight batch is acked, stop gRPC (cancelling what is left after the grace period),
// in a cluster hand what only this member holds to its hosts' next holders and leave,
// stop the background threads, then close the store.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collector/access/access_policy.h"
#include "collector/cluster/cluster_presence.h"
#include "collector/cluster/member_service.h"
#include "collector/collector_config.h"
#include "collector/collector_metrics.h"
#include "collector/ingest/command_router.h"
#include "collector/ingest/connected_hosts.h"
#include "collector/ingest/ingest_service.h"
#include "collector/ingest/sample_validator.h"
#include "collector/pipeline/leak_pipeline.h"
#include "collector/query/query_service.h"
#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/series_store.h"
#include "collector/storage/storage_health.h"
#include "collector/storage/storage_maintenance.h"
#include "common/base/clock.h"
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

// The parts' options as the collector's config gives them; the server and the message
// fuzzer build their parts from these.
SampleValidatorOptions ValidatorOptions(const CollectorConfig& config);
LeakPipelineOptions PipelineOptions(const CollectorConfig& config);
RocksDbSeriesStoreOptions StoreOptions(const CollectorConfig& config, const Clock* clock);

class CollectorServer {
 public:
  // How the server opens its store; tests wrap the real store to inject failures.
  using StoreOpener =
      std::function<absl::StatusOr<std::unique_ptr<SeriesStore>>(const RocksDbSeriesStoreOptions&)>;

  // `config` must have passed Validate(); `clock` (validation, retention, detection)
  // must outlive the server.
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
  // How long a leaving member may spend handing its hosts over (within systemd's
  // TimeoutStopSec, 60 s in deploy/systemd, with the grace and the store's close).
  static constexpr std::chrono::seconds kHandOverBudget{30};

  // The registry behind /metrics, for tests that read metrics directly.
  prometheus::Registry& registry() { return *registry_; }
  const StorageHealth& health() const { return health_; }
  // When the slower of the two background loops — storage maintenance and the leak
  // pipeline — last went round: the collector's liveness for the systemd watchdog. Call
  // between Start() and Shutdown(); a zero time point when they are not running.
  std::chrono::steady_clock::time_point last_round() const {
    if (!maintenance_ || !pipeline_) return std::chrono::steady_clock::time_point();
    return std::min(maintenance_->last_run(), pipeline_->last_run());
  }

 private:
  // Start()'s steps, in order; each leaves what it built in its member.
  absl::Status OpenStore();
  absl::Status OpenPipeline();
  void BuildServices();
  absl::Status ServeMetrics(ServingAddresses* bound);
  absl::Status ServeGrpc(const std::shared_ptr<grpc::ServerCredentials>& credentials,
                         ServingAddresses* bound);
  void StartBackground();
  // With cluster.etcd_endpoints: ClusterPresence::Join, and the services pointed at it.
  absl::Status JoinCluster(const ServingAddresses& bound);
  void TearDown();

  const CollectorConfig config_;
  const Clock* clock_;
  StoreOpener open_store_;
  std::shared_ptr<prometheus::Registry> registry_;
  CollectorMetrics metrics_;
  StorageHealth health_;
  ConnectedHosts hosts_;
  CommandRouter commands_{&hosts_};
  SampleValidator validator_;
  std::unique_ptr<AccessPolicy> access_;

  std::unique_ptr<SeriesStore> store_;
  std::unique_ptr<LeakPipeline> pipeline_;
  std::unique_ptr<IngestService> ingest_;
  std::unique_ptr<QueryServiceImpl> query_;
  // What member_service_ keeps other members' hosts with, as their replica.
  std::unique_ptr<ReplicaWriter> replica_writer_;
  // The other members' way in (their parts of fan-outs, relayed mitigations, replicas);
  // answers through query_, so it goes first.
  std::unique_ptr<MemberServiceImpl> member_service_;
  std::unique_ptr<StorageMaintenance> maintenance_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<grpc::Server> server_;
  // In a cluster; stopped before the pipeline, and gone after query_, whose fan-out
  // threads use its member_queries().
  std::unique_ptr<ClusterPresence> cluster_;
  // cluster_ as agent sessions see it: set once the collector has joined, cleared before
  // cluster_ stops (sessions run on the ingest workers).
  std::atomic<const ClusterPresence*> cluster_for_sessions_{nullptr};
};

}  // namespace drip::collector
