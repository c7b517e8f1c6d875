#include "cli/diagnose_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "cli/input_file.h"
#include "cli/pprof_output.h"
#include "cli/stack_printer.h"
#include "cli/table_printer.h"
#include "cli/terminal_safe_text.h"
#include "common/base/config_reader.h"
#include "common/base/duration.h"
#include "common/base/status_macros.h"
#include "common/snapshot/heap_snapshot_json.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "diagnoser/format/diagnosis_json.h"
#include "diagnoser/format/diagnosis_proto.h"
#include "diagnoser/format/pprof_profile.h"
#include "diagnoser/heap_diagnoser.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

using diagnoser::DiagnosedStack;
using diagnoser::Diagnosis;
using diagnoser::Verdict;

// How many leaks get their whole stack printed under the table.
constexpr int kFullStacks = 3;

nlohmann::ordered_json SnapshotJson(const HeapSnapshot& s) {
  nlohmann::ordered_json target;
  target["pid"] = s.target.pid;
  target["comm"] = s.target.comm;
  target["exe"] = s.target.exe;
  target["host"] = s.target.host;
  target["component"] = s.target.component;
  target["instance"] = s.target.instance;
  nlohmann::ordered_json j;
  j["target"] = std::move(target);
  j["mode"] = s.mode;
  j["start_ms"] = s.start_ms;
  j["end_ms"] = s.end_ms;
  j["sampling_mean_bytes"] = s.sampling_mean_bytes;
  j["stop_reason"] = s.stop_reason;
  j["stacks"] = s.stacks.size();
  return j;
}

void RenderHeader(const HeapSnapshot& s, std::ostream& out) {
  std::string target = fmt::format("pid {}", s.target.pid);
  if (!s.target.comm.empty()) target += fmt::format(" ({})", s.target.comm);
  if (!s.target.host.empty()) target += " on " + s.target.host;
  if (!s.target.component.empty()) target += ", " + s.target.component;
  out << fmt::format("target    {}\n", target);
  const double seconds = static_cast<double>(s.end_ms - s.start_ms) / 1000;
  out << fmt::format("window    {} mode, {} to {} UTC ({}, read every {})\n", s.mode,
                     FormatTimestamp(s.start_ms), FormatTimestamp(s.end_ms), FormatSpan(seconds),
                     s.interval_seconds < 10 ? fmt::format("{:g} s", s.interval_seconds)
                                             : FormatSpan(s.interval_seconds));
  const std::string sampling = s.sampling_mean_bytes == 0
                                   ? std::string("every allocation recorded")
                                   : fmt::format("one sample per {} allocated on average (Poisson)",
                                                 FormatBytes(s.sampling_mean_bytes));
  out << fmt::format(
      "sampling  {}; {} sampled allocations, {} frees matched, {} dropped{}, {} "
      "unwind failures\n",
      sampling, s.sampled_allocs, s.matched_frees, s.dropped_events,
      s.lost_while_behind > 0
          ? fmt::format(" ({} while the agent fell behind)", s.lost_while_behind)
          : std::string(),
      s.unwind_failures);
  if (s.target.expected_growth_bytes_per_hour > 0) {
    out << fmt::format(
        "expected  {}: the growth measured before the snapshot (--expect-growth, "
        "or the collector's detector)\n",
        FormatByteRate(s.target.expected_growth_bytes_per_hour));
  }
  if (!s.unsampled_calls.empty()) {
    out << fmt::format("blind to  the program's calls to {} ({} mode cannot sample them)\n",
                       fmt::join(s.unsampled_calls, ", "), s.mode);
  }
  if (s.mode == "attach" && s.duty_cycle.cpu_budget > 0) {
    out << fmt::format("probes    on {:.0f}% of the window, {:.2f}% of a core (budget {:.2f}%)\n",
                       s.duty_cycle.on_fraction * 100, s.duty_cycle.estimated_cpu_fraction * 100,
                       s.duty_cycle.cpu_budget * 100);
  }
  if (!s.stop_reason.empty()) {
    out << fmt::format("stopped   {}{}\n", s.stop_reason,
                       s.stop_detail.empty() ? std::string() : ": " + s.stop_detail);
  }
}

}  // namespace

absl::StatusOr<HeapSnapshot> ReadSnapshotFile(const std::string& path) {
  ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path));
  ASSIGN_OR_RETURN(std::string text, file.ReadAll());
  return ParseHeapSnapshotJson(text, file.name());
}

absl::StatusOr<diagnoser::DiagnoserConfig> LoadDiagnoserConfig(const std::string& path) {
  diagnoser::DiagnoserConfig config;
  if (path.empty()) return config;
  // Every config problem is bad input (exit 2), whatever code the reader chose.
  auto invalid = [](const absl::Status& status) {
    return absl::InvalidArgumentError(std::string(status.message()));
  };
  auto reader = ConfigReader::FromFile(path);
  if (!reader.ok()) return invalid(reader.status());
  if (auto status = diagnoser::ReadDiagnoserConfig(*reader, "", &config); !status.ok()) {
    return invalid(status);
  }
  if (auto status = reader->CheckNoUnknownKeys(); !status.ok()) return invalid(status);
  return config;
}

namespace {

void RenderText(const HeapSnapshot& snapshot, const Diagnosis& diagnosis, int top,
                std::ostream& out) {
  RenderHeader(snapshot, out);
  std::string rss = "not measured";
  if (snapshot.rss.size() >= 2) {
    rss = fmt::format("{} ({} to {})", FormatByteRate(diagnosis.rss_growth_bytes_per_hour),
                      FormatLiveBytes(snapshot.rss.front().anon_bytes),
                      FormatLiveBytes(snapshot.rss.back().anon_bytes));
  }
  out << fmt::format("anon RSS  {}\n\n", rss);
  out << diagnosis.summary << "\n";
  if (diagnosis.stacks.empty()) return;
  out << "\n";

  TablePrinter table({"RANK", "VERDICT", "SCORE", "LIVE", "GROWTH", "SAMPLES", "TOP FRAME"});
  const size_t rows = top > 0 ? std::min(diagnosis.stacks.size(), static_cast<size_t>(top))
                              : diagnosis.stacks.size();
  for (size_t i = 0; i < rows; ++i) {
    const DiagnosedStack& s = diagnosis.stacks[i];
    table.AddRow({std::to_string(i + 1), std::string(diagnoser::VerdictName(s.verdict)),
                  fmt::format("{:.2f}", s.score), FormatLiveBytes(s.live_bytes),
                  FormatByteRate(s.growth_bytes_per_hour), std::to_string(s.sampled_allocs),
                  s.frames.empty() ? std::string("<allocator frames only>")
                                   : diagnoser::FrameLabel(s.frames.front())});
  }
  table.Print(out);
  if (rows < diagnosis.stacks.size()) {
    out << fmt::format("({} more stacks; --top 0 or --json lists them all)\n",
                       diagnosis.stacks.size() - rows);
  }
  // The leaks in full (they come first); with no leak, the best undecided candidate.
  int shown = 0;
  for (size_t i = 0; i < diagnosis.stacks.size() && shown < kFullStacks; ++i) {
    const Verdict verdict = diagnosis.stacks[i].verdict;
    const bool candidate =
        diagnosis.outcome == diagnoser::Outcome::kInconclusive && verdict == Verdict::kInconclusive;
    if (verdict != Verdict::kLeak && !candidate) {
      if (diagnosis.outcome == diagnoser::Outcome::kLeak) break;
      continue;
    }
    out << "\n";
    PrintDiagnosedStack(static_cast<int>(i + 1), diagnosis.stacks[i], out);
    ++shown;
    if (candidate) break;
  }
}

std::string WindowLine(const HeapSnapshot& s) {
  std::string target = fmt::format("pid {}", s.target.pid);
  if (!s.target.comm.empty()) target += fmt::format(" ({})", s.target.comm);
  if (!s.target.host.empty()) target += " on " + s.target.host;
  return fmt::format("{}, {} mode, {} to {} UTC ({})", TerminalSafe(target), TerminalSafe(s.mode),
                     FormatTimestamp(s.start_ms), FormatTimestamp(s.end_ms),
                     FormatSpan(static_cast<double>(s.end_ms - s.start_ms) / 1000));
}

std::string InWindow(const std::optional<diagnoser::SiteInWindow>& w) {
  if (!w) return "-";
  return fmt::format("{} {}", diagnoser::VerdictName(w->verdict),
                     FormatByteRate(w->growth_bytes_per_hour));
}

void RenderDiffText(const HeapSnapshot& base, const HeapSnapshot& now,
                    const diagnoser::SnapshotDiff& diff, int top, std::ostream& out) {
  out << fmt::format("base      {}\n", WindowLine(base));
  out << fmt::format("new       {}\n", WindowLine(now));
  out << fmt::format(
      "between   {}, window end to window end; ADDED is each site's sustained growth in the "
      "two windows over that time\n",
      FormatSpan(static_cast<double>(diff.now_end_ms - diff.base_end_ms) / 1000));
  out << "\n" << TerminalSafe(diff.summary) << "\n";
  if (diff.sites.empty()) return;
  out << "\n";
  TablePrinter table({"RANK", "ADDED", "OBJECTS", "ALLOCATED", "BASE", "NEW", "TOP FRAME"});
  const size_t rows =
      top > 0 ? std::min(diff.sites.size(), static_cast<size_t>(top)) : diff.sites.size();
  for (size_t i = 0; i < rows; ++i) {
    const diagnoser::SiteChange& c = diff.sites[i];
    table.AddRow({std::to_string(i + 1),
                  FormatLiveBytes(static_cast<int64_t>(std::llround(c.grew_bytes))),
                  fmt::format("{:.0f}", c.grew_objects),
                  FormatLiveBytes(static_cast<int64_t>(std::llround(c.allocated_bytes))),
                  InWindow(c.base), InWindow(c.now),
                  c.frames.empty() ? std::string("<allocator frames only>")
                                   : TerminalSafe(diagnoser::FrameLabel(c.frames.front()))});
  }
  table.Print(out);
  if (rows < diff.sites.size()) {
    out << fmt::format("({} more sites; --top 0 or --json lists them all)\n",
                       diff.sites.size() - rows);
  }
  const diagnoser::SiteChange& first = diff.sites.front();
  if (first.grew_bytes > 0) {
    out << fmt::format("\n#1 added about {}:\n",
                       FormatLiveBytes(static_cast<int64_t>(std::llround(first.grew_bytes))));
    PrintFrames(first.frames, out);
  }
}

}  // namespace

void RenderSnapshotDiff(const HeapSnapshot& base, const HeapSnapshot& now,
                        const diagnoser::SnapshotDiff& diff, bool json, int top,
                        std::ostream& out) {
  if (json) {
    nlohmann::ordered_json j = diagnoser::SnapshotDiffToJson(diff);
    j["base_snapshot"] = SnapshotJson(base);
    j["new_snapshot"] = SnapshotJson(now);
    out << DumpJsonForTerminal(j) << "\n";
    return;
  }
  RenderDiffText(base, now, diff, top, out);
}

void RenderDiagnosis(const HeapSnapshot& snapshot, const Diagnosis& diagnosis, bool json, int top,
                     std::ostream& out) {
  if (json) {
    nlohmann::ordered_json j = diagnoser::DiagnosisToJson(diagnosis);
    j["snapshot"] = SnapshotJson(snapshot);
    // Symbol names come from the target's binaries: never let a stray byte throw. JSON
    // escapes control bytes itself.
    out << DumpJsonForTerminal(j) << "\n";
    return;
  }
  // A snapshot file's names (the target's command, host and component, symbols, files)
  // come from a host and its target's binaries, as a collector's answers do: every string
  // is made safe through the same forms the collector sends, so that no control byte (an
  // escape sequence, a newline forging a row) reaches the terminal.
  drip::v1::HeapSnapshot snapshot_proto;
  HeapSnapshotToProto(snapshot, &snapshot_proto);
  MakeTerminalSafe(&snapshot_proto);
  drip::v1::Diagnosis diagnosis_proto;
  diagnoser::DiagnosisToProto(diagnosis, &diagnosis_proto);
  MakeTerminalSafe(&diagnosis_proto);
  absl::StatusOr<Diagnosis> safe = diagnoser::DiagnosisFromProto(diagnosis_proto);
  if (!safe.ok()) {
    // Not expected (the proto was just written); never print unsafe text either way.
    out << TerminalSafe(std::string(safe.status().message())) << "\n";
    return;
  }
  RenderText(HeapSnapshotFromProto(snapshot_proto), *safe, top, out);
}

namespace {

std::string InputName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

}  // namespace

absl::Status RunDiagnoseCommand(const DiagnoseOptions& options, std::ostream& out) {
  ASSIGN_OR_RETURN(diagnoser::DiagnoserConfig config, LoadDiagnoserConfig(options.config_path));
  ASSIGN_OR_RETURN(PprofOutput pprof, PprofOutput::Open(options.pprof_path));
  ASSIGN_OR_RETURN(HeapSnapshot snapshot, ReadSnapshotFile(options.input));
  const diagnoser::HeapDiagnoser diagnoser(config);
  const Diagnosis diagnosis = diagnoser.Diagnose(snapshot);
  if (options.base.empty()) {
    if (pprof.wanted()) {
      RETURN_IF_ERROR(pprof.Write(diagnoser::HeapSnapshotToPprofGzip(snapshot, diagnosis)));
    }
    RenderDiagnosis(snapshot, diagnosis, options.json, options.top, out);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(HeapSnapshot base, ReadSnapshotFile(options.base));
  absl::StatusOr<diagnoser::SnapshotDiff> diff =
      diagnoser::DiffSnapshots(base, diagnoser.Diagnose(base), snapshot, diagnosis);
  if (!diff.ok()) {
    return absl::InvalidArgumentError(fmt::format("{} against --base {}: {}",
                                                  InputName(options.input), InputName(options.base),
                                                  std::string(diff.status().message())));
  }
  if (pprof.wanted())
    RETURN_IF_ERROR(pprof.Write(diagnoser::SnapshotDiffToPprofGzip(snapshot, *diff)));
  RenderSnapshotDiff(base, snapshot, *diff, options.json, options.top, out);
  return absl::OkStatus();
}

}  // namespace drip::cli
