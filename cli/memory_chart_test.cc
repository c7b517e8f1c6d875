#include "cli/memory_chart.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/leaks_show_command.h"

namespace drip::cli {
namespace {

constexpr int64_t kStartMs = 1'800'000'000'000;

// Two hours of a leak from 512 MiB up by 700 MiB an hour, a sample a minute.
std::vector<MemoryPoint> Leaking() {
  std::vector<MemoryPoint> points;
  for (int minute = 0; minute <= 120; ++minute) {
    points.push_back({kStartMs + minute * 60'000,
                      (512ull << 20) + static_cast<uint64_t>(minute) * (700ull << 20) / 60});
  }
  return points;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The row of the plot holding column `col`'s '*', counted from the top; -1 when none.
int RowOfColumn(const std::vector<std::string>& lines, size_t col) {
  for (size_t row = 0; row < lines.size(); ++row) {
    const size_t bar = lines[row].find('|');
    if (bar != std::string::npos && bar + 1 + col < lines[row].size() &&
        lines[row][bar + 1 + col] == '*') {
      return static_cast<int>(row);
    }
  }
  return -1;
}

TEST(MemoryChartTest, ALeakClimbsTowardsItsLimitInPlainAscii) {
  MemoryChartOptions options;
  options.limit_bytes = 2ull << 30;
  const std::string chart = RenderMemoryChart(Leaking(), options);
  const std::vector<std::string> lines = Lines(chart);
  ASSERT_EQ(lines.size(), static_cast<size_t>(options.height + 2)) << chart;
  // The limit is the top of the scale, drawn and named.
  EXPECT_NE(lines[0].find("2.0 GiB |-"), std::string::npos) << chart;
  EXPECT_NE(lines[0].find("limit 2.0 GiB"), std::string::npos) << chart;
  EXPECT_NE(lines[options.height - 1].find("512.0 MiB |*"), std::string::npos) << chart;
  // It climbs: the last column sits above the first, below the limit.
  const int first = RowOfColumn(lines, 0);
  const int last = RowOfColumn(lines, static_cast<size_t>(options.width - 1));
  EXPECT_EQ(first, options.height - 1) << chart;
  EXPECT_GT(last, 0) << chart;
  EXPECT_LT(last, first) << chart;
  EXPECT_NE(lines.back().find("2027-01-15"), std::string::npos) << chart;  // the window's ends
  for (char c : chart) {
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "not plain ASCII: " << int(c);
  }
}

// A leak of a few hundred MiB on a host of 23.5 GiB (what the demo shows): drawn to the
// limit it would be a flat line in the bottom row.
TEST(MemoryChartTest, ALimitFarAboveThePeakIsNamedAndTheGrowthStillShows) {
  MemoryChartOptions options;
  options.limit_bytes = 47ull << 29;  // 23.5 GiB
  const std::string chart = RenderMemoryChart(Leaking(), options);
  const std::vector<std::string> lines = Lines(chart);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("(limit 23.5 GiB, off the chart)"), std::string::npos) << chart;
  EXPECT_EQ(RowOfColumn(lines, 0), options.height - 1) << chart;
  EXPECT_EQ(RowOfColumn(lines, static_cast<size_t>(options.width - 1)), 0) << chart;
}

TEST(MemoryChartTest, WithoutALimitTheScaleIsTheSeriesOwnAndNoLimitIsDrawn) {
  const std::string chart = RenderMemoryChart(Leaking(), MemoryChartOptions{});
  EXPECT_EQ(chart.find("limit"), std::string::npos) << chart;
  EXPECT_EQ(chart.find('-', 0), chart.find("+-") + 1) << chart;  // only the axis has dashes
  EXPECT_EQ(RowOfColumn(Lines(chart), 59), 0) << chart;          // the peak is the top
}

TEST(MemoryChartTest, LessThanTwoPointsInTimeDrawNothing) {
  EXPECT_EQ(RenderMemoryChart({}, MemoryChartOptions{}), "");
  EXPECT_EQ(RenderMemoryChart({{kStartMs, 1}}, MemoryChartOptions{}), "");
  EXPECT_EQ(RenderMemoryChart({{kStartMs, 1}, {kStartMs, 2}}, MemoryChartOptions{}), "");
}

TEST(MemoryChartTest, LeaksShowChartsTheMostUrgentHostUnderItsHosts) {
  drip::v1::LeakReport report;
  report.set_id("leak-1");
  report.set_component("svc:leaky.service");
  drip::v1::LeakHost* host = report.add_hosts();
  host->set_host("web-1");
  host->set_limit_bytes(2ull << 30);
  host->set_limited_by("cgroup");
  std::ostringstream out;
  RenderLeakReport(report, false, kStartMs + 7'200'000, TerminalStyle(), out, Leaking());
  const std::string text = out.str();
  const size_t hosts = text.find("Hosts\n");
  const size_t chart = text.find("Memory of svc:leaky.service on web-1\n");
  ASSERT_NE(chart, std::string::npos) << text;
  EXPECT_LT(hosts, chart) << text;
  EXPECT_NE(text.find("limit 2.0 GiB", chart), std::string::npos) << text;
  std::ostringstream none;
  RenderLeakReport(report, false, kStartMs, TerminalStyle(), none);
  EXPECT_EQ(none.str().find("Memory of"), std::string::npos) << none.str();
}

}  // namespace
}  // namespace drip::cli
