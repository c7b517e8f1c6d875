// The collector away for longer than the agent's buffer holds: the agent stays within
// its bound by dropping the oldest batches (counted, logged), catches up when the
// collector is back, and the collector marks the dropped span as a gap in time — in
// `dripctl hosts` and `dripctl series` — instead of drawing a line across it.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

#include "fmt/format.h"
#include "tests/integration/http_get.h"
#include "tests/integration/local_drip.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

double AgentMetric(LocalDrip& drip, const std::string& series) {
  auto body = HttpGet(drip.agent_metrics_address(), "/metrics");
  if (!body.ok()) return -1;
  auto value = MetricValue(*body, series);
  return value.ok() ? *value : -1;
}

int64_t NowMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST(CollectorOutageTest, AgentPastItsBufferDropsTheOldestStaysBoundedAndTheGapIsMarked) {
  constexpr auto kInterval = milliseconds(250);
  constexpr int kMaxBatches = 4;
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  const std::string host = fmt::format("it-outage-{}", getpid());
  ASSERT_TRUE(
      drip.StartAgent(host, kInterval, {}, fmt::format("buffer:\n  max_batches: {}\n", kMaxBatches))
          .ok())
      << drip.Logs();
  auto child = ChildProcess::Start({TestAllocBinary(), "8"}, drip.dir().File("alloc.log"));
  ASSERT_TRUE(child.ok());
  std::this_thread::sleep_for(milliseconds(300));
  auto component = ComponentOfPid((*child)->pid());
  ASSERT_TRUE(component.ok()) << component.status();
  std::this_thread::sleep_for(seconds(2));

  // Away for about 24 passes: six times what the buffer holds.
  const int64_t outage_start_ms = NowMs();
  drip.KillCollector(SIGKILL);
  double peak_buffered = 0;
  for (int i = 0; i < 24; ++i) {
    std::this_thread::sleep_for(kInterval);
    peak_buffered = std::max(peak_buffered, AgentMetric(drip, "drip_agent_buffered_batches"));
  }
  const double dropped = AgentMetric(drip, "drip_agent_dropped_batches_total");
  EXPECT_GE(dropped, 10) << drip.Logs();
  EXPECT_LE(peak_buffered, kMaxBatches) << "the buffer outgrew its bound";
  EXPECT_NE(drip.agent()->Log().find("batch buffer full"), std::string::npos);

  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  bool caught_up = false;
  for (int i = 0; i < 80 && !caught_up; ++i) {
    std::this_thread::sleep_for(kInterval);
    caught_up = AgentMetric(drip, "drip_agent_buffered_batches") <= 1 &&
                drip.agent()->Log().find("batch buffer has room again") != std::string::npos;
  }
  EXPECT_TRUE(caught_up) << drip.Logs();
  // The agent drops its oldest batches until it is connected again, so the outage, as
  // the agent saw it, ends by the time it has caught up — not when the loop above ended
  // (a slow metrics read under ASan once put the gap's end 70 ms past that).
  const int64_t outage_end_ms = NowMs();
  std::this_thread::sleep_for(seconds(1));

  CommandOutput hosts = drip.Dripctl({"hosts", "--json"});
  ASSERT_EQ(hosts.exit_code, 0) << hosts.err;
  bool host_has_gaps = false;
  const nlohmann::json listed_hosts = nlohmann::json::parse(hosts.out);
  for (const auto& h : listed_hosts["hosts"]) {
    if (h["host"] == host) host_has_gaps = h["gaps"].get<int>() >= 10;
  }
  EXPECT_TRUE(host_has_gaps) << hosts.out;

  auto series = drip.Series(host, *component);
  ASSERT_TRUE(series.ok()) << series.status();
  const nlohmann::json& gaps = (*series)["gaps"];
  ASSERT_EQ(gaps.size(), 1u) << series->dump(2);
  const int64_t gap_from = gaps[0]["from_ms"].get<int64_t>();
  const int64_t gap_until = gaps[0]["until_ms"].get<int64_t>();
  EXPECT_GE(gaps[0]["batches"].get<int>(), 10);
  EXPECT_GT(gaps[0]["samples"].get<int>(), 10);
  // The gap lies in the outage and spans most of it.
  EXPECT_GE(gap_from, outage_start_ms - 2 * kInterval.count());
  EXPECT_LE(gap_until, outage_end_ms);
  EXPECT_GE(gap_until - gap_from, 10 * kInterval.count());

  // Around the gap the series is continuous; across it, nothing is stored.
  std::vector<int64_t> timestamps;
  for (const auto& s : (*series)["series"]) {
    for (const auto& sample : s["samples"]) timestamps.push_back(sample["timestamp_ms"]);
  }
  std::sort(timestamps.begin(), timestamps.end());
  ASSERT_GT(timestamps.size(), 10u);
  int wide_steps = 0;
  for (size_t i = 1; i < timestamps.size(); ++i) {
    EXPECT_FALSE(timestamps[i] >= gap_from && timestamps[i] <= gap_until)
        << "a sample at " << timestamps[i] << " lies inside the gap";
    if (timestamps[i] - timestamps[i - 1] > 3 * kInterval.count()) {
      ++wide_steps;
      EXPECT_LE(timestamps[i - 1], gap_from) << "an unmarked hole in the series";
      EXPECT_GE(timestamps[i], gap_until) << "an unmarked hole in the series";
    }
  }
  EXPECT_EQ(wide_steps, 1);

  // The table shows the gap as a row of its own.
  CommandOutput table = drip.Dripctl({"series", "--host", host, "--component", *component});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("dropped by the agent"), std::string::npos) << table.out;
}

}  // namespace
}  // namespace drip::testing
