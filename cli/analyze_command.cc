#include "cli/analyze_command.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "analyzer/format/rollout_format.h"
#include "analyzer/rollout_correlation.h"
#include "analyzer/suspect.h"
#include "cli/terminal_safe_text.h"
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
  j["growth_since"] = s.growth_since;
  j["current_bytes"] = s.current_bytes;
  j["normal_bytes"] = s.normal_bytes;
  j["eta_to_oom_seconds"] =
      s.eta_to_oom_seconds ? nlohmann::ordered_json(*s.eta_to_oom_seconds) : nullptr;
  // What runs out first, the cgroup's limit or the host's memory (null: neither known).
  j["limited_by"] = s.limited_by.empty() ? nullptr : nlohmann::ordered_json(s.limited_by);
  j["limit_bytes"] = s.limit_bytes > 0 ? nlohmann::ordered_json(s.limit_bytes) : nullptr;
  j["headroom_bytes"] = s.limit_bytes > 0 ? nlohmann::ordered_json(s.headroom_bytes) : nullptr;
  j["oom_kills"] = s.oom_kills;
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

// The rollout correlation of each suspected component, from the CSV's version column:
// the same analysis the collector attaches to its leak reports.
std::map<std::string, analyzer::RolloutFinding> CorrelateVersions(
    const SampleTable& table, const std::vector<analyzer::Suspect>& suspects) {
  std::map<std::string, analyzer::RolloutFinding> findings;
  if (!table.has_versions) return findings;
  std::map<std::string, std::vector<analyzer::LeakingHost>> leaking;
  for (const analyzer::Suspect& s : suspects) {
    leaking[s.component].push_back(analyzer::LeakingHostOf(s));
  }
  // Each suspected component's instances with a version, by series, in start order.
  std::map<uint32_t, std::vector<const SampleTrack*>> by_series;
  for (uint32_t id = 0; id < table.tracks.size(); ++id) {
    const SampleTrack& t = table.tracks[id];
    const SampleSeries& series = table.series[t.series];
    // An instance's version is on its first track; the others are its limit changes.
    if (t.instance_track != id || t.version.empty() ||
        !leaking.contains(table.components[series.component])) {
      continue;
    }
    by_series[t.series].push_back(&t);
  }
  std::map<std::string, std::vector<analyzer::HostVersions>> fleets;
  for (auto& [series_id, tracks] : by_series) {
    std::sort(tracks.begin(), tracks.end(), [](const SampleTrack* a, const SampleTrack* b) {
      return a->first_timestamp < b->first_timestamp;
    });
    const SampleSeries& series = table.series[series_id];
    analyzer::HostVersions host{table.hosts[series.host], {}};
    for (const SampleTrack* t : tracks) {
      analyzer::AddVersionRun(&host.runs, {t->instance, t->version, t->first_timestamp});
    }
    fleets[table.components[series.component]].push_back(std::move(host));
  }
  for (const auto& [component, hosts] : leaking) {
    findings[component] = analyzer::CorrelateRollout(fleets[component], hosts);
  }
  return findings;
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

nlohmann::ordered_json AnalyzeReport(const ShardedReplay& replay, const SampleTable& table,
                                     const std::string& input) {
  nlohmann::ordered_json report;
  const std::vector<analyzer::Suspect> found = replay.Suspects();
  const std::map<std::string, analyzer::RolloutFinding> rollouts = CorrelateVersions(table, found);
  auto& suspects = report["suspects"] = nlohmann::ordered_json::array();
  for (const auto& s : found) {
    nlohmann::ordered_json j = SuspectJson(s);
    if (auto it = rollouts.find(s.component); it != rollouts.end()) {
      for (const analyzer::HostVersionFinding& f : it->second.hosts) {
        if (f.host != s.host) continue;
        j["version"] = f.version;
        j["previous_version"] = f.previous_version;
        j["began_at_version_change"] = f.began_at_change;
      }
    }
    suspects.push_back(std::move(j));
  }
  auto& components = report["components"] = nlohmann::ordered_json::array();
  for (const auto& c : replay.ComponentSuspects()) {
    nlohmann::ordered_json j = ComponentJson(c);
    if (auto it = rollouts.find(c.component); it != rollouts.end()) {
      drip::v1::RolloutEvidence rollout;
      analyzer::RolloutFindingToProto(it->second, &rollout);
      j["rollout"] = analyzer::RolloutEvidenceToJson(rollout);
    }
    components.push_back(std::move(j));
  }

  const analyzer::DetectorCounters counters = replay.counters();
  nlohmann::ordered_json summary;
  summary["input"] = input;
  summary["rows"] = replay.rows();
  summary["rows_skipped"] = table.rows_skipped;
  summary["first_skipped"] =
      table.rows_skipped > 0 ? nlohmann::ordered_json(table.first_skipped) : nullptr;
  summary["hosts"] = table.hosts.size();
  summary["components"] = table.components.size();
  summary["series"] = table.series.size();
  summary["instances"] = table.tracks.size();
  const bool any = replay.rows() > 0;
  summary["first_timestamp"] = any ? nlohmann::ordered_json(table.min_timestamp) : nullptr;
  summary["last_timestamp"] = any ? nlohmann::ordered_json(table.max_timestamp) : nullptr;
  summary["samples_observed"] = counters.samples;
  summary["late_samples_folded"] = counters.late_samples_folded;
  summary["late_samples_dropped"] = counters.late_samples_dropped;
  summary["restarts"] = counters.restarts;
  summary["gaps"] = counters.gaps;
  summary["epochs_closed"] = counters.epochs_closed;
  summary["oom_kills"] = counters.oom_kills;
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

  // Every core: components are judged apart from each other, each shard of them sorting
  // its own rows by time (ShardedReplay).
  ShardedReplay replay(config, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  replay.Replay(table);
  nlohmann::ordered_json report = AnalyzeReport(replay, table, options.input);
  // Names come from the CSV as they are; bytes that are not UTF-8 must not abort the
  // report (nlohmann throws on them by default), so they become U+FFFD.
  std::string text = DumpJsonForTerminal(report) + "\n";

  if (report_file) return report_file->Commit(text);
  out << text;
  out.flush();
  if (!out) return absl::InternalError("cannot write the report to standard output");
  return absl::OkStatus();
}

}  // namespace drip::cli
