// Fuzzes the collector's handling of everything a peer can send it: every AgentMessage
// (Hello, SampleBatch, CommandResult with a heap snapshot or a mitigation outcome) on an
// agent stream, and the QueryService requests dripctl sends.
//
// Design: a direct harness, not a gRPC server. Each input runs one collector life story
// against the real parts the server wires together — SampleValidator, RocksDbSeriesStore
// (a fresh store for every input, its files in RocksDB's in-memory Env), OnlineDetector,
// SnapshotScheduler with the diagnoser behind it, LeakReportBook, MitigationCoordinator,
// ConnectedHosts and QueryServiceImpl — calling what AgentStreamReactor calls for each message
// (HandleHello, HandleBatch, HandleCommandResult) and what maintenance runs, on a fake clock.
// Compared with sending the messages to an in-process server this is deterministic (a crash replays
// from its input alone; no gRPC threads racing the store and the clock), spends no time on sockets
// and HTTP/2, and reaches deeper: a suspect the detector flags gets a snapshot command, and the
// input can answer that command with a snapshot, which is how the diagnoser is reached from the
// network. What it skips is gRPC itself (which parses the same bytes with the same protobuf code)
// and the reactor's threading, which collector_server_test covers. QueryServiceImpl's own checks
// run for GetSeries and ListHosts (DoGetSeries, DoListHosts); the other queries call what their RPC
// calls.
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
//                     what the server's maintenance runs: retention, folding staged
//                     batches, the detector's advance, snapshot scheduling, reports,
//                     automatic mitigation.
//   3 restart         close everything and reopen on the same store, as a collector
//                     restart does (detector rebuilt from storage, reports loaded).
//   4 GetSeries       payload: drip.v1.GetSeriesRequest (and ListHosts).
//   5 ListSuspects    payload: drip.v1.ListSuspectsRequest.
//   6 ListLeaks/GetLeak/UpdateLeakState   payload: drip.v1.UpdateLeakStateRequest; its
//                     id and state serve all three, its note as ListLeaks' component.
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
#include <string>
#include <string_view>
#include <vector>

#include "collector/collector_config.h"
#include "collector/collector_server.h"
#include "collector/connected_hosts.h"
#include "collector/leak_report_book.h"
#include "collector/mitigation_coordinator.h"
#include "collector/online_detector.h"
#include "collector/query_service.h"
#include "collector/sample_validator.h"
#include "collector/snapshot_scheduler.h"
#include "collector/storage/rocksdb_series_store.h"
#include "common/clock.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/query.pb.h"
#include "fmt/format.h"
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
  for (const std::string& f : FilesIn(dir)) (void)MemEnv()->DeleteFile(dir + "/" + f);
  (void)MemEnv()->CreateDirIfMissing(dir);
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
  void Close() { open_ = false; }
  const std::vector<std::string>& commands() const { return commands_; }

 private:
  bool open_ = true;
  std::vector<std::string> commands_;
};

class Harness {
 public:
  Harness() : clock_(kStartMs) {
    // The collector's defaults, as a config file gives them that only turns TLS off: the
    // harness plays agents that the collector lets in (what TLS adds, the check of the
    // hello's host against the client certificate, collector_security_test covers).
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
  struct Stream {
    bool hello_seen = false;
    std::string host;
    FakeStream* registered = nullptr;
  };

  // CollectorServer::Start without gRPC, the metrics endpoint and the threads.
  void Open() {
    RocksDbSeriesStoreOptions options;
    options.path = config_.storage.path;
    options.retention = config_.storage.retention;
    options.chunk_window = config_.storage.chunk_window;
    options.sync_writes = config_.storage.sync_writes;
    options.fold_interval = std::chrono::milliseconds(0);  // folded by maintenance steps
    options.clock = &clock_;
    options.env = MemEnv();
    if (!opened_once_) CopyEmptyStoreTo(options.path, options);
    opened_once_ = true;
    absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(options);
    FUZZ_CHECK(store.ok(), "opening the store: %s", store.status().ToString().c_str());
    store_ = std::move(*store);
    detector_ = std::make_unique<OnlineDetector>(config_.detector);
    absl::StatusOr<uint64_t> replayed =
        detector_->Rebuild(store_.get(), clock_.NowMs() - config_.detector_rebuild_window.count());
    FUZZ_CHECK(replayed.ok(), "rebuilding the detector: %s", replayed.status().ToString().c_str());
    detector_->AdvanceTo(clock_.NowMs() / 1000);
    snapshots_ = std::make_unique<SnapshotScheduler>(config_.snapshots, config_.diagnoser, &hosts_);
    reports_ =
        std::make_unique<LeakReportBook>(config_.reports, &config_.mitigation, store_->reports());
    absl::Status loaded = reports_->Load();
    FUZZ_CHECK(loaded.ok(), "loading reports: %s", loaded.ToString().c_str());
    mitigations_ = std::make_unique<MitigationCoordinator>(config_.mitigation, reports_.get(),
                                                           &hosts_, nullptr);
    QuerySources sources;
    sources.store = store_.get();
    sources.hosts = &hosts_;
    sources.detector = detector_.get();
    sources.snapshots = snapshots_.get();
    sources.reports = reports_.get();
    sources.mitigations = mitigations_.get();
    sources.clock = &clock_;
    query_ = std::make_unique<QueryServiceImpl>(sources);
  }

  void Close() {
    query_.reset();
    mitigations_.reset();
    reports_.reset();
    snapshots_.reset();
    detector_.reset();
    store_.reset();
  }

  void Restart() {
    EndStream();
    std::map<std::string, uint64_t> acked;
    absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store_->ListHosts();
    FUZZ_CHECK(hosts.ok(), "%s", hosts.status().ToString().c_str());
    for (const drip::v1::HostInfo& h : *hosts) acked[h.host()] = h.acked_sequence();
    const std::vector<drip::v1::LeakReport> before = reports_->List("all", "");
    Close();
    Open();
    for (const auto& [host, sequence] : acked) {
      absl::StatusOr<uint64_t> mark = store_->AckedSequence(host);
      FUZZ_CHECK(mark.ok() && *mark == sequence, "host %s: acked %llu before the restart",
                 host.c_str(), static_cast<unsigned long long>(sequence));
    }
    const std::vector<drip::v1::LeakReport> after = reports_->List("all", "");
    FUZZ_CHECK(before.size() == after.size(), "%zu reports before the restart, %zu after",
               before.size(), after.size());
  }

  // ---- Agent streams: what AgentStreamReactor does for each message ----

  void Message(std::string_view bytes) {
    drip::v1::AgentMessage message;
    if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      // gRPC fails the stream when a message does not parse.
      EndStream();
      return;
    }
    const size_t wire_bytes = message.ByteSizeLong();
    Verdict order = validator_->CheckOrder(message, stream_.hello_seen);
    if (!order.ok()) return Reject(order);
    switch (message.body_case()) {
      case drip::v1::AgentMessage::kHello:
        return Hello(message.hello());
      case drip::v1::AgentMessage::kBatch:
        return Batch(message.batch(), wire_bytes);
      case drip::v1::AgentMessage::kCommandResult:
        return CommandResult(message.command_result());
      case drip::v1::AgentMessage::BODY_NOT_SET:
        break;
    }
    FUZZ_CHECK(false, "CheckOrder passed a message without a body");
  }

  void Reject(const Verdict& verdict) {
    Trace("  refused: {}", std::string(verdict.status.message()));
    FUZZ_CHECK(!verdict.reason.empty() && verdict.status.code() != absl::StatusCode::kOk,
               "a refusal without a reason");
    EndStream();
  }

  void Hello(const drip::v1::Hello& hello) {
    Verdict verdict = validator_->ValidateHello(hello);
    if (!verdict.ok()) return Reject(verdict);
    drip::v1::HostInfo info;
    info.set_host(hello.host());
    *info.mutable_labels() = hello.labels();
    info.set_agent_version(hello.agent_version());
    info.set_memory_total_bytes(hello.memory_total_bytes());
    if (hello.memory_total_bytes() > 0) {
      detector_->SetHostMemory(hello.host(), hello.memory_total_bytes());
    }
    info.set_sampler(hello.status().sampler());
    info.set_first_seen_ms(clock_.NowMs());
    info.set_last_seen_ms(clock_.NowMs());
    absl::Status put = store_->PutHost(info);
    FUZZ_CHECK(put.ok(), "PutHost: %s", put.ToString().c_str());
    absl::StatusOr<uint64_t> acked = store_->AckedSequence(hello.host());
    FUZZ_CHECK(acked.ok(), "AckedSequence: %s", acked.status().ToString().c_str());
    stream_.host = hello.host();
    stream_.hello_seen = true;
    auto stream = std::make_unique<FakeStream>();
    stream_.registered = stream.get();
    hosts_.Register(stream_.host, stream.get());
    streams_[stream_.host].push_back(std::move(stream));
  }

  void Batch(const drip::v1::SampleBatch& batch, size_t wire_bytes) {
    Verdict verdict = validator_->ValidateBatch(batch, stream_.host, wire_bytes);
    if (!verdict.ok()) return Reject(verdict);
    absl::StatusOr<uint64_t> mark = store_->AckedSequence(stream_.host);
    FUZZ_CHECK(mark.ok(), "%s", mark.status().ToString().c_str());
    absl::StatusOr<AppendResult> result = store_->AppendBatch(stream_.host, batch);
    FUZZ_CHECK(result.ok(), "AppendBatch: %s", result.status().ToString().c_str());
    FUZZ_CHECK(result->stored == (batch.sequence() > *mark),
               "batch %llu with the mark at %llu: stored=%d",
               static_cast<unsigned long long>(batch.sequence()),
               static_cast<unsigned long long>(*mark), result->stored);
    absl::StatusOr<uint64_t> after = store_->AckedSequence(stream_.host);
    FUZZ_CHECK(after.ok() && *after == std::max(*mark, batch.sequence()), "mark after batch");
    if (result->stored) detector_->ObserveBatch(stream_.host, batch);
    Trace("  batch {}: stored={} samples={} missing={}", batch.sequence(), result->stored,
          result->samples_stored, result->missing_batches);
  }

  void CommandResult(drip::v1::CommandResult result) {
    const std::string& id = result.command_id();
    if (!id.empty() && id[0] == '$') {
      const std::vector<std::string> sent = CommandsSentTo(stream_.host);
      if (!sent.empty()) {
        result.set_command_id(sent[std::strtoull(id.c_str() + 1, nullptr, 10) % sent.size()]);
      }
    }
    const int64_t now_ms = clock_.NowMs();
    const bool snapshot = snapshots_->OnCommandResult(stream_.host, result, now_ms);
    const bool mitigation =
        !snapshot && mitigations_->OnCommandResult(stream_.host, result, now_ms);
    Trace("  result for {}: snapshot={} mitigation={}", result.command_id(), snapshot, mitigation);
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
    if (stream_.registered != nullptr) {
      stream_.registered->Close();
      hosts_.Unregister(stream_.host, stream_.registered);
    }
    stream_ = Stream();
  }

  // ---- Maintenance: StorageMaintenance and CollectorServer::RefreshDetectorMetrics ----

  void Maintenance(std::string_view payload) {
    fuzz::FuzzInput in(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
    clock_.Advance(std::chrono::seconds(in.U32() % (kMaxAdvanceSeconds + 1)));
    const int64_t now_ms = clock_.NowMs();
    absl::StatusOr<FoldStats> folded = store_->FoldStaged();
    FUZZ_CHECK(folded.ok(), "FoldStaged: %s", folded.status().ToString().c_str());
    absl::StatusOr<uint64_t> dropped = store_->EnforceRetention();
    FUZZ_CHECK(dropped.ok(), "EnforceRetention: %s", dropped.status().ToString().c_str());
    detector_->AdvanceTo(now_ms / 1000);
    drip::v1::ListSuspectsResponse now;
    detector_->Fill("", &now);
    snapshots_->Tick(now_ms, now);
    snapshots_->Fill(&now);
    reports_->Update(now_ms, now);
    mitigations_->Tick(now_ms);
    Trace("  now {}: {} suspects, {} reports, commands to {}: {}", now_ms, now.suspects_size(),
          reports_->List("all", "").size(), stream_.host, CommandsSentTo(stream_.host).size());
  }

  // ---- Queries: QueryServiceImpl's work for each RPC ----

  void GetSeries(std::string_view bytes) {
    drip::v1::GetSeriesRequest request;
    if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
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
    if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
    drip::v1::ListSuspectsResponse response;
    detector_->Fill(request.component(), &response);
    snapshots_->Fill(&response);
  }

  void Leaks(std::string_view bytes) {
    drip::v1::UpdateLeakStateRequest request;
    if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
    (void)reports_->List(request.state(), request.note());
    (void)reports_->Get(request.id());
    (void)reports_->SetState(request.id(), request.state(), request.actor().substr(0, 200),
                             request.note(), clock_.NowMs());
  }

  void Mitigate(std::string_view bytes) {
    drip::v1::MitigateRequest request;
    if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
    absl::StatusOr<std::vector<drip::v1::AuditEntry>> entries =
        mitigations_->Request(request, request.actor().substr(0, 200), clock_.NowMs());
    Trace("  mitigate {}: {}", request.id(),
          entries.ok() ? fmt::format("{} entries", entries->size()) : entries.status().ToString());
  }

  void ListAudit(std::string_view bytes) {
    drip::v1::ListAuditRequest request;
    if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
    if (request.since_ms() < 0) return;  // refused by the service
    const size_t limit = request.limit() == 0 ? 100 : std::min<size_t>(request.limit(), 10000);
    absl::StatusOr<std::vector<drip::v1::AuditEntry>> entries =
        store_->reports()->ReadAudit(request.report_id(), request.since_ms(), limit);
    FUZZ_CHECK(entries.ok(), "ReadAudit: %s", entries.status().ToString().c_str());
    FUZZ_CHECK(entries->size() <= limit, "%zu audit entries, limit %zu", entries->size(), limit);
  }

  FakeClock clock_;
  bool opened_once_ = false;  // later opens are restarts, on the same files
  CollectorConfig config_;
  std::unique_ptr<SampleValidator> validator_;
  ConnectedHosts hosts_;
  std::unique_ptr<RocksDbSeriesStore> store_;
  std::unique_ptr<OnlineDetector> detector_;
  std::unique_ptr<SnapshotScheduler> snapshots_;
  std::unique_ptr<LeakReportBook> reports_;
  std::unique_ptr<MitigationCoordinator> mitigations_;
  std::unique_ptr<QueryServiceImpl> query_;
  Stream stream_;
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
