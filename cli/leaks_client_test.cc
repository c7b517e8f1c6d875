// The leak report commands end to end against a fake collector QueryService on a
// loopback port: what they send (actor, state, signal), how mitigate follows the audit
// log until the agents answer or --wait runs out, and the exit codes that come of it.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <sstream>

#include "cli/audit_command.h"
#include "cli/exit_codes.h"
#include "cli/leaks_show_command.h"
#include "cli/leaks_state_command.h"
#include "cli/mitigate_command.h"
#include "cli/query_client.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "diagnoser/synthetic_heap.h"
#include "drip/v1/query.grpc.pb.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

drip::v1::AuditEntry Entry(int id, const std::string& command_id, const std::string& host,
                           const std::string& outcome) {
  drip::v1::AuditEntry e;
  e.set_id(fmt::format("{:010}", id));
  e.set_time_ms(1'700'000'000'000 + id);
  e.set_report_id("leak-7");
  e.set_host(host);
  e.set_action("signal-process");
  e.set_target("pid 42 SIGTERM");
  e.set_outcome(outcome);
  e.set_command_id(command_id);
  return e;
}

// Two hours apart, 30-minute windows of one process leaking 72 MB/h at
// Session::Remember: the report's first (`first`) and latest snapshots.
drip::v1::HeapSnapshot LeakingProcessSnapshot(bool first) {
  diagnoser::testing::SyntheticOptions options;
  options.duration_s = 1800;
  options.start_ms = 1'700'000'000'000 + (first ? 0 : 2 * 3'600'000);
  options.seed = first ? 1 : 2;
  diagnoser::testing::SyntheticHeap heap(options);
  diagnoser::testing::AllocationSite leak;
  leak.frames = {diagnoser::testing::Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
                 diagnoser::testing::Frame("Session::Remember(Request const&)", "/usr/bin/api",
                                           "src/session.cc", 88)};
  leak.rate_per_s = 100;
  leak.size = 200;
  heap.AddSite(leak);
  HeapSnapshot snapshot = heap.Build();
  snapshot.target.pid = 42;
  snapshot.target.host = "web-1";
  snapshot.target.start_time_ms = 1'690'000'000'000;
  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(snapshot, &proto);
  return proto;
}

// Knows one report, leak-7, which keeps `snapshots` heap snapshots (0, 1 or 2). Its agents
// answer cmd-a on the second read of the audit log and cmd-b only when `answer_b` is set.
class FakeQueryService final : public drip::v1::QueryService::Service {
 public:
  grpc::Status GetLeak(grpc::ServerContext*, const drip::v1::GetLeakRequest* request,
                       drip::v1::LeakReport* response) override {
    if (request->id() != "leak-7") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no leak report " + request->id());
    }
    response->set_id("leak-7");
    response->set_component("svc:api.service");
    response->set_state("open");
    if (snapshots >= 1) {
      drip::v1::SnapshotRef* first = response->mutable_first_snapshot();
      first->set_command_id("snapshot-1");
      first->set_host("web-1");
      first->set_instance("42@1690000000");
      *response->mutable_latest_snapshot() = *first;
    }
    if (snapshots >= 2) response->mutable_latest_snapshot()->set_command_id("snapshot-2");
    return grpc::Status::OK;
  }
  grpc::Status GetLeakSnapshot(grpc::ServerContext*,
                               const drip::v1::GetLeakSnapshotRequest* request,
                               drip::v1::HeapSnapshot* response) override {
    if (snapshots == 0) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no snapshot");
    *response = LeakingProcessSnapshot(request->first() || snapshots == 1);
    if (corrupt_latest && !request->first()) response->set_mode("ptrace");
    return grpc::Status::OK;
  }
  grpc::Status UpdateLeakState(grpc::ServerContext*,
                               const drip::v1::UpdateLeakStateRequest* request,
                               drip::v1::LeakReport* response) override {
    std::lock_guard lock(mu);
    last_update = *request;
    response->set_id(request->id());
    response->set_component("svc:api.service");
    response->set_state(request->state());
    return grpc::Status::OK;
  }
  grpc::Status Mitigate(grpc::ServerContext*, const drip::v1::MitigateRequest* request,
                        drip::v1::MitigateResponse* response) override {
    std::lock_guard lock(mu);
    last_mitigate = *request;
    *response->add_entries() = Entry(10, "cmd-a", "web-1", "requested");
    *response->add_entries() = Entry(11, "cmd-b", "web-2", "requested");
    return grpc::Status::OK;
  }
  grpc::Status ListAudit(grpc::ServerContext*, const drip::v1::ListAuditRequest* request,
                         drip::v1::ListAuditResponse* response) override {
    const int reads = ++audit_reads;
    std::lock_guard lock(mu);
    last_audit = *request;
    if (answer_b && reads >= 2) *response->add_entries() = Entry(13, "cmd-b", "web-2", "succeeded");
    if (reads >= 2) *response->add_entries() = Entry(12, "cmd-a", "web-1", "succeeded");
    *response->add_entries() = Entry(11, "cmd-b", "web-2", "requested");
    *response->add_entries() = Entry(10, "cmd-a", "web-1", "requested");
    return grpc::Status::OK;
  }

  std::mutex mu;
  int snapshots = 0;
  bool corrupt_latest = false;
  bool answer_b = true;
  std::atomic<int> audit_reads{0};
  drip::v1::UpdateLeakStateRequest last_update;
  drip::v1::MitigateRequest last_mitigate;
  drip::v1::ListAuditRequest last_audit;
};

class LeaksClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = "127.0.0.1:" + std::to_string(port);
    client_ = std::make_unique<QueryClient>(address_, std::chrono::seconds(5));
  }
  void TearDown() override { server_->Shutdown(); }

  FakeQueryService service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::unique_ptr<QueryClient> client_;
};

TEST_F(LeaksClientTest, MitigateWaitsForEveryAgentAndSucceeds) {
  MitigateOptions options;
  options.id = "leak-7";
  options.action = "signal-process";
  options.dry_run = true;
  options.signal_text = "SIGTERM";
  options.wait_text = "10s";
  std::ostringstream out, err;
  auto code = RunMitigateCommand(*client_, options, "alice@laptop", TerminalStyle(), out, err);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, kExitOk) << out.str() << err.str();
  EXPECT_EQ(service_.last_mitigate.actor(), "alice@laptop");
  EXPECT_EQ(service_.last_mitigate.signal(), 15);
  EXPECT_TRUE(service_.last_mitigate.dry_run());
  EXPECT_EQ(service_.last_audit.report_id(), "leak-7");
  EXPECT_EQ(service_.last_audit.since_ms(), 1'700'000'000'010);
  EXPECT_EQ(service_.audit_reads.load(), 2);
  const std::string text = out.str();
  EXPECT_NE(text.find("signal-process pid 42 SIGTERM on web-1: requested\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("waiting up to 10 s for the agents to answer\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nHOST   ACTION"), std::string::npos) << text;
  EXPECT_EQ(text.find("requested  -\n"), std::string::npos) << text;  // none left in the table
  EXPECT_EQ(err.str(), "");
}

TEST_F(LeaksClientTest, MitigateStopsAtWaitWithThePendingCode) {
  service_.answer_b = false;
  MitigateOptions options;
  options.id = "leak-7";
  options.action = "restart-unit";
  options.wait_text = "1200ms";
  std::ostringstream out, err;
  auto code = RunMitigateCommand(*client_, options, "bob@host", TerminalStyle(), out, err);
  ASSERT_TRUE(code.ok()) << code.status();
  // It returned (the test would hang otherwise) with one host still requested: it stopped
  // at --wait rather than waiting for an answer that never comes.
  EXPECT_EQ(*code, kExitActionPending) << out.str();
  EXPECT_NE(out.str().find("web-2  signal-process  pid 42 SIGTERM  no       requested"),
            std::string::npos)
      << out.str();
  EXPECT_NE(err.str().find("dripctl: mitigation of leak-7: 1 succeeded, 1 still requested after"),
            std::string::npos)
      << err.str();
}

TEST_F(LeaksClientTest, MitigateWithWaitZeroDoesNotReadTheAuditLog) {
  MitigateOptions options;
  options.id = "leak-7";
  options.action = "recommend";
  options.wait_text = "0";
  options.json = true;
  std::ostringstream out, err;
  auto code = RunMitigateCommand(*client_, options, "bob@host", TerminalStyle(), out, err);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, kExitActionPending);
  EXPECT_EQ(service_.audit_reads.load(), 0);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["pending"], 2);
}

TEST_F(LeaksClientTest, UnknownReportIsNotFoundNamingTheCollector) {
  std::ostringstream out;
  LeaksShowOptions options;
  options.id = "leak-99";
  absl::Status status = RunLeaksShowCommand(*client_, options, TerminalStyle(), out);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReportExitCodeFor(status), kExitNotFound);
  EXPECT_NE(std::string(status.message()).find("collector at " + address_ + " refused GetLeak"),
            std::string::npos)
      << status;
  EXPECT_EQ(out.str(), "");
}

TEST_F(LeaksClientTest, ShowDiffNamesWhatGrewBetweenTheReportsSnapshotsAndWritesItsProfile) {
  service_.snapshots = 2;
  LeaksShowOptions options;
  options.id = "leak-7";
  options.diff = true;
  options.json = true;
  options.pprof_path = ::testing::TempDir() + "leak-7-diff.pb.gz";
  std::ostringstream out;
  absl::Status status = RunLeaksShowCommand(*client_, options, TerminalStyle(), out);
  ASSERT_TRUE(status.ok()) << status;
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["sites"][0]["frames"][0]["function"], "Session::Remember(Request const&)");
  // 72 MB/h over the two hours between the windows' ends.
  EXPECT_NEAR(j["sites"][0]["grew_bytes"].get<double>(), 144e6, 0.25 * 144e6);
  EXPECT_EQ(::access(options.pprof_path.c_str(), R_OK), 0);
  ::unlink(options.pprof_path.c_str());
}

TEST_F(LeaksClientTest, ShowDiffOfAReportWithOneSnapshotOrAPprofWithoutAnyIsOneLine) {
  LeaksShowOptions options;
  options.id = "leak-7";
  options.pprof_path = ::testing::TempDir() + "leak-7.pb.gz";
  std::ostringstream out;
  absl::Status status = RunLeaksShowCommand(*client_, options, TerminalStyle(), out);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "--pprof: leak-7 has no heap snapshot yet: none of its hosts' snapshots was diagnosed");
  EXPECT_EQ(ReportExitCodeFor(status), kExitUsage);

  service_.snapshots = 1;
  options.pprof_path.clear();
  options.diff = true;
  status = RunLeaksShowCommand(*client_, options, TerminalStyle(), out);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message().rfind(
                "leak-7 keeps one snapshot so far (snapshot-1 of 42@1690000000 on web-1)", 0),
            0u)
      << status;
  EXPECT_EQ(status.message().find('\n'), std::string::npos);
  EXPECT_TRUE(out.str().empty()) << out.str();
}

TEST_F(LeaksClientTest, ShowRefusesAStoredSnapshotThatIsNotValidNamingIt) {
  service_.snapshots = 2;
  service_.corrupt_latest = true;
  LeaksShowOptions options;
  options.id = "leak-7";
  options.diff = true;
  std::ostringstream out;
  absl::Status status = RunLeaksShowCommand(*client_, options, TerminalStyle(), out);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("leak-7's latest snapshot"), std::string::npos) << status;
  EXPECT_NE(status.message().find("ptrace"), std::string::npos) << status;
  EXPECT_EQ(ReportExitCodeFor(status), kExitUsage);
}

TEST_F(LeaksClientTest, AckSendsTheActorAndNoteAndPrintsTheNewState) {
  std::ostringstream out;
  LeakStateOptions options;
  options.id = "leak-7";
  options.state = "acknowledged";
  options.note = "looking";
  ASSERT_TRUE(RunLeakStateCommand(*client_, options, "carol@desk", out).ok());
  EXPECT_EQ(service_.last_update.actor(), "carol@desk");
  EXPECT_EQ(service_.last_update.note(), "looking");
  EXPECT_EQ(service_.last_update.state(), "acknowledged");
  EXPECT_EQ(out.str(), "leak-7 (svc:api.service) is now acknowledged\n");
}

}  // namespace
}  // namespace drip::cli
