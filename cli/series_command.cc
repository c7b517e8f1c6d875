#include "cli/series_command.h"

#include <algorithm>
#include <vector>

#include "cli/table_printer.h"
#include "cli/terminal_safe_text.h"
#include "common/base/duration.h"
#include "common/rpc/sample_figures.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::cli {

namespace {

std::string DescribeGap(const drip::v1::SeriesGap& gap) {
  std::string what = fmt::format("{} batch{} dropped by the agent or lost", gap.batches(),
                                 gap.batches() == 1 ? "" : "es");
  if (gap.samples() > 0) what += fmt::format(" ({} samples)", gap.samples());
  if (gap.from_ms() > 0) {
    return fmt::format("no data until {}: {}", FormatTimestamp(gap.until_ms()), what);
  }
  return fmt::format("no data before this: {}", what);
}

}  // namespace

void RenderSeries(const drip::v1::GetSeriesResponse& response, bool json, std::ostream& out) {
  if (json) {
    nlohmann::json series = nlohmann::json::array();
    for (const auto& s : response.series()) {
      nlohmann::json samples = nlohmann::json::array();
      for (const auto& sample : s.samples()) samples.push_back(SampleFiguresJson(sample));
      series.push_back({{"host", s.host()},
                        {"component", s.component()},
                        {"instance", s.instance()},
                        {"samples", samples}});
    }
    nlohmann::json gaps = nlohmann::json::array();
    for (const auto& g : response.gaps()) {
      gaps.push_back({{"from_ms", g.from_ms()},
                      {"until_ms", g.until_ms()},
                      {"batches", g.batches()},
                      {"samples", g.samples()},
                      {"recorded_ms", g.recorded_ms()}});
    }
    out << DumpJsonForTerminal(nlohmann::json{{"series", series}, {"gaps", gaps}}) << "\n";
    return;
  }
  // One time line: samples of every instance and the gaps, so that an outage reads as
  // missing data, not as a line drawn across it.
  struct Row {
    int64_t time_ms;
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
  for (const auto& s : response.series()) {
    for (const auto& sample : s.samples()) {
      uint64_t bytes = UnreclaimableBytes(sample);
      rows.push_back({sample.timestamp_ms(),
                      {FormatTimestamp(sample.timestamp_ms()), s.instance(), FormatBytes(bytes),
                       std::to_string(bytes), DescribeFigures(sample)}});
    }
  }
  for (const auto& g : response.gaps()) {
    const int64_t at = g.from_ms() > 0 ? g.from_ms() : g.until_ms();
    rows.push_back({at, {FormatTimestamp(at), "-", "gap", "-", DescribeGap(g)}});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.time_ms < b.time_ms; });
  TablePrinter table({"TIME (UTC)", "INSTANCE", "UNRECLAIMABLE", "BYTES", "BREAKDOWN"});
  for (Row& row : rows) table.AddRow(std::move(row.cells));
  table.Print(out);
}

absl::Status RunSeriesCommand(QueryClient& client, const SeriesCommandOptions& options,
                              std::ostream& out) {
  drip::v1::GetSeriesRequest request;
  request.set_host(options.host);
  request.set_component(options.component);
  if (options.since.count() > 0) {
    int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    request.set_since_ms(now - options.since.count());
  }
  auto response = client.GetSeries(request);
  if (!response.ok()) return response.status();
  RenderSeries(*response, options.json, out);
  return absl::OkStatus();
}

}  // namespace drip::cli
