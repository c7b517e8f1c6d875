#include "collector/collector_server.h"

#include <exception>
#include <utility>

#include "collector/access/call_gate.h"
#include "common/base/duration.h"
#include "common/base/status_macros.h"
#include "common/daemon/listen_address.h"
#include "common/daemon/logging.h"
#include "common/rpc/grpc_conversions.h"
#include "common/rpc/tls_settings.h"
#include "fmt/format.h"
#include "grpcpp/health_check_service_interface.h"

namespace drip::collector {
namespace {

// Agents may send keepalive pings this often on an idle connection; more often and
// gRPC answers with GOAWAY (ENHANCE_YOUR_CALM). Documented for agent authors.
constexpr int kMinAgentPingIntervalMs = 10'000;

}  // namespace

SampleValidatorOptions ValidatorOptions(const CollectorConfig& c) {
  SampleValidatorOptions o;
  o.max_message_bytes = c.grpc.max_message_bytes;
  o.max_samples_per_batch = c.ingest.max_samples_per_batch;
  o.max_future_skew = c.ingest.max_future_skew;
  o.retention = c.storage.retention;
  return o;
}

LeakPipelineOptions PipelineOptions(const CollectorConfig& c) {
  LeakPipelineOptions o;
  o.detector = c.detector;
  o.rebuild_window = c.detector_rebuild_window;
  o.snapshots = c.snapshots;
  o.diagnoser = c.diagnoser;
  o.reports = c.reports;
  if (c.cluster.enabled()) o.reports.id_scope = MemberNameOf(c);
  o.mitigation = c.mitigation;
  return o;
}

RocksDbSeriesStoreOptions StoreOptions(const CollectorConfig& c, const Clock* clock) {
  RocksDbSeriesStoreOptions o;
  o.path = c.storage.path;
  o.retention = c.storage.retention;
  o.chunk_window = c.storage.chunk_window;
  o.sync_writes = c.storage.sync_writes;
  o.recovery_free_bytes = c.storage.recovery_free_space;
  o.clock = clock;
  return o;
}

CollectorServer::CollectorServer(CollectorConfig config, const Clock* clock, StoreOpener open_store)
    : config_(std::move(config)),
      clock_(clock),
      open_store_(std::move(open_store)),
      registry_(std::make_shared<prometheus::Registry>()),
      metrics_(*registry_),
      health_(&metrics_.healthy),
      hosts_(&metrics_.agents_connected),
      validator_(ValidatorOptions(config_), clock) {}

CollectorServer::~CollectorServer() { Shutdown(); }

absl::StatusOr<ServingAddresses> CollectorServer::Start() {
  // Credentials and the access file first: a typo in a path fails the start before the
  // store is opened and its history replayed.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(config_.tls);
  if (!credentials.ok()) return credentials.status();
  metrics_.plaintext.Set(config_.tls.plaintext ? 1 : 0);
  absl::StatusOr<AccessPolicy> access = AccessPolicy::ForCollector(
      config_.auth.access_file, config_.tls.plaintext, config_.grpc.listen_address);
  if (!access.ok()) return access.status();
  access_ = std::make_unique<AccessPolicy>(std::move(*access));
  if (!config_.tls.plaintext) {
    (*credentials)->SetAuthMetadataProcessor(std::make_shared<CallGate>(access_.get(), &metrics_));
  }

  ServingAddresses bound;
  absl::Status started = OpenStore();
  if (started.ok()) started = OpenPipeline();
  if (started.ok()) {
    BuildServices();
    started = ServeMetrics(&bound);
  }
  if (started.ok()) started = ServeGrpc(*credentials, &bound);
  if (started.ok()) started = JoinCluster(bound);
  if (!started.ok()) {
    TearDown();
    return started;
  }
  StartBackground();
  Logger("collector")
      ->info(
          "serving agents and queries on {} (port {}), metrics on {}; store {} (retention {}, "
          "sync_writes {})",
          config_.grpc.listen_address, bound.grpc_port,
          exposer_ ? fmt::format("{} (port {})", config_.metrics.listen_address, bound.metrics_port)
                   : std::string("(disabled)"),
          config_.storage.path, FormatDuration(config_.storage.retention),
          config_.storage.sync_writes);
  return bound;
}

absl::Status CollectorServer::OpenStore() {
  absl::StatusOr<std::unique_ptr<SeriesStore>> store = open_store_(StoreOptions(config_, clock_));
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  return absl::OkStatus();
}

absl::Status CollectorServer::OpenPipeline() {
  // Before serving: the pipeline replays recent history, and live batches must never
  // interleave with the replay.
  absl::StatusOr<std::unique_ptr<LeakPipeline>> pipeline =
      LeakPipeline::Open(PipelineOptions(config_), store_.get(), &commands_, &metrics_, clock_);
  if (!pipeline.ok()) return WithContext(pipeline.status(), config_.storage.path);
  pipeline_ = std::move(*pipeline);
  return absl::OkStatus();
}

void CollectorServer::BuildServices() {
  AgentSessionParts session;
  session.validator = &validator_;
  session.tls = !config_.tls.plaintext;
  session.access = access_.get();
  session.store = store_.get();
  session.detector = pipeline_.get();
  session.commands = &commands_;
  session.health = &health_;
  session.metrics = &metrics_;
  session.clock = clock_;
  session.max_components_per_host = config_.ingest.max_components_per_host;
  if (config_.cluster.enabled()) {
    session.owner_elsewhere = [this](const std::string& host) -> std::optional<ClusterMember> {
      const ClusterPresence* cluster = cluster_for_sessions_.load();
      return cluster == nullptr ? std::nullopt : cluster->OwnerElsewhere(host);
    };
    if (config_.cluster.replication_factor > 1) {
      session.replicate = [this](const drip::v1::HostInfo& host,
                                 const drip::v1::SampleBatch& batch) {
        if (const ClusterPresence* cluster = cluster_for_sessions_.load()) {
          cluster->Replicate(host, batch);
        }
      };
    }
  }
  IngestOptions ingest;
  ingest.write_threads = config_.storage.write_threads;
  ingest.max_samples_per_second =
      static_cast<double>(config_.ingest.max_samples_per_second_per_host);
  ingest.burst_samples = static_cast<double>(config_.ingest.burst_samples_per_host);
  ingest.hello_timeout = config_.ingest.hello_timeout;
  ingest.max_streams_awaiting_hello =
      static_cast<int64_t>(config_.ingest.max_streams_awaiting_hello);
  ingest_ = std::make_unique<IngestService>(ingest, session, &hosts_, &metrics_);
  query_ = std::make_unique<QueryServiceImpl>(access_.get(), store_.get(), &hosts_, pipeline_.get(),
                                              &metrics_, clock_, config_.grpc.max_message_bytes);
  replica_writer_ =
      std::make_unique<ReplicaWriter>(&validator_, store_.get(), pipeline_.get(), &metrics_);
  member_service_ =
      std::make_unique<MemberServiceImpl>(access_.get(), query_.get(), &commands_, pipeline_.get(),
                                          replica_writer_.get(), &metrics_, clock_);
}

absl::Status CollectorServer::ServeMetrics(ServingAddresses* bound) {
  if (config_.metrics.listen_address.empty()) return absl::OkStatus();
  absl::StatusOr<ListenAddress> address = ListenAddress::Parse(config_.metrics.listen_address);
  if (!address.ok()) return WithContext(address.status(), "metrics.listen_address");
  try {
    // civetweb wants IPv6 hosts in brackets, as operators write them.
    exposer_ = std::make_unique<prometheus::Exposer>(config_.metrics.listen_address);
  } catch (const std::exception& e) {
    return absl::UnavailableError(fmt::format("metrics.listen_address {}: cannot listen: {}",
                                              config_.metrics.listen_address, e.what()));
  }
  exposer_->RegisterCollectable(registry_);
  std::vector<int> ports = exposer_->GetListeningPorts();
  bound->metrics_port = ports.empty() ? address->port : ports.front();
  bound->metrics = address->LocalDialAddress(bound->metrics_port);
  return absl::OkStatus();
}

absl::Status CollectorServer::ServeGrpc(const std::shared_ptr<grpc::ServerCredentials>& credentials,
                                        ServingAddresses* bound) {
  absl::StatusOr<ListenAddress> address = ListenAddress::Parse(config_.grpc.listen_address);
  if (!address.ok()) return WithContext(address.status(), "grpc.listen_address");
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config_.grpc.listen_address, credentials, &port);
  // gRPC's own limit is set above ours so that an oversized batch reaches the
  // validator, which refuses it with the batch's sequence and counts it, instead of
  // gRPC failing the stream anonymously.
  const int max_bytes = static_cast<int>(config_.grpc.max_message_bytes);
  builder.SetMaxReceiveMessageSize(2 * max_bytes + 1024 * 1024);
  builder.SetMaxSendMessageSize(max_bytes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                             GrpcMilliseconds(config_.grpc.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             GrpcMilliseconds(config_.grpc.keepalive_timeout));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             kMinAgentPingIntervalMs);
  // Agent streams are quiet between batches; keep pinging them regardless so that a
  // dead host is noticed within keepalive_time + keepalive_timeout.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // gRPC enables SO_REUSEPORT by default, which would let a second collector bind the
  // same port and silently take half the agents; a busy port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(ingest_.get());
  builder.RegisterService(query_.get());
  builder.RegisterService(member_service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) {
    return absl::UnavailableError(
        fmt::format("grpc.listen_address {}: cannot listen (address in use, or not an address "
                    "of this machine)",
                    config_.grpc.listen_address));
  }
  bound->grpc_port = port;
  bound->grpc = address->LocalDialAddress(port);
  health_.AttachHealthService(server_->GetHealthCheckService());
  return absl::OkStatus();
}

absl::Status CollectorServer::JoinCluster(const ServingAddresses& bound) {
  if (!config_.cluster.enabled()) return absl::OkStatus();
  ClusterPresence::Parts parts;
  parts.hosts = &hosts_;
  parts.pipeline = pipeline_.get();
  parts.metrics = &metrics_;
  parts.store = store_.get();
  parts.clock = clock_;
  absl::StatusOr<std::unique_ptr<ClusterPresence>> cluster =
      ClusterPresence::Join(config_, bound.grpc, bound.grpc_port, parts);
  if (!cluster.ok()) return cluster.status();
  cluster_ = std::move(*cluster);
  query_->set_cluster(cluster_->membership(), cluster_->member_queries(),
                      cluster_->replication_factor());
  member_service_->set_cluster(cluster_->membership());
  cluster_for_sessions_.store(cluster_.get());
  return absl::OkStatus();
}

void CollectorServer::StartBackground() {
  maintenance_ = std::make_unique<StorageMaintenance>(store_.get(), &health_, &metrics_,
                                                      config_.storage.retention_check_interval);
  maintenance_->Start();
  pipeline_->Start();
  if (cluster_) cluster_->Start();
}

void CollectorServer::Shutdown(std::chrono::milliseconds grace) {
  if (query_ != nullptr) query_->set_cluster(nullptr, nullptr);
  if (member_service_ != nullptr) member_service_->set_cluster(nullptr);
  if (server_ != nullptr) {
    Logger("collector")
        ->info("shutting down: ending agent streams (grace {})", FormatDuration(grace));
    ingest_->FinishAllStreams();
    // Waits for every call to end; those still open at the deadline are cancelled.
    server_->Shutdown(std::chrono::system_clock::now() + grace);
    server_->Wait();
  }
  if (cluster_ != nullptr) {
    // Nothing is written here any more: what only this member holds (a batch acknowledged
    // while its replica refused, not repaired yet) goes to the members that will hold its
    // hosts, while it is still one of them (they admit live members only). Then it
    // leaves at once, not a lease later; its agents wait meanwhile, their batches held.
    cluster_->HandOver(kHandOverBudget);
    cluster_->Leave();
  }
  TearDown();
}

void CollectorServer::TearDown() {
  // Workers may still report store health; they must stop touching the server first.
  health_.AttachHealthService(nullptr);
  // The background loops first; the pipeline object stays until no session can call it.
  if (query_ != nullptr) query_->set_cluster(nullptr, nullptr);
  if (member_service_ != nullptr) member_service_->set_cluster(nullptr);
  cluster_for_sessions_.store(nullptr);
  if (cluster_) cluster_->Stop();
  if (maintenance_) maintenance_->Stop();
  if (pipeline_) pipeline_->Stop();
  exposer_.reset();
  server_.reset();
  // Each service runs what its workers still hold, then stops them.
  member_service_.reset();
  replica_writer_.reset();
  query_.reset();
  cluster_.reset();
  ingest_.reset();
  maintenance_.reset();
  pipeline_.reset();
  if (store_) {
    store_.reset();
    Logger("collector")->info("store closed");
  }
}

}  // namespace drip::collector
