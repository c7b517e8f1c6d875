#include "diagnoser/heap_diagnoser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/base/duration.h"
#include "diagnoser/live_series.h"
#include "diagnoser/stack_evidence.h"
#include "diagnoser/stack_merge.h"
#include "diagnoser/trend.h"
#include "fmt/format.h"

namespace drip::diagnoser {
namespace {

constexpr size_t kMaxGridPoints = 1024;

std::string Bytes(double bytes) {
  return FormatBytes(static_cast<uint64_t>(std::llround(std::max(bytes, 0.0))));
}

// Object lifetimes run from microseconds to days.
std::string Lifetime(double seconds) {
  if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1000);
  return FormatSpan(seconds);
}

std::string Percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100); }

// Trend of the target's anonymous memory (bytes/h); 0 without two read-outs.
double RssGrowthPerHour(const HeapSnapshot& snapshot, int max_points) {
  if (snapshot.rss.size() < 2) return 0;
  std::vector<double> t, y;
  t.reserve(snapshot.rss.size());
  y.reserve(snapshot.rss.size());
  for (const RssPoint& p : snapshot.rss) {
    t.push_back(static_cast<double>(p.t_ms - snapshot.rss.front().t_ms) / kMsPerHour);
    y.push_back(static_cast<double>(p.anon_bytes));
  }
  return TheilSenSlope(t, y, max_points);
}

// How the last third's growth compares with the first two thirds'.
std::string Pace(const StackEvidence& e) {
  if (e.early_slope <= 0) return "growth began in the last third of the window";
  return fmt::format("last third at {:.2f}x the earlier pace", e.recent_growth_ratio);
}

struct Judgement {
  Verdict verdict = Verdict::kTransient;
  std::string reason;
  // Grew steadily and never levelled off, but freed most of what it allocated: a leak on
  // one path of a churning site, or a structure still filling. What the process (or the
  // component, over hours) grew by decides (NameTheStacksThatHoldTheGrowth).
  bool grew_while_churning = false;
};

Judgement Judge(const StackEvidence& e, const DiagnoserConfig& c, int64_t window_start_ms,
                int64_t last_alloc_ms) {
  const std::string span = FormatSpan(e.window_ms / 1000);
  const std::string freed = Percent(e.freed_fraction);
  const std::string lifetime = Lifetime(std::min(e.lifetime_fraction, 1e6) * e.window_ms / 1000);
  auto startup_reason = [&] {
    if (last_alloc_ms == 0 || last_alloc_ms < window_start_ms) {
      return fmt::format(
          "allocated before the window and held since ({} live, no allocation in "
          "the window)",
          Bytes(static_cast<double>(e.live_bytes)));
    }
    return fmt::format(
        "allocated {} at the start (last allocation {} into the window) and "
        "held since; {} freed",
        Bytes(e.peak_level),
        FormatSpan(static_cast<double>(last_alloc_ms - window_start_ms) / 1000), freed);
  };

  if (e.significant_growth) {
    const std::string grew = fmt::format("grew {} over {} ({})", Bytes(e.net_rise), span,
                                         FormatByteRate(e.growth_bytes_per_hour));
    if (e.levelled_off) {
      if (e.allocated_early) return {Verdict::kStartup, startup_reason()};
      return {Verdict::kCache,
              fmt::format("{} then levelled off ({}), {} live at the end; {} of what it "
                          "allocated was freed",
                          grew, Pace(e), Bytes(static_cast<double>(e.live_bytes)), freed)};
    }
    if (e.steadiness < c.min_leak_steadiness) {
      if (e.allocated_early) return {Verdict::kStartup, startup_reason()};
      return {Verdict::kCache,
              fmt::format("{} but not steadily (R² {:.2f} below {:.2f}): a step up, not a "
                          "sustained trend",
                          grew, e.steadiness, c.min_leak_steadiness)};
    }
    if (!e.still_growing) {
      if (e.allocated_early) return {Verdict::kStartup, startup_reason()};
      // A structure that filled earlier in the window added clearly less in the second
      // half than its pace predicts; one that merely lacks the samples to show its second
      // half stand out of the noise may still be growing, and is not called a cache.
      const double predicted = std::max(e.rise, 0.0) / 2;
      if (e.second_half_rise >= c.level_off_ratio * predicted) {
        return {Verdict::kInconclusive,
                fmt::format("{} but what it added in the second half ({}) does not stand out "
                            "of the sampling noise ({} needed): it may still be growing or "
                            "have filled; {} freed; {} sampled allocations",
                            grew, Bytes(e.second_half_rise), Bytes(e.second_half_rise_needed),
                            freed, e.sampled_allocs)};
      }
      return {Verdict::kCache,
              fmt::format("{} but what it added in the second half ({}) does not stand out "
                          "of the sampling noise ({} needed): it cannot be told from a "
                          "structure that filled earlier in the window; {} freed; {} sampled "
                          "allocations",
                          grew, Bytes(e.second_half_rise), Bytes(e.second_half_rise_needed), freed,
                          e.sampled_allocs)};
    }
    if (e.freed_fraction > c.max_leak_freed_fraction) {
      // Not a cache until it levels off: nothing in the window shows a bound.
      return {Verdict::kInconclusive,
              fmt::format("{} while freeing {} of what it allocated (above {}): a bounded "
                          "structure still filling, a queue backing up or a leak among churn; "
                          "it has not levelled off in the window",
                          grew, freed, Percent(c.max_leak_freed_fraction)),
              /*grew_while_churning=*/true};
    }
    if (e.oldest_still_dying) {
      // Turnover, not (yet) growth: a snapshot begun after a structure filled tracks only
      // what arrives, so a cache replacing its contents rises in it until its oldest
      // objects are the window's own. A leak keeps its survivors at every age.
      return {Verdict::kInconclusive,
              fmt::format("{}, but its oldest objects are still being freed: {} of those "
                          "allocated in the window's first quarter are live at the end, "
                          "against {} of the next two quarters'; a structure replacing what it "
                          "holds (a cache at capacity) or a leak among longer-lived objects; "
                          "a longer window tells",
                          grew, Percent(e.oldest_survival), Percent(e.next_survival))};
    }
    return {Verdict::kLeak,
            fmt::format("{}, steadily (R² {:.2f}) and not levelling off ({}); {} of the bytes it "
                        "allocated were freed; {} sampled allocations",
                        grew, e.steadiness, Pace(e), freed, e.sampled_allocs)};
  }

  // No growth that stands out of the sampling noise.
  std::string noise;
  if (e.rise > 0 && e.growth_bytes_per_hour > 0) {
    noise = e.enough_samples
                ? fmt::format(" (its rise of {} is within the sampling noise: {} needed)",
                              Bytes(e.rise), Bytes(e.rise_needed))
                : fmt::format(" (too few sampled allocations to call a trend: {} of {})",
                              e.sampled_allocs, c.min_sampled_allocs);
  }
  if (e.allocated_early && e.live_bytes > 0 && e.freed_fraction < 0.5) {
    return {Verdict::kStartup, startup_reason() + noise};
  }
  // Kept what it allocated all through the window, but too thinly sampled to call a
  // trend: what a slow leak looks like in a short or sparse snapshot. Saying "transient"
  // or "cache" here would claim what the window did not show.
  // (The net rise, not the trend: a few sampled objects make a staircase whose median
  // slope is often 0.)
  const bool thin = !e.enough_samples || (e.still_growing && !e.levelled_off);
  if (thin && e.net_rise > 0 && e.sampled_allocs >= 2 && !e.allocated_early &&
      e.freed_fraction <= c.max_leak_freed_fraction &&
      e.lifetime_fraction > c.transient_max_lifetime_fraction) {
    return {
        Verdict::kInconclusive,
        fmt::format("grew {} over {} ({}), keeping {} of what it allocated, but from {} "
                    "sampled allocations: too few to tell a trend from sampling noise "
                    "({} needed)",
                    Bytes(e.net_rise), span, FormatByteRate(e.net_rise * kMsPerHour / e.window_ms),
                    Percent(1 - e.freed_fraction), e.sampled_allocs,
                    e.enough_samples ? Bytes(e.rise_needed)
                                     : fmt::format("{} sampled allocations and {}",
                                                   c.min_sampled_allocs, Bytes(e.rise_needed)))};
  }
  if (e.lifetime_fraction <= c.transient_max_lifetime_fraction) {
    return {Verdict::kTransient,
            fmt::format("frees {} of what it allocates; objects live about {} on average, {} "
                        "live at the end{}",
                        freed, lifetime, Bytes(static_cast<double>(e.live_bytes)), noise)};
  }
  if (!e.significant_level) {
    return {Verdict::kTransient,
            fmt::format("too little to judge: {} sampled allocations and at most {} live, below "
                        "the noise level of {}",
                        e.sampled_allocs, Bytes(e.peak_level),
                        Bytes(std::max(static_cast<double>(c.min_rise_bytes),
                                       c.min_rise_samples * e.noise_unit)))};
  }
  return {Verdict::kCache,
          fmt::format("held about {} while allocating {} and freeing {} in the window (objects "
                      "live about {} on average){}",
                      Bytes(e.mean_level), Bytes(static_cast<double>(e.allocated_bytes)),
                      Bytes(static_cast<double>(e.freed_bytes)), lifetime, noise)};
}

double Score(const StackEvidence& e, double reference_growth, const DiagnoserConfig& c) {
  if (e.rise <= 0 || e.growth_bytes_per_hour <= 0 || e.rise_needed <= 0) return 0;
  double evidence = std::min(1.0, e.rise / e.rise_needed);
  if (!e.enough_samples && c.min_sampled_allocs > 0) {
    evidence *= static_cast<double>(e.sampled_allocs) / static_cast<double>(c.min_sampled_allocs);
  }
  const double share =
      reference_growth > 0 ? std::min(1.0, e.growth_bytes_per_hour / reference_growth) : 0;
  const double steadiness = std::clamp(e.steadiness, 0.0, 1.0);
  const double not_levelling = std::clamp(e.recent_growth_ratio, 0.0, 1.0);
  const double never_freed = 1 - e.freed_fraction;
  const double total =
      c.weight_share + c.weight_steadiness + c.weight_not_levelling + c.weight_never_freed;
  if (total <= 0) return 0;
  const double mix = (c.weight_share * share + c.weight_steadiness * steadiness +
                      c.weight_not_levelling * not_levelling + c.weight_never_freed * never_freed) /
                     total;
  return std::clamp(evidence * mix, 0.0, 1.0);
}

std::string TopFrameLabel(const DiagnosedStack& s) {
  return s.frames.empty() ? std::string("<allocator frames only>") : FrameLabel(s.frames.front());
}

// Whether the target's anonymous memory still rose over the second half of the window:
// its Theil–Sen slope there × the half's span at least min_rise_bytes and three times the
// scatter of the read-outs around that line (robust: 1.4826 × median absolute
// deviation). The second half, so that a structure that filled early in the window and
// then held does not count; against its own scatter, so that a churning heap's noise does
// not either, while a quiet process's page-exact growth of a few hundred KiB does.
// The target's anonymous memory from `from_ms` on: its Theil–Sen rise over that span and
// its robust scatter about the trend (1.4826 × the median absolute deviation).
struct AnonTrend {
  size_t points = 0;
  double rise = 0;
  double sigma = 0;
};

AnonTrend AnonTrendSince(const HeapSnapshot& snapshot, int64_t from_ms, int max_points) {
  AnonTrend trend;
  std::vector<double> t, y;
  for (const RssPoint& p : snapshot.rss) {
    if (p.t_ms < from_ms) continue;
    t.push_back(static_cast<double>(p.t_ms - from_ms) / kMsPerHour);
    y.push_back(static_cast<double>(p.anon_bytes));
  }
  trend.points = t.size();
  if (t.size() < 3) return trend;
  const double slope = TheilSenSlope(t, y, max_points);
  std::vector<double> residual(t.size());
  for (size_t i = 0; i < t.size(); ++i) residual[i] = y[i] - slope * t[i];
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const double center = median(residual);
  for (double& r : residual) r = std::abs(r - center);
  trend.sigma = 1.4826 * median(residual);
  trend.rise = slope * t.back();
  return trend;
}

bool RssStillRising(const HeapSnapshot& snapshot, int max_points, double min_rise) {
  if (snapshot.rss.size() < 4) return false;
  const int64_t t0 = snapshot.rss.front().t_ms, t1 = snapshot.rss.back().t_ms;
  const AnonTrend late = AnonTrendSince(snapshot, t0 + (t1 - t0) / 2, max_points);
  return late.points >= 3 && late.rise >= std::max(min_rise, 3 * late.sigma);
}

// The most the target's anonymous memory can have risen over the window: the larger of its
// trend's rise and its end levels' difference, plus three times its scatter; -1 without
// enough read-outs to say.
double AnonRiseAllowance(const HeapSnapshot& snapshot, int max_points) {
  const size_t n = snapshot.rss.size();
  if (n < 4) return -1;
  const AnonTrend whole = AnonTrendSince(snapshot, snapshot.rss.front().t_ms, max_points);
  const size_t k = std::max<size_t>(1, n / 12);
  double first = 0, last = 0;
  for (size_t i = 0; i < k; ++i) {
    first += static_cast<double>(snapshot.rss[i].anon_bytes) / static_cast<double>(k);
    last += static_cast<double>(snapshot.rss[n - k + i].anon_bytes) / static_cast<double>(k);
  }
  return std::max({whole.rise, last - first, 0.0}) + 3 * whole.sigma;
}

// Stacks whose growth nothing explains (leaks and undecided ones) that together added
// several times what the whole process did cannot be growing it by that much: most of
// what they added took the place of memory freed in the window by older objects the
// window never saw (a cache at capacity turning over its contents), or filled free heap.
// Such a window mostly tracked long-lived objects replacing older ones, and any stack
// whose objects outlive it looks leaked there — a cache's small index entries as much as
// a leak. Its leaks are held back as inconclusive; a longer window, in which the turnover
// levels off, tells.
constexpr double kMaxStackRiseOverAnonRise = 3;
// The same, for a window whose free probes watched only part of the time (attach mode on
// a target whose frees alone cost most of the budget): an object freed while they were
// off stays counted live, so every long-lived stack rises more than it did. The stacks'
// rise must be about what the process added.
constexpr double kMaxStackRiseOverAnonRiseFreesPartlyWatched = 1.5;

void HoldBackLeaksOfATurnoverWindow(const HeapSnapshot& snapshot,
                                    const std::vector<StackEvidence>& evidence,
                                    const DiagnoserConfig& c, std::vector<DiagnosedStack>* ranked) {
  const double allowance = AnonRiseAllowance(snapshot, c.max_trend_points);
  if (allowance < 0) return;
  double unexplained = 0;
  for (size_t i = 0; i < ranked->size(); ++i) {
    const Verdict v = (*ranked)[i].verdict;
    if (v == Verdict::kLeak || v == Verdict::kInconclusive) {
      unexplained += std::max(0.0, evidence[i].rise);
    }
  }
  const bool frees_partly_watched = snapshot.duty_cycle.free_on_fraction < 1;
  const double most = frees_partly_watched ? kMaxStackRiseOverAnonRiseFreesPartlyWatched
                                           : kMaxStackRiseOverAnonRise;
  if (unexplained <= most * allowance + static_cast<double>(c.min_rise_bytes)) return;
  for (DiagnosedStack& d : *ranked) {
    if (d.verdict != Verdict::kLeak) continue;
    d.verdict = Verdict::kInconclusive;
    d.reason += fmt::format(
        "; but the stacks not explained in this window added {} while the process's anonymous "
        "memory rose at most {}: what they added mostly took the place of older objects the "
        "window never saw (a structure turning over its contents), and objects that outlive "
        "the window look leaked in it{}; a longer window tells",
        Bytes(unexplained), Bytes(allowance),
        frees_partly_watched
            ? fmt::format(", as do those freed while the free probes were off ({:.0f}% of it)",
                          100 * (1 - snapshot.duty_cycle.free_on_fraction))
            : "");
  }
}

// A stack that grows steadily while freeing most of what it allocates is, in the heap
// alone, a leak on one path of a churning site (1 request in 50 keeps its context) or a
// structure still filling. What it grows by against the memory that needs explaining
// decides: the growth the collector's detector measured on the component over hours,
// which a structure still filling does not keep up (it is bounded), or, without it, the
// process's own anonymous memory rising steadily through the window. A stack holding at
// least half of that growth is the leak; the same shape with nothing to explain stays
// inconclusive.
constexpr double kMinShareOfTheGrowth = 0.5;
// Against growth measured over hours, a stack growing many times faster in a minute is a
// burst (a queue backing up), not what the component has been doing.
constexpr double kMaxShareOfMeasuredGrowth = 4;

void NameTheStacksThatHoldTheGrowth(const HeapSnapshot& snapshot, double rss_growth,
                                    bool rss_still_rising, const std::vector<Judgement>& judgements,
                                    std::vector<DiagnosedStack>* ranked) {
  const double measured = snapshot.target.expected_growth_bytes_per_hour;
  double growth = 0;
  std::string what;
  if (measured > 0) {
    growth = measured;
    what = fmt::format("the {} the detector measured on the component over hours",
                       FormatByteRate(measured));
  } else if (rss_growth > 0 && rss_still_rising) {
    growth = rss_growth;
    what = fmt::format("the process's anonymous memory, which rose {} through the window",
                       FormatByteRate(rss_growth));
  }
  if (!(growth > 0)) return;
  for (size_t i = 0; i < ranked->size(); ++i) {
    DiagnosedStack& d = (*ranked)[i];
    if (!judgements[i].grew_while_churning || d.verdict != Verdict::kInconclusive) continue;
    const double share = d.growth_bytes_per_hour / growth;
    if (share < kMinShareOfTheGrowth) continue;
    if (measured > 0 && share > kMaxShareOfMeasuredGrowth) continue;
    d.verdict = Verdict::kLeak;
    d.reason += fmt::format(
        "; but it holds {} of {}: a leak on one path of a churning site (a bounded "
        "structure does not keep that up)",
        Percent(std::min(share, 1.0)), what);
  }
}

// An attach window its CPU budget ended early is as long as the target's frees allowed,
// not as long as was asked, and often too short to see a structure that is still filling
// level off: a cache's inserts grow in it as steadily as a leak (a loaded CI host cut a
// 16 s window of a leak next to a filling cache to 4.6 s, and the cache ranked first as a
// leak). It names no leak; its candidates stay ranked, inconclusive, and the next step is
// the budget that lets the window run.
void HoldBackLeaksOfACutShortWindow(const HeapSnapshot& snapshot,
                                    std::vector<DiagnosedStack>* ranked) {
  if (snapshot.mode != "attach" || snapshot.stop_reason != "budget") return;
  for (DiagnosedStack& d : *ranked) {
    if (d.verdict != Verdict::kLeak) continue;
    d.verdict = Verdict::kInconclusive;
    d.reason += fmt::format(
        "; but the CPU budget ended the window after {}, too soon to tell a leak from a "
        "structure still filling",
        FormatSpan(static_cast<double>(snapshot.end_ms - snapshot.start_ms) / 1000));
  }
}

// A window the agent fell behind on lost the sampled allocations of a stretch of it (its
// ring buffer was full): a gap, not a share of every second. Across it a leak adds
// nothing, so it looks levelled off, as a filled cache does (a target snapshotted while
// the agent was stopped for 9 s of a 12 s window read a leak as a cache). Bounded
// verdicts are then not decided; leaks stand, since a gap only hides growth. A loss below
// this share of what was sampled is too short to shape a window.
constexpr double kMaxLostWhileBehindShare = 0.01;

bool LostAStretchWhileBehind(const HeapSnapshot& snapshot) {
  const double lost = static_cast<double>(snapshot.lost_while_behind);
  return lost > kMaxLostWhileBehindShare * (static_cast<double>(snapshot.sampled_allocs) + lost);
}

void HoldBackBoundsOfAWindowWithAGap(const HeapSnapshot& snapshot,
                                     std::vector<DiagnosedStack>* ranked) {
  if (!LostAStretchWhileBehind(snapshot)) return;
  for (DiagnosedStack& d : *ranked) {
    if (d.verdict != Verdict::kCache) continue;
    d.verdict = Verdict::kInconclusive;
    d.reason += fmt::format(
        "; but the agent fell behind and lost {} sampled allocations of the window: a leak "
        "adds nothing across such a gap, and looks levelled off",
        snapshot.lost_while_behind);
  }
}

struct Conclusion {
  Outcome outcome = Outcome::kNoLeak;
  std::string summary;
  std::string next_step;
};

// Rounds a CPU budget up to the next 0.05 of a core.
double RoundBudgetUp(double fraction) { return std::ceil(fraction * 20 - 1e-9) / 20; }

// The one command that would gather what this snapshot lacked: in attach mode stopped by
// its budget, the budget the probes need; otherwise a longer window (and, when the best
// candidate had few samples, a denser sampling) of the same process.
std::string NextStep(const HeapSnapshot& snapshot, const DiagnosedStack* candidate,
                     const DiagnoserConfig& c, double seconds_needed = 0) {
  const std::string pid =
      snapshot.target.pid > 0 ? std::to_string(snapshot.target.pid) : std::string("PID");
  const double window_s = static_cast<double>(snapshot.end_ms - snapshot.start_ms) / 1000;
  if (snapshot.mode == "attach" && snapshot.stop_reason == "budget") {
    const double needed = std::max(
        {snapshot.duty_cycle.estimated_cpu_fraction * 2, snapshot.duty_cycle.cpu_budget * 2, 0.1});
    return fmt::format("drip-agent snapshot --pid {} --mode attach --cpu-budget {:.2f}", pid,
                       std::min(RoundBudgetUp(needed), 1.0));
  }
  const int64_t duration = std::clamp<int64_t>(
      std::llround(std::max(std::max(window_s, 30.0) * 4, seconds_needed)), 120, 3600);
  std::string command = fmt::format("drip-agent snapshot --pid {} --duration {}", pid, duration);
  // The agent sizes the window and its sampling for the growth the detector measured.
  if (snapshot.target.expected_growth_bytes_per_hour > 0) {
    std::string rate = Bytes(snapshot.target.expected_growth_bytes_per_hour);
    rate.erase(std::remove(rate.begin(), rate.end(), ' '), rate.end());
    command += fmt::format(" --expect-growth {}/h", rate);
  }
  // Attach mode probes the allocator's own entry points that the preload shim cannot see.
  if (snapshot.mode == "preload" && !snapshot.unsampled_calls.empty()) {
    return command + " --mode attach";
  }
  if (!snapshot.mode.empty()) command += " --mode " + snapshot.mode;
  const bool thin = candidate != nullptr && candidate->sampled_allocs < 4 * c.min_sampled_allocs;
  if (snapshot.mode == "attach" && thin && snapshot.sampling_mean_bytes >= 4096) {
    command += fmt::format(" --sample-bytes {}", snapshot.sampling_mean_bytes / 4);
  }
  return command;
}

// What this window could have shown of a leak growing as fast as the collector's detector
// measured on the component: `expected_bytes` in the sampled time, about `expected_samples`
// of it sampled. `seconds_needed` > 0 when that is too little for any stack to be called a
// leak (below min_rise_bytes or min_sampled_allocs): the window a leak of that rate needs,
// with a margin of two for Poisson noise.
struct GrowthResolution {
  double expected_bytes = 0;
  double expected_samples = 0;
  double seconds_needed = 0;
};

std::optional<GrowthResolution> ResolveExpectedGrowth(const HeapSnapshot& snapshot,
                                                      const DiagnoserConfig& c) {
  const double per_second = snapshot.target.expected_growth_bytes_per_hour / 3600;
  if (!(per_second > 0)) return std::nullopt;
  double sampled_fraction = 1;
  if (snapshot.mode == "attach") sampled_fraction = snapshot.duty_cycle.on_fraction;
  const double window_s = static_cast<double>(snapshot.end_ms - snapshot.start_ms) / 1000;
  const double sampled_s = std::max(window_s * sampled_fraction, 0.0);
  const double T = static_cast<double>(snapshot.sampling_mean_bytes);
  GrowthResolution r;
  r.expected_bytes = per_second * sampled_s;
  r.expected_samples = T > 0 ? r.expected_bytes / T : r.expected_bytes;
  const double min_samples = static_cast<double>(std::max<int64_t>(c.min_sampled_allocs, 1));
  const double min_bytes = static_cast<double>(std::max<int64_t>(c.min_rise_bytes, 1));
  if (r.expected_samples >= min_samples && r.expected_bytes >= min_bytes) return r;
  const double sampled_needed =
      2 * std::max(min_bytes, min_samples * std::max(T, 1.0)) / per_second;
  r.seconds_needed = sampled_needed / std::max(sampled_fraction, 1e-3);
  return r;
}

Conclusion Conclude(const std::vector<DiagnosedStack>& ranked, const HeapSnapshot& snapshot,
                    double rss_growth, bool rss_still_rising, const DiagnoserConfig& c) {
  Conclusion out;
  if (ranked.empty() && snapshot.rss.size() < 2) {
    out.summary = "no stacks in the snapshot";
    return out;
  }
  std::array<int, 5> counts{};
  const DiagnosedStack* candidate = nullptr;  // the best-ranked inconclusive stack
  for (const DiagnosedStack& s : ranked) {
    ++counts[static_cast<int>(s.verdict)];
    if (s.verdict == Verdict::kInconclusive && candidate == nullptr) candidate = &s;
  }
  const int leaks = counts[static_cast<int>(Verdict::kLeak)];
  std::vector<std::string> others;
  for (Verdict v :
       {Verdict::kInconclusive, Verdict::kCache, Verdict::kStartup, Verdict::kTransient}) {
    if (counts[static_cast<int>(v)] > 0) {
      others.push_back(fmt::format("{} {}", counts[static_cast<int>(v)], VerdictName(v)));
    }
  }
  const std::string rest =
      others.empty() ? std::string() : fmt::format("; also {}", fmt::join(others, ", "));
  const bool rss_measured = snapshot.rss.size() >= 2;
  const std::string rss = !rss_measured    ? std::string("anon RSS not measured")
                          : rss_growth > 0 ? fmt::format("anon RSS {}", FormatByteRate(rss_growth))
                                           : std::string("anon RSS not growing");
  if (leaks > 0) {
    out.outcome = Outcome::kLeak;
    const DiagnosedStack& top = ranked.front();
    const std::string explained =
        rss_growth > 0
            ? fmt::format(", {} of the {}",
                          Percent(std::min(top.growth_bytes_per_hour / rss_growth, 1.0)), rss)
            : fmt::format(" ({})", rss);
    out.summary =
        fmt::format("{} {}: {} {}{}{}{}", leaks, leaks == 1 ? "leak" : "leaks", TopFrameLabel(top),
                    FormatByteRate(top.growth_bytes_per_hour), explained,
                    leaks > 1 ? fmt::format(" (and {} more)", leaks - 1) : std::string(), rest);
    return out;
  }
  // No leak named. "No leak found" only when nothing the window saw still grows: the
  // process's memory did not rise over the second half and no stack is left undecided.
  // A window the budget cut short has seen too little to rule anything out.
  // Nor while the window is too short, or too thinly sampled, to show the growth the
  // detector measured on the component: a slow leak under heavy churn leaves one or two
  // samples in a minute, which look like nothing.
  const std::optional<GrowthResolution> expected = ResolveExpectedGrowth(snapshot, c);
  const bool unresolved = expected.has_value() && expected->seconds_needed > 0;
  const bool rss_growing = rss_growth > 0 && rss_still_rising;
  const bool cut_short = snapshot.mode == "attach" && snapshot.stop_reason == "budget";
  if (!rss_growing && !cut_short && candidate == nullptr && !unresolved) {
    if (ranked.empty()) {
      out.summary = fmt::format("no stacks in the snapshot ({})", rss);
      return out;
    }
    const std::string unexplained =
        expected.has_value()
            ? fmt::format("; the {} the detector measured is not in the sampled heap",
                          FormatByteRate(snapshot.target.expected_growth_bytes_per_hour))
            : std::string();
    out.summary = fmt::format("no leak found ({}){}{}", rss, rest, unexplained);
    return out;
  }
  out.outcome = Outcome::kInconclusive;
  out.next_step = NextStep(snapshot, candidate, c, unresolved ? expected->seconds_needed : 0);
  std::string why;
  if (cut_short) {
    why = fmt::format("attach mode stopped after {} on its CPU budget ({:.0f}% of a core)",
                      FormatSpan(static_cast<double>(snapshot.end_ms - snapshot.start_ms) / 1000),
                      snapshot.duty_cycle.cpu_budget * 100);
  } else if (candidate != nullptr) {
    why = fmt::format("the best candidate, {} ({} sampled allocations), is not yet decided",
                      TopFrameLabel(*candidate), candidate->sampled_allocs);
  } else if (!unresolved) {
    why = "no sampled stack grows with it";
  }
  if (unresolved) {
    if (!why.empty()) why += "; ";
    why += fmt::format(
        "at the {} the detector measured, this window holds about {} of new memory, {:.1f} "
        "sampled allocations of it: too little to tell a leak that slow from noise",
        FormatByteRate(snapshot.target.expected_growth_bytes_per_hour),
        Bytes(expected->expected_bytes), expected->expected_samples);
  }
  out.summary =
      fmt::format("inconclusive ({}): {}; to decide: {}{}", rss, why, out.next_step, rest);
  return out;
}

}  // namespace

HeapDiagnoser::HeapDiagnoser(DiagnoserConfig config) : config_(std::move(config)) {}

Diagnosis HeapDiagnoser::Diagnose(const HeapSnapshot& snapshot) const {
  Diagnosis diagnosis;
  diagnosis.rss_growth_bytes_per_hour = RssGrowthPerHour(snapshot, config_.max_trend_points);

  std::vector<MergedStack> merged = MergeStacks(snapshot.stacks);
  std::vector<SnapshotStack> stacks;
  stacks.reserve(merged.size());
  for (MergedStack& m : merged) stacks.push_back(std::move(m.stack));

  SnapshotWindow window;
  window.times = CommonTimes(stacks, kMaxGridPoints);
  window.start_ms = snapshot.start_ms;
  window.end_ms = snapshot.end_ms;
  if (window.end_ms <= window.start_ms && !window.times.empty()) {
    window.start_ms = window.times.front();
    window.end_ms = window.times.back();
  }
  window.sampling_mean_bytes = snapshot.sampling_mean_bytes;
  if (snapshot.mode == "attach") window.sampled_fraction = snapshot.duty_cycle.on_fraction;

  std::vector<StackEvidence> evidence;
  evidence.reserve(stacks.size());
  for (const SnapshotStack& s : stacks) evidence.push_back(MeasureStack(s, window, config_));

  // The growth to explain: the process's own, else what the significant stacks add up to.
  double reference = diagnosis.rss_growth_bytes_per_hour;
  if (reference <= 0) {
    reference = 0;
    for (const StackEvidence& e : evidence) {
      if (e.significant_growth && e.growth_bytes_per_hour > 0) reference += e.growth_bytes_per_hour;
    }
  }

  std::vector<DiagnosedStack> ranked;
  ranked.reserve(stacks.size());
  std::vector<Judgement> judgements;
  judgements.reserve(stacks.size());
  for (size_t i = 0; i < stacks.size(); ++i) {
    const StackEvidence& e = evidence[i];
    Judgement& j =
        judgements.emplace_back(Judge(e, config_, window.start_ms, stacks[i].last_alloc_ms));
    DiagnosedStack& d = ranked.emplace_back();
    d.frames = std::move(stacks[i].frames);
    d.live_bytes = e.live_bytes;
    d.live_allocs = e.live_allocs;
    d.growth_bytes_per_hour = e.growth_bytes_per_hour;
    d.score = Score(e, reference, config_);
    d.verdict = j.verdict;
    d.reason = std::move(j.reason);
    if (merged[i].sources > 1) {
      d.reason +=
          fmt::format(" [{} stacks merged after dropping allocator frames]", merged[i].sources);
    }
    d.stack_id = stacks[i].id;
    d.sampled_allocs = e.sampled_allocs;
    d.freed_fraction = e.freed_fraction;
    d.steadiness = e.steadiness;
    d.recent_growth_ratio = e.recent_growth_ratio;
  }
  const bool rss_still_rising = RssStillRising(snapshot, config_.max_trend_points,
                                               static_cast<double>(config_.min_rise_bytes));
  NameTheStacksThatHoldTheGrowth(snapshot, diagnosis.rss_growth_bytes_per_hour, rss_still_rising,
                                 judgements, &ranked);
  HoldBackLeaksOfATurnoverWindow(snapshot, evidence, config_, &ranked);
  HoldBackLeaksOfACutShortWindow(snapshot, &ranked);
  HoldBackBoundsOfAWindowWithAGap(snapshot, &ranked);
  std::sort(ranked.begin(), ranked.end(), [](const DiagnosedStack& a, const DiagnosedStack& b) {
    const bool a_leak = a.verdict == Verdict::kLeak, b_leak = b.verdict == Verdict::kLeak;
    if (a_leak != b_leak) return a_leak;
    if (a.score != b.score) return a.score > b.score;
    if (a.live_bytes != b.live_bytes) return a.live_bytes > b.live_bytes;
    return a.stack_id < b.stack_id;
  });
  Conclusion conclusion =
      Conclude(ranked, snapshot, diagnosis.rss_growth_bytes_per_hour, rss_still_rising, config_);
  diagnosis.outcome = conclusion.outcome;
  diagnosis.summary = std::move(conclusion.summary);
  diagnosis.next_step = std::move(conclusion.next_step);
  // A snapshot blind to some of the program's allocator calls says so in every outcome:
  // what it missed may be the leak, and a block freed through them looks live.
  if (!snapshot.unsampled_calls.empty()) {
    diagnosis.summary += fmt::format("; not sampled: the program's calls to {}",
                                     fmt::join(snapshot.unsampled_calls, ", "));
  }
  if (LostAStretchWhileBehind(snapshot)) {
    diagnosis.summary += fmt::format(
        "; the agent fell behind and lost {} of the window's sampled allocations (its ring "
        "buffer was full)",
        snapshot.lost_while_behind);
  }
  if (config_.max_stacks > 0 && ranked.size() > static_cast<size_t>(config_.max_stacks)) {
    ranked.resize(static_cast<size_t>(config_.max_stacks));
  }
  diagnosis.stacks = std::move(ranked);
  return diagnosis;
}

}  // namespace drip::diagnoser
