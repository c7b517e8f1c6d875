// In-process tests of the whole collector: the real RocksDB store in a temp dir, the
// real gRPC server on 127.0.0.1:0, and real gRPC clients playing agent and dripctl.
// Nothing here measures time; deadlines only keep a broken build from hanging.
#include "collector/collector_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collector/ingest/agent_stream_reactor.h"
#include "collector/storage/rocksdb_series_store.h"
#include "common/base/clock.h"
#include "drip/v1/agent.grpc.pb.h"
#include "drip/v1/query.grpc.pb.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"

namespace drip::collector {
namespace {

using drip::v1::AgentMessage;
using drip::v1::CollectorMessage;
using ::testing::HasSubstr;

constexpr auto kRpcDeadline = std::chrono::seconds(30);

int64_t NowMs() { return SystemClock::Get()->NowMs(); }

// ---- Messages ----

AgentMessage Hello(const std::string& host) {
  AgentMessage m;
  m.mutable_hello()->set_host(host);
  m.mutable_hello()->set_agent_version("test-1.0");
  m.mutable_hello()->set_memory_total_bytes(8ull << 30);
  (*m.mutable_hello()->mutable_labels())["kernel"] = "6.1.0";
  m.mutable_hello()->mutable_status()->set_sampler("bpf");
  return m;
}

AgentMessage Batch(uint64_t sequence, int samples, const std::string& component = "svc:app") {
  AgentMessage m;
  drip::v1::SampleBatch* b = m.mutable_batch();
  b->set_sequence(sequence);
  int64_t now = NowMs();
  for (int i = 0; i < samples; ++i) {
    drip::v1::Sample* s = b->add_samples();
    s->set_component(component);
    s->set_instance("100@1");
    // Distinct timestamps per batch and sample, all in the recent past.
    s->set_timestamp_ms(now - 60'000 + static_cast<int64_t>(sequence) * 100 + i);
    s->mutable_process()->set_anon_rss_bytes(1000 * sequence + i);
  }
  return m;
}

// ---- A test agent: one Connect stream on the synchronous client API ----

class TestAgent {
 public:
  explicit TestAgent(drip::v1::AgentService::Stub* stub) {
    context_.set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
    stream_ = stub->Connect(&context_);
  }

  bool Send(const AgentMessage& m) { return stream_->Write(m); }

  std::optional<CollectorMessage> Read() {
    CollectorMessage m;
    if (!stream_->Read(&m)) return std::nullopt;
    return m;
  }

  // Sends Hello and returns the Welcome's acked_sequence, or nullopt.
  std::optional<uint64_t> SayHello(const std::string& host) {
    if (!Send(Hello(host))) return std::nullopt;
    std::optional<CollectorMessage> m = Read();
    if (!m || !m->has_welcome()) return std::nullopt;
    return m->welcome().acked_sequence();
  }

  // Reads until an ack covering `sequence`; false if the stream ends first.
  bool AwaitAck(uint64_t sequence) {
    while (std::optional<CollectorMessage> m = Read()) {
      if (m->has_ack() && m->ack().sequence() >= sequence) return true;
    }
    return false;
  }

  // Reads what is left and returns the stream's status (the server ends it).
  grpc::Status AwaitEnd() {
    while (Read()) {
    }
    return stream_->Finish();
  }

  // The agent's clean goodbye: half-close, drain, status.
  grpc::Status Close() {
    stream_->WritesDone();
    return AwaitEnd();
  }

  // Ends the call from the client's side (unblocks a Write held by flow control).
  void Cancel() { context_.TryCancel(); }

  std::string Trailer(const std::string& key) const {
    const auto& md = context_.GetServerTrailingMetadata();
    auto it = md.find(key);
    return it == md.end() ? "" : std::string(it->second.data(), it->second.size());
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<AgentMessage, CollectorMessage>> stream_;
};

// ---- A store wrapper whose writes can be made to fail ----

// While `fail_writes` is set, every call that would write fails, as RocksDB's store does
// after a write error; reads, and batches at or below the mark (which the real store
// answers without writing), still work. Like the real store it says its writes are
// stopped from the first failure until Recover() succeeds.
class FlakyStore final : public SeriesStore {
 public:
  FlakyStore(std::unique_ptr<SeriesStore> real, std::atomic<bool>* fail_writes)
      : real_(std::move(real)), fail_writes_(fail_writes) {}

  absl::StatusOr<AppendResult> AppendBatch(const std::string& host,
                                           const drip::v1::SampleBatch& batch) override {
    absl::StatusOr<uint64_t> mark = real_->AckedSequence(host);
    if (fail_writes_->load() && (!mark.ok() || batch.sequence() > *mark)) return Fail();
    return real_->AppendBatch(host, batch);
  }
  absl::StatusOr<AppendResult> AppendReplicaBatch(const std::string& host,
                                                  const drip::v1::SampleBatch& batch) override {
    if (fail_writes_->load()) return Fail();
    return real_->AppendReplicaBatch(host, batch);
  }
  absl::StatusOr<uint64_t> AppendRepairSamples(const std::string& host,
                                               const drip::v1::SampleBatch& batch) override {
    if (fail_writes_->load()) return Fail();
    return real_->AppendRepairSamples(host, batch);
  }
  absl::StatusOr<uint64_t> AckedSequence(const std::string& host) override {
    return real_->AckedSequence(host);
  }
  absl::Status PutHost(const drip::v1::HostInfo& info) override {
    if (fail_writes_->load()) return Fail();
    return real_->PutHost(info);
  }
  absl::StatusOr<std::vector<drip::v1::HostInfo>> ListHosts() override {
    return real_->ListHosts();
  }
  absl::StatusOr<std::vector<drip::v1::Series>> ReadSeries(const std::string& host,
                                                           const std::string& component,
                                                           int64_t since_ms, int64_t until_ms,
                                                           size_t max_samples) override {
    return real_->ReadSeries(host, component, since_ms, until_ms, max_samples);
  }
  absl::StatusOr<std::vector<drip::v1::InstanceVersion>> ReadInstanceVersions() override {
    return real_->ReadInstanceVersions();
  }
  absl::StatusOr<std::vector<GapRecord>> ReadGaps(const std::string& host) override {
    return real_->ReadGaps(host);
  }
  absl::StatusOr<std::vector<std::string>> ListComponents(const std::string& host) override {
    return real_->ListComponents(host);
  }
  absl::StatusOr<uint64_t> EnforceRetention() override { return real_->EnforceRetention(); }
  uint64_t ApproximateSizeBytes() override { return real_->ApproximateSizeBytes(); }
  uint64_t CorruptRecordsSkipped() override { return real_->CorruptRecordsSkipped(); }
  absl::StatusOr<uint64_t> FreeDiskBytes() override { return real_->FreeDiskBytes(); }
  absl::Status WriteState() override {
    if (stopped_.load()) return Injected();
    return real_->WriteState();
  }
  absl::Status Recover() override {
    if (fail_writes_->load()) return Injected();
    stopped_ = false;
    return real_->Recover();
  }
  ReportStore* reports() override { return real_->reports(); }

 private:
  static absl::Status Injected() { return absl::UnavailableError("injected: disk full"); }
  absl::Status Fail() {
    stopped_ = true;
    return Injected();
  }

  std::unique_ptr<SeriesStore> real_;
  std::atomic<bool>* fail_writes_;
  std::atomic<bool> stopped_{false};
};

// ---- Fixture ----

class CollectorServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/drip-collector-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    config_.grpc.listen_address = "127.0.0.1:0";
    config_.tls.plaintext = true;
    config_.grpc.max_message_bytes = 64 * 1024;
    // Off except where a test serves /metrics: stopping civetweb takes up to 2s.
    config_.metrics.listen_address = "";
    config_.storage.path = dir_ + "/db";
    config_.storage.write_threads = 2;
  }

  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartServer() {
    auto opener = [this](const RocksDbSeriesStoreOptions& options)
        -> absl::StatusOr<std::unique_ptr<SeriesStore>> {
      absl::StatusOr<std::unique_ptr<SeriesStore>> real = OpenRocksDbSeriesStore(options);
      if (!real.ok()) return real.status();
      return std::unique_ptr<SeriesStore>(new FlakyStore(std::move(*real), &fail_writes_));
    };
    server_ = std::make_unique<CollectorServer>(config_, clock_, opener);
    absl::StatusOr<ServingAddresses> bound = server_->Start();
    ASSERT_TRUE(bound.ok()) << bound.status();
    bound_ = *bound;
    channel_ = grpc::CreateChannel(bound_.grpc, grpc::InsecureChannelCredentials());
    agents_ = drip::v1::AgentService::NewStub(channel_);
    query_ = drip::v1::QueryService::NewStub(channel_);
  }

  // The detector's durations scaled down from hours to minutes, for LeakHistory: a
  // suspect within one batch of four hours of samples.
  void UseMinuteScaleDetector() {
    config_.detector.epoch_seconds = 60;
    config_.detector.floor_epochs = 1;
    config_.detector.startup_grace_seconds = 0;
    config_.detector.fleet_min_climb_seconds = 300;
    config_.detector.min_climb_seconds = 600;
    config_.detector.young_fast_min_climb_seconds = 1800;
    config_.detector.young_fast_rise_fraction = 0.25;  // the history is half an hour long
    config_.detector.level_off_seconds = 600;
    config_.grpc.max_message_bytes = 1 << 20;
  }

  std::unique_ptr<TestAgent> NewAgent() { return std::make_unique<TestAgent>(agents_.get()); }

  grpc::Status GetSeries(const std::string& host, const std::string& component,
                         drip::v1::GetSeriesResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
    drip::v1::GetSeriesRequest request;
    request.set_host(host);
    request.set_component(component);
    return query_->GetSeries(&context, request, response);
  }

  int StoredSamples(const std::string& host, const std::string& component) {
    drip::v1::GetSeriesResponse response;
    grpc::Status s = GetSeries(host, component, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    int n = 0;
    for (const auto& series : response.series()) n += series.samples_size();
    return n;
  }

  drip::v1::ListSuspectsResponse ListSuspects() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
    drip::v1::ListSuspectsResponse response;
    grpc::Status s = query_->ListSuspects(&context, drip::v1::ListSuspectsRequest(), &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  std::optional<drip::v1::HostInfo> ListedHost(const std::string& host) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
    drip::v1::ListHostsResponse response;
    grpc::Status s = query_->ListHosts(&context, drip::v1::ListHostsRequest(), &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    for (const auto& h : response.hosts()) {
      if (h.host() == host) return h;
    }
    return std::nullopt;
  }

  // Value of a counter or gauge in the server's registry; -1 when absent.
  // The counter `name` once it reaches `at_least`, or its value after 2 s.
  double AwaitCounter(const std::string& name, double at_least) {
    for (int i = 0; i < 200 && Metric(name) < at_least; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return Metric(name);
  }

  double Metric(const std::string& name, const std::string& label = "",
                const std::string& value = "") {
    for (const prometheus::MetricFamily& family : server_->registry().Collect()) {
      if (family.name != name) continue;
      for (const prometheus::ClientMetric& m : family.metric) {
        bool match = label.empty();
        for (const prometheus::ClientMetric::Label& l : m.label) {
          if (l.name == label && l.value == value) match = true;
        }
        if (!match) continue;
        return family.type == prometheus::MetricType::Gauge ? m.gauge.value : m.counter.value;
      }
    }
    return -1;
  }

  // grpc.health.v1.Health/Check for the whole server: 1 SERVING, 2 NOT_SERVING, -1 when
  // the call fails.
  int HealthStatus() {
    auto stub = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
    return status.ok() ? static_cast<int>(response.status()) : -1;
  }

  std::string dir_;
  CollectorConfig config_;
  const Clock* clock_ = SystemClock::Get();
  std::atomic<bool> fail_writes_{false};
  std::unique_ptr<CollectorServer> server_;
  ServingAddresses bound_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<drip::v1::AgentService::Stub> agents_;
  std::unique_ptr<drip::v1::QueryService::Stub> query_;
};

// A minimal HTTP/1.0 GET over a socket, so the test needs no HTTP client library.
std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    std::string request = fmt::format("GET {} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = read(fd, buf, sizeof(buf))) > 0) response.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return response;
}

// ---- Protocol ----

TEST_F(CollectorServerTest, HelloIsAnsweredWithWelcomeCarryingTheDurableSequence) {
  StartServer();
  {
    auto agent = NewAgent();
    EXPECT_EQ(agent->SayHello("web-1"), 0u);
    ASSERT_TRUE(agent->Send(Batch(1, 2)));
    ASSERT_TRUE(agent->Send(Batch(2, 2)));
    ASSERT_TRUE(agent->AwaitAck(2));
    EXPECT_TRUE(agent->Close().ok());
  }
  auto again = NewAgent();
  EXPECT_EQ(again->SayHello("web-1"), 2u);
  EXPECT_TRUE(again->Close().ok());
}

TEST_F(CollectorServerTest, AckedBatchIsStoredAndReadableThroughGetSeries) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  ASSERT_TRUE(agent->Send(Batch(1, 3)));
  std::optional<CollectorMessage> ack = agent->Read();
  ASSERT_TRUE(ack && ack->has_ack());
  EXPECT_EQ(ack->ack().sequence(), 1u);
  // The ack means durable: readable at once, with no waiting.
  drip::v1::GetSeriesResponse response;
  ASSERT_TRUE(GetSeries("web-1", "svc:app", &response).ok());
  ASSERT_EQ(response.series_size(), 1);
  EXPECT_EQ(response.series(0).instance(), "100@1");
  EXPECT_EQ(response.series(0).samples_size(), 3);
  EXPECT_EQ(Metric("drip_ingest_batches_total"), 1);
  EXPECT_EQ(Metric("drip_ingest_samples_total"), 3);
  EXPECT_GT(Metric("drip_ingest_bytes_total"), 0);
  EXPECT_TRUE(agent->Close().ok());
}

TEST_F(CollectorServerTest, PipelinedBatchesAreAllStoredAndAckedInOrder) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  // Sent without waiting, as an agent catching up after an outage does.
  for (uint64_t seq = 1; seq <= 20; ++seq) ASSERT_TRUE(agent->Send(Batch(seq, 2)));
  uint64_t last = 0;
  while (last < 20) {
    std::optional<CollectorMessage> m = agent->Read();
    ASSERT_TRUE(m && m->has_ack());
    // Acks may be coalesced but never go backwards.
    EXPECT_GT(m->ack().sequence(), last);
    last = m->ack().sequence();
  }
  EXPECT_EQ(StoredSamples("web-1", "svc:app"), 40);
  EXPECT_TRUE(agent->Close().ok());
}

TEST_F(CollectorServerTest, ResentBatchIsAckedButNotStoredTwice) {
  StartServer();
  {
    auto agent = NewAgent();
    ASSERT_EQ(agent->SayHello("web-1"), 0u);
    ASSERT_TRUE(agent->Send(Batch(1, 3)));
    ASSERT_TRUE(agent->AwaitAck(1));
    EXPECT_TRUE(agent->Close().ok());
  }
  // The agent missed the ack (say) and resends after reconnecting.
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 1u);
  ASSERT_TRUE(agent->Send(Batch(1, 3)));
  std::optional<CollectorMessage> ack = agent->Read();
  ASSERT_TRUE(ack && ack->has_ack());
  EXPECT_EQ(ack->ack().sequence(), 1u);
  EXPECT_EQ(StoredSamples("web-1", "svc:app"), 3);
  EXPECT_EQ(Metric("drip_ingest_duplicate_batches_total"), 1);
  EXPECT_EQ(Metric("drip_ingest_batches_total"), 1);
  EXPECT_TRUE(agent->Close().ok());
}

TEST_F(CollectorServerTest, SequenceJumpIsCountedAsGap) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  ASSERT_TRUE(agent->Send(Batch(1, 1)));
  ASSERT_TRUE(agent->AwaitAck(1));
  AgentMessage after_drop = Batch(5, 1);
  after_drop.mutable_batch()->set_first_dropped_sequence(2);
  ASSERT_TRUE(agent->Send(after_drop));
  ASSERT_TRUE(agent->AwaitAck(5));
  EXPECT_EQ(Metric("drip_ingest_gap_batches_total"), 3);
  EXPECT_EQ(StoredSamples("web-1", "svc:app"), 2);
  EXPECT_TRUE(agent->Close().ok());
}

// ---- Refusals ----

TEST_F(CollectorServerTest, EmptyHostInHelloIsRejectedWithInvalidArgument) {
  StartServer();
  auto bad = NewAgent();
  ASSERT_TRUE(bad->Send(Hello("")));
  grpc::Status status = bad->AwaitEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("host is empty"));
  EXPECT_EQ(bad->Trailer(kRejectedSequenceKey), "");  // no batch to drop
  EXPECT_EQ(Metric("drip_ingest_rejected_total", "reason", "empty_host"), 1);
  EXPECT_EQ(Metric("drip_agent_streams_total", "outcome", "rejected"), 1);

  // Everyone else is still served.
  auto good = NewAgent();
  ASSERT_EQ(good->SayHello("web-1"), 0u);
  ASSERT_TRUE(good->Send(Batch(1, 1)));
  EXPECT_TRUE(good->AwaitAck(1));
  EXPECT_TRUE(good->Close().ok());
}

TEST_F(CollectorServerTest, FutureTimestampIsRejectedNamingTheBatchInTrailingMetadata) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  ASSERT_TRUE(agent->Send(Batch(1, 1)));
  ASSERT_TRUE(agent->AwaitAck(1));
  AgentMessage future = Batch(2, 4);
  future.mutable_batch()->mutable_samples(3)->set_timestamp_ms(2208988800000);  // 2040
  ASSERT_TRUE(agent->Send(future));
  grpc::Status status = agent->AwaitEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(),
              HasSubstr("batch 2 sample 3: timestamp 2040-01-01T00:00:00Z is "));
  EXPECT_THAT(status.error_message(), HasSubstr("max skew 5m"));
  EXPECT_EQ(agent->Trailer(kRejectedSequenceKey), "2");
  EXPECT_EQ(Metric("drip_ingest_rejected_total", "reason", "future_timestamp"), 1);
  EXPECT_EQ(StoredSamples("web-1", "svc:app"), 1);  // nothing of batch 2
}

// A collector whose clock lags the fleet's sees every batch as from the future. Refusing
// them (agents drop refused batches) would lose every host's data; UNAVAILABLE keeps the
// batch at the agent (CollectorStreamTest.UnavailableIsRetriedEvenIfTrailersNameABatch),
// and once the collector's clock has caught up with it, the resent batch is stored.
TEST_F(CollectorServerTest, ALaggingCollectorClockDefersBatchesAndLosesNone) {
  FakeClock lagging(NowMs() - 10 * 60 * 1000);
  clock_ = &lagging;
  StartServer();
  {
    auto agent = NewAgent();
    ASSERT_EQ(agent->SayHello("web-1"), 0u);
    ASSERT_TRUE(agent->Send(Batch(1, 3)));  // stamped by the host's clock: 10 min ahead
    grpc::Status status = agent->AwaitEnd();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("the agent keeps the batch"));
    EXPECT_EQ(Metric("drip_ingest_rejected_total", "reason", "future_timestamp"), 1);
  }
  lagging.Advance(std::chrono::minutes(6));  // within the 5 min skew of the samples
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);  // nothing of batch 1 was stored
  ASSERT_TRUE(agent->Send(Batch(1, 3)));
  ASSERT_TRUE(agent->AwaitAck(1));
  EXPECT_EQ(StoredSamples("web-1", "svc:app"), 3);
  EXPECT_TRUE(agent->Close().ok());
}

TEST_F(CollectorServerTest, OversizedBatchIsRejectedWithResourceExhaustedAndCounted) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  AgentMessage big = Batch(1, 10, std::string(20 * 1024, 'x'));  // ~200 KiB > 64 KiB
  ASSERT_GT(big.ByteSizeLong(), config_.grpc.max_message_bytes);
  ASSERT_TRUE(agent->Send(big));
  grpc::Status status = agent->AwaitEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("exceeds grpc.max_message_bytes"));
  EXPECT_EQ(agent->Trailer(kRejectedSequenceKey), "1");
  EXPECT_EQ(Metric("drip_ingest_rejected_total", "reason", "oversized"), 1);
}

TEST_F(CollectorServerTest, SampleClaimingAnotherHostIsRejectedWithPermissionDenied) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  AgentMessage batch = Batch(7, 2);
  batch.mutable_batch()->mutable_samples(1)->set_host("db-1");
  ASSERT_TRUE(agent->Send(batch));
  grpc::Status status = agent->AwaitEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("host 'db-1' is not this stream's host 'web-1'"));
  EXPECT_EQ(agent->Trailer(kRejectedSequenceKey), "7");
  EXPECT_EQ(Metric("drip_ingest_rejected_total", "reason", "host_mismatch"), 1);
  drip::v1::GetSeriesResponse response;
  EXPECT_EQ(GetSeries("db-1", "svc:app", &response).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CollectorServerTest, BatchBeforeHelloIsRejectedWithoutDroppingTheBatch) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_TRUE(agent->Send(Batch(1, 1)));
  grpc::Status status = agent->AwaitEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("before hello"));
  EXPECT_EQ(agent->Trailer(kRejectedSequenceKey), "");
  EXPECT_EQ(Metric("drip_ingest_rejected_total", "reason", "hello_missing"), 1);
}

// ---- Streams and hosts ----

TEST_F(CollectorServerTest, SecondStreamForTheSameHostSupersedesTheFirst) {
  StartServer();
  auto first = NewAgent();
  ASSERT_EQ(first->SayHello("web-1"), 0u);
  auto second = NewAgent();
  ASSERT_EQ(second->SayHello("web-1"), 0u);
  grpc::Status status = first->AwaitEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_EQ(status.error_message(), "superseded by a new stream from the same host");
  // The newer stream is unaffected and the host still counts as connected.
  ASSERT_TRUE(second->Send(Batch(1, 1)));
  EXPECT_TRUE(second->AwaitAck(1));
  std::optional<drip::v1::HostInfo> host = ListedHost("web-1");
  ASSERT_TRUE(host);
  EXPECT_TRUE(host->connected());
  EXPECT_TRUE(second->Close().ok());
}

TEST_F(CollectorServerTest, ListHostsShowsConnectedOnlyWhileTheStreamIsOpen) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  std::optional<drip::v1::HostInfo> host = ListedHost("web-1");
  ASSERT_TRUE(host);
  EXPECT_TRUE(host->connected());
  EXPECT_EQ(host->agent_version(), "test-1.0");
  EXPECT_EQ(host->sampler(), "bpf");
  EXPECT_EQ(host->memory_total_bytes(), 8ull << 30);
  EXPECT_EQ(host->labels().at("kernel"), "6.1.0");
  EXPECT_EQ(Metric("drip_agents_connected"), 1);

  ASSERT_TRUE(agent->Close().ok());
  host = ListedHost("web-1");
  ASSERT_TRUE(host);
  EXPECT_FALSE(host->connected());
}

// A series too long to answer is refused before all of it is read into memory: the read
// stops once it holds more samples than the answer could carry.
TEST_F(CollectorServerTest, ASeriesTooLongForOneAnswerIsRefusedWithoutReadingItAll) {
  StartServer();  // grpc.max_message_bytes 64 KiB: at most 4096 samples a read
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  for (uint64_t sequence = 1; sequence <= 3; ++sequence) {
    AgentMessage batch = Batch(sequence, 2000);
    for (int i = 0; i < 2000; ++i) {
      batch.mutable_batch()->mutable_samples(i)->set_timestamp_ms(
          NowMs() - 3'600'000 + static_cast<int64_t>(sequence) * 100'000 + i);
    }
    ASSERT_TRUE(agent->Send(batch));
    ASSERT_TRUE(agent->AwaitAck(sequence));
  }
  drip::v1::GetSeriesResponse response;
  grpc::Status status = GetSeries("web-1", "svc:app", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("more than 4096 samples"));
  EXPECT_TRUE(agent->Close().ok());
}

TEST_F(CollectorServerTest, GetSeriesNamesMissingFieldsAndUnknownHosts) {
  StartServer();
  drip::v1::GetSeriesResponse response;
  grpc::Status s = GetSeries("", "svc:app", &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "host is required");
  s = GetSeries("web-1", "", &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "component is required");
  s = GetSeries("nobody", "svc:app", &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("'nobody'"));
}

TEST_F(CollectorServerTest, KnownHostWithoutTheComponentGivesAnEmptyAnswer) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  drip::v1::GetSeriesResponse response;
  EXPECT_TRUE(GetSeries("web-1", "svc:other", &response).ok());
  EXPECT_EQ(response.series_size(), 0);
  EXPECT_TRUE(agent->Close().ok());
}

// ---- Storage failure and health ----

TEST_F(CollectorServerTest,
       StoreWriteFailureEndsStreamUnavailableAndMarksUnhealthyUntilTheStoreRecovers) {
  StartServer();
  EXPECT_EQ(HealthStatus(), 1);  // SERVING
  {
    auto agent = NewAgent();
    ASSERT_EQ(agent->SayHello("web-1"), 0u);
    fail_writes_ = true;
    ASSERT_TRUE(agent->Send(Batch(1, 1)));
    std::optional<CollectorMessage> m = agent->Read();
    EXPECT_FALSE(m.has_value()) << "no ack for a batch that is not durable";
    grpc::Status status = agent->AwaitEnd();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(status.error_message(), HasSubstr("injected: disk full"));
    EXPECT_EQ(agent->Trailer(kRejectedSequenceKey), "");  // resend it, do not drop it
  }
  EXPECT_EQ(Metric("drip_storage_write_errors_total"), 1);
  EXPECT_EQ(Metric("drip_collector_healthy"), 0);
  EXPECT_EQ(HealthStatus(), 2);  // NOT_SERVING
  {
    // A reconnecting agent's hello is a write too: it fails the same way.
    auto agent = NewAgent();
    ASSERT_TRUE(agent->Send(Hello("web-1")));
    EXPECT_EQ(agent->AwaitEnd().error_code(), grpc::StatusCode::UNAVAILABLE);
  }

  // The store recovers by itself: the next maintenance round (every second) sees it.
  fail_writes_ = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (HealthStatus() != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(HealthStatus(), 1);
  EXPECT_EQ(Metric("drip_collector_healthy"), 1);
  EXPECT_GE(Metric("drip_storage_recoveries_total", "outcome", "succeeded"), 1);
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  ASSERT_TRUE(agent->Send(Batch(1, 1)));
  EXPECT_TRUE(agent->AwaitAck(1));
  EXPECT_TRUE(agent->Close().ok());
}

// Reads and duplicate batches succeed while writes fail; none of them may make the
// collector look healthy again.
TEST_F(CollectorServerTest, StaysUnhealthyThroughReadsAndDuplicatesWhileWritesFail) {
  StartServer();
  auto a = NewAgent();
  ASSERT_EQ(a->SayHello("web-1"), 0u);
  ASSERT_TRUE(a->Send(Batch(1, 3)));
  ASSERT_TRUE(a->AwaitAck(1));
  auto b = NewAgent();
  ASSERT_EQ(b->SayHello("web-2"), 0u);
  ASSERT_TRUE(b->Send(Batch(1, 3)));
  ASSERT_TRUE(b->AwaitAck(1));

  fail_writes_ = true;
  ASSERT_TRUE(a->Send(Batch(2, 3)));
  EXPECT_EQ(a->AwaitEnd().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(HealthStatus(), 2);

  // web-2 resends what is durable already: acked without a write.
  ASSERT_TRUE(b->Send(Batch(1, 3)));
  EXPECT_TRUE(b->AwaitAck(1));
  EXPECT_EQ(StoredSamples("web-1", "svc:app"), 3);
  EXPECT_TRUE(ListedHost("web-2").has_value());
  // Several maintenance rounds: still unhealthy, on both channels.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(HealthStatus(), 2);
  EXPECT_EQ(Metric("drip_collector_healthy"), 0);
  fail_writes_ = false;
  EXPECT_TRUE(b->Close().ok());
}

// ---- Metrics endpoint ----

TEST_F(CollectorServerTest, MetricsEndpointServesTheCounters) {
  config_.metrics.listen_address = "127.0.0.1:0";
  StartServer();
  ASSERT_GT(bound_.metrics_port, 0);
  EXPECT_EQ(bound_.metrics, fmt::format("127.0.0.1:{}", bound_.metrics_port));
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  ASSERT_TRUE(agent->Send(Batch(1, 5)));
  ASSERT_TRUE(agent->AwaitAck(1));
  ASSERT_TRUE(agent->Close().ok());

  std::string page = HttpGet(bound_.metrics_port, "/metrics");
  EXPECT_THAT(page, HasSubstr("200 OK"));
  EXPECT_THAT(page, HasSubstr("drip_ingest_batches_total 1"));
  EXPECT_THAT(page, HasSubstr("drip_ingest_samples_total 5"));
  EXPECT_THAT(page, HasSubstr("drip_ingest_rejected_total{reason=\"empty_host\"} 0"));
  EXPECT_THAT(page, HasSubstr("drip_storage_write_seconds_bucket{le=\"0.0001\"}"));
  EXPECT_THAT(page, HasSubstr("drip_storage_write_seconds_count 1"));
  EXPECT_THAT(page, HasSubstr("drip_collector_healthy 1"));
  EXPECT_THAT(page, HasSubstr("drip_agents_connected"));
  EXPECT_THAT(page, HasSubstr("drip_storage_size_bytes"));
  EXPECT_THAT(page, HasSubstr("drip_storage_retention_deleted_chunks_total"));
}

// ---- Lifecycle ----

// ---- Graceful degradation ----

TEST_F(CollectorServerTest, FloodingHostIsSlowedToItsRateWhileAnotherHostIsServed) {
  constexpr int kRate = 20000;
  constexpr int kFloodBatch = 5000;
  config_.ingest.max_samples_per_second_per_host = kRate;
  config_.ingest.burst_samples_per_host = kRate;
  config_.grpc.max_message_bytes = 4 * 1024 * 1024;
  StartServer();
  auto flooder = NewAgent();
  ASSERT_EQ(flooder->SayHello("flood-1"), 0u);
  std::atomic<bool> stop{false};
  const auto start = std::chrono::steady_clock::now();
  std::thread flood([&] {
    for (uint64_t seq = 1; !stop; ++seq) {
      // Blocks once HTTP/2 flow control holds the stream back: that is the point.
      if (!flooder->Send(Batch(seq, kFloodBatch, "svc:flood"))) break;
    }
  });
  std::thread drain([&] {
    while (flooder->Read()) {
    }
  });

  // Meanwhile a quiet host's batches are all stored and acknowledged.
  auto quiet = NewAgent();
  ASSERT_EQ(quiet->SayHello("quiet-1"), 0u);
  for (uint64_t seq = 1; seq <= 20; ++seq) {
    ASSERT_TRUE(quiet->Send(Batch(seq, 10)));
    ASSERT_TRUE(quiet->AwaitAck(seq)) << "the quiet host starved at batch " << seq;
  }
  EXPECT_EQ(StoredSamples("quiet-1", "svc:app"), 200);
  EXPECT_TRUE(quiet->Close().ok());

  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::optional<drip::v1::HostInfo> flood_host = ListedHost("flood-1");
  ASSERT_TRUE(flood_host.has_value());
  // The bucket starts full (one burst) and refills at the rate; one batch may be read
  // before the debt it causes is waited out.
  EXPECT_LE(flood_host->samples_stored(), kRate + kRate * elapsed + kFloodBatch)
      << "after " << elapsed << " s";
  EXPECT_GT(flood_host->samples_stored(), 0u);
  EXPECT_GT(Metric("drip_ingest_throttled_batches_total"), 0);
  EXPECT_GT(Metric("drip_ingest_throttled_seconds_total"), 0);
  stop = true;
  flooder->Cancel();
  flood.join();
  drain.join();
}

// The rate limit belongs to the host, not to the stream: an agent that reconnects after a
// flood finds its debt waiting, rather than a fresh burst.
TEST_F(CollectorServerTest, AReconnectDoesNotResetTheHostsRateLimit) {
  config_.ingest.max_samples_per_second_per_host = 100;
  config_.ingest.burst_samples_per_host = 100;
  StartServer();
  {
    auto agent = NewAgent();
    ASSERT_EQ(agent->SayHello("again-1"), 0u);
    ASSERT_TRUE(agent->Send(Batch(1, 1000)));  // nine seconds of debt
    ASSERT_TRUE(agent->AwaitAck(1));
    agent->Cancel();
  }
  ASSERT_EQ(AwaitCounter("drip_ingest_throttled_batches_total", 1), 1);
  auto again = NewAgent();
  ASSERT_EQ(again->SayHello("again-1"), 1u);
  // One sample on the new stream: with a bucket of its own it would have a burst of 100 to
  // spend; the host's bucket is still nine seconds in debt, so the next read waits.
  ASSERT_TRUE(again->Send(Batch(2, 1)));
  ASSERT_TRUE(again->AwaitAck(2));
  EXPECT_EQ(AwaitCounter("drip_ingest_throttled_batches_total", 2), 2);
  again->Cancel();
}

// Before its hello a stream is not authenticated: it must say hello within the timeout or
// be closed, and counted; a stream that said hello stays.
TEST_F(CollectorServerTest, AStreamThatNeverSaysHelloIsClosedAfterTheHelloTimeout) {
  config_.ingest.hello_timeout = std::chrono::seconds(1);
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  auto silent = NewAgent();
  const grpc::Status status = silent->AwaitEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("ingest.hello_timeout"));
  EXPECT_EQ(Metric("drip_agent_streams_total", "outcome", "no_hello"), 1);
  // The agent that said hello, long past the timeout, is still served.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_TRUE(agent->Send(Batch(1, 1)));
  EXPECT_TRUE(agent->AwaitAck(1));
  EXPECT_EQ(Metric("drip_agent_streams_awaiting_hello"), 0);
}

TEST_F(CollectorServerTest, StreamsPastTheAwaitingHelloLimitAreRefusedUntilOneSaysHello) {
  config_.ingest.max_streams_awaiting_hello = 2;
  StartServer();
  auto first = NewAgent();
  auto second = NewAgent();
  ASSERT_EQ(AwaitCounter("drip_agent_streams_awaiting_hello", 2), 2);
  auto third = NewAgent();
  const grpc::Status status = third->AwaitEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("ingest.max_streams_awaiting_hello"));
  EXPECT_EQ(Metric("drip_agent_streams_total", "outcome", "too_many_awaiting_hello"), 1);
  // Once one says hello, there is room again.
  ASSERT_EQ(first->SayHello("web-1"), 0u);
  auto fourth = NewAgent();
  EXPECT_EQ(fourth->SayHello("web-2"), 0u);
  EXPECT_EQ(Metric("drip_agent_streams_awaiting_hello"), 1);
  second->Cancel();
}

TEST_F(CollectorServerTest, ShutdownWhileAStreamIsThrottledEndsItCleanly) {
  config_.ingest.max_samples_per_second_per_host = 100;
  config_.ingest.burst_samples_per_host = 100;
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("slow-1"), 0u);
  ASSERT_TRUE(agent->Send(Batch(1, 1000)));  // ten seconds of debt
  ASSERT_TRUE(agent->AwaitAck(1));
  server_->Shutdown(std::chrono::seconds(2));
  grpc::Status status = agent->AwaitEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(CollectorServerTest, ShutdownEndsOpenStreamsWithUnavailable) {
  StartServer();
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 0u);
  ASSERT_TRUE(agent->Send(Batch(1, 1)));
  ASSERT_TRUE(agent->AwaitAck(1));
  std::thread stopper([this] { server_->Shutdown(); });
  grpc::Status status = agent->AwaitEnd();
  stopper.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("shutting down"));
}

TEST_F(CollectorServerTest, DataSurvivesARestartOnTheSameStore) {
  StartServer();
  {
    auto agent = NewAgent();
    ASSERT_EQ(agent->SayHello("web-1"), 0u);
    ASSERT_TRUE(agent->Send(Batch(1, 2)));
    ASSERT_TRUE(agent->AwaitAck(1));
    ASSERT_TRUE(agent->Close().ok());
  }
  server_->Shutdown();
  server_.reset();
  StartServer();
  auto agent = NewAgent();
  EXPECT_EQ(agent->SayHello("web-1"), 1u);
  EXPECT_EQ(StoredSamples("web-1", "svc:app"), 2);
  EXPECT_TRUE(agent->Close().ok());
}

// Four hours of a component growing 60 MiB/h next to a flat one, in one batch, with the
// detector's durations scaled down from hours to minutes.
AgentMessage LeakHistory(uint64_t sequence) {
  AgentMessage m;
  drip::v1::SampleBatch* b = m.mutable_batch();
  b->set_sequence(sequence);
  const int64_t start = NowMs() - 4 * 3600 * 1000;
  for (int minute = 0; minute < 240; ++minute) {
    for (const char* component : {"svc:leaky", "svc:steady"}) {
      drip::v1::Sample* s = b->add_samples();
      s->set_component(component);
      s->set_instance("7@1");
      s->set_timestamp_ms(start + minute * 60'000);
      const uint64_t mib = std::string(component) == "svc:leaky" ? 100 + minute : 100;
      s->mutable_process()->set_anon_rss_bytes(mib << 20);
    }
  }
  return m;
}

TEST_F(CollectorServerTest, LeakingComponentBecomesASuspectThatSurvivesARestart) {
  UseMinuteScaleDetector();
  StartServer();
  {
    auto agent = NewAgent();
    ASSERT_EQ(agent->SayHello("web-1"), 0u);
    ASSERT_TRUE(agent->Send(LeakHistory(1)));
    ASSERT_TRUE(agent->AwaitAck(1));
    ASSERT_TRUE(agent->Close().ok());
  }
  drip::v1::ListSuspectsResponse suspects = ListSuspects();
  ASSERT_EQ(suspects.suspects_size(), 1);
  EXPECT_EQ(suspects.suspects(0).host(), "web-1");
  EXPECT_EQ(suspects.suspects(0).component(), "svc:leaky");
  EXPECT_EQ(suspects.suspects(0).instance(), "7@1");
  EXPECT_NEAR(suspects.suspects(0).growth_bytes_per_hour(), 60.0 * (1 << 20), 6.0 * (1 << 20));
  EXPECT_TRUE(suspects.suspects(0).has_eta_to_oom_seconds());  // the hello said 8 GiB
  EXPECT_FALSE(suspects.suspects(0).reason().empty());
  ASSERT_EQ(suspects.components_size(), 1);
  EXPECT_EQ(suspects.components(0).hosts(), 1);

  server_->Shutdown();
  server_.reset();
  StartServer();  // rebuilds the detector from the store
  suspects = ListSuspects();
  ASSERT_EQ(suspects.suspects_size(), 1);
  EXPECT_EQ(suspects.suspects(0).component(), "svc:leaky");
  EXPECT_EQ(Metric("drip_detector_suspects"), 1);
  EXPECT_EQ(Metric("drip_detector_series"), 2);
}

// One sample of each of `count` components "proc:c-<first>" ... in one batch.
AgentMessage ComponentsBatch(uint64_t sequence, int first, int count) {
  AgentMessage m;
  drip::v1::SampleBatch* b = m.mutable_batch();
  b->set_sequence(sequence);
  for (int i = first; i < first + count; ++i) {
    drip::v1::Sample* s = b->add_samples();
    s->set_component(fmt::format("proc:c-{}", i));
    s->set_instance("100@1");
    s->set_timestamp_ms(NowMs() - 60'000 + static_cast<int64_t>(sequence));
    s->mutable_process()->set_anon_rss_bytes(1 << 20);
  }
  return m;
}

// An agent inventing component names would grow the detector (and the replay at every
// start) without bound: past its quota, a host's new components are not stored, counted,
// while its known components and other hosts go on.
TEST_F(CollectorServerTest, AFloodOfNewComponentsStopsAtTheHostsQuotaAcrossARestart) {
  config_.ingest.max_components_per_host = 50;
  config_.grpc.max_message_bytes = 1 << 20;
  StartServer();
  {
    auto agent = NewAgent();
    ASSERT_EQ(agent->SayHello("web-1"), 0u);
    ASSERT_TRUE(agent->Send(ComponentsBatch(1, 0, 40)));
    ASSERT_TRUE(agent->Send(ComponentsBatch(2, 40, 40)));  // 10 fit
    ASSERT_TRUE(agent->Send(ComponentsBatch(3, 0, 60)));   // 50 known, 10 over
    ASSERT_TRUE(agent->AwaitAck(3));
    ASSERT_TRUE(agent->Close().ok());
    auto other = NewAgent();
    ASSERT_EQ(other->SayHello("web-2"), 0u);
    ASSERT_TRUE(other->Send(ComponentsBatch(1, 0, 10)));
    ASSERT_TRUE(other->AwaitAck(1));
    ASSERT_TRUE(other->Close().ok());
  }
  EXPECT_EQ(Metric("drip_ingest_over_quota_samples_total"), 40);
  EXPECT_EQ(StoredSamples("web-1", "proc:c-0"), 2);
  EXPECT_EQ(StoredSamples("web-1", "proc:c-49"), 2);
  EXPECT_EQ(StoredSamples("web-1", "proc:c-50"), 0);

  server_->Shutdown();
  server_.reset();
  StartServer();  // the replay holds only what was stored (the gauge is set at start)
  EXPECT_EQ(Metric("drip_detector_series"), 60);
  auto agent = NewAgent();
  ASSERT_EQ(agent->SayHello("web-1"), 3u);
  ASSERT_TRUE(agent->Send(ComponentsBatch(4, 45, 10)));  // 5 known, 5 over
  ASSERT_TRUE(agent->AwaitAck(4));
  ASSERT_TRUE(agent->Close().ok());
  EXPECT_EQ(Metric("drip_ingest_over_quota_samples_total"), 5);
  EXPECT_EQ(StoredSamples("web-1", "proc:c-45"), 3);
}

// Every ETA to OOM is computed from the agent's claim of its host's memory: one that no
// Linux host makes is not believed, and the ETA is unknown rather than near zero.
TEST_F(CollectorServerTest, AHostMemoryClaimNoHostMakesGivesNoEta) {
  UseMinuteScaleDetector();
  StartServer();
  auto agent = NewAgent();
  AgentMessage hello = Hello("web-1");
  hello.mutable_hello()->set_memory_total_bytes(4096);  // 4 KiB: no host
  ASSERT_TRUE(agent->Send(hello));
  std::optional<CollectorMessage> welcome = agent->Read();
  ASSERT_TRUE(welcome && welcome->has_welcome());
  ASSERT_TRUE(agent->Send(LeakHistory(1)));
  ASSERT_TRUE(agent->AwaitAck(1));
  ASSERT_TRUE(agent->Close().ok());
  drip::v1::ListSuspectsResponse suspects = ListSuspects();
  ASSERT_EQ(suspects.suspects_size(), 1);
  EXPECT_FALSE(suspects.suspects(0).has_eta_to_oom_seconds());
}

TEST_F(CollectorServerTest, UnusableStorePathFailsStartNamingThePath) {
  config_.storage.path = "/proc/drip-cannot-create-this";
  CollectorServer server(config_);
  absl::StatusOr<ServingAddresses> bound = server.Start();
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(std::string(bound.status().message()), HasSubstr("/proc/drip-cannot-create-this"));
}

TEST_F(CollectorServerTest, AddressInUseFailsStartNamingTheAddress) {
  StartServer();
  CollectorConfig other = config_;
  other.storage.path = dir_ + "/db2";
  other.grpc.listen_address = fmt::format("127.0.0.1:{}", bound_.grpc_port);
  CollectorServer second(other);
  absl::StatusOr<ServingAddresses> bound = second.Start();
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(std::string(bound.status().message()), HasSubstr(other.grpc.listen_address));
}

}  // namespace
}  // namespace drip::collector
