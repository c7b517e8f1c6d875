#include "cli/analyze_command.h"

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/suspect.h"
#include "common/base/atomic_file.h"
#include "common/base/config_reader.h"
#include "common/base/status_macros.h"
#include "fmt/format.h"

namespace drip::cli {
namespace {

nlohmann::ordered_json SuspectJson(const analyzer::Suspect& s) {
  nlohmann::ordered_json j;
  // The contract's fields first, in its order.
  j["host"] = s.host;
  j["component"] = s.component;
  j["instance"] = s.instance;
  j["first_flagged"] = s.first_flagged;
  j["growth_bytes_per_hour"] = s.growth_bytes_per_hour;
  j["score"] = s.score;
  j["reason"] = s.reason;
  j["rule"] = analyzer::SuspectRuleName(s.rule);
  j["last_updated"] = s.last_updated;
  j["current_bytes"] = s.current_bytes;
  j["normal_bytes"] = s.normal_bytes;
  j["eta_to_oom_seconds"] =
      s.eta_to_oom_seconds ? nlohmann::ordered_json(*s.eta_to_oom_seconds) : nullptr;
  return j;
}

nlohmann::ordered_json ComponentJson(const analyzer::ComponentSuspect& c) {
  nlohmann::ordered_json j;
  j["component"] = c.component;
  j["first_flagged"] = c.first_flagged;
  j["hosts"] = c.hosts;
  j["hosts_seen"] = c.hosts_seen;
  j["max_growth_bytes_per_hour"] = c.max_growth_bytes_per_hour;
  return j;
}

}  // namespace

absl::StatusOr<analyzer::DetectorConfig> LoadDetectorConfig(const std::string& path) {
  analyzer::DetectorConfig config;
  if (path.empty()) return config;
  // Every config problem is bad input (exit 2), whatever code the reader chose.
  auto invalid = [](const absl::Status& status) {
    return absl::InvalidArgumentError(std::string(status.message()));
  };
  auto reader = ConfigReader::FromFile(path);
  if (!reader.ok()) return invalid(reader.status());
  if (auto status = analyzer::ReadDetectorConfig(*reader, "", &config); !status.ok()) {
    return invalid(status);
  }
  if (auto status = reader->CheckNoUnknownKeys(); !status.ok()) return invalid(status);
  return config;
}

void ReplaySamples(const SampleTable& table, analyzer::LeakDetector& detector) {
  if (table.rows.empty()) return;
  // Resolve every track to the detector's series id once, so the loop over tens of
  // millions of rows does no string work.
  std::vector<analyzer::LeakDetector::SeriesId> series_ids;
  series_ids.reserve(table.series.size());
  for (const SampleSeries& s : table.series) {
    series_ids.push_back(detector.Series(table.hosts[s.host], table.components[s.component]));
  }
  struct Track {
    analyzer::LeakDetector::SeriesId series;
    std::string_view instance;
  };
  std::vector<Track> tracks;
  tracks.reserve(table.tracks.size());
  for (const SampleTrack& t : table.tracks) tracks.push_back({series_ids[t.series], t.instance});
  for (const SampleRow& row : table.rows) {
    const Track& track = tracks[row.track];
    detector.Observe(track.series, row.timestamp, track.instance, row.bytes);
  }
  detector.AdvanceTo(int64_t{table.max_timestamp} + detector.config().epoch_seconds);
}

nlohmann::ordered_json AnalyzeReport(const analyzer::LeakDetector& detector,
                                     const SampleTable& table, const std::string& input) {
  nlohmann::ordered_json report;
  auto& suspects = report["suspects"] = nlohmann::ordered_json::array();
  for (const auto& s : detector.Suspects()) suspects.push_back(SuspectJson(s));
  auto& components = report["components"] = nlohmann::ordered_json::array();
  for (const auto& c : detector.ComponentSuspects()) components.push_back(ComponentJson(c));

  const analyzer::DetectorCounters& counters = detector.counters();
  nlohmann::ordered_json summary;
  summary["input"] = input;
  summary["rows"] = table.rows.size();
  summary["rows_skipped"] = table.rows_skipped;
  summary["first_skipped"] =
      table.rows_skipped > 0 ? nlohmann::ordered_json(table.first_skipped) : nullptr;
  summary["hosts"] = table.hosts.size();
  summary["components"] = table.components.size();
  summary["series"] = table.series.size();
  summary["instances"] = table.tracks.size();
  const bool any = !table.rows.empty();
  summary["first_timestamp"] = any ? nlohmann::ordered_json(table.min_timestamp) : nullptr;
  summary["last_timestamp"] = any ? nlohmann::ordered_json(table.max_timestamp) : nullptr;
  summary["samples_observed"] = counters.samples;
  summary["late_samples_folded"] = counters.late_samples_folded;
  summary["late_samples_dropped"] = counters.late_samples_dropped;
  summary["restarts"] = counters.restarts;
  summary["gaps"] = counters.gaps;
  summary["epochs_closed"] = counters.epochs_closed;
  report["summary"] = std::move(summary);
  return report;
}

absl::Status RunAnalyzeCommand(const AnalyzeOptions& options, std::ostream& out,
                               std::ostream& err) {
  ASSIGN_OR_RETURN(analyzer::DetectorConfig config, LoadDetectorConfig(options.config_path));
  // Opened before the (possibly long) analysis, so that a bad --output fails at once; a
  // reader never sees half a report, and a failed run leaves the old one as it was.
  std::optional<AtomicFile> report_file;
  if (!options.output_path.empty()) {
    absl::StatusOr<AtomicFile> file = AtomicFile::Create(options.output_path);
    // A path that cannot be written is bad input, whatever the errno.
    if (!file.ok()) return absl::InvalidArgumentError(std::string(file.status().message()));
    report_file = std::move(*file);
  }

  SampleCsvOptions csv_options;
  csv_options.skip_bad_rows = options.skip_bad_rows;
  ASSIGN_OR_RETURN(SampleTable table, SampleCsvReader(csv_options).ReadFile(options.input));
  if (table.rows_skipped > 0) {
    err << fmt::format("dripctl: skipped {} bad row{} (first: {})\n", table.rows_skipped,
                       table.rows_skipped == 1 ? "" : "s", table.first_skipped);
  }
  table.SortByTime();

  analyzer::LeakDetector detector(config);
  ReplaySamples(table, detector);
  nlohmann::ordered_json report = AnalyzeReport(detector, table, options.input);
  // Names come from the CSV as they are; bytes that are not UTF-8 must not abort the
  // report (nlohmann throws on them by default), so they become U+FFFD.
  std::string text =
      report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";

  if (report_file) return report_file->Commit(text);
  out << text;
  out.flush();
  if (!out) return absl::InternalError("cannot write the report to standard output");
  return absl::OkStatus();
}

}  // namespace drip::cli
