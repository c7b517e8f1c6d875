#include "collector/pipeline/mitigation_coordinator.h"

#include <gtest/gtest.h>

#include "collector/ingest/recording_stream_test_util.h"
#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/scoped_temp_dir.h"

namespace drip::collector {
namespace {

constexpr int64_t kPassMs = 1'700'000'000'000;  // the first pipeline pass

class MitigationCoordinatorTest : public ::testing::Test {
 protected:
  void Start() {
    RocksDbSeriesStoreOptions options;
    options.path = dir_.path();
    options.fold_interval = std::chrono::milliseconds(0);
    auto store = RocksDbSeriesStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    book_ = std::make_unique<LeakReportBook>(ReportPolicy{}, &config_, store_->reports());
    coordinator_ = std::make_unique<MitigationCoordinator>(config_, book_.get(), commands_.get(),
                                                           nullptr, &clock_);
    hosts_.Register("a", &stream_);
    FleetSuspects pass;
    analyzer::Suspect& s = pass.hosts.emplace_back().suspect;
    s.host = "a";
    s.component = "svc:leaky.service";
    s.instance = "4242@100";
    s.first_flagged = kPassMs / 1000;
    s.last_updated = kPassMs / 1000;
    s.growth_bytes_per_hour = 1e9;
    s.eta_to_oom_seconds = 600;
    book_->Update(kPassMs, pass);
  }
  void TearDown() override {
    if (coordinator_) hosts_.Unregister("a", &stream_);
  }

  // The collector restarts on the same store: a new book loads the reports, a new
  // coordinator restores what they record.
  void Restart(int64_t now_ms) {
    coordinator_.reset();
    commands_ = std::make_unique<CommandRouter>(&hosts_);
    book_ = std::make_unique<LeakReportBook>(ReportPolicy{}, &config_, store_->reports());
    ASSERT_TRUE(book_->Load().ok());
    coordinator_ = std::make_unique<MitigationCoordinator>(config_, book_.get(), commands_.get(),
                                                           nullptr, &clock_);
    coordinator_->Restore(now_ms);
  }

  std::vector<drip::v1::AuditEntry> Audit() {
    auto entries = store_->reports()->ReadAudit("leak-1", 0, 1000);
    EXPECT_TRUE(entries.ok());
    return entries.ok() ? *entries : std::vector<drip::v1::AuditEntry>{};
  }

  // The agent's answer at `now_ms`, through the router as from its session.
  bool Answer(const std::string& host, const drip::v1::CommandResult& result, int64_t now_ms) {
    clock_.Set(now_ms);
    return commands_->Deliver(host, result);
  }

  drip::v1::CommandResult Ok(const std::string& id, const std::string& detail) {
    drip::v1::CommandResult r;
    r.set_command_id(id);
    r.set_ok(true);
    r.set_detail(detail);
    return r;
  }

  ScopedTempDir dir_;
  MitigationConfig config_;
  ConnectedHosts hosts_;
  // A new one at each Restart, as a new process has.
  std::unique_ptr<CommandRouter> commands_ = std::make_unique<CommandRouter>(&hosts_);
  FakeClock clock_{kPassMs};
  RecordingStream stream_;
  std::unique_ptr<RocksDbSeriesStore> store_;
  std::unique_ptr<LeakReportBook> book_;
  std::unique_ptr<MitigationCoordinator> coordinator_;
};

TEST_F(MitigationCoordinatorTest, AnAutomaticPolicySignalsTheLeakingProcessAndRecordsTheOutcome) {
  MitigationPolicy policy;
  policy.automatic = true;
  policy.action = "signal-process";
  policy.dry_run = false;
  policy.max_host_fraction = 1;
  config_.components["svc:leaky.service"] = policy;
  Start();
  coordinator_->Tick(kPassMs + 1000);
  ASSERT_EQ(stream_.sent.size(), 1u);
  const drip::v1::MitigationCommand& m = stream_.sent[0].mitigation();
  EXPECT_EQ(m.action(), "signal-process");
  EXPECT_EQ(m.pid(), 4242);
  EXPECT_EQ(m.instance(), "4242@100");
  EXPECT_EQ(m.signal(), 15);
  EXPECT_FALSE(m.dry_run());
  EXPECT_EQ(m.report_id(), "leak-1");
  // The cool-down keeps the next pass from signalling again.
  coordinator_->Tick(kPassMs + 2000);
  EXPECT_EQ(stream_.sent.size(), 1u);

  EXPECT_TRUE(
      Answer("a", Ok(stream_.sent[0].id(), "sent SIGTERM to pid 4242 (leaky)"), kPassMs + 3000));
  auto report = book_->Get("leak-1");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->state(), "mitigated");
  ASSERT_EQ(report->mitigations_size(), 1);
  EXPECT_EQ(report->mitigations(0).outcome(), "succeeded");
  EXPECT_EQ(report->mitigations(0).actor(), "policy");
  auto audit = Audit();
  ASSERT_GE(audit.size(), 3u);  // open, requested, succeeded, and the state change
  bool requested = false, succeeded = false;
  for (const auto& e : audit) {
    requested |= e.outcome() == "requested" && e.action() == "signal-process";
    succeeded |= e.outcome() == "succeeded" && e.detail() == "sent SIGTERM to pid 4242 (leaky)";
  }
  EXPECT_TRUE(requested);
  EXPECT_TRUE(succeeded);
}

TEST_F(MitigationCoordinatorTest, AutomaticActionsAreDryRunsUnlessThePolicySaysOtherwise) {
  config_.defaults.automatic = true;
  config_.defaults.action = "restart-unit";
  config_.defaults.max_host_fraction = 1;
  Start();
  coordinator_->Tick(kPassMs + 1000);
  ASSERT_EQ(stream_.sent.size(), 1u);
  EXPECT_TRUE(stream_.sent[0].mitigation().dry_run());
  EXPECT_EQ(stream_.sent[0].mitigation().unit(), "leaky.service");
  Answer("a", Ok(stream_.sent[0].id(), "would restart leaky.service"), kPassMs + 2000);
  auto report = book_->Get("leak-1");
  EXPECT_EQ(report->state(), "open");
  EXPECT_EQ(report->mitigations(0).outcome(), "dry-run");
}

TEST_F(MitigationCoordinatorTest, AnUnansweredCommandTimesOut) {
  config_.result_timeout = std::chrono::seconds(30);
  Start();
  drip::v1::MitigateRequest request;
  request.set_id("leak-1");
  request.set_action("signal-process");
  auto entries = coordinator_->Request(request, "alice", kPassMs);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].outcome(), "requested");
  EXPECT_EQ((*entries)[0].actor(), "alice");
  // The pipeline's pass ends overdue commands at the router.
  clock_.Set(kPassMs + 30'000);
  commands_->Expire(kPassMs + 29'999);
  EXPECT_EQ(book_->Get("leak-1")->mitigations(0).outcome(), "requested");
  commands_->Expire(kPassMs + 30'000);
  EXPECT_EQ(book_->Get("leak-1")->mitigations(0).outcome(), "timed-out");
  EXPECT_EQ(book_->Get("leak-1")->mitigations(0).detail(), "the agent did not answer within 30 s");
  // A late answer is not taken for a live command.
  EXPECT_FALSE(Answer("a", Ok(stream_.sent[0].id(), ""), kPassMs + 40'000));
}

TEST_F(MitigationCoordinatorTest, RefusedResultsAndBadRequestsAreReported) {
  Start();
  drip::v1::MitigateRequest request;
  request.set_id("leak-1");
  request.set_action("reboot");
  EXPECT_EQ(coordinator_->Request(request, "x", kPassMs).status().code(),
            absl::StatusCode::kInvalidArgument);
  request.set_id("leak-7");
  request.set_action("signal-process");
  EXPECT_EQ(coordinator_->Request(request, "x", kPassMs).status().code(),
            absl::StatusCode::kNotFound);
  request.set_id("leak-1");
  ASSERT_TRUE(coordinator_->Request(request, "x", kPassMs).ok());
  drip::v1::CommandResult refused;
  refused.set_command_id(stream_.sent[0].id());
  refused.set_refused(true);
  refused.set_error("action signal-process is not allowed by this agent's config");
  EXPECT_TRUE(Answer("a", refused, kPassMs + 100));
  auto report = book_->Get("leak-1");
  EXPECT_EQ(report->mitigations(0).outcome(), "refused");
  EXPECT_EQ(report->state(), "open");
}

TEST_F(MitigationCoordinatorTest, RecommendSendsNothingToTheHost) {
  Start();
  drip::v1::MitigateRequest request;
  request.set_id("leak-1");
  request.set_action("recommend");
  auto entries = coordinator_->Request(request, "x", kPassMs);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].outcome(), "recommended");
  EXPECT_TRUE(stream_.sent.empty());
}

TEST_F(MitigationCoordinatorTest, TheFleetWideHourlyLimitHolds) {
  config_.max_actions_per_hour = 1;
  Start();
  drip::v1::MitigateRequest request;
  request.set_id("leak-1");
  request.set_action("signal-process");
  request.set_dry_run(true);
  ASSERT_TRUE(coordinator_->Request(request, "x", kPassMs).ok());
  request.set_dry_run(false);
  auto second = coordinator_->Request(request, "x", kPassMs + 1000);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].outcome(), "refused");
  EXPECT_NE((*second)[0].detail().find("max_actions_per_hour"), std::string::npos);
  EXPECT_EQ(stream_.sent.size(), 1u);
}

// A relay that keeps what it is handed, for the test to answer.
class RecordingRelay : public CommandRelay {
 public:
  bool MayReach(const std::string& host) const override { return host != "placed-here"; }
  struct Handed {
    std::string host;
    drip::v1::Command command;
    std::string requested_by;
    Done done;
  };
  void Relay(const std::string& host, const drip::v1::Command& command,
             const std::string& requested_by, std::chrono::milliseconds /*timeout*/,
             Done done) override {
    handed.push_back({host, command, requested_by, std::move(done)});
  }
  std::vector<Handed> handed;
};

// In a cluster the report lists a host streaming to another member: the command goes
// through the relay, waits here as any other, and the agent's answer the relay brings
// back is the outcome; a relay that brings none back is a failure that says why.
TEST_F(MitigationCoordinatorTest, AHostStreamingToAnotherMemberIsMitigatedThroughTheRelay) {
  MitigationPolicy policy;
  policy.cooldown = std::chrono::milliseconds(0);  // one host, asked again and again
  config_.components["svc:leaky.service"] = policy;
  Start();
  hosts_.Unregister("a", &stream_);
  RecordingRelay relay;
  coordinator_->SetRelay(&relay);
  drip::v1::MitigateRequest request;
  request.set_id("leak-1");
  request.set_action("signal-process");
  request.set_dry_run(true);
  auto entries = coordinator_->Request(request, "alice", kPassMs);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].outcome(), "requested");
  EXPECT_TRUE(stream_.sent.empty());
  ASSERT_EQ(relay.handed.size(), 1u);
  EXPECT_EQ(relay.handed[0].host, "a");
  EXPECT_EQ(relay.handed[0].requested_by, "alice");
  EXPECT_EQ(relay.handed[0].command.mitigation().pid(), 4242);
  EXPECT_TRUE(relay.handed[0].command.mitigation().dry_run());
  // The relayed command waits at the router as any other.
  EXPECT_EQ(commands_->size(), 1u);
  relay.handed[0].done(Ok(relay.handed[0].command.id(), "would send SIGTERM to pid 4242"));
  EXPECT_EQ(commands_->size(), 0u);
  EXPECT_EQ(book_->Get("leak-1")->mitigations(0).outcome(), "dry-run");
  EXPECT_EQ(book_->Get("leak-1")->mitigations(0).detail(), "would send SIGTERM to pid 4242");

  request.set_dry_run(false);
  ASSERT_TRUE(coordinator_->Request(request, "alice", kPassMs + 3000).ok());
  ASSERT_EQ(relay.handed.size(), 2u);
  relay.handed[1].done(absl::PermissionDeniedError(
      "collector c1 at 10.0.0.2:7000: c0 is a viewer; this call needs the member role"));
  const drip::v1::MitigationRecord failed = book_->Get("leak-1")->mitigations(1);
  EXPECT_EQ(failed.outcome(), "failed");
  EXPECT_NE(failed.detail().find("needs the member role"), std::string::npos) << failed.detail();

  // Without a relay (the member is leaving) the host is out of reach, as standalone.
  coordinator_->SetRelay(nullptr);
  auto unreachable = coordinator_->Request(request, "alice", kPassMs + 5000);
  ASSERT_TRUE(unreachable.ok());
  ASSERT_EQ(unreachable->size(), 1u);
  EXPECT_EQ((*unreachable)[0].outcome(), "failed");
  EXPECT_EQ(relay.handed.size(), 2u);
  hosts_.Register("a", &stream_);
}

// A collector that crash-loops must not get a fresh hourly budget at every start, nor
// forget the commands it sent: the agent's answer, arriving after the restart, is taken.
TEST_F(MitigationCoordinatorTest, ARestartKeepsTheHourlyBudgetAndAwaitsTheCommandsItSent) {
  config_.max_actions_per_hour = 1;
  config_.defaults.cooldown = std::chrono::milliseconds(0);  // only the budget holds it back
  Start();
  drip::v1::MitigateRequest request;
  request.set_id("leak-1");
  request.set_action("signal-process");
  auto first = coordinator_->Request(request, "alice", kPassMs);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(stream_.sent.size(), 1u);
  const std::string sent_id = stream_.sent[0].id();

  Restart(kPassMs + 5000);
  EXPECT_TRUE(Answer("a", Ok(sent_id, "sent SIGTERM to pid 4242"), kPassMs + 6000));
  EXPECT_EQ(book_->Get("leak-1")->mitigations(0).outcome(), "succeeded");
  auto second = coordinator_->Request(request, "alice", kPassMs + 7000);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].outcome(), "refused");
  EXPECT_NE((*second)[0].detail().find("max_actions_per_hour"), std::string::npos)
      << (*second)[0].detail();
  EXPECT_EQ(stream_.sent.size(), 1u);

  // An hour on, the budget is back.
  Restart(kPassMs + 3'601'000);
  auto later = coordinator_->Request(request, "alice", kPassMs + 3'602'000);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ((*later)[0].outcome(), "requested");
}

// A command sent before the restart that the agent never answers still times out.
TEST_F(MitigationCoordinatorTest, ACommandUnansweredAcrossARestartTimesOut) {
  config_.result_timeout = std::chrono::seconds(30);
  Start();
  drip::v1::MitigateRequest request;
  request.set_id("leak-1");
  request.set_action("signal-process");
  ASSERT_TRUE(coordinator_->Request(request, "alice", kPassMs).ok());
  Restart(kPassMs + 5000);
  clock_.Set(kPassMs + 30'000);
  commands_->Expire(kPassMs + 30'000);
  EXPECT_EQ(book_->Get("leak-1")->mitigations(0).outcome(), "timed-out");
}

// What the audit of issue 32 did: a member certificate relayed 26 real restarts in 2 s,
// under a recommend-only policy with an hourly budget of 20. The member that delivers
// judges each as it would judge its own request.
TEST_F(MitigationCoordinatorTest, ARelayedMitigationIsHeldToThisMembersReportPolicyAndBudget) {
  config_.max_actions_per_hour = 1;
  config_.defaults.max_host_fraction = 1;
  config_.defaults.cooldown = std::chrono::milliseconds(0);
  Start();
  drip::v1::MitigationCommand restart;
  restart.set_report_id("leak-1");
  restart.set_component("svc:leaky.service");
  restart.set_action("restart-unit");
  restart.set_unit("leaky.service");
  restart.set_dry_run(false);

  auto code = [&](const std::string& host, const std::string& id,
                  const drip::v1::MitigationCommand& c) {
    return coordinator_->AdmitRelayed(*book_->Get("leak-1"), host, id, c, kPassMs + 1000).code();
  };
  drip::v1::MitigationCommand unknown = restart;
  unknown.set_report_id("leak-99");
  EXPECT_EQ(code("a", "c-0", unknown), absl::StatusCode::kInvalidArgument);
  drip::v1::MitigationCommand other_component = restart;
  other_component.set_component("svc:other.service");
  EXPECT_EQ(code("a", "c-0", other_component), absl::StatusCode::kInvalidArgument);
  drip::v1::MitigationCommand no_action = restart;
  no_action.set_action("reboot");
  EXPECT_EQ(code("a", "c-0", no_action), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("b", "c-0", restart), absl::StatusCode::kInvalidArgument);

  // The first spends the budget of one an hour; the rest are refused, with the reason.
  EXPECT_EQ(code("a", "c-1", restart), absl::StatusCode::kOk);
  absl::Status second =
      coordinator_->AdmitRelayed(*book_->Get("leak-1"), "a", "c-2", restart, kPassMs + 2000);
  EXPECT_EQ(second.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(second.message().find("max_actions_per_hour"), std::string::npos) << second;
  // A recommendation touches nothing and spends nothing.
  drip::v1::MitigationCommand recommend = restart;
  recommend.set_action("recommend");
  EXPECT_EQ(code("a", "c-3", recommend), absl::StatusCode::kOk);
}

// The owner's record of a relayed restart reaches this member late, or never from a member
// that skips its checks: what this member delivered keeps the host's cool-down by itself.
TEST_F(MitigationCoordinatorTest, ARelayedRestartWithinTheCooldownOfOneDeliveredHereIsRefused) {
  config_.defaults.max_host_fraction = 1;
  Start();
  drip::v1::MitigationCommand restart;
  restart.set_report_id("leak-1");
  restart.set_component("svc:leaky.service");
  restart.set_action("restart-unit");
  restart.set_dry_run(false);
  EXPECT_TRUE(
      coordinator_->AdmitRelayed(*book_->Get("leak-1"), "a", "c-1", restart, kPassMs + 1000).ok());
  absl::Status again =
      coordinator_->AdmitRelayed(*book_->Get("leak-1"), "a", "c-2", restart, kPassMs + 2000);
  EXPECT_EQ(again.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(again.message().find("policy cooldown"), std::string::npos) << again;
  // Past the cool-down (1 h by default) the host may be restarted again.
  EXPECT_TRUE(
      coordinator_->AdmitRelayed(*book_->Get("leak-1"), "a", "c-3", restart, kPassMs + 3'700'000)
          .ok());
}

}  // namespace
}  // namespace drip::collector
