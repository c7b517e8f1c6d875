#include "agent/heap/snapshot_command_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <limits>
#include <mutex>
#include <vector>

namespace drip::agent {
namespace {

// Collects the runner's answers; waits for the asynchronous ones.
class Replies {
 public:
  SnapshotCommandRunner::Reply Sink() {
    return [this](drip::v1::CommandResult result) {
      std::lock_guard<std::mutex> lock(mu_);
      results_.push_back(std::move(result));
      cv_.notify_all();
    };
  }
  drip::v1::CommandResult WaitForOne() {
    std::unique_lock<std::mutex> lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(30), [&] { return !results_.empty(); }));
    if (results_.empty()) return {};
    drip::v1::CommandResult r = results_.front();
    results_.erase(results_.begin());
    return r;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<drip::v1::CommandResult> results_;
};

drip::v1::Command SnapshotOf(int pid, uint32_t seconds, const std::string& instance = "") {
  drip::v1::Command command;
  command.set_id("c1");
  command.mutable_snapshot()->set_pid(pid);
  command.mutable_snapshot()->set_duration_seconds(seconds);
  command.mutable_snapshot()->set_instance(instance);
  return command;
}

TEST(SnapshotCommandRunnerTest, DisabledAgentRefusesAndSaysWhichOption) {
  Replies replies;
  SnapshotCommandRunner runner({.enabled = false}, replies.Sink());
  runner.Submit(SnapshotOf(1, 10));
  drip::v1::CommandResult r = replies.WaitForOne();
  EXPECT_EQ(r.command_id(), "c1");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("snapshots.enabled"), std::string::npos) << r.error();
}

TEST(SnapshotCommandRunnerTest, DurationBeyondTheAgentsLimitIsRefused) {
  Replies replies;
  SnapshotCommandRunner runner({.max_duration_seconds = 60}, replies.Sink());
  runner.Submit(SnapshotOf(1, 61));
  drip::v1::CommandResult r = replies.WaitForOne();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("snapshots.max_duration"), std::string::npos) << r.error();
}

TEST(SnapshotCommandRunnerTest, AnExpectedGrowthThatIsNotARateIsRefused) {
  for (double bad :
       {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    Replies replies;
    SnapshotCommandRunner runner({}, replies.Sink());
    drip::v1::Command command = SnapshotOf(getpid(), 10);
    command.mutable_snapshot()->set_expected_growth_bytes_per_hour(bad);
    runner.Submit(command);
    drip::v1::CommandResult r = replies.WaitForOne();
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().find("expected growth"), std::string::npos) << r.error();
  }
}

TEST(SnapshotCommandRunnerTest, ProcessThatIsGoneFailsWithTheReason) {
  Replies replies;
  SnapshotCommandRunner runner({}, replies.Sink());
  runner.Submit(SnapshotOf(0x3ffffff0, 5));
  drip::v1::CommandResult r = replies.WaitForOne();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("no longer runs"), std::string::npos) << r.error();
}

TEST(SnapshotCommandRunnerTest, RecycledPidIsNotSnapshotted) {
  Replies replies;
  SnapshotCommandRunner runner({}, replies.Sink());
  // This process, but named as an instance that started in 2001.
  runner.Submit(SnapshotOf(getpid(), 5, std::to_string(getpid()) + "@1000000000"));
  drip::v1::CommandResult r = replies.WaitForOne();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("is not instance"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace drip::agent
