#include "collector/pipeline/leak_report_book.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>

#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/scoped_temp_dir.h"

namespace drip::collector {
namespace {

constexpr int64_t kT0Ms = 1'700'000'000'000;

HostSuspect MakeSuspect(const std::string& host, const std::string& component,
                        int64_t first_flagged_s, double eta_s = 0) {
  HostSuspect h;
  analyzer::Suspect& s = h.suspect;
  s.host = host;
  s.component = component;
  s.instance = "4242@100";
  s.first_flagged = first_flagged_s;
  s.last_updated = first_flagged_s;
  s.growth_bytes_per_hour = 64e6;
  s.current_bytes = 512 << 20;
  if (eta_s > 0) s.eta_to_oom_seconds = eta_s;
  s.rule = analyzer::SuspectRule::kClimbAboveNormal;
  return h;
}

// A finished snapshot of `h` whose diagnosis has one stack, returned to fill in.
diagnoser::DiagnosedStack& AddDoneSnapshot(HostSuspect* h, diagnoser::Verdict verdict,
                                           double growth_bytes_per_hour) {
  SnapshotAttempt& snapshot = h->snapshot.emplace();
  snapshot.state = SnapshotAttempt::State::kDone;
  snapshot.finished_ms = kT0Ms;
  diagnoser::DiagnosedStack& stack = snapshot.diagnosis.stacks.emplace_back();
  stack.verdict = verdict;
  stack.growth_bytes_per_hour = growth_bytes_per_hour;
  return stack;
}

class LeakReportBookTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open() {
    book_.reset();
    store_.reset();
    RocksDbSeriesStoreOptions options;
    options.path = dir_.path();
    options.fold_interval = std::chrono::milliseconds(0);
    auto store = RocksDbSeriesStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    book_ = std::make_unique<LeakReportBook>(policy_, &mitigation_, store_->reports());
    ASSERT_TRUE(book_->Load().ok());
  }

  std::vector<drip::v1::AuditEntry> Audit() {
    auto entries = store_->reports()->ReadAudit("", 0, 1000);
    EXPECT_TRUE(entries.ok());
    return entries.ok() ? *entries : std::vector<drip::v1::AuditEntry>{};
  }

  ScopedTempDir dir_;
  ReportPolicy policy_;
  MitigationConfig mitigation_;
  std::unique_ptr<RocksDbSeriesStore> store_;
  std::unique_ptr<LeakReportBook> book_;
};

TEST_F(LeakReportBookTest, SuspectsOfOneComponentAreOneReportUpdatedAsHostsArrive) {
  FleetSuspects pass;
  pass.hosts.push_back(MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000));
  book_->Update(kT0Ms, pass);
  pass.hosts.push_back(MakeSuspect("b", "svc:leaky.service", kT0Ms / 1000 + 60));
  book_->Update(kT0Ms + 60'000, pass);
  book_->Update(kT0Ms + 120'000, pass);
  auto reports = book_->List("", "");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].id(), "leak-1");
  EXPECT_EQ(reports[0].state(), "open");
  EXPECT_EQ(reports[0].hosts_size(), 2);
  EXPECT_EQ(reports[0].first_seen_s(), kT0Ms / 1000);
  EXPECT_EQ(reports[0].recommended_action(), "restart-unit");
  EXPECT_NE(reports[0].recommendation().find("dripctl mitigate leak-1"), std::string::npos);
  EXPECT_EQ(book_->counts().opened, 1u);
  // One "open" line in the audit log, not one per pass.
  auto audit = Audit();
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].action(), "open");
}

TEST_F(LeakReportBookTest, ReportsKeepTheirIdsAndStatesAcrossARestart) {
  FleetSuspects pass;
  pass.hosts.push_back(MakeSuspect("a", "svc:one.service", kT0Ms / 1000));
  pass.hosts.push_back(MakeSuspect("a", "svc:two.service", kT0Ms / 1000));
  book_->Update(kT0Ms, pass);
  ASSERT_TRUE(book_->SetState("leak-2", "acknowledged", "alice", "looking", kT0Ms + 1).ok());
  Open();
  auto two = book_->Get("leak-2");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->state(), "acknowledged");
  EXPECT_EQ(two->component(), "svc:two.service");
  // The next report continues the numbering, and the same leak keeps its report.
  pass.hosts.push_back(MakeSuspect("a", "svc:three.service", kT0Ms / 1000));
  book_->Update(kT0Ms + 60'000, pass);
  EXPECT_EQ(book_->List("all", "").size(), 3u);
  EXPECT_EQ(book_->List("", "svc:three.service")[0].id(), "leak-3");
}

TEST_F(LeakReportBookTest, ResolvesOnItsOwnOnceGrowthStopsAndALaterLeakOpensANewReport) {
  policy_.resolve_after = std::chrono::minutes(30);
  Open();
  FleetSuspects pass;
  pass.hosts.push_back(MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000));
  book_->Update(kT0Ms, pass);
  const FleetSuspects quiet;
  book_->Update(kT0Ms + 10 * 60'000, quiet);
  auto r = book_->Get("leak-1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state(), "open");
  EXPECT_FALSE(r->hosts(0).active());
  book_->Update(kT0Ms + 31 * 60'000, quiet);
  r = book_->Get("leak-1");
  EXPECT_EQ(r->state(), "resolved");
  EXPECT_EQ(r->history(r->history_size() - 1).actor(), "collector");
  EXPECT_EQ(Audit()[0].action(), "auto-resolve");
  EXPECT_TRUE(book_->List("", "").empty());

  FleetSuspects again;
  again.hosts.push_back(MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000 + 3600));
  book_->Update(kT0Ms + 3600'000, again);
  auto open = book_->List("", "");
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].id(), "leak-2");
}

TEST_F(LeakReportBookTest, AHostWithoutFreshEvidenceStopsLeakingAndItsReportResolves) {
  // The detector keeps a suspect's last figures once its growth stops.
  policy_.quiet_after = std::chrono::minutes(10);
  policy_.resolve_after = std::chrono::minutes(30);
  Open();
  FleetSuspects stale;
  stale.hosts.push_back(MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000, 3600));
  book_->Update(kT0Ms, stale);
  EXPECT_TRUE(book_->Get("leak-1")->hosts(0).active());
  book_->Update(kT0Ms + 11 * 60'000, stale);
  auto r = book_->Get("leak-1");
  EXPECT_FALSE(r->hosts(0).active());
  EXPECT_FALSE(r->has_min_eta_to_oom_seconds());  // no ETA alert for a host that stopped
  EXPECT_EQ(r->state(), "open");
  book_->Update(kT0Ms + 31 * 60'000, stale);
  EXPECT_EQ(book_->Get("leak-1")->state(), "resolved");
  book_->Update(kT0Ms + 40 * 60'000, stale);  // the same old figures reopen nothing
  EXPECT_TRUE(book_->List("", "").empty());
  FleetSuspects fresh;
  HostSuspect again = MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000);
  again.suspect.last_updated = kT0Ms / 1000 + 41 * 60;
  fresh.hosts.push_back(again);
  book_->Update(kT0Ms + 41 * 60'000, fresh);
  ASSERT_EQ(book_->List("", "").size(), 1u);
  EXPECT_EQ(book_->List("", "")[0].id(), "leak-2");
}

TEST_F(LeakReportBookTest, AUnitsSuspectTargetsItsLargestProcess) {
  FleetSuspects pass;
  HostSuspect s = MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000);
  s.suspect.instance = "cg@77";
  s.process_instance = "5151@900";
  pass.hosts.push_back(s);
  book_->Update(kT0Ms, pass);
  EXPECT_EQ(book_->Get("leak-1")->hosts(0).instance(), "5151@900");
}

TEST_F(LeakReportBookTest, AReportResolvedByHandStaysResolvedUntilAHostIsFlaggedAnew) {
  FleetSuspects pass;
  pass.hosts.push_back(MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000));
  book_->Update(kT0Ms, pass);
  ASSERT_TRUE(book_->SetState("leak-1", "resolved", "bob", "fixed in 1.2.4", kT0Ms + 1000).ok());
  book_->Update(kT0Ms + 60'000, pass);  // the same suspect, flagged before the resolution
  EXPECT_TRUE(book_->List("", "").empty());
  FleetSuspects anew;
  anew.hosts.push_back(MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000 + 120));
  book_->Update(kT0Ms + 180'000, anew);
  ASSERT_EQ(book_->List("", "").size(), 1u);
  EXPECT_EQ(book_->List("", "")[0].id(), "leak-2");
}

TEST_F(LeakReportBookTest, SeverityFollowsTheShortestEtaToOom) {
  FleetSuspects pass;
  pass.hosts.push_back(MakeSuspect("a", "svc:slow.service", kT0Ms / 1000, 100 * 3600));
  pass.hosts.push_back(MakeSuspect("a", "svc:soon.service", kT0Ms / 1000, 2 * 3600));
  pass.hosts.push_back(MakeSuspect("a", "svc:day.service", kT0Ms / 1000, 24 * 3600));
  pass.hosts.push_back(MakeSuspect("b", "svc:day.service", kT0Ms / 1000, 30 * 3600));
  book_->Update(kT0Ms, pass);
  auto reports = book_->List("", "");
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0].component(), "svc:soon.service");  // most severe first
  EXPECT_EQ(reports[0].severity(), "critical");
  EXPECT_EQ(reports[1].severity(), "warning");
  EXPECT_DOUBLE_EQ(reports[1].min_eta_to_oom_seconds(), 24 * 3600);
  EXPECT_EQ(reports[1].hosts(0).host(), "a");  // most urgent host first
  EXPECT_EQ(reports[2].severity(), "info");
}

TEST_F(LeakReportBookTest, TheLatestDiagnosisBecomesTheReportsStacks) {
  FleetSuspects pass;
  HostSuspect s = MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000);
  diagnoser::DiagnosedStack& stack = AddDoneSnapshot(&s, diagnoser::Verdict::kLeak, 60e6);
  StackFrame& frame = stack.frames.emplace_back();
  frame.function = "RememberSession";
  frame.file = "leaky_service.cc";
  frame.line = 31;
  pass.hosts.push_back(s);
  book_->Update(kT0Ms, pass);
  auto r = book_->Get("leak-1");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->top_stacks_size(), 1);
  EXPECT_EQ(r->top_stacks(0).frames(0).function(), "RememberSession");
  EXPECT_EQ(r->diagnosed_host(), "a");
  EXPECT_EQ(r->hosts(0).snapshot_state(), "done");
  // The stack's growth set against the detector's long-term figure for the host.
  EXPECT_NE(r->growth_explained().find("94% of the "), std::string::npos) << r->growth_explained();
  EXPECT_NE(r->growth_explained().find("the detector measured on a"), std::string::npos)
      << r->growth_explained();
}

// The report keeps its first and latest snapshots of one process, on disk: a second
// snapshot of that process becomes the latest; one of another host's process does not
// break the pair while the first's process is still followed; once that process is gone
// (restarted), the next snapshot starts a new pair.
TEST_F(LeakReportBookTest, KeepsTheFirstAndLatestSnapshotsOfOneProcessAcrossARestart) {
  auto pass_with = [](const std::string& host, const std::string& instance,
                      const std::string& command_id, int64_t finished_ms) {
    FleetSuspects pass;
    HostSuspect s = MakeSuspect(host, "svc:leaky.service", kT0Ms / 1000);
    s.process_instance = instance;
    AddDoneSnapshot(&s, diagnoser::Verdict::kLeak, 60e6);
    s.snapshot->command_id = command_id;
    s.snapshot->instance = instance;
    s.snapshot->finished_ms = finished_ms;
    s.snapshot->snapshot = std::make_shared<const std::string>("bytes of " + command_id);
    pass.hosts.push_back(s);
    return pass;
  };
  EXPECT_EQ(book_->Snapshot("leak-1", true).status().code(), absl::StatusCode::kNotFound);
  book_->Update(kT0Ms, pass_with("a", "4242@100", "snapshot-1", kT0Ms));
  // One snapshot is both the first and the latest.
  EXPECT_EQ(*book_->Snapshot("leak-1", true), "bytes of snapshot-1");
  EXPECT_EQ(*book_->Snapshot("leak-1", false), "bytes of snapshot-1");

  FleetSuspects both = pass_with("a", "4242@100", "snapshot-2", kT0Ms + 3'600'000);
  both.hosts.push_back(pass_with("b", "77@5", "snapshot-3", kT0Ms + 3'700'000).hosts[0]);
  book_->Update(kT0Ms + 3'700'000, both);
  Open();  // from disk
  auto r = book_->Get("leak-1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first_snapshot().command_id(), "snapshot-1");
  EXPECT_EQ(r->latest_snapshot().command_id(), "snapshot-2");
  EXPECT_EQ(r->latest_snapshot().instance(), "4242@100");
  EXPECT_EQ(r->latest_snapshot().size_bytes(), std::string("bytes of snapshot-2").size());
  EXPECT_EQ(*book_->Snapshot("leak-1", true), "bytes of snapshot-1");
  EXPECT_EQ(*book_->Snapshot("leak-1", false), "bytes of snapshot-2");

  // Host a's process restarted: the report follows 4243@900 there now.
  book_->Update(kT0Ms + 7'200'000, pass_with("a", "4243@900", "snapshot-4", kT0Ms + 7'200'000));
  r = book_->Get("leak-1");
  EXPECT_EQ(r->first_snapshot().command_id(), "snapshot-4");
  EXPECT_EQ(r->latest_snapshot().command_id(), "snapshot-4");
  EXPECT_EQ(*book_->Snapshot("leak-1", true), "bytes of snapshot-4");
  EXPECT_EQ(*book_->Snapshot("leak-1", false), "bytes of snapshot-4");
}

// A diagnosis that names no leak while the detector has seen the host grow for hours says
// that the snapshot missed it, rather than leaving on-call with "no leak found".
TEST_F(LeakReportBookTest, ADiagnosisWithoutALeakSaysItDoesNotExplainTheMeasuredGrowth) {
  FleetSuspects pass;
  HostSuspect s = MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000 - 3 * 3600);
  s.suspect.growth_since = kT0Ms / 1000 - 3 * 3600;
  s.suspect.last_updated = kT0Ms / 1000;
  AddDoneSnapshot(&s, diagnoser::Verdict::kInconclusive, 50e6).frames.emplace_back().function =
      "LruCache::Insert";
  pass.hosts.push_back(s);
  book_->Update(kT0Ms, pass);
  auto r = book_->Get("leak-1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->growth_explained().rfind("no leaking stack in the snapshot explains the ", 0), 0u)
      << r->growth_explained();
  EXPECT_NE(r->growth_explained().find(" over 3.0 h"), std::string::npos) << r->growth_explained();
}

TEST_F(LeakReportBookTest, StateChangesFollowTheLifecycle) {
  FleetSuspects pass;
  pass.hosts.push_back(MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000));
  book_->Update(kT0Ms, pass);
  EXPECT_EQ(book_->SetState("leak-9", "acknowledged", "x", "", kT0Ms).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(book_->SetState("leak-1", "mitigated", "x", "", kT0Ms).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto acked = book_->SetState("leak-1", "acknowledged", "alice", "on it", kT0Ms + 1);
  ASSERT_TRUE(acked.ok());
  EXPECT_EQ(acked->state(), "acknowledged");
  EXPECT_TRUE(book_->SetState("leak-1", "acknowledged", "alice", "", kT0Ms + 2).ok());
  ASSERT_TRUE(book_->SetState("leak-1", "resolved", "alice", "", kT0Ms + 3).ok());
  EXPECT_EQ(book_->SetState("leak-1", "acknowledged", "alice", "", kT0Ms + 4).status().code(),
            absl::StatusCode::kFailedPrecondition);
  auto audit = Audit();
  ASSERT_EQ(audit.size(), 3u);  // open, ack, resolve (the repeated ack changes nothing)
  EXPECT_EQ(audit[0].action(), "resolve");
  EXPECT_EQ(audit[1].actor(), "alice");
}

TEST_F(LeakReportBookTest, ARealSuccessfulMitigationMarksTheReportMitigatedADryRunDoesNot) {
  FleetSuspects pass;
  pass.hosts.push_back(MakeSuspect("a", "svc:leaky.service", kT0Ms / 1000));
  book_->Update(kT0Ms, pass);
  drip::v1::MitigationRecord record;
  record.set_command_id("mitigate-1");
  record.set_host("a");
  record.set_action("signal-process");
  record.set_dry_run(true);
  record.set_outcome("dry-run");
  ASSERT_TRUE(book_->RecordMitigation("leak-1", record, {}, kT0Ms).ok());
  EXPECT_EQ(book_->Get("leak-1")->state(), "open");
  record.set_command_id("mitigate-2");
  record.set_dry_run(false);
  record.set_outcome("requested");
  ASSERT_TRUE(book_->RecordMitigation("leak-1", record, {}, kT0Ms).ok());
  record.set_outcome("succeeded");
  ASSERT_TRUE(book_->RecordMitigation("leak-1", record, {}, kT0Ms + 100).ok());
  auto r = book_->Get("leak-1");
  EXPECT_EQ(r->state(), "mitigated");
  ASSERT_EQ(r->mitigations_size(), 2);  // upserted by command id
  EXPECT_EQ(r->mitigations(1).outcome(), "succeeded");
}

// Two members of a cluster, each with its own book and store, and what etcd would hold:
// driven as ReportOwnership drives them (suspects of the other member added, ownership
// told, the cluster's copies adopted before a pass).
class LeakReportBookClusterTest : public ::testing::Test {
 protected:
  static constexpr char kComponent[] = "svc:leaky.service";

  struct Member {
    ScopedTempDir dir;
    std::unique_ptr<RocksDbSeriesStore> store;
    std::unique_ptr<LeakReportBook> book;
  };

  void SetUp() override {
    for (const char* name : {"c0", "c1"}) {
      Member& m = members_[name];
      RocksDbSeriesStoreOptions options;
      options.path = m.dir.path();
      options.fold_interval = std::chrono::milliseconds(0);
      auto store = RocksDbSeriesStore::Open(options);
      ASSERT_TRUE(store.ok()) << store.status();
      m.store = std::move(*store);
      policies_[name].id_scope = name;
      m.book = std::make_unique<LeakReportBook>(policies_[name], &mitigation_, m.store->reports());
      ASSERT_TRUE(m.book->Load().ok());
    }
  }

  LeakReportBook& Book(const std::string& name) { return *members_[name].book; }

  // `owner` owns the component from now on; the other owns nothing.
  void Own(const std::string& owner) {
    for (auto& [name, m] : members_) {
      const bool owns = name == owner;
      m.book->SetOwnership([owns](const std::string&) { return owns; });
    }
  }

  // What the owners write to etcd after a pass: one copy per component, the newest.
  void Publish(const std::string& name) {
    for (const drip::v1::LeakReport& r : Book(name).Owned()) etcd_[r.component()] = r;
  }
  std::vector<drip::v1::LeakReport> Etcd() const {
    std::vector<drip::v1::LeakReport> out;
    for (const auto& [component, r] : etcd_) out.push_back(r);
    return out;
  }

  // A pass on each member: c0 streams host a, c1 host b; the owner adds the other's.
  void Pass(int64_t now_ms) {
    FleetSuspects on_c0, on_c1;
    on_c0.hosts.push_back(MakeSuspect("a", kComponent, now_ms / 1000));
    on_c1.hosts.push_back(MakeSuspect("b", kComponent, now_ms / 1000));
    FleetSuspects c0_view = on_c0, c1_view = on_c1;
    AddPeerSuspects(on_c1, &c0_view);
    AddPeerSuspects(on_c0, &c1_view);
    Book("c0").Update(now_ms, c0_view);
    Book("c1").Update(now_ms, c1_view);
  }

  std::map<std::string, ReportPolicy> policies_;
  MitigationConfig mitigation_;
  std::map<std::string, Member> members_;
  std::map<std::string, drip::v1::LeakReport> etcd_;
};

TEST_F(LeakReportBookClusterTest, AClusteredBookOpensNoReportUntilItKnowsWhatItOwns) {
  Pass(kT0Ms);
  EXPECT_TRUE(Book("c0").List("all", "").empty());
  EXPECT_TRUE(Book("c1").List("all", "").empty());
  Own("c1");
  Pass(kT0Ms + 5'000);
  EXPECT_TRUE(Book("c0").List("all", "").empty());
  ASSERT_EQ(Book("c1").List("", "").size(), 1u);
  EXPECT_EQ(Book("c1").List("", "")[0].id(), "leak-c1-1");
}

TEST_F(LeakReportBookClusterTest, ALeakOverHostsOfTwoMembersIsOneReportWithEveryHostAtItsOwner) {
  Own("c0");
  Pass(kT0Ms);
  const std::vector<drip::v1::LeakReport> reports = Book("c0").List("", "");
  ASSERT_EQ(reports.size(), 1u);
  std::set<std::string> hosts;
  for (const auto& h : reports[0].hosts()) hosts.insert(h.host());
  EXPECT_EQ(hosts, (std::set<std::string>{"a", "b"}));
  EXPECT_TRUE(Book("c1").List("all", "").empty());
  EXPECT_TRUE(Book("c1").Owned().empty());
  ASSERT_EQ(Book("c0").Owned().size(), 1u);
}

TEST_F(LeakReportBookClusterTest, ANewOwnerTakesTheReportOverWithItsIdStateAndHistory) {
  Own("c0");
  Pass(kT0Ms);
  ASSERT_TRUE(Book("c0").SetState("leak-c0-1", "acknowledged", "alice", "on it", kT0Ms).ok());
  Publish("c0");

  // c0 dies: c1 owns the component and adopts the cluster's copy before its next pass.
  Own("c1");
  Book("c1").Adopt(Etcd(), kT0Ms + 10'000);
  Pass(kT0Ms + 10'000);
  const std::vector<drip::v1::LeakReport> on_c1 = Book("c1").List("all", "");
  ASSERT_EQ(on_c1.size(), 1u);
  EXPECT_EQ(on_c1[0].id(), "leak-c0-1");
  EXPECT_EQ(on_c1[0].state(), "acknowledged");
  ASSERT_GE(on_c1[0].history_size(), 2);
  EXPECT_EQ(on_c1[0].history(1).actor(), "alice");
  // It goes on as that report: on-call acts on it where it is now.
  EXPECT_TRUE(Book("c1").SetState("leak-c0-1", "resolved", "bob", "fixed", kT0Ms + 20'000).ok());
  // The old owner's copy is out of every answer of it: the fleet view asks c1.
  EXPECT_TRUE(Book("c0").List("all", "").empty());
  EXPECT_EQ(Book("c0").Get("leak-c0-1").status().code(), absl::StatusCode::kNotFound);
  bool audited = false;
  auto entries = members_["c1"].store->reports()->ReadAudit("", 0, 100);
  ASSERT_TRUE(entries.ok());
  for (const auto& e : *entries)
    audited |= e.action() == "take-over" && e.report_id() == "leak-c0-1";
  EXPECT_TRUE(audited);

  // c0 comes back and owns it again: its copy is behind, so the cluster's replaces it.
  Publish("c1");
  Own("c0");
  Book("c0").Adopt(Etcd(), kT0Ms + 30'000);
  EXPECT_EQ(Book("c0").Get("leak-c0-1")->state(), "resolved");
}

TEST_F(LeakReportBookClusterTest, AReportOpenedByTwoMembersAtOnceGivesWayToTheOneInEtcd) {
  // Both thought they owned it (their member lists differed for a round).
  Own("c0");
  Pass(kT0Ms);
  Publish("c0");
  for (auto& [name, m] : members_) m.book->SetOwnership([](const std::string&) { return true; });
  Pass(kT0Ms + 5'000);
  ASSERT_TRUE(Book("c1").Get("leak-c1-1").ok());

  Own("c1");
  Book("c1").Adopt(Etcd(), kT0Ms + 10'000);
  const std::vector<drip::v1::LeakReport> open = Book("c1").List("", "");
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].id(), "leak-c0-1");
  auto superseded = Book("c1").Get("leak-c1-1");
  ASSERT_TRUE(superseded.ok());
  EXPECT_EQ(superseded->state(), "resolved");
  EXPECT_NE(superseded->history(superseded->history_size() - 1).note().find("leak-c0-1"),
            std::string::npos);
}

TEST_F(LeakReportBookClusterTest, AResolutionThatDidNotReachEtcdIsNotUndoneByTheOpenCopyThere) {
  Own("c0");
  Pass(kT0Ms);
  Publish("c0");  // etcd: leak-c0-1, open
  ASSERT_TRUE(Book("c0").SetState("leak-c0-1", "resolved", "alice", "fixed", kT0Ms + 1'000).ok());
  // A member whose clock is a minute ahead wrote the open copy last.
  etcd_[kComponent].set_updated_ms(kT0Ms + 60'000);
  Book("c0").Adopt(Etcd(), kT0Ms + 2'000);
  EXPECT_EQ(Book("c0").Get("leak-c0-1")->state(), "resolved");
  EXPECT_TRUE(Book("c0").HasResolved("leak-c0-1"));
}

TEST_F(LeakReportBookClusterTest, ANewOwnersChangesAreNewerEvenWhenItsClockIsBehind) {
  Own("c0");
  Pass(kT0Ms);
  Publish("c0");
  Own("c1");
  Book("c1").Adopt(Etcd(), kT0Ms + 1'000);
  // c1's clock is ten minutes behind c0's.
  ASSERT_TRUE(Book("c1").SetState("leak-c0-1", "acknowledged", "bob", "", kT0Ms - 600'000).ok());
  EXPECT_GT(Book("c1").Get("leak-c0-1")->updated_ms(), etcd_[kComponent].updated_ms());
}

}  // namespace
}  // namespace drip::collector
