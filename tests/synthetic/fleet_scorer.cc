#include "tests/synthetic/fleet_scorer.h"

#include <algorithm>
#include <set>

#include "fmt/format.h"

namespace drip::synthetic {
namespace {
double Ratio(int a, int b) { return b == 0 ? 1.0 : static_cast<double>(a) / b; }
}  // namespace

double Confusion::precision() const {
  return Ratio(true_positives, true_positives + false_positives);
}
double Confusion::recall() const { return Ratio(true_positives, true_positives + false_negatives); }
double Confusion::f1() const {
  const double p = precision();
  const double r = recall();
  return p + r == 0 ? 0 : 2 * p * r / (p + r);
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

FleetScore ScoreFleet(const std::vector<SeriesSpec>& series, const std::vector<Flag>& flags) {
  std::map<std::pair<std::string, std::string>, int64_t> flagged;
  for (const Flag& flag : flags) {
    auto key = std::make_pair(flag.host, flag.component);
    auto it = flagged.find(key);
    if (it == flagged.end() || flag.first_flagged < it->second) flagged[key] = flag.first_flagged;
  }
  FleetScore score;
  std::map<std::string, bool> component_leaks;
  std::map<std::string, bool> component_flagged;
  std::map<std::string, bool> component_flagged_wrongly;
  auto mistake = [&](const std::string& text) {
    if (score.mistakes.size() < 400) score.mistakes.push_back(text);
  };
  for (const SeriesSpec& s : series) {
    auto it = flagged.find({s.host, s.component});
    const bool is_flagged = it != flagged.end();
    // A flag before the leak began was not about the leak.
    const bool in_time = is_flagged && (!s.leaking || it->second >= s.leak_start_s);
    component_leaks[s.component] = component_leaks[s.component] || s.leaking;
    component_flagged[s.component] = component_flagged[s.component] || is_flagged;
    if (s.leaking) {
      LeakOutcome& leak = score.leaks.emplace_back();
      leak.behaviour = s.behaviour;
      leak.bytes_per_hour = s.leak_bytes_per_hour;
      leak.fraction_per_hour = s.leak_bytes_per_hour / static_cast<double>(s.base_bytes);
      leak.running_at_start = s.leak_start_s < s.first_sample_s;
      leak.found = in_time;
      leak.delay_s =
          in_time ? static_cast<double>(it->second - std::max(s.leak_start_s, s.first_sample_s))
                  : 0;
      leak.first_oom_s = s.oom_kills_s.empty() ? -1 : s.oom_kills_s.front();
      leak.seen_from_s = std::max(s.leak_start_s, s.first_sample_s);
      leak.flagged_s = is_flagged ? it->second : -1;
    }
    if (s.leaking && in_time) {
      ++score.per_series.true_positives;
      // From when it could first be seen: a leak already running when watching began
      // is timed from then.
      const double delay =
          static_cast<double>(it->second - std::max(s.leak_start_s, s.first_sample_s));
      score.delays_by_behaviour[s.behaviour].push_back(delay);
      if (s.leak_bytes_per_hour <= 1024.0 * 1024.0) score.slow_leak_delays.push_back(delay);
    } else if (s.leaking) {
      ++score.per_series.false_negatives;
      ++score.false_negatives_by_behaviour[s.behaviour];
      if (is_flagged) {
        ++score.per_series.false_positives;
        ++score.false_positives_by_behaviour[s.behaviour];
      }
      mistake(fmt::format("missed {} on {} ({}, {:.1f} MiB/h{})", s.component, s.host,
                          BehaviourName(s.behaviour), s.leak_bytes_per_hour / 1048576.0,
                          is_flagged ? ", flagged before the leak began" : ""));
    } else if (is_flagged) {
      ++score.per_series.false_positives;
      ++score.false_positives_by_behaviour[s.behaviour];
      component_flagged_wrongly[s.component] = true;
      mistake(fmt::format("false alarm {} on {} ({}) at +{:.1f} h", s.component, s.host,
                          BehaviourName(s.behaviour), (it->second - s.first_sample_s) / 3600.0));
    } else {
      ++score.per_series.true_negatives;
    }
    if (s.leaking && s.leak_bytes_per_hour <= 1024.0 * 1024.0) ++score.slow_leaks;
  }
  for (const auto& [component, leaks] : component_leaks) {
    const bool is_flagged = component_flagged[component];
    if (leaks && is_flagged) {
      ++score.per_component.true_positives;
    } else if (leaks) {
      ++score.per_component.false_negatives;
    } else if (is_flagged) {
      ++score.per_component.false_positives;
    } else {
      ++score.per_component.true_negatives;
    }
  }
  return score;
}

}  // namespace drip::synthetic
