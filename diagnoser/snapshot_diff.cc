#include "diagnoser/snapshot_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "common/base/duration.h"
#include "diagnoser/stack_merge.h"
#include "fmt/format.h"

namespace drip::diagnoser {
namespace {

constexpr double kMillisPerHour = 3'600'000;

// A site as the binaries name it: per frame, the build-id (else the module's path) and the
// offset in it; the address only outside any module. Symbol names are left out on purpose.
std::string SiteKey(const std::vector<StackFrame>& frames) {
  std::string key;
  for (const StackFrame& f : frames) {
    if (!f.build_id.empty()) {
      key += fmt::format("b:{}+{:x};", f.build_id, f.module_offset);
    } else if (!f.module.empty()) {
      key += fmt::format("m:{}+{:x};", f.module, f.module_offset);
    } else {
      key += fmt::format("a:{:x};", f.address);
    }
  }
  return key;
}

// The growth a verdict lets count as the process's: a leak's, or a growth nothing showed
// stopping. A cache's or a startup buffer's rise within a window is turnover or a level
// already reached, and churn frees what it allocates.
double SustainedRate(const DiagnosedStack& stack) {
  const bool growing = stack.verdict == Verdict::kLeak || stack.verdict == Verdict::kInconclusive;
  return growing ? std::max(0.0, stack.growth_bytes_per_hour) : 0;
}

struct WindowSite {
  std::vector<StackFrame> frames;
  SiteInWindow site;
};

// Every diagnosed site of one snapshot by its key (the diagnosis keeps the likeliest
// `max_stacks`; the ones it dropped grew too little to rank, and count as not seen).
std::map<std::string, WindowSite> SitesOf(const HeapSnapshot& snapshot,
                                          const Diagnosis& diagnosis) {
  std::unordered_map<uint64_t, double> allocated_by_id;
  for (const MergedStack& merged : MergeStacks(snapshot.stacks)) {
    allocated_by_id[merged.stack.id] += static_cast<double>(merged.stack.allocated_bytes);
  }
  const double window_hours =
      static_cast<double>(std::max<int64_t>(0, snapshot.end_ms - snapshot.start_ms)) /
      kMillisPerHour;
  std::map<std::string, WindowSite> sites;
  for (size_t i = 0; i < diagnosis.stacks.size(); ++i) {
    const DiagnosedStack& d = diagnosis.stacks[i];
    auto [it, added] = sites.try_emplace(SiteKey(d.frames));
    WindowSite& w = it->second;
    const int rank = static_cast<int>(i + 1);
    // Frames that differ only in their names are one site: the better-ranked names it.
    if (added || rank < w.site.rank) {
      w.frames = d.frames;
      w.site.verdict = d.verdict;
      w.site.rank = rank;
    }
    w.site.live_bytes += d.live_bytes;
    w.site.live_allocs += d.live_allocs;
    w.site.growth_bytes_per_hour += d.growth_bytes_per_hour;
    w.site.sustained_bytes_per_hour += SustainedRate(d);
    if (window_hours > 0) {
      w.site.allocated_bytes_per_hour += allocated_by_id[d.stack_id] / window_hours;
    }
  }
  return sites;
}

std::string Process(const SnapshotTarget& t) {
  std::string out = fmt::format("pid {}", t.pid);
  if (!t.comm.empty()) out += fmt::format(" ({})", t.comm);
  return out;
}

// Why `base` and `now` are not one process instance, in words; empty when they are.
std::string WhyNotOneInstance(const SnapshotTarget& a, const SnapshotTarget& b) {
  if (!a.host.empty() && !b.host.empty() && a.host != b.host) {
    return fmt::format("the base is of host {}, the new snapshot of host {}", a.host, b.host);
  }
  if (a.pid != b.pid) {
    return fmt::format("the base is of {}, the new snapshot of {}", Process(a), Process(b));
  }
  if (a.start_time_ms > 0 && b.start_time_ms > 0) {
    if (a.start_time_ms == b.start_time_ms) return "";
    return fmt::format(
        "{} started again between them ({} apart): another process with its pid", Process(b),
        FormatSpan(static_cast<double>(std::abs(b.start_time_ms - a.start_time_ms)) / 1000));
  }
  // Without a start time a reused pid is told apart by what it runs, at least.
  if (!a.exe.empty() && !b.exe.empty() && a.exe != b.exe) {
    return fmt::format("pid {} runs {} in the base and {} in the new snapshot", a.pid, a.exe,
                       b.exe);
  }
  if (!a.comm.empty() && !b.comm.empty() && a.comm != b.comm) {
    return fmt::format("pid {} is {} in the base and {} in the new snapshot", a.pid, a.comm,
                       b.comm);
  }
  return "";
}

std::optional<int64_t> EndAnon(const HeapSnapshot& s) {
  if (s.rss.empty()) return std::nullopt;
  return s.rss.back().anon_bytes;
}

double MeanObjectBytes(const SiteChange& c) {
  for (const std::optional<SiteInWindow>& w : {c.now, c.base}) {
    if (w && w->live_allocs > 0 && w->live_bytes > 0) {
      return static_cast<double>(w->live_bytes) / static_cast<double>(w->live_allocs);
    }
  }
  return 0;
}

std::string SignedBytes(int64_t bytes) {
  return fmt::format("{}{}", bytes < 0 ? "-" : "+",
                     FormatBytes(static_cast<uint64_t>(std::abs(bytes))));
}

std::string Summarize(const SnapshotDiff& diff) {
  const double seconds = static_cast<double>(diff.now_end_ms - diff.base_end_ms) / 1000;
  std::string rss;
  if (diff.base_anon_bytes && diff.now_anon_bytes) {
    rss = fmt::format("; anon RSS went from {} to {} ({})",
                      FormatBytes(static_cast<uint64_t>(*diff.base_anon_bytes)),
                      FormatBytes(static_cast<uint64_t>(*diff.now_anon_bytes)),
                      SignedBytes(*diff.now_anon_bytes - *diff.base_anon_bytes));
  }
  if (diff.sites.empty() || diff.sites.front().grew_bytes <= 0) {
    return fmt::format(
        "Nothing grew in the {} between the snapshots: no site was growing in either window{}",
        FormatSpan(seconds), rss);
  }
  const SiteChange& top = diff.sites.front();
  const std::string where =
      top.frames.empty() ? std::string("<allocator frames only>") : FrameLabel(top.frames.front());
  const std::string verdict(VerdictName(top.now ? top.now->verdict : top.base->verdict));
  const size_t growing = static_cast<size_t>(std::count_if(
      diff.sites.begin(), diff.sites.end(), [](const SiteChange& c) { return c.grew_bytes > 0; }));
  std::string others;
  if (growing > 1) {
    others = fmt::format(", of about {} that {} sites grew",
                         FormatBytes(static_cast<uint64_t>(diff.grew_bytes)), growing);
  }
  return fmt::format("In the {} between the snapshots, {} grew the most: about {} ({} now){}{}",
                     FormatSpan(seconds), where, FormatBytes(static_cast<uint64_t>(top.grew_bytes)),
                     verdict, others, rss);
}

}  // namespace

absl::StatusOr<SnapshotDiff> DiffSnapshots(const HeapSnapshot& base,
                                           const Diagnosis& base_diagnosis, const HeapSnapshot& now,
                                           const Diagnosis& now_diagnosis) {
  if (std::string why = WhyNotOneInstance(base.target, now.target); !why.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("not one process: {}; a diff compares two snapshots of the same process "
                    "instance",
                    why));
  }
  if (now.end_ms == base.end_ms) {
    return absl::InvalidArgumentError(
        "the two snapshots end at the same time: a diff needs the new one to end later");
  }
  if (now.end_ms < base.end_ms) {
    return absl::InvalidArgumentError(fmt::format(
        "the new snapshot ends {} before the base does: give the earlier snapshot as the base",
        FormatSpan(static_cast<double>(base.end_ms - now.end_ms) / 1000)));
  }
  SnapshotDiff diff;
  diff.base_end_ms = base.end_ms;
  diff.now_end_ms = now.end_ms;
  diff.base_anon_bytes = EndAnon(base);
  diff.now_anon_bytes = EndAnon(now);
  const double hours = static_cast<double>(now.end_ms - base.end_ms) / kMillisPerHour;

  std::map<std::string, WindowSite> before = SitesOf(base, base_diagnosis);
  std::map<std::string, WindowSite> after = SitesOf(now, now_diagnosis);
  for (auto& [key, w] : after) {
    SiteChange& c = diff.sites.emplace_back();
    c.frames = std::move(w.frames);
    c.now = w.site;
    if (auto it = before.find(key); it != before.end()) {
      c.base = it->second.site;
      before.erase(it);
    }
  }
  for (auto& [key, w] : before) {
    SiteChange& c = diff.sites.emplace_back();
    c.frames = std::move(w.frames);
    c.base = w.site;
  }
  for (SiteChange& c : diff.sites) {
    const SiteInWindow none;
    const SiteInWindow& b = c.base ? *c.base : none;
    const SiteInWindow& n = c.now ? *c.now : none;
    c.grew_bytes = (b.sustained_bytes_per_hour + n.sustained_bytes_per_hour) / 2 * hours;
    c.allocated_bytes = (b.allocated_bytes_per_hour + n.allocated_bytes_per_hour) / 2 * hours;
    if (const double mean = MeanObjectBytes(c); mean > 0) {
      c.grew_objects = c.grew_bytes / mean;
      c.allocated_objects = c.allocated_bytes / mean;
    }
    diff.grew_bytes += c.grew_bytes;
  }
  std::stable_sort(diff.sites.begin(), diff.sites.end(),
                   [](const SiteChange& a, const SiteChange& b) {
                     if (a.grew_bytes != b.grew_bytes) return a.grew_bytes > b.grew_bytes;
                     const int64_t a_live = a.now ? a.now->live_bytes : 0;
                     const int64_t b_live = b.now ? b.now->live_bytes : 0;
                     return a_live > b_live;
                   });
  diff.summary = Summarize(diff);
  return diff;
}

}  // namespace drip::diagnoser
