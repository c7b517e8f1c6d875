#include "diagnoser/stack_evidence.h"

#include <algorithm>
#include <cmath>

#include "diagnoser/live_series.h"
#include "diagnoser/trend.h"

namespace drip::diagnoser {
namespace {

constexpr double kMaxRatio = 10;

// The p of an object whose sampled weight s/p is `w`: solves x / (1 - e^-x) = w/T for
// x = s/T by bisection (the left side rises from 1 at x = 0 to x for large x).
double SampleProbabilityOfWeight(double w, double T) {
  const double r = w / T;
  if (r <= 1) return 0;
  double lo = 0, hi = r + 1;
  for (int i = 0; i < 60; ++i) {
    const double x = (lo + hi) / 2;
    const double f = x / -std::expm1(-x);
    (f < r ? lo : hi) = x;
  }
  return -std::expm1(-(lo + hi) / 2);
}

double MeanOf(const std::vector<double>& y, size_t begin, size_t end) {
  if (begin >= end) return 0;
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += y[i];
  return sum / static_cast<double>(end - begin);
}

// The oldest quarter's survival counts as falling below the next quarter's only when it
// is clearly lower, not merely a significant hair lower: a leak among long-lived churn
// keeps most of its rate at the oldest ages the window sees.
constexpr double kMaterialSurvivalRatio = 0.9;
// This test only holds a `leak` verdict back (and the window then extends itself), so it
// takes a lower bar than a claim: two standard deviations, not noise_sigmas. A cache's
// small index nodes, a few dozen sampled, show their oldest dying at 2-3 sigma.
constexpr double kSurvivalSigmas = 2;

// The share of the sampled objects live at the end that were allocated in the window's
// first half, by allocation cohort (-1: no cohorts recorded, or nothing live).
double LiveShareFromFirstHalf(const SnapshotStack& stack) {
  const size_t n = stack.cohorts.size();
  if (n < 2) return -1;
  double first = 0, all = 0;  // doubles: hostile counts near INT64_MAX must not wrap
  for (size_t i = 0; i < n; ++i) {
    const double live = static_cast<double>(std::max<int64_t>(stack.cohorts[i].live, 0));
    all += live;
    if (i < n / 2) first += live;
  }
  return all > 0 ? first / all : -1;
}

void SurvivalByAge(const SnapshotStack& stack, const DiagnoserConfig& config, StackEvidence* e) {
  const size_t n = stack.cohorts.size();
  if (n < 4) return;
  // Quarters [from, to) of the window by allocation time, summed in doubles: counts near
  // INT64_MAX (a corrupt or hostile snapshot passes validation with them) must not wrap.
  struct Quarter {
    double allocs = 0, live = 0;
  };
  auto quarters = [&](size_t from, size_t to) {
    Quarter sum;
    for (size_t i = from * n / 4; i < to * n / 4; ++i) {
      sum.allocs += static_cast<double>(stack.cohorts[i].allocs);
      sum.live += static_cast<double>(stack.cohorts[i].live);
    }
    return sum;
  };
  // The oldest quarter against the two after it (the youngest still holds objects that a
  // leak's short-lived siblings have not freed yet): twice the objects to compare with,
  // and twice the age gap, as a single next quarter would give.
  const Quarter oldest = quarters(0, 1), next = quarters(1, 3);
  const double min_allocs = static_cast<double>(std::max<int64_t>(1, config.min_sampled_allocs));
  if (oldest.allocs < min_allocs || next.allocs < min_allocs) return;
  const double n0 = oldest.allocs, n1 = next.allocs;
  e->oldest_survival = oldest.live / n0;
  e->next_survival = next.live / n1;
  // Two proportions: each object of a quarter survived or not, independently.
  const double pooled = (oldest.live + next.live) / (n0 + n1);
  const double sigma = std::sqrt(std::max(0.0, pooled * (1 - pooled)) * (1 / n0 + 1 / n1));
  e->oldest_still_dying = e->oldest_survival < kMaterialSurvivalRatio * e->next_survival &&
                          e->next_survival - e->oldest_survival >= kSurvivalSigmas * sigma;
}

}  // namespace

StackEvidence MeasureStack(const SnapshotStack& stack, const SnapshotWindow& window,
                           const DiagnoserConfig& config) {
  StackEvidence e;
  e.sampled_allocs = stack.sampled_allocs;
  e.allocated_bytes = stack.allocated_bytes;
  e.freed_bytes = stack.freed_bytes;
  e.window_ms = static_cast<double>(std::max<int64_t>(window.end_ms - window.start_ms, 1));
  if (!stack.series.empty()) {
    e.live_bytes = stack.series.back().live_bytes;
    e.live_allocs = stack.series.back().live_allocs;
  }

  // Hours since the first read-out keep the fits well conditioned.
  const std::vector<int64_t>& times = window.times;
  const std::vector<double> y = LiveBytesAt(stack.series, times);
  std::vector<double> t(times.size());
  for (size_t i = 0; i < times.size(); ++i) {
    t[i] = static_cast<double>(times[i] - times.front()) / kMsPerHour;
  }
  const size_t n = y.size();
  e.points = n;
  if (n > 0) {
    const size_t k = std::max<size_t>(1, n / 12);
    e.start_level = MeanOf(y, 0, k);
    e.end_level = MeanOf(y, n - k, n);
    e.mean_level = MeanOf(y, 0, n);
    e.peak_level = *std::max_element(y.begin(), y.end());
    e.net_rise = e.end_level - e.start_level;
  }

  // Freed fraction; frees of objects from before the window can exceed what it allocated.
  if (stack.allocated_bytes > 0) {
    e.freed_fraction = std::clamp(
        static_cast<double>(stack.freed_bytes) / static_cast<double>(stack.allocated_bytes), 0.0,
        1.0);
  } else {
    e.freed_fraction = stack.freed_bytes > 0 ? 1.0 : 0.0;
  }
  // Little's law: mean live = allocation rate × mean lifetime, so lifetime / window =
  // mean live / bytes allocated in the window.
  e.lifetime_fraction = stack.allocated_bytes > 0
                            ? e.mean_level / static_cast<double>(stack.allocated_bytes)
                            : kMaxRatio;

  const double startup_end =
      static_cast<double>(window.start_ms) + config.startup_window_fraction * e.window_ms;
  e.allocated_early = stack.last_alloc_ms != 0
                          ? static_cast<double>(stack.last_alloc_ms) <= startup_end
                          : stack.sampled_allocs == 0;

  // Sampling noise. An s-byte object is sampled with p = 1 - exp(-s/T) and then counts
  // w = s/p bytes, with variance w²(1-p); B bytes of such objects (B/w of them) carry a
  // variance of B·u, u = w(1-p): about T for small objects, ~0 for objects far above T,
  // which are sampled for sure. u also serves as "one sampled object's worth" below.
  // Under attach mode's duty cycle an object is seen only if allocated while sampling, a
  // share d of the time: with probability p·d, counting s/(p·d). The mean weight then
  // tells p once d is taken out of it, and u = w(1 - p·d): even an object far above T is
  // a draw (u ≈ w(1-d)), and a small one weighs T/d. Taking w for s/p here instead would
  // read a duty-cycled small object as a large one sampled for sure, and the noise as ~0.
  const double T = static_cast<double>(window.sampling_mean_bytes);
  const double d = std::clamp(window.sampled_fraction, 0.01, 1.0);
  if (T > 0 || d < 1) {
    double w = T / d;
    if (stack.sampled_allocs > 0 && stack.allocated_bytes > 0) {
      w = std::max(w, static_cast<double>(stack.allocated_bytes) /
                          static_cast<double>(stack.sampled_allocs));
    }
    const double p = T > 0 ? SampleProbabilityOfWeight(w * d, T) : 1.0;
    e.noise_unit = w * (1 - p * d);
  }
  const double w = e.noise_unit;
  const double level_needed =
      std::max(static_cast<double>(config.min_rise_bytes), config.min_rise_samples * w);
  e.significant_level = e.peak_level >= level_needed;
  e.enough_samples = stack.sampled_allocs >= config.min_sampled_allocs;

  SurvivalByAge(stack, config, &e);

  if (n < 2) {
    e.rise_needed = level_needed;
    return e;
  }
  const double span_h = t.back();
  const double trend = TheilSenSlope(t, y, config.max_trend_points);
  e.growth_bytes_per_hour = trend;
  e.rise = std::min(e.net_rise, trend * span_h);

  // Sampling noise of the rise: the objects that came (and stayed) or went (of those
  // there at the start) in the window each carry a Poisson count's noise; objects there
  // throughout were sampled once, before, and add none.
  const double churn =
      std::min(static_cast<double>(stack.allocated_bytes), std::max(e.end_level, 0.0)) +
      std::min(static_cast<double>(stack.freed_bytes), std::max(e.start_level, 0.0));
  e.rise_needed = std::max(level_needed, config.noise_sigmas * std::sqrt(churn * w));
  e.significant_growth = n >= 3 && e.enough_samples && e.rise > 0 && e.rise >= e.rise_needed;

  const LineFit whole = FitLine(t, y, 0, n);
  e.steadiness = whole.r2;

  // Slopes over the first two thirds and the last third of the read-outs' span.
  const double split = span_h * 2.0 / 3.0;
  const size_t split_index =
      static_cast<size_t>(std::lower_bound(t.begin(), t.end(), split) - t.begin());
  const LineFit early = FitLine(t, y, 0, std::min(split_index + 1, n));
  const LineFit late = FitLine(t, y, std::min(split_index, n - 1), n);
  if (early.points >= 2 && late.points >= 2) {
    e.early_slope = early.slope;
    e.late_slope = late.slope;
    if (early.slope > 0) {
      e.recent_growth_ratio = std::clamp(late.slope / early.slope, -kMaxRatio, kMaxRatio);
    } else {
      e.recent_growth_ratio = late.slope > 0 ? kMaxRatio : 0;
    }
    // Levelled off: the last third added clearly less than the earlier pace predicts,
    // by more than the Poisson noise of the predicted count of sampled objects.
    const double late_h = span_h - split;
    const double expected = early.slope * late_h;
    const double observed = late.slope * late_h;
    e.levelled_off = early.slope > 0 && observed < config.level_off_ratio * expected &&
                     expected - observed >= config.noise_sigmas * std::sqrt(expected * w);
  } else {
    e.recent_growth_ratio = 1;
  }
  if (n >= 3) {
    // Still growing: what the second half added, against the noise it would show if the
    // stack had stopped growing — a structure at capacity replacing what it holds, its
    // departures matched by as many arrivals, each a Poisson count of sampled objects:
    // variance 2 × departures × u. Departures are the bytes freed in the second half (the
    // window's frees taken as spread evenly over it), at most what was live at the half.
    // A stack that frees nothing cannot be replacing anything, so whatever it still adds
    // is growth; a cache at capacity replaces, and only by chance adds noise_sigmas
    // standard deviations. (Half, not the last third: as many sampled
    // objects as possible, where few are what makes it a question.) The rise is measured
    // between the read-outs at the half and at the end: each is a count of sampled
    // objects, and their difference is what the Poisson noise describes (a slope through
    // a step function is noisier, and averaged levels shorten the span).
    const size_t from =
        static_cast<size_t>(std::lower_bound(t.begin(), t.end(), span_h / 2) - t.begin());
    const double half_level = std::max(0.0, y[from]);
    const double end_point = std::max(0.0, y[n - 1]);
    const double half_share = span_h > 0 ? (t[n - 1] - t[from]) / span_h : 0;
    // For a churning site (it frees more than max_leak_freed_fraction of what it
    // allocates), only what was live at the half can have been replaced, and what of it is
    // still live at the end was not: one that keeps one request's context in fifty frees
    // plenty, but of objects born and freed within the half, while its kept ones stay.
    // (Counted as a cache's replacements, its churn set the bar at 3 sigma of half its
    // level, and 64 s of such a leak read as "may have filled".) Not for the rest: a
    // garbage-collected heap between two collections (redis's Lua, 16-byte objects,
    // 26 % freed) keeps its first half too, and its next collection is what the bar is for.
    double replaceable = half_level;
    const double kept_share = LiveShareFromFirstHalf(stack);
    if (e.freed_fraction > config.max_leak_freed_fraction && kept_share >= 0) {
      replaceable = std::max(0.0, half_level - end_point * kept_share);
    }
    const double departures =
        std::min(static_cast<double>(stack.freed_bytes) * half_share, replaceable);
    e.second_half_rise = end_point - half_level;
    e.second_half_rise_needed = config.noise_sigmas * std::sqrt(2 * departures * w);
    e.still_growing = e.second_half_rise > 0 && e.second_half_rise >= e.second_half_rise_needed;
  }
  return e;
}

}  // namespace drip::diagnoser
