// A full disk under the real drip-collector, with a real drip-agent streaming to it: the
// store lives on a small tmpfs the test mounts and then fills. The collector must stay
// up, stop acknowledging (the agent's buffer grows), report itself unhealthy on /metrics
// and gRPC health, keep answering queries, and recover by itself once the filler is
// deleted, after which the agent's buffer drains and every sample the agent took over
// the whole run is stored exactly once, also across a restart on the same store.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include "fmt/format.h"
#include "tests/integration/http_get.h"
#include "tests/integration/local_drip.h"
#include "tests/integration/scoped_tmpfs.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// As in collector_crash_test: long enough that a loaded machine does not delay a pass
// into what looks like a gap.
constexpr auto kInterval = milliseconds(500);
// Smaller than the block RocksDB preallocates a WAL by (1.1 memtables, 35 MiB or more):
// that fallocate fails, so the WAL grows page by page and the first append after the
// disk fills fails. On a big disk the same happens, one preallocated block later. No
// memtable fills up at this size either: every write goes to the WAL only.
constexpr uint64_t kDiskBytes = 32ull << 20;
constexpr char kFiller[] = "filler";

// A metric from a daemon's /metrics; NaN when it cannot be read.
double Metric(const std::string& address, const std::string& series) {
  absl::StatusOr<std::string> page = HttpGet(address, "/metrics");
  if (!page.ok()) return std::nan("");
  return MetricValue(*page, series).value_or(std::nan(""));
}

// Polls `done` every 100 ms until it holds or `timeout` passes; how long it took.
std::optional<Clock::duration> WaitFor(Clock::duration timeout, const std::function<bool()>& done) {
  const auto start = Clock::now();
  while (Clock::now() - start < timeout) {
    if (done()) return Clock::now() - start;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return std::nullopt;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Each sample once, one interval apart from the next: nothing lost, nothing doubled.
void ExpectEverySampleOnce(const std::vector<int64_t>& timestamps, const std::string& logs) {
  std::set<int64_t> unique(timestamps.begin(), timestamps.end());
  EXPECT_EQ(unique.size(), timestamps.size()) << "a sample was stored twice";
  for (size_t i = 1; i < timestamps.size(); ++i) {
    ASSERT_GT(timestamps[i], timestamps[i - 1]) << "out of order or doubled at " << i;
    // Consecutive passes are one interval apart; a missing pass would leave two.
    ASSERT_LT(timestamps[i] - timestamps[i - 1], 2 * kInterval.count())
        << "gap between samples " << i - 1 << " and " << i << "\n"
        << logs;
  }
}

TEST(StorageFaultTest, FullDiskStopsAcksKeepsQueriesAndRecoversWithEverySampleOnce) {
  // Declared in this order so that they go in reverse: processes stop, then the tmpfs
  // is unmounted, then its mount point removed.
  TempDir disk_dir;
  const std::string mount_point = disk_dir.File("disk");
  ASSERT_EQ(mkdir(mount_point.c_str(), 0755), 0);
  absl::StatusOr<std::unique_ptr<ScopedTmpfs>> disk = ScopedTmpfs::Mount(mount_point, kDiskBytes);
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a tmpfs here: " << disk.status().message();
  LocalDrip drip;

  // Recover as soon as a few MiB are free (the default waits for 128 MiB, more than
  // this whole filesystem).
  drip.SetStorage((*disk)->dir() + "/db", "  recovery_free_space: 8MiB\n");
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  const std::string host = fmt::format("it-disk-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, kInterval).ok()) << drip.Logs();
  auto child = ChildProcess::Start({TestAllocBinary(), "8"}, drip.dir().File("alloc.log"));
  ASSERT_TRUE(child.ok());
  std::this_thread::sleep_for(milliseconds(300));
  auto component = ComponentOfPid((*child)->pid());
  ASSERT_TRUE(component.ok()) << component.status();
  const std::string prefix = fmt::format("{}@", (*child)->pid());
  const std::string collector_metrics = drip.metrics_address();
  const std::string agent_metrics = drip.agent_metrics_address();
  const std::string buffered = "drip_agent_buffered_batches";

  // Ingest works: the child's samples arrive and are acked.
  std::set<int64_t> stored_before_full;
  ASSERT_TRUE(WaitFor(seconds(20), [&] {
    auto series = drip.Series(host, *component);
    if (!series.ok()) return false;
    for (int64_t ts : SampleTimestamps(*series, prefix)) stored_before_full.insert(ts);
    return stored_before_full.size() >= 4;
  })) << drip.Logs();
  EXPECT_EQ(Metric(collector_metrics, "drip_collector_healthy"), 1);
  EXPECT_EQ(drip.CollectorHealth().value_or(-1), 1);

  // Fill the disk to the last byte.
  absl::StatusOr<uint64_t> filled = (*disk)->FillWith(kFiller);
  ASSERT_TRUE(filled.ok()) << filled.status();
  const auto full_at = Clock::now();

  // The next write fails: unhealthy on both channels.
  std::optional<Clock::duration> to_unhealthy = WaitFor(seconds(20), [&] {
    return Metric(collector_metrics, "drip_collector_healthy") == 0 &&
           drip.CollectorHealth().value_or(-1) == 2;
  });
  ASSERT_TRUE(to_unhealthy.has_value()) << drip.Logs();
  EXPECT_GT(Metric(collector_metrics, "drip_storage_write_errors_total"), 0);

  // While full, for several seconds (a few recovery rounds): the collector stays up and
  // unhealthy, acks nothing (the agent's buffer only grows), and answers queries.
  const double buffered_at_start = Metric(agent_metrics, buffered);
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(seconds(1));
    ASSERT_TRUE(drip.collector()->Running()) << drip.Logs();
    EXPECT_EQ(Metric(collector_metrics, "drip_collector_healthy"), 0) << "second " << i;
    EXPECT_EQ(drip.CollectorHealth().value_or(-1), 2) << "second " << i;
  }
  const double buffered_while_full = Metric(agent_metrics, buffered);
  EXPECT_GE(buffered_while_full, buffered_at_start + 5)
      << "the agent's buffer should grow by one batch per interval while nothing is acked";
  CommandOutput hosts = drip.Dripctl({"hosts"});
  EXPECT_EQ(hosts.exit_code, 0) << hosts.err;
  EXPECT_NE(hosts.out.find(host), std::string::npos) << hosts.out;
  auto series_while_full = drip.Series(host, *component);
  ASSERT_TRUE(series_while_full.ok()) << series_while_full.status() << drip.Logs();
  std::vector<int64_t> readable = SampleTimestamps(*series_while_full, prefix);
  for (int64_t ts : stored_before_full) {
    EXPECT_TRUE(std::count(readable.begin(), readable.end(), ts) == 1)
        << "sample at " << ts << " acked before the disk filled is not readable once";
  }

  // Space returns: the collector recovers by itself within a bounded time.
  (*disk)->RemoveFile(kFiller);
  const auto freed_at = Clock::now();
  std::optional<Clock::duration> to_healthy = WaitFor(seconds(30), [&] {
    return drip.CollectorHealth().value_or(-1) == 1 &&
           Metric(collector_metrics, "drip_collector_healthy") == 1;
  });
  // By itself: nobody restarts it (the wait's bound only fails a hang; the time is printed
  // below).
  ASSERT_TRUE(to_healthy.has_value()) << drip.Logs();
  EXPECT_GE(Metric(collector_metrics, "drip_storage_recoveries_total{outcome=\"succeeded\"}"), 1);
  // Acks resume: the backlog drains.
  std::optional<Clock::duration> to_drained =
      WaitFor(seconds(60), [&] { return Metric(agent_metrics, buffered) <= 2; });
  ASSERT_TRUE(to_drained.has_value()) << drip.Logs();
  std::printf(
      "disk full -> unhealthy %.1f s; full for %.1f s; freed -> healthy %.1f s; "
      "backlog of %.0f batches drained %.1f s after recovery\n",
      Seconds(*to_unhealthy), Seconds(freed_at - full_at), Seconds(*to_healthy),
      buffered_while_full, Seconds(*to_drained));
  EXPECT_EQ(Metric(agent_metrics, "drip_agent_dropped_batches_total"), 0)
      << "the agent's buffer must have held the whole outage for this test to mean anything";

  // Every sample of the run, once: those acked before the disk filled, those the agent
  // buffered while it was full, and those after.
  std::this_thread::sleep_for(2 * kInterval);
  auto after = drip.Series(host, *component);
  ASSERT_TRUE(after.ok()) << after.status() << drip.Logs();
  std::vector<int64_t> timestamps = SampleTimestamps(*after, prefix);
  for (int64_t ts : stored_before_full) {
    EXPECT_TRUE(std::find(timestamps.begin(), timestamps.end(), ts) != timestamps.end())
        << "sample at " << ts << " was stored before the disk filled and is gone";
  }
  ASSERT_FALSE(timestamps.empty());
  const auto full_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - full_at).count();
  EXPECT_GT(timestamps.back() - *stored_before_full.rbegin(), full_ms - 2000)
      << "samples taken while the disk was full are missing at the end";
  ExpectEverySampleOnce(timestamps, drip.Logs());

  // A clean stop and a restart on the same store: everything is still there.
  drip.collector()->Signal(SIGTERM);
  std::optional<int> exit_status = drip.collector()->Wait(seconds(30));
  ASSERT_TRUE(exit_status.has_value()) << drip.Logs();
  EXPECT_TRUE(WIFEXITED(*exit_status) && WEXITSTATUS(*exit_status) == 0) << drip.Logs();
  auto before_restart = drip.Series(host, *component);  // collector down: fails
  EXPECT_FALSE(before_restart.ok());
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  auto restarted = drip.Series(host, *component);
  ASSERT_TRUE(restarted.ok()) << restarted.status() << drip.Logs();
  std::vector<int64_t> reread = SampleTimestamps(*restarted, prefix);
  ASSERT_GE(reread.size(), timestamps.size());
  EXPECT_TRUE(std::equal(timestamps.begin(), timestamps.end(), reread.begin()))
      << "the store changed across a restart";
  ExpectEverySampleOnce(reread, drip.Logs());
  EXPECT_EQ(drip.CollectorHealth().value_or(-1), 1);
}

}  // namespace
}  // namespace drip::testing
