#include "collector/storage/storage_recovery.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "prometheus/registry.h"

namespace drip::collector {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Time = std::chrono::steady_clock::time_point;

// A store whose write state and recovery outcomes a test scripts; nothing else works.
class ScriptedStore final : public SeriesStore {
 public:
  absl::Status write_state;
  std::deque<absl::Status> recoveries;  // what the next Recover() calls return
  int recover_calls = 0;

  absl::Status WriteState() override { return write_state; }
  // Unscripted calls find nothing wrong: OK, as the real store says then.
  absl::Status Recover() override {
    ++recover_calls;
    absl::Status next = absl::OkStatus();
    if (!recoveries.empty()) {
      next = recoveries.front();
      recoveries.pop_front();
    }
    if (next.ok()) write_state = absl::OkStatus();
    return next;
  }

  absl::StatusOr<AppendResult> AppendBatch(const std::string&,
                                           const drip::v1::SampleBatch&) override {
    return absl::UnimplementedError("");
  }
  absl::StatusOr<AppendResult> AppendReplicaBatch(const std::string&,
                                                  const drip::v1::SampleBatch&) override {
    return absl::UnimplementedError("");
  }
  absl::StatusOr<uint64_t> AppendRepairSamples(const std::string&,
                                               const drip::v1::SampleBatch&) override {
    return absl::UnimplementedError("");
  }
  absl::StatusOr<uint64_t> AckedSequence(const std::string&) override { return 0; }
  absl::Status PutHost(const drip::v1::HostInfo&) override { return absl::OkStatus(); }
  absl::StatusOr<std::vector<drip::v1::HostInfo>> ListHosts() override {
    return std::vector<drip::v1::HostInfo>{};
  }
  absl::StatusOr<std::vector<drip::v1::Series>> ReadSeries(const std::string&, const std::string&,
                                                           int64_t, int64_t, size_t) override {
    return std::vector<drip::v1::Series>{};
  }
  absl::StatusOr<std::vector<drip::v1::InstanceVersion>> ReadInstanceVersions() override {
    return std::vector<drip::v1::InstanceVersion>();
  }
  absl::StatusOr<std::vector<GapRecord>> ReadGaps(const std::string&) override {
    return std::vector<GapRecord>();
  }
  absl::StatusOr<std::vector<std::string>> ListComponents(const std::string&) override {
    return std::vector<std::string>{};
  }
  absl::StatusOr<uint64_t> EnforceRetention() override { return 0; }
  uint64_t ApproximateSizeBytes() override { return 0; }
  uint64_t CorruptRecordsSkipped() override { return 0; }
  absl::StatusOr<uint64_t> FreeDiskBytes() override { return 0; }
  ReportStore* reports() override { return nullptr; }
};

const absl::Status kDiskFull = absl::UnavailableError("writes stopped: No space left on device");
const absl::Status kWaiting = absl::ResourceExhaustedError("1 MiB free, waiting for 128 MiB");
const absl::Status kFailed = absl::UnavailableError("reopen failed");

struct Harness {
  prometheus::Registry registry;
  CollectorMetrics metrics{registry};
  StorageHealth health{&metrics.healthy};
  ScriptedStore store;
  StorageRecovery recovery{&store, &health, &metrics,
                           StorageRecoveryOptions{seconds(1), seconds(8)}};
  Time t0 = std::chrono::steady_clock::now();

  void TickAt(milliseconds offset) { recovery.Tick(t0 + offset); }
};

TEST(StorageRecoveryTest, AFailingStoreTurnsUnhealthyWithoutWaitingForABatch) {
  Harness h;
  h.store.write_state = kDiskFull;
  h.store.recoveries = {kWaiting};
  h.TickAt(milliseconds(0));
  EXPECT_FALSE(h.health.healthy());
  EXPECT_EQ(h.metrics.healthy.Value(), 0);
}

TEST(StorageRecoveryTest, PollsEveryTickWhileWaitingForSpaceAndTurnsHealthyOnlyOnRecovery) {
  Harness h;
  h.store.write_state = kDiskFull;
  h.store.recoveries = {kWaiting, kWaiting, kWaiting, absl::OkStatus()};
  for (int i = 0; i < 3; ++i) {
    h.TickAt(seconds(i));
    EXPECT_FALSE(h.health.healthy()) << "tick " << i;
  }
  // Waiting is not a failed attempt: no backoff, no failure counted.
  EXPECT_EQ(h.store.recover_calls, 3);
  EXPECT_EQ(h.metrics.storage_recoveries_failed.Value(), 0);
  h.TickAt(seconds(3));
  EXPECT_EQ(h.store.recover_calls, 4);
  EXPECT_TRUE(h.health.healthy());
  EXPECT_EQ(h.metrics.healthy.Value(), 1);
  EXPECT_EQ(h.metrics.storage_recoveries_succeeded.Value(), 1);
}

TEST(StorageRecoveryTest, BacksOffExponentiallyAfterFailedAttempts) {
  Harness h;
  h.store.write_state = kDiskFull;
  h.store.recoveries = {kFailed, kFailed, kFailed, kFailed, kFailed, absl::OkStatus()};
  std::vector<int> attempts_at;  // seconds
  for (int s = 0; s <= 40; ++s) {
    const int before = h.store.recover_calls;
    h.TickAt(seconds(s));
    if (h.store.recover_calls != before) attempts_at.push_back(s);
    if (h.health.healthy()) break;
  }
  // 1 s, 2 s, 4 s, 8 s, then capped at 8 s.
  EXPECT_EQ(attempts_at, (std::vector<int>{0, 1, 3, 7, 15, 23}));
  EXPECT_EQ(h.metrics.storage_recoveries_failed.Value(), 5);
  EXPECT_TRUE(h.health.healthy());
}

TEST(StorageRecoveryTest, BackoffResetsOnlyAfterTheStoreStayedWritable) {
  Harness h;
  h.store.write_state = kDiskFull;
  h.store.recoveries = {kFailed, kFailed, absl::OkStatus()};
  for (int s = 0; s <= 3; ++s) h.TickAt(seconds(s));
  ASSERT_TRUE(h.health.healthy());
  EXPECT_EQ(h.recovery.backoff(), seconds(4));
  // Failing again at once: the next failure waits the grown delay.
  h.store.write_state = kDiskFull;
  h.store.recoveries = {kFailed};
  h.TickAt(seconds(4));
  EXPECT_EQ(h.recovery.backoff(), seconds(8));
  // Writable for longer than the longest delay: back to the first one.
  h.store.write_state = absl::OkStatus();
  h.TickAt(seconds(20));
  EXPECT_EQ(h.recovery.backoff(), seconds(1));
}

TEST(StorageRecoveryTest, AHealthyStoreStaysHealthyAndCountsNoRecovery) {
  Harness h;
  for (int s = 0; s < 5; ++s) h.TickAt(seconds(s));
  EXPECT_TRUE(h.health.healthy());
  EXPECT_EQ(h.metrics.storage_recoveries_succeeded.Value(), 0);
  EXPECT_EQ(h.metrics.storage_recoveries_failed.Value(), 0);
}

// A soft error stops compactions, not writes: the store stays healthy while Recover()
// waits for space to resume them.
TEST(StorageRecoveryTest, ResumesBackgroundWorkOfAWritableStoreOnceThereIsSpace) {
  Harness h;
  h.store.recoveries = {kWaiting, kWaiting, absl::OkStatus()};
  for (int s = 0; s < 3; ++s) {
    h.TickAt(seconds(s));
    EXPECT_TRUE(h.health.healthy()) << "tick " << s;
  }
  EXPECT_EQ(h.store.recover_calls, 3);
  EXPECT_TRUE(h.store.recoveries.empty());
}

}  // namespace
}  // namespace drip::collector
