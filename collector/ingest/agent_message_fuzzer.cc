// Fuzzes the collector's handling of everything a peer can send it: every AgentMessage
// (Hello, SampleBatch, CommandResult with a heap snapshot or a mitigation outcome) on an
// agent stream, and the QueryService requests dripctl sends.
//
// Design: a direct harness, not a gRPC server. Each input runs one collector life story
// against the parts CollectorServer builds, built from the same options — an AgentSession
// per stream (what AgentStreamReactor hands every message to), RocksDbSeriesStore (a
// fresh store for every input, its files in RocksDB's in-memory Env), the LeakPipeline
// with the diagnoser behind its snapshot stage, ConnectedHosts, the CommandRouter and
// QueryServiceImpl's Do* methods — on a fake clock. Compared with sending the messages to
// an in-process server this is deterministic up to one thread (a crash replays from its
// input alone; no gRPC threads racing the store and the clock; only the pipeline's
// diagnosis thread, as in the collector, decides when an answered snapshot's diagnosis
// lands), spends no time on sockets and HTTP/2, and reaches deeper: a
// suspect the detector flags gets a snapshot command, and the input can answer that
// command with a snapshot, which is how the diagnoser is reached from the network. What
// it skips is gRPC itself (which parses the same bytes with the same protobuf code), the
// reactor's threading and flow control, and the TLS identity check's refusals (the
// harness's collector is plaintext, as collector_server_test and collector_security_test
// cover the rest).
//
// Opening a RocksDB store per input keeps it slow next to the parser fuzzers (tens of
// inputs a second here); heap_snapshot_proto_fuzzer covers the snapshot payload's
// decoding and diagnosis thousands of times faster. A record's length is 16 bits, so a
// message here is at most 64 KiB; the size limits are tested in collector_server_test.
//
// Input: a sequence of steps, each a kind byte and a payload of 16-bit length
// (tests/fuzz/fuzz_input.h); kinds are taken modulo kKinds:
//   0 agent message   payload: a serialized drip.v1.AgentMessage, sent on the current
//                     stream (a new stream opens when the last one ended). A
//                     CommandResult whose command_id is "$N" answers the Nth command the
//                     collector sent this host, so that inputs can answer real commands.
//   1 end stream      the agent half-closes; the next message opens a new stream.
//   2 maintenance     advance the clock by payload[0..3] seconds (at most a week), then
//                     what the server's background threads run: storage maintenance
//                     (folding staged batches, retention) and one leak pipeline pass
//                     (the detector's advance, snapshot scheduling, reports, automatic
//                     mitigation).
//   3 restart         close everything and reopen on the same store, as a collector
//                     restart does (detector rebuilt from storage, reports loaded).
//   4 GetSeries       payload: drip.v1.GetSeriesRequest (and ListHosts).
//   5 ListSuspects    payload: drip.v1.ListSuspectsRequest.
//   6 ListLeaks/GetLeak/UpdateLeakState   payload: drip.v1.UpdateLeakStateRequest; its
//                     id and state serve all three, its note as ListLeaks' component.
//                     Queries run as an operator that the access policy let in.
//   7 Mitigate        payload: drip.v1.MitigateRequest.
//   8 ListAudit       payload: drip.v1.ListAuditRequest.
// tests/fuzz/make_seed_corpora.cc writes the seeds, among them a leak that the detector
// flags, snapshots and diagnoses, and that is then mitigated.
//
// Oracles beyond "no crash, no sanitizer report, no timeout": a batch the store takes
// moves the host's acked sequence to it, a resent one is not stored twice; series read
// back are in time order and inside the asked range; a restart keeps every host's acked
// sequence and every report.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/access/access_policy.h"
#include "collector/collector_config.h"
#include "collector/collector_metrics.h"
#include "collector/collector_server.h"
#include "collector/ingest/agent_session.h"
#include "collector/ingest/connected_hosts.h"
#include "collector/ingest/sample_validator.h"
#include "collector/pipeline/leak_pipeline.h"
#include "collector/query/query_service.h"
#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/storage_health.h"
#include "common/base/clock.h"
#include "common/base/status_macros.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/query.pb.h"
#include "fmt/format.h"
#include "prometheus/registry.h"
#include "rocksdb/env.h"
#include "spdlog/sinks/null_sink.h"
#include "spdlog/spdlog.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input.h"

namespace drip::collector {
namespace {

constexpr int64_t kStartMs = 1'700'000'000'000;  // 2023-11-14
constexpr int64_t kMaxAdvanceSeconds = 7 * 24 * 3600;
constexpr int kKinds = 9;

// DRIP_FUZZ_TRACE=1 prints what each step did, for writing seeds that reach deep.
bool Tracing() {
  static const bool on = std::getenv("DRIP_FUZZ_TRACE") != nullptr;
  return on;
}

template <typename... Args>
void Trace(const char* format, const Args&... args) {
  if (Tracing()) std::fprintf(stderr, "%s\n", fmt::format(fmt::runtime(format), args...).c_str());
}

// Log lines are formatted (their arguments come from the input too) but go nowhere.
void SilenceLogs() {
  static const bool done = [] {
    for (const char* name : {"collector", "agent"}) {
      auto logger =
          std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::null_sink_mt>());
      logger->set_level(spdlog::level::trace);
      spdlog::register_logger(logger);
    }
    return true;
  }();
  (void)done;
}

// One directory per fuzzing process. The stores' files live in MemEnv() below, but the
// store also creates its directory on the real filesystem.
const std::filesystem::path& WorkDir() {
  static const std::filesystem::path dir = [] {
    const char* base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string pattern = std::string(base) + "/drip-fuzz-collector-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    std::atexit([] { std::filesystem::remove_all(WorkDir()); });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

// RocksDB's files in memory: a store opens and closes several times faster than on a
// filesystem. One per process.
rocksdb::Env* MemEnv() {
  static rocksdb::Env* const env = rocksdb::NewMemEnv(rocksdb::Env::Default());
  return env;
}

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  std::vector<std::string> files;
  if (!MemEnv()->GetChildren(dir, &files).ok()) return names;
  for (std::string& f : files) {
    if (f != "." && f != "..") names.push_back(std::move(f));
  }
  return names;
}

// Most of opening a new store is RocksDB creating its column families (an options file
// written and verified for each), so a new, empty store is created once per process
// and every input starts from a copy of its files.
void CopyEmptyStoreTo(const std::string& dir, const RocksDbSeriesStoreOptions& options) {
  static const std::string empty = [&] {
    RocksDbSeriesStoreOptions o = options;
    o.path = (WorkDir() / "empty").string();
    absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(o);
    FUZZ_CHECK(store.ok(), "creating the store: %s", store.status().ToString().c_str());
    return o.path;
  }();
  for (const std::string& f : FilesIn(dir)) IgnoreError(MemEnv()->DeleteFile(dir + "/" + f));
  IgnoreError(MemEnv()->CreateDirIfMissing(dir));
  for (const std::string& f : FilesIn(empty)) {
    if (f == "LOCK" || f.starts_with("LOG")) continue;  // the open store's own
    std::string bytes;
    rocksdb::Status s = rocksdb::ReadFileToString(MemEnv(), empty + "/" + f, &bytes);
    if (s.ok()) s = rocksdb::WriteStringToFile(MemEnv(), bytes, dir + "/" + f, false);
    FUZZ_CHECK(s.ok(), "copying %s: %s", f.c_str(), s.ToString().c_str());
  }
}

// The agent's end of a stream as ConnectedHosts sees it: commands are kept so that the
// input can answer them.
class FakeStream final : public ConnectedHosts::Stream {
 public:
  void Supersede() override { open_ = false; }
  bool IsOpen() override { return open_; }
  bool SendCommand(const drip::v1::Command& command) override {
    if (!open_) return false;
    commands_.push_back(command.id());
    return true;
  }
  void MoveTo(const std::string& /*owner_name*/, const std::string& /*owner_address*/) override {
    open_ = false;
  }
  void Close() { open_ = false; }
  const std::vector<std::string>& commands() const { return commands_; }

 private:
  bool open_ = true;
  std::vector<std::string> commands_;
};

class Harness {
 public:
  Harness() : clock_(kStartMs), metrics_(registry_), health_(&metrics_.healthy) {
    // The collector's defaults, as a config file gives them that only turns TLS off: the
    // harness plays agents that the collector lets in.
    absl::StatusOr<CollectorConfig> config =
        CollectorConfig::FromString("tls:\n  plaintext: true\n", "<fuzz>");
    FUZZ_CHECK(config.ok(), "%s", config.status().ToString().c_str());
    config_ = *config;
    config_.storage.path = (WorkDir() / "db").string();
    config_.storage.sync_writes = false;  // a crash of the fuzzer is not a power cut
    validator_ = std::make_unique<SampleValidator>(ValidatorOptions(config_), &clock_);
    Open();
  }
  ~Harness() {
    EndStream();
    Close();
  }

  void Step(int kind, std::string_view payload) {
    switch (kind) {
      case 0:
        Message(payload);
        return;
      case 1:
        EndStream();
        return;
      case 2:
        Maintenance(payload);
        return;
      case 3:
        Restart();
        return;
      case 4:
        GetSeries(payload);
        return;
      case 5:
        ListSuspects(payload);
        return;
      case 6:
        Leaks(payload);
        return;
      case 7:
        Mitigate(payload);
        return;
      case 8:
        ListAudit(payload);
        return;
    }
  }

 private:
  // CollectorServer::Start without gRPC, the metrics endpoint and the threads.
  void Open() {
    RocksDbSeriesStoreOptions options = StoreOptions(config_, &clock_);
    options.fold_interval = std::chrono::milliseconds(0);  // folded by maintenance steps
    options.env = MemEnv();
    if (!opened_once_) CopyEmptyStoreTo(options.path, options);
    opened_once_ = true;
    absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(options);
    FUZZ_CHECK(store.ok(), "opening the store: %s", store.status().ToString().c_str());
    store_ = std::move(*store);
    absl::StatusOr<std::unique_ptr<LeakPipeline>> pipeline =
        LeakPipeline::Open(PipelineOptions(config_), store_.get(), &commands_, &metrics_, &clock_);
    FUZZ_CHECK(pipeline.ok(), "opening the pipeline: %s", pipeline.status().ToString().c_str());
    pipeline_ = std::move(*pipeline);
    session_parts_.validator = validator_.get();
    session_parts_.tls = !config_.tls.plaintext;
    session_parts_.access = &access_;
    session_parts_.store = store_.get();
    session_parts_.detector = pipeline_.get();
    session_parts_.commands = &commands_;
    session_parts_.health = &health_;
    session_parts_.metrics = &metrics_;
    session_parts_.clock = &clock_;
    query_ = std::make_unique<QueryServiceImpl>(&access_, store_.get(), &hosts_, pipeline_.get(),
                                                &metrics_, &clock_, 16u << 20);
  }

  void Close() {
    query_.reset();
    pipeline_.reset();
    store_.reset();
  }

  void Restart() {
    EndStream();
    std::map<std::string, uint64_t> acked;
    absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store_->ListHosts();
    FUZZ_CHECK(hosts.ok(), "%s", hosts.status().ToString().c_str());
    for (const drip::v1::HostInfo& h : *hosts) acked[h.host()] = h.acked_sequence();
    const std::vector<drip::v1::LeakReport> before = pipeline_->reports().List("all", "");
    Close();
    Open();
    for (const auto& [host, sequence] : acked) {
      absl::StatusOr<uint64_t> mark = store_->AckedSequence(host);
      FUZZ_CHECK(mark.ok() && *mark == sequence, "host %s: acked %llu before the restart",
                 host.c_str(), static_cast<unsigned long long>(sequence));
    }
    const std::vector<drip::v1::LeakReport> after = pipeline_->reports().List("all", "");
    FUZZ_CHECK(before.size() == after.size(), "%zu reports before the restart, %zu after",
               before.size(), after.size());
  }

  // ---- Agent streams: the session the reactor drives, and what the reactor does with
  // its replies ----

  void Message(std::string_view bytes) {
    drip::v1::AgentMessage message;
    if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      // gRPC fails the stream when a message does not parse.
      EndStream();
      return;
    }
    if (!session_)
      session_ = std::make_unique<AgentSession>(session_parts_, CallerCredentials{}, "fuzz");
    Verdict order = session_->CheckOrder(message);
    if (!order.ok()) return Reject(order);
    if (message.has_command_result()) AnswerCommand(message.mutable_command_result());
    // The acked mark before a batch, for the oracles below.
    std::optional<uint64_t> mark;
    if (message.has_batch()) {
      absl::StatusOr<uint64_t> acked = store_->AckedSequence(session_->host());
      FUZZ_CHECK(acked.ok(), "%s", acked.status().ToString().c_str());
      mark = *acked;
    }
    const SessionReply reply = session_->Handle(message, message.ByteSizeLong());
    switch (reply.kind) {
      case SessionReply::Kind::kWelcome:
        return Register(session_->host());
      case SessionReply::Kind::kAck:
        return CheckAck(message.batch(), *mark, reply);
      case SessionReply::Kind::kNone:
        Trace("  command result {}", message.command_result().command_id());
        return;
      case SessionReply::Kind::kRefused:
        return Reject(reply.verdict);
      case SessionReply::Kind::kStorageFailed:
        FUZZ_CHECK(false, "the in-memory store failed: %s", reply.status.ToString().c_str());
        return;
      case SessionReply::Kind::kRedirect:
        // The harness is a standalone collector: no member owns a host but itself.
        FUZZ_CHECK(false, "a standalone collector redirected: %s", reply.status.ToString().c_str());
        return;
    }
  }

  void Reject(const Verdict& verdict) {
    Trace("  refused: {}", std::string(verdict.status.message()));
    FUZZ_CHECK(!verdict.reason.empty() && verdict.status.code() != absl::StatusCode::kOk,
               "a refusal without a reason");
    EndStream();
  }

  void Register(const std::string& host) {
    auto stream = std::make_unique<FakeStream>();
    registered_ = stream.get();
    hosts_.Register(host, stream.get());
    streams_[host].push_back(std::move(stream));
  }

  void CheckAck(const drip::v1::SampleBatch& batch, uint64_t mark, const SessionReply& reply) {
    const std::string& host = session_->host();
    FUZZ_CHECK(reply.sequence == batch.sequence(), "acked %llu for batch %llu",
               static_cast<unsigned long long>(reply.sequence),
               static_cast<unsigned long long>(batch.sequence()));
    FUZZ_CHECK(reply.stored == (batch.sequence() > mark),
               "batch %llu with the mark at %llu: stored=%d",
               static_cast<unsigned long long>(batch.sequence()),
               static_cast<unsigned long long>(mark), reply.stored);
    absl::StatusOr<uint64_t> after = store_->AckedSequence(host);
    FUZZ_CHECK(after.ok() && *after == std::max(mark, batch.sequence()), "mark after batch");
    Trace("  batch {}: stored={} samples={}", batch.sequence(), reply.stored, reply.samples);
  }

  // A command_id of "$N" answers the Nth command the collector sent this stream's host.
  void AnswerCommand(drip::v1::CommandResult* result) {
    const std::string& id = result->command_id();
    if (id.empty() || id[0] != '$') return;
    const std::vector<std::string> sent = CommandsSentTo(session_->host());
    if (sent.empty()) return;
    result->set_command_id(sent[std::strtoull(id.c_str() + 1, nullptr, 10) % sent.size()]);
  }

  std::vector<std::string> CommandsSentTo(const std::string& host) const {
    std::vector<std::string> ids;
    auto it = streams_.find(host);
    if (it == streams_.end()) return ids;
    for (const auto& stream : it->second) {
      ids.insert(ids.end(), stream->commands().begin(), stream->commands().end());
    }
    return ids;
  }

  void EndStream() {
    if (registered_ != nullptr) {
      registered_->Close();
      hosts_.Unregister(session_->host(), registered_);
      registered_ = nullptr;
    }
    session_.reset();
  }

  // ---- What the server's background threads run ----

  void Maintenance(std::string_view payload) {
    fuzz::FuzzInput in(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
    clock_.Advance(std::chrono::seconds(in.U32() % (kMaxAdvanceSeconds + 1)));
    absl::StatusOr<FoldStats> folded = store_->FoldStaged();
    FUZZ_CHECK(folded.ok(), "FoldStaged: %s", folded.status().ToString().c_str());
    absl::StatusOr<uint64_t> dropped = store_->EnforceRetention();
    FUZZ_CHECK(dropped.ok(), "EnforceRetention: %s", dropped.status().ToString().c_str());
    pipeline_->RunOnce();
    Trace("  now {}: {} suspects, {} reports", clock_.NowMs(), pipeline_->Suspects("").hosts.size(),
          pipeline_->reports().List("all", "").size());
  }

  // ---- Queries: what each RPC runs once the caller is let in ----

  template <typename Request>
  static bool Parse(std::string_view bytes, Request* request) {
    return request->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }

  void GetSeries(std::string_view bytes) {
    drip::v1::GetSeriesRequest request;
    if (!Parse(bytes, &request)) return;
    drip::v1::ListHostsResponse hosts;
    FUZZ_CHECK(query_->DoListHosts(&hosts).ok(), "ListHosts failed");
    drip::v1::GetSeriesResponse response;
    if (!query_->DoGetSeries(request, &response).ok()) return;
    const int64_t until = request.until_ms() == 0 ? INT64_MAX : request.until_ms();
    for (const drip::v1::Series& series : response.series()) {
      int64_t previous = INT64_MIN;
      for (const drip::v1::Sample& s : series.samples()) {
        FUZZ_CHECK(s.timestamp_ms() >= request.since_ms() && s.timestamp_ms() < until,
                   "sample at %lld outside [%lld, %lld)", static_cast<long long>(s.timestamp_ms()),
                   static_cast<long long>(request.since_ms()), static_cast<long long>(until));
        FUZZ_CHECK(s.timestamp_ms() >= previous, "samples out of time order");
        previous = s.timestamp_ms();
      }
    }
  }

  void ListSuspects(std::string_view bytes) {
    drip::v1::ListSuspectsRequest request;
    if (!Parse(bytes, &request)) return;
    drip::v1::ListSuspectsResponse response;
    FUZZ_CHECK(query_->DoListSuspects(request, &response).ok(), "ListSuspects failed");
  }

  void Leaks(std::string_view bytes) {
    drip::v1::UpdateLeakStateRequest request;
    if (!Parse(bytes, &request)) return;
    drip::v1::ListLeaksRequest list;
    list.set_state(request.state());
    list.set_component(request.note());
    drip::v1::ListLeaksResponse leaks;
    IgnoreError(query_->DoListLeaks(list, &leaks));
    drip::v1::GetLeakRequest get;
    get.set_id(request.id());
    drip::v1::LeakReport report;
    IgnoreError(query_->DoGetLeak(get, &report));
    IgnoreError(query_->DoUpdateLeakState(Operator(), request, &report));
  }

  void Mitigate(std::string_view bytes) {
    drip::v1::MitigateRequest request;
    if (!Parse(bytes, &request)) return;
    drip::v1::MitigateResponse response;
    const grpc::Status status = query_->DoMitigate(Operator(), request, &response);
    Trace(
        "  mitigate {}: {}", request.id(),
        status.ok() ? fmt::format("{} entries", response.entries_size()) : status.error_message());
  }

  void ListAudit(std::string_view bytes) {
    drip::v1::ListAuditRequest request;
    if (!Parse(bytes, &request)) return;
    drip::v1::ListAuditResponse response;
    const grpc::Status status = query_->DoListAudit(request, &response);
    if (request.since_ms() < 0) {
      FUZZ_CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT,
                 "a negative since_ms was not refused");
      return;
    }
    FUZZ_CHECK(status.ok(), "ListAudit: %s", status.error_message().c_str());
    const uint64_t limit = request.limit() == 0 ? 100 : std::min<uint64_t>(request.limit(), 10000);
    FUZZ_CHECK(static_cast<uint64_t>(response.entries_size()) <= limit,
               "%d audit entries, limit %llu", response.entries_size(),
               static_cast<unsigned long long>(limit));
  }

  static Caller Operator() {
    Caller caller;
    caller.name = "fuzz";
    caller.role = Role::kOperator;
    caller.method = "unauthenticated";
    caller.peer = "fuzz";
    return caller;
  }

  FakeClock clock_;
  prometheus::Registry registry_;
  CollectorMetrics metrics_;
  StorageHealth health_;
  const AccessPolicy access_{AccessPolicy::Default::kOpen};
  bool opened_once_ = false;  // later opens are restarts, on the same files
  CollectorConfig config_;
  std::unique_ptr<SampleValidator> validator_;
  ConnectedHosts hosts_;
  CommandRouter commands_{&hosts_};
  std::unique_ptr<RocksDbSeriesStore> store_;
  std::unique_ptr<LeakPipeline> pipeline_;
  std::unique_ptr<QueryServiceImpl> query_;
  AgentSessionParts session_parts_;
  std::unique_ptr<AgentSession> session_;  // the open stream's; null between streams
  FakeStream* registered_ = nullptr;       // the open stream's in ConnectedHosts
  // Every stream each host opened, kept for the whole input: ConnectedHosts may still
  // point at a superseded one until it unregisters.
  std::map<std::string, std::vector<std::unique_ptr<FakeStream>>> streams_;
};

}  // namespace
}  // namespace drip::collector

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  drip::collector::SilenceLogs();
  drip::fuzz::FuzzInput in(data, size);
  drip::collector::Harness harness;
  while (!in.empty()) {
    const int kind = in.U8() % drip::collector::kKinds;
    drip::collector::Trace("step {}", kind);
    harness.Step(kind, in.Record());
  }
  return 0;
}
