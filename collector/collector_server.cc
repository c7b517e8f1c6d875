#include "collector/collector_server.h"

#include <exception>
#include <utility>

#include "common/duration.h"
#include "common/listen_address.h"
#include "common/logging.h"
#include "common/tls_settings.h"
#include "fmt/format.h"
#include "grpcpp/health_check_service_interface.h"

namespace drip::collector {
namespace {

// Agents may send keepalive pings this often on an idle connection; more often and
// gRPC answers with GOAWAY (ENHANCE_YOUR_CALM). Documented for agent authors.
constexpr int kMinAgentPingIntervalMs = 10'000;
// Query calls are few and read-only; two threads keep one slow series from blocking
// dripctl hosts.
constexpr size_t kQueryThreads = 2;

int ToInt(std::chrono::milliseconds d) {
  return static_cast<int>(std::min<int64_t>(d.count(), INT32_MAX));
}

}  // namespace

SampleValidatorOptions ValidatorOptions(const CollectorConfig& c) {
  SampleValidatorOptions o;
  o.max_message_bytes = c.grpc.max_message_bytes;
  o.max_samples_per_batch = c.ingest.max_samples_per_batch;
  o.max_future_skew = c.ingest.max_future_skew;
  o.retention = c.storage.retention;
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
  auto log = Logger("collector");
  ServingAddresses bound;

  // Credentials and the access file first: a typo in a path fails the start before the
  // store is opened and its history replayed.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(config_.tls);
  if (!credentials.ok()) return credentials.status();
  if (absl::Status access = LoadAccessPolicy(); !access.ok()) return access;

  RocksDbSeriesStoreOptions store_options;
  store_options.path = config_.storage.path;
  store_options.retention = config_.storage.retention;
  store_options.chunk_window = config_.storage.chunk_window;
  store_options.sync_writes = config_.storage.sync_writes;
  store_options.recovery_free_bytes = config_.storage.recovery_free_space;
  store_options.clock = clock_;
  absl::StatusOr<std::unique_ptr<SeriesStore>> store = open_store_(store_options);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);

  // Replay recent history before serving, so suspects and normal levels survive a
  // restart and live batches never interleave with the replay.
  detector_ = std::make_unique<OnlineDetector>(config_.detector);
  const auto rebuild_start = std::chrono::steady_clock::now();
  absl::StatusOr<uint64_t> replayed =
      detector_->Rebuild(store_.get(), clock_->NowMs() - config_.detector_rebuild_window.count());
  if (!replayed.ok()) {
    TearDown();
    return absl::Status(
        replayed.status().code(),
        fmt::format("rebuilding the leak detector from {}: {}", config_.storage.path,
                    std::string(replayed.status().message())));
  }
  detector_->AdvanceTo(clock_->NowMs() / 1000);
  metrics_.detector_rebuild_seconds.Set(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - rebuild_start).count());
  RefreshDetectorMetrics();
  log->info("leak detector rebuilt from {} stored samples: {} series, {} suspects", *replayed,
            detector_->series_count(), detector_->suspect_count());

  snapshots_ = std::make_unique<SnapshotScheduler>(config_.snapshots, config_.diagnoser, &hosts_);
  reports_ =
      std::make_unique<LeakReportBook>(config_.reports, &config_.mitigation, store_->reports());
  if (absl::Status loaded = reports_->Load(); !loaded.ok()) {
    TearDown();
    return absl::Status(loaded.code(),
                        fmt::format("loading leak reports from {}: {}", config_.storage.path,
                                    std::string(loaded.message())));
  }
  mitigations_ = std::make_unique<MitigationCoordinator>(config_.mitigation, reports_.get(),
                                                         &hosts_, &metrics_);
  writers_ = std::make_unique<WorkerPool>("drip-write", config_.storage.write_threads);
  readers_ = std::make_unique<WorkerPool>("drip-query", kQueryThreads);
  AgentStreamEnv env;
  env.store = store_.get();
  env.validator = &validator_;
  env.metrics = &metrics_;
  env.hosts = &hosts_;
  env.health = &health_;
  env.writers = writers_.get();
  env.detector = detector_.get();
  env.snapshots = snapshots_.get();
  env.mitigations = mitigations_.get();
  env.clock = clock_;
  env.tls = !config_.tls.plaintext;
  env.access = access_.get();
  env.max_samples_per_second = static_cast<double>(config_.ingest.max_samples_per_second_per_host);
  env.burst_samples = static_cast<double>(config_.ingest.burst_samples_per_host);
  ingest_ = std::make_unique<IngestService>(std::move(env));
  QuerySources sources;
  sources.access = access_.get();
  sources.metrics = &metrics_;
  sources.store = store_.get();
  sources.hosts = &hosts_;
  sources.readers = readers_.get();
  sources.detector = detector_.get();
  sources.snapshots = snapshots_.get();
  sources.reports = reports_.get();
  sources.mitigations = mitigations_.get();
  sources.clock = clock_;
  query_ = std::make_unique<QueryServiceImpl>(sources);

  if (!config_.metrics.listen_address.empty()) {
    absl::StatusOr<ListenAddress> address = ListenAddress::Parse(config_.metrics.listen_address);
    if (!address.ok()) {
      TearDown();
      return absl::InvalidArgumentError(
          fmt::format("metrics.listen_address: {}", std::string(address.status().message())));
    }
    try {
      // civetweb wants IPv6 hosts in brackets, as operators write them.
      exposer_ = std::make_unique<prometheus::Exposer>(config_.metrics.listen_address);
    } catch (const std::exception& e) {
      TearDown();
      return absl::UnavailableError(fmt::format("metrics.listen_address {}: cannot listen: {}",
                                                config_.metrics.listen_address, e.what()));
    }
    exposer_->RegisterCollectable(registry_);
    std::vector<int> ports = exposer_->GetListeningPorts();
    bound.metrics_port = ports.empty() ? address->port : ports.front();
    bound.metrics = address->LocalDialAddress(bound.metrics_port);
  }

  absl::StatusOr<ListenAddress> grpc_address = ListenAddress::Parse(config_.grpc.listen_address);
  if (!grpc_address.ok()) {
    TearDown();
    return absl::InvalidArgumentError(
        fmt::format("grpc.listen_address: {}", std::string(grpc_address.status().message())));
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int grpc_port = 0;
  builder.AddListeningPort(config_.grpc.listen_address, *credentials, &grpc_port);
  // gRPC's own limit is set above ours so that an oversized batch reaches the
  // validator, which refuses it with the batch's sequence and counts it, instead of
  // gRPC failing the stream anonymously.
  const int max_bytes = static_cast<int>(config_.grpc.max_message_bytes);
  builder.SetMaxReceiveMessageSize(2 * max_bytes + 1024 * 1024);
  builder.SetMaxSendMessageSize(max_bytes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, ToInt(config_.grpc.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, ToInt(config_.grpc.keepalive_timeout));
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
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || grpc_port == 0) {
    TearDown();
    return absl::UnavailableError(
        fmt::format("grpc.listen_address {}: cannot listen (address in use, or not an address "
                    "of this machine)",
                    config_.grpc.listen_address));
  }
  bound.grpc_port = grpc_port;
  bound.grpc = grpc_address->LocalDialAddress(grpc_port);
  health_.AttachHealthService(server_->GetHealthCheckService());

  recovery_ = std::make_unique<StorageRecovery>(store_.get(), &health_, &metrics_);
  maintenance_ = std::make_unique<StorageMaintenance>(
      store_.get(), &metrics_, recovery_.get(), config_.storage.retention_check_interval,
      std::chrono::seconds(5), [this] {
        const auto start = std::chrono::steady_clock::now();
        detector_->AdvanceTo(clock_->NowMs() / 1000);
        metrics_.detector_run_seconds.Observe(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        RefreshDetectorMetrics();
      });
  maintenance_->Start();

  log->info(
      "serving agents and queries on {} (port {}), metrics on {}; store {} (retention {}, "
      "sync_writes {})",
      config_.grpc.listen_address, grpc_port,
      exposer_ ? fmt::format("{} (port {})", config_.metrics.listen_address, bound.metrics_port)
               : std::string("(disabled)"),
      config_.storage.path, FormatDuration(config_.storage.retention), config_.storage.sync_writes);
  return bound;
}

absl::Status CollectorServer::LoadAccessPolicy() {
  auto log = Logger("collector");
  metrics_.plaintext.Set(config_.tls.plaintext ? 1 : 0);
  if (config_.tls.plaintext) {
    log->warn(
        "TLS is off (tls.plaintext: true): samples, commands and queries travel in the clear and "
        "agents' host names are taken on trust; use it only on loopback or in a test");
  }
  if (config_.auth.access_file.empty()) {
    if (config_.tls.plaintext) {
      access_ = std::make_unique<AccessPolicy>(AccessPolicy::Default::kOpen);
      log->warn(
          "no auth.access_file: anyone who can reach {} may read, acknowledge, resolve and "
          "mitigate",
          config_.grpc.listen_address);
    } else {
      access_ = std::make_unique<AccessPolicy>(AccessPolicy::Default::kCertificatesView);
      log->warn(
          "no auth.access_file: clients with a certificate from the CA may read; nobody may "
          "acknowledge, resolve or mitigate");
    }
    return absl::OkStatus();
  }
  absl::StatusOr<AccessPolicy> policy = AccessPolicy::FromFile(config_.auth.access_file);
  if (!policy.ok()) {
    return absl::Status(
        policy.status().code(),
        fmt::format("auth.access_file: {}", std::string(policy.status().message())));
  }
  access_ = std::make_unique<AccessPolicy>(std::move(*policy));
  log->info("query API access from {}: {} principals", config_.auth.access_file,
            access_->principal_count());
  if (config_.tls.plaintext) {
    log->warn("bearer tokens travel in the clear: tls.plaintext is true");
  }
  return absl::OkStatus();
}

void CollectorServer::Shutdown(std::chrono::milliseconds grace) {
  if (server_ != nullptr) {
    Logger("collector")
        ->info("shutting down: ending agent streams (grace {})", FormatDuration(grace));
    ingest_->FinishAllStreams();
    // Waits for every call to end; those still open at the deadline are cancelled.
    server_->Shutdown(std::chrono::system_clock::now() + grace);
    server_->Wait();
  }
  TearDown();
}

void CollectorServer::RefreshDetectorMetrics() {
  drip::v1::ListSuspectsResponse now;
  detector_->Fill("", &now);
  const int64_t now_ms = clock_->NowMs();
  if (snapshots_ != nullptr) {
    snapshots_->Tick(now_ms, now);
    // The scheduler counts; the metrics follow by the difference since the last refresh.
    const SnapshotScheduler::Counts counts = snapshots_->counts();
    metrics_.snapshots_requested.Increment(
        static_cast<double>(counts.requested - snapshot_counts_.requested));
    metrics_.snapshots_succeeded.Increment(
        static_cast<double>(counts.succeeded - snapshot_counts_.succeeded));
    metrics_.snapshots_failed.Increment(
        static_cast<double>(counts.failed - snapshot_counts_.failed));
    snapshot_counts_ = counts;
  }
  if (reports_ != nullptr) {
    // The reports show each suspect's snapshot and diagnosis.
    if (snapshots_ != nullptr) snapshots_->Fill(&now);
    reports_->Update(now_ms, now);
    if (mitigations_ != nullptr) mitigations_->Tick(now_ms);
    report_metrics_.Refresh(reports_->List("", ""), reports_->counts());
  }
  metrics_.detector_suspects.Set(now.suspects_size());
  metrics_.detector_suspected_components.Set(now.components_size());
  metrics_.detector_series.Set(static_cast<double>(detector_->series_count()));
  metrics_.detector_samples.Set(static_cast<double>(detector_->samples_observed()));
}

void CollectorServer::TearDown() {
  // Workers may still report store health; they must stop touching the server first.
  health_.AttachHealthService(nullptr);
  if (maintenance_) maintenance_->Stop();
  // Runs queued tasks, which only finish already-ended calls now.
  if (writers_) writers_->Stop();
  if (readers_) readers_->Stop();
  exposer_.reset();
  server_.reset();
  query_.reset();
  ingest_.reset();
  maintenance_.reset();
  recovery_.reset();
  writers_.reset();
  readers_.reset();
  mitigations_.reset();
  reports_.reset();
  snapshots_.reset();
  detector_.reset();
  if (store_) {
    store_.reset();
    Logger("collector")->info("store closed");
  }
}

}  // namespace drip::collector
