// kill -9 of the collector mid-stream: what it acknowledged survives, the agent
// reconnects and resends by itself, and the stored series ends up with neither gaps
// nor duplicates.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <set>
#include <thread>

#include "fmt/format.h"
#include "tests/integration/local_drip.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Timestamps of the samples of the series whose instance starts with `prefix`.
std::vector<int64_t> Timestamps(const nlohmann::json& series, const std::string& prefix) {
  std::vector<int64_t> out;
  for (const auto& s : series["series"]) {
    if (s["instance"].get<std::string>().rfind(prefix, 0) != 0) continue;
    for (const auto& sample : s["samples"]) out.push_back(sample["timestamp_ms"].get<int64_t>());
  }
  return out;
}

TEST(CollectorCrashTest, KillNineLosesNoStoredSampleAndResendLeavesNoGapOrDuplicate) {
  constexpr auto kInterval = milliseconds(500);
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  std::string host = fmt::format("it-crash-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, kInterval).ok()) << drip.Logs();
  auto child = ChildProcess::Start({TestAllocBinary(), "8"}, drip.dir().File("alloc.log"));
  ASSERT_TRUE(child.ok());
  std::this_thread::sleep_for(milliseconds(300));
  auto component = ComponentOfPid((*child)->pid());
  ASSERT_TRUE(component.ok()) << component.status();
  std::string prefix = fmt::format("{}@", (*child)->pid());

  std::set<int64_t> stored_before_kills;
  for (int round = 0; round < 2; ++round) {
    std::this_thread::sleep_for(seconds(3));
    auto before = drip.Series(host, *component);
    ASSERT_TRUE(before.ok()) << before.status() << drip.Logs();
    for (int64_t ts : Timestamps(*before, prefix)) stored_before_kills.insert(ts);
    ASSERT_FALSE(stored_before_kills.empty()) << drip.Logs();

    drip.KillCollector(SIGKILL);
    // Down for several intervals: the agent buffers what it samples meanwhile.
    std::this_thread::sleep_for(seconds(2));
    ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  }
  // Let the agent reconnect, resend its backlog and stream a little more.
  std::this_thread::sleep_for(seconds(4));
  auto after = drip.Series(host, *component);
  ASSERT_TRUE(after.ok()) << after.status() << drip.Logs();
  std::vector<int64_t> timestamps = Timestamps(*after, prefix);
  ASSERT_GT(timestamps.size(), stored_before_kills.size());

  std::set<int64_t> unique(timestamps.begin(), timestamps.end());
  EXPECT_EQ(unique.size(), timestamps.size()) << "a sample was stored twice";
  for (int64_t ts : stored_before_kills) {
    EXPECT_TRUE(unique.contains(ts))
        << "sample at " << ts << " was stored before a kill and is gone";
  }
  for (size_t i = 1; i < timestamps.size(); ++i) {
    EXPECT_GT(timestamps[i], timestamps[i - 1]);
    // Consecutive passes are one interval apart; a missing pass would leave two.
    EXPECT_LT(timestamps[i] - timestamps[i - 1], 2 * kInterval.count())
        << "gap between samples " << i - 1 << " and " << i << "\n"
        << drip.Logs();
  }
}

}  // namespace
}  // namespace drip::testing
