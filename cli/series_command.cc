#include "cli/series_command.h"

#include "cli/table_printer.h"
#include "common/duration.h"
#include "common/sample_figures.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::cli {

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
    out << nlohmann::json{{"series", series}}.dump(2) << "\n";
    return;
  }
  TablePrinter table({"TIME (UTC)", "INSTANCE", "UNRECLAIMABLE", "BYTES", "BREAKDOWN"});
  for (const auto& s : response.series()) {
    for (const auto& sample : s.samples()) {
      uint64_t bytes = UnreclaimableBytes(sample);
      table.AddRow({FormatTimestamp(sample.timestamp_ms()), s.instance(), FormatBytes(bytes),
                    std::to_string(bytes), DescribeFigures(sample)});
    }
  }
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
