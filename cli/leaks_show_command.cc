#include "cli/leaks_show_command.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "cli/diagnose_command.h"
#include "cli/leak_report_format.h"
#include "cli/leak_report_json.h"
#include "cli/pprof_output.h"
#include "cli/stack_printer.h"
#include "cli/table_printer.h"
#include "common/base/duration.h"
#include "common/base/status_macros.h"
#include "common/rpc/report_state.h"
#include "common/rpc/sample_figures.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "diagnoser/format/pprof_profile.h"
#include "diagnoser/heap_diagnoser.h"
#include "diagnoser/snapshot_diff.h"
#include "fmt/format.h"

namespace drip::cli {
namespace {

// Whole stacks printed; a diagnosis may keep up to 100, and --json has them all.
constexpr int kShownStacks = 5;

std::string When(int64_t unix_ms, int64_t now_ms) {
  if (unix_ms <= 0) return "-";
  return fmt::format("{} UTC ({})", FormatTimestamp(unix_ms), FormatAgo(unix_ms, now_ms));
}

void Field(const char* name, const std::string& value, std::ostream& out) {
  out << fmt::format("{:<14}{}\n", name, value);
}

void RenderHeader(const drip::v1::LeakReport& r, int64_t now_ms, const TerminalStyle& style,
                  std::ostream& out) {
  out << style.Bold(r.id()) << "  " << r.component() << "\n";
  Field("state", r.state(), out);
  Field("severity", IsAlertSeverity(r.severity()) ? style.Alert(r.severity()) : r.severity(), out);
  Field("first seen", When(SecondsToMs(r.first_seen_s()), now_ms), out);
  Field("last seen", When(SecondsToMs(r.last_seen_s()), now_ms), out);
  Field("hosts", fmt::format("{} affected of {} seen", r.hosts_size(), r.hosts_seen()), out);
  Field("max growth", FormatByteRate(r.max_growth_bytes_per_hour()), out);
  Field("shortest ETA",
        r.has_min_eta_to_oom_seconds()
            ? FormatMinEta(r)
            : std::string("unknown (no affected host's memory size is known)"),
        out);
}

void RenderHosts(const drip::v1::LeakReport& r, int64_t now_ms, const TerminalStyle& style,
                 std::ostream& out) {
  out << "\n" << style.Bold("Hosts") << "\n";
  if (r.hosts_size() == 0) {
    out << "none\n";
    return;
  }
  TablePrinter table({"HOST", "INSTANCE", "VERSION", "GROWTH", "ETA", "CURRENT", "NORMAL", "LIMIT",
                      "HEADROOM", "SINCE", "ACTIVE", "SNAPSHOT"});
  for (const auto& h : r.hosts()) {
    std::string snapshot = OrDash(h.snapshot_state());
    if (!h.snapshot_error().empty()) snapshot += ": " + h.snapshot_error();
    // "(was 1.0)": the growth began when this version replaced 1.0 on the host.
    std::string version = OrDash(h.version());
    if (h.began_at_version_change()) version += fmt::format(" (was {})", h.previous_version());
    table.AddRow(
        {h.host(), OrDash(h.instance()), version, FormatByteRate(h.growth_bytes_per_hour()),
         FormatHostEta(h), FormatBytes(h.current_bytes()), FormatBytes(h.normal_bytes()),
         FormatLimit(h.limited_by(), h.limit_bytes(), h.oom_kills()),
         FormatHeadroom(h.limited_by(), h.headroom_bytes()),
         FormatAgo(SecondsToMs(h.first_flagged_s()), now_ms), h.active() ? "yes" : "no", snapshot});
    if (h.snapshot_state() == "failed") table.AlertLastRowCell(11);
  }
  table.Print(out, style);
  // The detector's reasons are sentences; they do not fit a column.
  for (const auto& h : r.hosts()) {
    if (!h.reason().empty()) out << fmt::format("  {}: {}\n", h.host(), h.reason());
  }
}

// Whether the leak came with a version, and the hosts on other versions that do not leak:
// the evidence for (or against) rolling back.
void RenderVersions(const drip::v1::LeakReport& r, const TerminalStyle& style, std::ostream& out) {
  if (!r.has_rollout()) return;
  const drip::v1::RolloutEvidence& rollout = r.rollout();
  out << "\n" << style.Bold("Versions") << "\n" << rollout.summary() << "\n";
  if (rollout.versions_size() == 0) return;
  TablePrinter table({"VERSION", "LEAKING HOSTS", "HOSTS NOT LEAKING", "BEGAN AT CHANGE"});
  for (const auto& v : rollout.versions()) {
    table.AddRow({v.version(), std::to_string(v.leaking_hosts()), std::to_string(v.healthy_hosts()),
                  std::to_string(v.began_at_change())});
  }
  table.Print(out, style);
}

void RenderStacks(const drip::v1::LeakReport& r, int64_t now_ms, const TerminalStyle& style,
                  std::ostream& out) {
  out << "\n" << style.Bold("Leaking call stacks") << "\n";
  if (r.top_stacks_size() == 0) {
    out << "no heap snapshot diagnosed yet (see the SNAPSHOT column above)\n";
    return;
  }
  out << fmt::format("diagnosed on {} at {}", OrDash(r.diagnosed_host()),
                     When(r.diagnosed_ms(), now_ms));
  if (!r.diagnosis_summary().empty()) out << ": " << r.diagnosis_summary();
  out << "\n";
  if (!r.growth_explained().empty()) out << r.growth_explained() << "\n";
  if (r.has_first_snapshot()) {
    const drip::v1::SnapshotRef& first = r.first_snapshot();
    const drip::v1::SnapshotRef& latest = r.latest_snapshot();
    if (first.command_id() == latest.command_id()) {
      out << fmt::format(
          "snapshot kept: {} of {} on {} ({}); --pprof FILE exports it, and --diff shows what "
          "grew once a later snapshot of the process is kept\n",
          first.command_id(), first.instance(), first.host(), When(first.finished_ms(), now_ms));
    } else {
      out << fmt::format(
          "snapshots kept: the first {} and the latest {} of {} on {} ({}); --diff shows what "
          "grew between them\n",
          When(first.finished_ms(), now_ms), When(latest.finished_ms(), now_ms), first.instance(),
          first.host(),
          FormatSpan(static_cast<double>(latest.finished_ms() - first.finished_ms()) / 1000) +
              " apart");
    }
  }
  absl::StatusOr<diagnoser::Diagnosis> stacks = StacksFromProto(r.top_stacks());
  if (!stacks.ok()) {
    // A newer collector's verdict: say so rather than print half a stack.
    out << fmt::format("cannot read the stacks: {} (--json has them raw)\n",
                       std::string(stacks.status().message()));
    return;
  }
  const int shown = std::min<int>(kShownStacks, static_cast<int>(stacks->stacks.size()));
  for (int i = 0; i < shown; ++i) {
    out << "\n";
    PrintDiagnosedStack(i + 1, stacks->stacks[static_cast<size_t>(i)], out);
  }
  if (shown < static_cast<int>(stacks->stacks.size())) {
    out << fmt::format("\n({} more stacks; --json lists them all)\n",
                       stacks->stacks.size() - static_cast<size_t>(shown));
  }
}

void RenderRecommendation(const drip::v1::LeakReport& r, const TerminalStyle& style,
                          std::ostream& out) {
  out << "\n" << style.Bold("Recommended action") << "\n";
  if (r.recommended_action().empty()) {
    out << "none yet\n";
    return;
  }
  out << r.recommended_action();
  if (!r.recommendation().empty()) out << ": " << r.recommendation();
  out << "\n";
  if (ReportStateOf(r) != drip::v1::REPORT_STATE_RESOLVED) {
    // The next step, ready to paste; dry-run first, as the policy does by default.
    out << fmt::format("  try it: dripctl mitigate {} --action {} --dry-run\n", r.id(),
                       r.recommended_action());
  }
}

void RenderMitigations(const drip::v1::LeakReport& r, const TerminalStyle& style,
                       std::ostream& out) {
  out << "\n" << style.Bold("Mitigations") << "\n";
  if (r.mitigations_size() == 0) {
    out << "none\n";
    return;
  }
  TablePrinter table(
      {"REQUESTED (UTC)", "HOST", "ACTION", "TARGET", "DRY RUN", "OUTCOME", "ACTOR", "DETAIL"});
  for (const auto& m : r.mitigations()) {
    table.AddRow({FormatTimestamp(m.requested_ms()), m.host(), m.action(), OrDash(m.target()),
                  m.dry_run() ? "yes" : "no", m.outcome(), OrDash(m.actor()), OrDash(m.detail())});
    if (m.outcome() == "failed" || m.outcome() == "timed-out" || m.outcome() == "refused") {
      table.AlertLastRowCell(5);
    }
  }
  table.Print(out, style);
}

void RenderHistory(const drip::v1::LeakReport& r, const TerminalStyle& style, std::ostream& out) {
  out << "\n" << style.Bold("History") << "\n";
  if (r.history_size() == 0) {
    out << "none\n";
    return;
  }
  TablePrinter table({"TIME (UTC)", "FROM", "TO", "ACTOR", "NOTE"});
  for (const auto& c : r.history()) {
    table.AddRow({FormatTimestamp(c.time_ms()), OrDash(c.from()), c.to(), OrDash(c.actor()),
                  OrDash(c.note())});
  }
  table.Print(out, style);
}

// The chart of the most urgent host's memory, from shortly before its growth began.
void RenderMemory(const drip::v1::LeakReport& r, const std::vector<MemoryPoint>& memory,
                  const TerminalStyle& style, std::ostream& out) {
  if (r.hosts_size() == 0) return;
  MemoryChartOptions options;
  options.limit_bytes = r.hosts(0).limit_bytes();
  const std::string chart = RenderMemoryChart(memory, options);
  if (chart.empty()) return;
  out << "\n"
      << style.Bold(fmt::format("Memory of {} on {}", r.component(), r.hosts(0).host())) << "\n"
      << chart;
}

// The stored samples behind the chart; none when they cannot be read (the report is
// still worth showing: the chart is the only part that needs them).
std::vector<MemoryPoint> MemoryOfMostUrgentHost(QueryClient& client, const drip::v1::LeakReport& r,
                                                int64_t now_ms) {
  std::vector<MemoryPoint> points;
  if (r.hosts_size() == 0) return points;
  const drip::v1::LeakHost& host = r.hosts(0);
  const int64_t began_s = host.growth_since_s() > 0
                              ? std::min(host.growth_since_s(), r.first_seen_s())
                              : r.first_seen_s();
  // Before the growth began, a sixth of its life (an hour at least): what normal was.
  const int64_t life_ms = std::max<int64_t>(0, now_ms - began_s * 1000);
  drip::v1::GetSeriesRequest request;
  request.set_host(host.host());
  request.set_component(r.component());
  request.set_since_ms(
      std::max<int64_t>(0, began_s * 1000 - std::max<int64_t>(3'600'000, life_ms / 6)));
  absl::StatusOr<drip::v1::GetSeriesResponse> series = client.GetSeries(request);
  if (!series.ok()) return points;
  for (const drip::v1::Series& s : series->series()) {
    for (const drip::v1::Sample& sample : s.samples()) {
      if (!sample.has_process_exit())
        points.push_back({sample.timestamp_ms(), UnreclaimableBytes(sample)});
    }
  }
  std::sort(points.begin(), points.end(),
            [](const MemoryPoint& a, const MemoryPoint& b) { return a.t_ms < b.t_ms; });
  return points;
}

}  // namespace

void RenderLeakReport(const drip::v1::LeakReport& report, bool json, int64_t now_ms,
                      const TerminalStyle& style, std::ostream& out,
                      const std::vector<MemoryPoint>& memory) {
  if (json) {
    out << DumpJson(LeakReportToJson(report)) << "\n";
    return;
  }
  RenderHeader(report, now_ms, style, out);
  RenderHosts(report, now_ms, style, out);
  RenderMemory(report, memory, style, out);
  RenderVersions(report, style, out);
  RenderStacks(report, now_ms, style, out);
  RenderRecommendation(report, style, out);
  RenderMitigations(report, style, out);
  RenderHistory(report, style, out);
}

namespace {

// One snapshot the report keeps, checked as any snapshot file is.
absl::StatusOr<HeapSnapshot> FetchSnapshot(QueryClient& client, const std::string& id, bool first) {
  ASSIGN_OR_RETURN(drip::v1::HeapSnapshot proto, client.GetLeakSnapshot(id, first));
  return ParseHeapSnapshotProto(proto,
                                fmt::format("{}'s {} snapshot", id, first ? "first" : "latest"));
}

// --diff: the report's first and latest snapshots of one process, diffed here.
absl::Status RunSnapshotDiff(QueryClient& client, const LeaksShowOptions& options,
                             PprofOutput* pprof, std::ostream& out) {
  ASSIGN_OR_RETURN(drip::v1::LeakReport report, client.GetLeak(options.id));
  if (!report.has_first_snapshot()) {
    return absl::FailedPreconditionError(fmt::format(
        "{} has no heap snapshot yet: none of its hosts' snapshots was diagnosed", options.id));
  }
  if (report.first_snapshot().command_id() == report.latest_snapshot().command_id()) {
    return absl::FailedPreconditionError(fmt::format(
        "{} keeps one snapshot so far ({} of {} on {}): a diff needs a later one of the same "
        "process, which the collector takes a cool-down (snapshots.cooldown) later while the "
        "leak lasts",
        options.id, report.first_snapshot().command_id(), report.first_snapshot().instance(),
        report.first_snapshot().host()));
  }
  ASSIGN_OR_RETURN(HeapSnapshot base, FetchSnapshot(client, options.id, true));
  ASSIGN_OR_RETURN(HeapSnapshot now, FetchSnapshot(client, options.id, false));
  const diagnoser::HeapDiagnoser diagnoser;
  absl::StatusOr<diagnoser::SnapshotDiff> diff =
      diagnoser::DiffSnapshots(base, diagnoser.Diagnose(base), now, diagnoser.Diagnose(now));
  if (!diff.ok()) {
    return absl::FailedPreconditionError(
        fmt::format("{}'s snapshots: {}", options.id, std::string(diff.status().message())));
  }
  if (pprof->wanted())
    RETURN_IF_ERROR(pprof->Write(diagnoser::SnapshotDiffToPprofGzip(now, *diff)));
  RenderSnapshotDiff(base, now, *diff, options.json, 20, out);
  return absl::OkStatus();
}

}  // namespace

absl::Status RunLeaksShowCommand(QueryClient& client, const LeaksShowOptions& options,
                                 const TerminalStyle& style, std::ostream& out) {
  ASSIGN_OR_RETURN(PprofOutput pprof, PprofOutput::Open(options.pprof_path));
  if (options.diff) return RunSnapshotDiff(client, options, &pprof, out);
  const std::string& id = options.id;
  const bool json = options.json;
  auto report = client.GetLeak(id);
  if (!report.ok()) return report.status();
  if (pprof.wanted()) {
    if (!report->has_latest_snapshot()) {
      return absl::FailedPreconditionError(fmt::format(
          "--pprof: {} has no heap snapshot yet: none of its hosts' snapshots was diagnosed", id));
    }
    ASSIGN_OR_RETURN(HeapSnapshot latest, FetchSnapshot(client, id, false));
    RETURN_IF_ERROR(pprof.Write(
        diagnoser::HeapSnapshotToPprofGzip(latest, diagnoser::HeapDiagnoser().Diagnose(latest))));
  }
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  std::vector<MemoryPoint> memory;
  if (!json) memory = MemoryOfMostUrgentHost(client, *report, now_ms);
  RenderLeakReport(*report, json, now_ms, style, out, memory);
  if (pprof.wanted() && !json) {
    out << fmt::format("\nwrote {}: the latest snapshot ({}) as a pprof profile\n",
                       options.pprof_path, report->latest_snapshot().command_id());
  }
  return absl::OkStatus();
}

}  // namespace drip::cli
