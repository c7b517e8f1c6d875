#include "collector/pipeline/snapshot_scheduler.h"

#include <gtest/gtest.h>

#include <future>
#include <vector>

#include "collector/ingest/recording_stream_test_util.h"
#include "common/base/heap_snapshot.h"
#include "common/snapshot/heap_snapshot_proto.h"

namespace drip::collector {
namespace {

HostSuspect MakeSuspect(const std::string& host, const std::string& component, int pid,
                        double growth) {
  HostSuspect h;
  h.suspect.host = host;
  h.suspect.component = component;
  h.suspect.instance = std::to_string(pid) + "@1700000000";
  h.suspect.growth_bytes_per_hour = growth;
  return h;
}

// A snapshot whose one stack grows steadily and is never freed.
drip::v1::HeapSnapshot LeakingSnapshot() {
  HeapSnapshot snapshot;
  snapshot.target.pid = 42;
  snapshot.mode = "attach";
  snapshot.start_ms = 1'000'000;
  snapshot.end_ms = 1'060'000;
  snapshot.interval_seconds = 6;
  snapshot.sampling_mean_bytes = 4096;
  snapshot.stop_reason = "duration";
  SnapshotStack stack;
  stack.id = 1;
  StackFrame frame;
  frame.function = "RememberSession";
  stack.frames.push_back(frame);
  for (int i = 0; i <= 10; ++i) {
    snapshot.rss.push_back({snapshot.start_ms + i * 6000, (100 + i) << 20, (90 + i) << 20});
    stack.series.push_back({snapshot.start_ms + i * 6000, int64_t{i} << 20, int64_t{i} * 1024});
  }
  stack.sampled_allocs = 2560;
  stack.allocated_bytes = 10 << 20;
  stack.first_alloc_ms = snapshot.start_ms + 10;
  stack.last_alloc_ms = snapshot.end_ms - 10;
  snapshot.stacks.push_back(stack);
  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(snapshot, &proto);
  return proto;
}

class SnapshotSchedulerTest : public ::testing::Test {
 protected:
  SnapshotSchedulerTest() { hosts_.Register("h1", &stream_); }
  ~SnapshotSchedulerTest() override { hosts_.Unregister("h1", &stream_); }

  SnapshotScheduler Scheduler(const SnapshotPolicy& policy = SnapshotPolicy{}) {
    return SnapshotScheduler(policy, diagnoser::DiagnoserConfig{}, &commands_, &diagnoses_,
                             &clock_);
  }
  // The agent's answer reaches the scheduler through the router, as from a session; the
  // diagnosis it queued has landed when this returns.
  bool AnswerAndWaitForTheDiagnosis(const std::string& host,
                                    const drip::v1::CommandResult& result) {
    const bool taken = commands_.Deliver(host, result);
    diagnoses_.Stop();  // runs what is queued
    return taken;
  }

  // The agent's answer to command `id`: the leaking snapshot.
  static drip::v1::CommandResult SnapshotAnswer(const std::string& id) {
    drip::v1::CommandResult result;
    result.set_command_id(id);
    result.set_ok(true);
    result.set_payload(LeakingSnapshot().SerializeAsString());
    return result;
  }

  ConnectedHosts hosts_;
  RecordingStream stream_;
  CommandRouter commands_{&hosts_};
  WorkerPool diagnoses_{"test-diagnose", 1, 8};
  FakeClock clock_{2000};
};

TEST_F(SnapshotSchedulerTest, FastestLeakOnAHostGetsItsOneSnapshotSlot) {
  SnapshotScheduler scheduler = Scheduler();
  FleetSuspects suspects;
  suspects.hosts.push_back(MakeSuspect("h1", "proc:slow", 10, 1e6));
  suspects.hosts.push_back(MakeSuspect("h1", "proc:fast", 20, 1e9));
  suspects.hosts.push_back(MakeSuspect("h2", "proc:fast", 30, 1e10));  // not connected
  scheduler.Tick(1000, suspects);
  ASSERT_EQ(stream_.sent.size(), 1u);
  EXPECT_EQ(stream_.sent[0].snapshot().component(), "proc:fast");
  EXPECT_EQ(stream_.sent[0].snapshot().pid(), 20);
  EXPECT_EQ(scheduler.counts().requested, 1u);
  // The agent sizes the window for the growth the detector measured.
  EXPECT_EQ(stream_.sent[0].snapshot().expected_growth_bytes_per_hour(), 1e9);
}

TEST_F(SnapshotSchedulerTest, ResultIsDiagnosedAndAttachedToTheSuspect) {
  SnapshotScheduler scheduler = Scheduler();
  FleetSuspects suspects;
  suspects.hosts.push_back(MakeSuspect("h1", "proc:leaky", 20, 1e9));
  scheduler.Tick(1000, suspects);
  ASSERT_EQ(stream_.sent.size(), 1u);
  const drip::v1::CommandResult result = SnapshotAnswer(stream_.sent[0].id());
  EXPECT_TRUE(AnswerAndWaitForTheDiagnosis("h1", result));
  scheduler.Annotate(&suspects);
  ASSERT_TRUE(suspects.hosts[0].snapshot.has_value());
  const SnapshotAttempt& snap = *suspects.hosts[0].snapshot;
  EXPECT_EQ(snap.state, SnapshotAttempt::State::kDone) << snap.error;
  ASSERT_GT(snap.diagnosis.stacks.size(), 0u);
  EXPECT_EQ(snap.diagnosis.stacks[0].frames[0].function, "RememberSession");
  EXPECT_EQ(snap.diagnosis.stacks[0].verdict, diagnoser::Verdict::kLeak);
  EXPECT_EQ(scheduler.counts().succeeded, 1u);
}

TEST_F(SnapshotSchedulerTest, FailedSnapshotSaysWhyAndComponentWaitsOutItsCooldown) {
  SnapshotPolicy policy;
  policy.cooldown = std::chrono::minutes(10);
  SnapshotScheduler scheduler = Scheduler(policy);
  FleetSuspects suspects;
  suspects.hosts.push_back(MakeSuspect("h1", "proc:leaky", 20, 1e9));
  scheduler.Tick(1000, suspects);
  drip::v1::CommandResult result;
  result.set_command_id(stream_.sent[0].id());
  result.set_ok(false);
  result.set_error("process 20 no longer runs");
  EXPECT_TRUE(commands_.Deliver("h1", result));
  scheduler.Annotate(&suspects);
  ASSERT_TRUE(suspects.hosts[0].snapshot.has_value());
  EXPECT_EQ(suspects.hosts[0].snapshot->state, SnapshotAttempt::State::kFailed);
  EXPECT_EQ(suspects.hosts[0].snapshot->error, "process 20 no longer runs");
  scheduler.Tick(60'000, suspects);
  EXPECT_EQ(stream_.sent.size(), 1u);  // within the cool-down
  scheduler.Tick(1000 + 10 * 60'000 + 1, suspects);
  EXPECT_EQ(stream_.sent.size(), 2u);
}

TEST_F(SnapshotSchedulerTest, UnansweredCommandFailsAfterItsLongestExtensionAndGrace) {
  SnapshotPolicy policy;
  policy.duration = std::chrono::seconds(10);
  policy.extend_up_to = std::chrono::seconds(40);
  policy.grace = std::chrono::seconds(5);
  SnapshotScheduler scheduler = Scheduler(policy);
  FleetSuspects suspects;
  suspects.hosts.push_back(MakeSuspect("h1", "proc:leaky", 20, 1e9));
  scheduler.Tick(1000, suspects);
  ASSERT_EQ(stream_.sent.size(), 1u);
  EXPECT_EQ(stream_.sent[0].snapshot().duration_seconds(), 10u);
  EXPECT_EQ(stream_.sent[0].snapshot().extend_up_to_seconds(), 40u);
  // An agent may keep going up to 40 s while its evidence is short: not failed at 15 s.
  // (The pipeline's pass ends overdue commands at the router before the scheduler's tick.)
  commands_.Expire(1000 + 15'001);
  scheduler.Tick(1000 + 15'001, suspects);
  scheduler.Annotate(&suspects);
  ASSERT_TRUE(suspects.hosts[0].snapshot.has_value());
  EXPECT_EQ(suspects.hosts[0].snapshot->state, SnapshotAttempt::State::kPending);
  clock_.Set(1000 + 45'001);
  commands_.Expire(1000 + 45'001);
  scheduler.Annotate(&suspects);
  ASSERT_TRUE(suspects.hosts[0].snapshot.has_value());
  EXPECT_EQ(suspects.hosts[0].snapshot->state, SnapshotAttempt::State::kFailed);
  EXPECT_EQ(suspects.hosts[0].snapshot->error, "the agent did not answer before the deadline");
  EXPECT_EQ(suspects.hosts[0].snapshot->finished_ms, 1000 + 45'001);
  EXPECT_EQ(scheduler.counts().failed, 1u);
  // A late answer is ignored.
  drip::v1::CommandResult late;
  late.set_command_id(stream_.sent[0].id());
  late.set_ok(false);
  EXPECT_FALSE(commands_.Deliver("h1", late));
}

TEST_F(SnapshotSchedulerTest, ResultFromAnotherHostIsIgnored) {
  SnapshotScheduler scheduler = Scheduler();
  FleetSuspects suspects;
  suspects.hosts.push_back(MakeSuspect("h1", "proc:leaky", 20, 1e9));
  scheduler.Tick(1000, suspects);
  drip::v1::CommandResult result;
  result.set_command_id(stream_.sent[0].id());
  result.set_ok(false);
  EXPECT_FALSE(commands_.Deliver("h2", result));
  scheduler.Annotate(&suspects);
  EXPECT_EQ(suspects.hosts[0].snapshot->state, SnapshotAttempt::State::kPending);
}

// Diagnoses wait on a bounded queue of their own: past it a snapshot is not held in
// memory but failed, saying why, and the component's next round asks again.
TEST_F(SnapshotSchedulerTest, ASnapshotPastTheDiagnosisQueueFailsAndSaysWhy) {
  WorkerPool one_waiting("test-diagnose", 1, 1);
  SnapshotScheduler scheduler(SnapshotPolicy{}, diagnoser::DiagnoserConfig{}, &commands_,
                              &one_waiting, &clock_);
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  ASSERT_TRUE(one_waiting.Submit([&started, released] {
    started.set_value();
    released.wait();
  }));
  started.get_future().wait();
  ASSERT_TRUE(one_waiting.Submit([] {}));  // the one place in the queue
  FleetSuspects suspects;
  suspects.hosts.push_back(MakeSuspect("h1", "proc:leaky", 20, 1e9));
  scheduler.Tick(1000, suspects);
  ASSERT_EQ(stream_.sent.size(), 1u);
  const drip::v1::CommandResult result = SnapshotAnswer(stream_.sent[0].id());
  EXPECT_TRUE(commands_.Deliver("h1", result));
  release.set_value();
  one_waiting.Stop();
  scheduler.Annotate(&suspects);
  ASSERT_TRUE(suspects.hosts[0].snapshot.has_value());
  EXPECT_EQ(suspects.hosts[0].snapshot->state, SnapshotAttempt::State::kFailed);
  EXPECT_NE(suspects.hosts[0].snapshot->error.find("already wait for diagnosis"), std::string::npos)
      << suspects.hosts[0].snapshot->error;
  EXPECT_EQ(scheduler.counts().failed, 1u);
}

}  // namespace
}  // namespace drip::collector
