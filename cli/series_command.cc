#include "cli/series_command.h"

#include "cli/table_printer.h"
#include "common/duration.h"
#include "common/sample_figures.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

nlohmann::json SampleJson(const drip::v1::Sample& s) {
  nlohmann::json j = {{"timestamp_ms", s.timestamp_ms()},
                      {"kind", SampleKind(s)},
                      {"unreclaimable_bytes", UnreclaimableBytes(s)}};
  switch (s.memory_case()) {
    case drip::v1::Sample::kProcess:
      j["anon_rss_bytes"] = s.process().anon_rss_bytes();
      j["file_rss_bytes"] = s.process().file_rss_bytes();
      j["shmem_rss_bytes"] = s.process().shmem_rss_bytes();
      j["swap_bytes"] = s.process().swap_bytes();
      break;
    case drip::v1::Sample::kCgroup:
      j["current_bytes"] = s.cgroup().current_bytes();
      j["anon_bytes"] = s.cgroup().anon_bytes();
      j["kernel_bytes"] = s.cgroup().kernel_bytes();
      j["slab_unreclaimable_bytes"] = s.cgroup().slab_unreclaimable_bytes();
      j["sock_bytes"] = s.cgroup().sock_bytes();
      j["shmem_bytes"] = s.cgroup().shmem_bytes();
      j["swap_bytes"] = s.cgroup().swap_bytes();
      break;
    case drip::v1::Sample::kSlab:
      j["active_objects"] = s.slab().active_objects();
      j["object_size_bytes"] = s.slab().object_size_bytes();
      break;
    case drip::v1::Sample::MEMORY_NOT_SET:
      break;
  }
  return j;
}

// The figures that explain the unreclaimable total, in the sample's own terms.
std::string Breakdown(const drip::v1::Sample& s) {
  switch (s.memory_case()) {
    case drip::v1::Sample::kProcess:
      return fmt::format(
          "anon {} file {} shmem {} swap {}", FormatBytes(s.process().anon_rss_bytes()),
          FormatBytes(s.process().file_rss_bytes()), FormatBytes(s.process().shmem_rss_bytes()),
          FormatBytes(s.process().swap_bytes()));
    case drip::v1::Sample::kCgroup:
      return fmt::format(
          "current {} anon {} kernel {} slab_unreclaimable {} sock {}",
          FormatBytes(s.cgroup().current_bytes()), FormatBytes(s.cgroup().anon_bytes()),
          FormatBytes(s.cgroup().kernel_bytes()),
          FormatBytes(s.cgroup().slab_unreclaimable_bytes()), FormatBytes(s.cgroup().sock_bytes()));
    case drip::v1::Sample::kSlab:
      return fmt::format("{} objects x {} B", s.slab().active_objects(),
                         s.slab().object_size_bytes());
    case drip::v1::Sample::MEMORY_NOT_SET:
      break;
  }
  return "-";
}

}  // namespace

void RenderSeries(const drip::v1::GetSeriesResponse& response, bool json, std::ostream& out) {
  if (json) {
    nlohmann::json series = nlohmann::json::array();
    for (const auto& s : response.series()) {
      nlohmann::json samples = nlohmann::json::array();
      for (const auto& sample : s.samples()) samples.push_back(SampleJson(sample));
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
                    std::to_string(bytes), Breakdown(sample)});
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
