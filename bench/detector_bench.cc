// Leak detector quality benchmark: Drip's bucketed detector against the detectors an
// operator would otherwise deploy (static threshold, Prometheus predict_linear, per-series
// linear regression, Mann-Kendall), on the labeled synthetic fleets of
// tests/synthetic/FleetGenerator, all fed the same samples once in time order in one run.
//
//   detector_bench [--profile classic|hard] [--seeds held-out|development|S,S,...]
//                  [--tune-seed S] [--hosts N] [--no-tune | --drip-only] [--days D]
//
// The hard profile's protocol (docs/detector.md, "Evaluation"): the detector and the
// baselines are tuned on development seeds only; what is reported is the held-out seeds
// (the default), which no change may be tuned against, each seed's row and their mean
// and worst. Each baseline is first tuned on a fleet of a different seed (--tune-seed, a
// development seed): every point of a small parameter grid (bench/baselines/
// baseline_grid.cc) is scored and the best per-series F1 is kept. Drip runs with its
// defaults. Prints per-series and per-component precision/recall/F1, detection delays,
// what fooled each detector, and Drip's own throughput (Observe calls only) and state per
// series. Recorded in docs/benchmarks.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "analyzer/detector_config.h"
#include "analyzer/leak_detector.h"
#include "analyzer/rollout_correlation.h"
#include "bench/baselines/baseline_detector.h"
#include "bench/baselines/baseline_grid.h"
#include "common/base/config_reader.h"
#include "fmt/format.h"
#include "tests/synthetic/fleet_generator.h"
#include "tests/synthetic/fleet_scorer.h"

namespace {

using Clock = std::chrono::steady_clock;
using drip::bench::BaselineDetector;
using drip::synthetic::Behaviour;
using drip::synthetic::Flag;
using drip::synthetic::FleetGenerator;
using drip::synthetic::FleetScore;
using drip::synthetic::FleetSpec;
using drip::synthetic::SeriesSpec;

struct Options {
  drip::analyzer::DetectorConfig detector;  // the defaults unless --config says otherwise
  std::string detector_source = "DetectorConfig{} defaults";
  drip::synthetic::Profile profile = drip::synthetic::Profile::kHard;
  std::vector<uint64_t> seeds;
  uint64_t tune_seed = 0;  // 0: the profile's first development seed
  int hosts = 0;           // 0: the suite's own count
  double days = 0;         // 0: the suite's own duration
  bool tune = true;
  bool baselines = true;  // --drip-only: Drip alone, for a quick look while developing
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

FleetSpec SuiteSpec(const Options& opt, uint64_t seed) {
  FleetSpec spec = opt.profile == drip::synthetic::Profile::kHard
                       ? FleetGenerator::HardSuite(seed)
                       : FleetGenerator::BenchmarkSuite(seed);
  if (opt.hosts > 0) spec.hosts = opt.hosts;
  if (opt.days > 0) spec.duration_s = static_cast<int64_t>(opt.days * 86400);
  return spec;
}

// Samples are handed to the detectors in batches, so that Drip's Observe calls can be
// timed as one loop (a clock read per call would cost as much as the call) and each
// baseline walks a batch at a time with its state hot in cache.
class SampleBatch {
 public:
  struct Entry {
    uint32_t series;
    uint32_t instance_offset;
    uint32_t instance_size;
    int64_t t;
    uint64_t bytes;
    uint64_t limit_bytes;
    uint64_t oom_kills;
  };
  static constexpr size_t kCapacity = 1 << 16;

  void Add(uint32_t series, const drip::synthetic::SyntheticSample& s) {
    entries_.push_back({series, static_cast<uint32_t>(instances_.size()),
                        static_cast<uint32_t>(s.instance.size()), s.timestamp_s, s.bytes,
                        s.limit_bytes, s.oom_kills});
    instances_.append(s.instance);
  }
  bool full() const { return entries_.size() >= kCapacity; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::string_view instance(const Entry& e) const {
    return std::string_view(instances_).substr(e.instance_offset, e.instance_size);
  }
  void Clear() {
    entries_.clear();
    instances_.clear();
  }

 private:
  std::vector<Entry> entries_;
  std::string instances_;  // the batch's instance strings, back to back
};

struct StreamResult {
  uint64_t samples = 0;
  double drip_observe_s = 0;
  double drip_advance_s = 0;
  double baselines_s = 0;
  double generate_s = 0;  // wall time of the whole pass, generation included
};

// Streams every sample of the fleet once, in time order, into Drip (when given) and every
// baseline.
StreamResult Stream(FleetGenerator& generator, drip::analyzer::LeakDetector* drip,
                    const std::vector<BaselineDetector*>& baselines) {
  StreamResult result;
  std::vector<drip::analyzer::LeakDetector::SeriesId> ids;
  if (drip != nullptr) {
    for (const SeriesSpec& s : generator.series()) ids.push_back(drip->Series(s.host, s.component));
    for (int host = 0; host < generator.spec().hosts; ++host) {
      drip->SetHostMemory(generator.host_name(host), generator.host_memory(host));
    }
  }
  SampleBatch batch;
  auto flush = [&] {
    const auto& entries = batch.entries();
    if (drip != nullptr) {
      const auto start = Clock::now();
      for (const auto& e : entries) {
        drip->Observe(ids[e.series], e.t, batch.instance(e), e.bytes, {e.limit_bytes, e.oom_kills});
      }
      result.drip_observe_s += Seconds(Clock::now() - start);
    }
    const auto start = Clock::now();
    for (BaselineDetector* b : baselines) {
      for (const auto& e : entries) b->Observe(e.series, e.t, e.bytes);
    }
    result.baselines_s += Seconds(Clock::now() - start);
    result.samples += entries.size();
    batch.Clear();
  };
  const auto start = Clock::now();
  generator.ForEachSample([&](size_t index, const drip::synthetic::SyntheticSample& s) {
    batch.Add(static_cast<uint32_t>(index), s);
    if (batch.full()) flush();
  });
  flush();
  if (drip != nullptr) {
    const FleetSpec& spec = generator.spec();
    const auto advance_start = Clock::now();
    drip->AdvanceTo(spec.start_s + spec.duration_s);
    result.drip_advance_s = Seconds(Clock::now() - advance_start);
  }
  result.generate_s = Seconds(Clock::now() - start);
  return result;
}

std::vector<Flag> ToFlags(const std::vector<SeriesSpec>& series,
                          const std::vector<std::pair<uint32_t, int64_t>>& flagged) {
  std::vector<Flag> flags;
  flags.reserve(flagged.size());
  for (const auto& [index, t] : flagged) {
    flags.push_back({series[index].host, series[index].component, t});
  }
  return flags;
}

std::vector<Flag> DripFlags(const drip::analyzer::LeakDetector& drip) {
  std::vector<Flag> flags;
  for (const auto& s : drip.Suspects()) flags.push_back({s.host, s.component, s.first_flagged});
  return flags;
}

// How the rollout correlation (analyzer/rollout_correlation.h) attributes the components
// Drip flags, given the versions each series runs (FleetGenerator::Versions): "arrived
// with a version" is right for a rollout's leak and wrong for any other flagged component.
struct RolloutScore {
  int tp = 0;  // rollout leaks said to have arrived with their version
  int fp = 0;  // other flagged components said so
  int fn = 0;  // rollout leaks not said so
  int tn = 0;
  int rollout_hosts = 0;  // leaking hosts of rollout leaks with a finding
  int began = 0;          // of those, growth began at the change
  double precision() const { return tp + fp == 0 ? 1.0 : static_cast<double>(tp) / (tp + fp); }
  double recall() const { return tp + fn == 0 ? 1.0 : static_cast<double>(tp) / (tp + fn); }
};

bool IsRolloutLeak(Behaviour b) {
  return b == Behaviour::kRolloutLeak || b == Behaviour::kRolloutThatLeaks;
}

RolloutScore ScoreRollout(const std::vector<SeriesSpec>& series,
                          const drip::analyzer::LeakDetector& drip) {
  std::map<std::string, std::vector<drip::analyzer::LeakingHost>> leaking;
  for (const auto& s : drip.Suspects()) {
    leaking[s.component].push_back(drip::analyzer::LeakingHostOf(s));
  }
  std::map<std::string, std::vector<drip::analyzer::HostVersions>> fleets;
  std::map<std::string, bool> rollout_leak;
  std::map<std::pair<std::string, std::string>, bool> truly_leaking;
  for (const SeriesSpec& s : series) {
    if (!leaking.contains(s.component)) continue;
    drip::analyzer::HostVersions host{s.host, {}};
    int n = 0;
    for (auto& [since, version] : FleetGenerator::Versions(s)) {
      drip::analyzer::AddVersionRun(&host.runs, {fmt::format("v{}", n++), version, since});
    }
    fleets[s.component].push_back(std::move(host));
    rollout_leak[s.component] |= s.leaking && IsRolloutLeak(s.behaviour);
    truly_leaking[{s.host, s.component}] = s.leaking;
  }
  RolloutScore score;
  for (const auto& [component, hosts] : leaking) {
    const drip::analyzer::RolloutFinding f =
        drip::analyzer::CorrelateRollout(fleets[component], hosts);
    const bool said = f.verdict == drip::analyzer::RolloutVerdict::kArrivedWithVersion;
    const bool truth = rollout_leak[component];
    (truth ? (said ? score.tp : score.fn) : (said ? score.fp : score.tn))++;
    if (truth != said) {
      std::printf("  rollout correlation %s on %s: %s\n", truth ? "missed" : "wrong",
                  component.c_str(), f.summary.c_str());
    }
    if (!truth) continue;
    for (const auto& h : f.hosts) {
      if (!truly_leaking[{h.host, component}]) continue;
      ++score.rollout_hosts;
      score.began += h.began_at_change ? 1 : 0;
    }
  }
  return score;
}

double MedianHours(const std::vector<double>& seconds) {
  if (seconds.empty()) return -1;
  return drip::synthetic::Median(seconds) / 3600.0;
}

std::string Hours(double h) { return h < 0 ? "—" : fmt::format("{:.1f}", h); }

struct Scored {
  std::string detector;
  std::string params;
  FleetScore score;
  size_t bytes_per_series = 0;
};

void PrintQuality(const std::vector<Scored>& rows) {
  std::printf(
      "| detector | parameters | series P | series R | series F1 | component P | component R "
      "| component F1 | slow leaks found | median delay, slow leaks (h) | median delay, all "
      "leaks (h) | state/series |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Scored& r : rows) {
    const FleetScore& s = r.score;
    std::vector<double> all_delays;
    for (const auto& [b, d] : s.delays_by_behaviour) {
      all_delays.insert(all_delays.end(), d.begin(), d.end());
    }
    std::printf(
        "| %s | %s | %.3f | %.3f | **%.3f** | %.3f | %.3f | %.3f | %zu/%d | %s | %s | %zu B |\n",
        r.detector.c_str(), r.params.c_str(), s.per_series.precision(), s.per_series.recall(),
        s.per_series.f1(), s.per_component.precision(), s.per_component.recall(),
        s.per_component.f1(), s.slow_leak_delays.size(), s.slow_leaks,
        Hours(MedianHours(s.slow_leak_delays)).c_str(), Hours(MedianHours(all_delays)).c_str(),
        r.bytes_per_series);
  }
}

// One column per behaviour, so the table shows what fooled (or escaped) each detector.
void PrintByBehaviour(const std::vector<Scored>& rows, bool false_positives) {
  std::printf("\n%s by behaviour (series)%s:\n\n| detector |",
              false_positives ? "False positives" : "False negatives",
              false_positives ? " — a flag on a leak before it began counts here too" : "");
  std::vector<Behaviour> columns;
  for (int i = 0; i < drip::synthetic::kBehaviourCount; ++i) {
    const auto b = static_cast<Behaviour>(i);
    if (false_positives || drip::synthetic::IsLeak(b)) columns.push_back(b);
  }
  for (Behaviour b : columns) std::printf(" %s |", drip::synthetic::BehaviourName(b));
  std::printf(" total |\n|---|");
  for (size_t i = 0; i <= columns.size(); ++i) std::printf("---:|");
  std::printf("\n");
  for (const Scored& r : rows) {
    const auto& counts = false_positives ? r.score.false_positives_by_behaviour
                                         : r.score.false_negatives_by_behaviour;
    std::printf("| %s |", r.detector.c_str());
    int total = 0;
    for (Behaviour b : columns) {
      auto it = counts.find(b);
      const int n = it == counts.end() ? 0 : it->second;
      total += n;
      std::printf(" %d |", n);
    }
    std::printf(" %d |\n", total);
  }
}

// Median detection delay (hours) per kind of leak, for the leaks each detector found.
void PrintDelays(const std::vector<Scored>& rows) {
  std::printf("\nMedian delay by leak kind (h, leaks found):\n\n| detector |");
  std::vector<Behaviour> columns;
  for (int i = 0; i < drip::synthetic::kBehaviourCount; ++i) {
    const auto b = static_cast<Behaviour>(i);
    if (drip::synthetic::IsLeak(b)) columns.push_back(b);
  }
  for (Behaviour b : columns) std::printf(" %s |", drip::synthetic::BehaviourName(b));
  std::printf("\n|---|");
  for (size_t i = 0; i < columns.size(); ++i) std::printf("---:|");
  std::printf("\n");
  for (const Scored& r : rows) {
    std::printf("| %s |", r.detector.c_str());
    for (Behaviour b : columns) {
      auto it = r.score.delays_by_behaviour.find(b);
      std::printf(" %s |", it == r.score.delays_by_behaviour.end()
                               ? "—"
                               : Hours(MedianHours(it->second)).c_str());
    }
    std::printf("\n");
  }
}

double PercentileHours(std::vector<double> seconds, double p) {
  if (seconds.empty()) return -1;
  std::sort(seconds.begin(), seconds.end());
  const size_t i =
      std::min(seconds.size() - 1,
               static_cast<size_t>(std::ceil(p * static_cast<double>(seconds.size())) - 1));
  return seconds[i] / 3600.0;
}

// Leak-rate classes: how fast a leak is, in bytes and against its series' size.
struct RateClass {
  const char* name;
  std::function<bool(const drip::synthetic::LeakOutcome&)> holds;
};
const std::vector<RateClass>& RateClasses() {
  constexpr double kMiB = 1024.0 * 1024.0;
  static const std::vector<RateClass> classes = {
      {"< 1 MiB/h", [](const auto& l) { return l.bytes_per_hour < kMiB; }},
      {"1-5 MiB/h",
       [](const auto& l) { return l.bytes_per_hour >= kMiB && l.bytes_per_hour < 5 * kMiB; }},
      {"5-20 MiB/h",
       [](const auto& l) { return l.bytes_per_hour >= 5 * kMiB && l.bytes_per_hour < 20 * kMiB; }},
      {">= 20 MiB/h", [](const auto& l) { return l.bytes_per_hour >= 20 * kMiB; }},
      {">= 5 MiB/h or >= 1 %/h",
       [](const auto& l) { return l.bytes_per_hour >= 5 * kMiB || l.fraction_per_hour >= 0.01; }},
      {">= 5 MiB/h and >= 1 %/h",
       [](const auto& l) { return l.bytes_per_hour >= 5 * kMiB && l.fraction_per_hour >= 0.01; }},
      {"running when watching began", [](const auto& l) { return l.running_at_start; }},
  };
  return classes;
}

struct ClassDelay {
  int found = 0;
  int total = 0;
  double median_h = -1;
  double p90_h = -1;  // over the leaks found
};
ClassDelay DelayOf(const FleetScore& score, const RateClass& c) {
  ClassDelay out;
  std::vector<double> delays;
  for (const auto& l : score.leaks) {
    if (!c.holds(l)) continue;
    ++out.total;
    if (!l.found) continue;
    ++out.found;
    delays.push_back(l.delay_s);
  }
  out.median_h = MedianHours(delays);
  out.p90_h = PercentileHours(delays, 0.9);
  return out;
}

// Leaks that reach their limit within the window, two hours or more after they could be
// seen (their start, or the start of watching): flagged with 2 h to spare before the
// first OOM kill, and flagged before it at all. A leak that gets there sooner leaves no
// time for an hour of evidence and a confirmation; those are counted apart.
struct OomOutcome {
  int total = 0;
  int two_hours_before = 0;
  int before = 0;
  int sooner = 0;  // reached the limit within 2 h of being seen
  double share_before() const { return total == 0 ? 1.0 : static_cast<double>(before) / total; }
};
OomOutcome OomOf(const FleetScore& score) {
  OomOutcome out;
  for (const auto& l : score.leaks) {
    if (l.first_oom_s < 0) continue;
    if (l.first_oom_s < l.seen_from_s + 2 * 3600) {
      ++out.sooner;
      continue;
    }
    ++out.total;
    if (l.flagged_s < 0 || !l.found) continue;
    if (l.flagged_s <= l.first_oom_s - 2 * 3600) ++out.two_hours_before;
    if (l.flagged_s < l.first_oom_s) ++out.before;
  }
  return out;
}

void PrintDelaysByRate(const std::vector<Scored>& rows) {
  std::printf("\nDelay by leak rate (leaks found/all, median h, p90 h):\n\n| detector |");
  for (const RateClass& c : RateClasses()) std::printf(" %s |", c.name);
  std::printf(
      " reach their limit 2 h or more after they could be seen: flagged 2 h before the first "
      "OOM kill / before it |\n|---|");
  for (size_t i = 0; i <= RateClasses().size(); ++i) std::printf("---:|");
  std::printf("\n");
  for (const Scored& r : rows) {
    std::printf("| %s |", r.detector.c_str());
    for (const RateClass& c : RateClasses()) {
      const ClassDelay d = DelayOf(r.score, c);
      std::printf(" %d/%d, %s, %s |", d.found, d.total, Hours(d.median_h).c_str(),
                  Hours(d.p90_h).c_str());
    }
    const OomOutcome oom = OomOf(r.score);
    std::printf(" %d, %d of %d (and %d sooner) |\n", oom.two_hours_before, oom.before, oom.total,
                oom.sooner);
  }
}

// Tunes each family on the tuning fleet: every grid point in one pass, best F1 wins
// (ties go to the earlier, listed-first point).
std::vector<size_t> Tune(const std::vector<drip::bench::BaselineFamily>& families,
                         const Options& opt) {
  FleetGenerator generator(SuiteSpec(opt, opt.tune_seed));
  std::vector<std::vector<std::unique_ptr<BaselineDetector>>> candidates(families.size());
  std::vector<BaselineDetector*> all;
  for (size_t f = 0; f < families.size(); ++f) {
    for (const auto& make : families[f].grid) {
      candidates[f].push_back(make());
      all.push_back(candidates[f].back().get());
    }
  }
  const StreamResult pass = Stream(generator, nullptr, all);
  std::printf("Tuning on seed %llu: %zu series, %llu samples, %zu grid points in %.1f s\n\n",
              static_cast<unsigned long long>(opt.tune_seed), generator.series().size(),
              static_cast<unsigned long long>(pass.samples), all.size(), pass.generate_s);
  std::printf("| baseline | parameters | series P | series R | series F1 | chosen |\n");
  std::printf("|---|---|---:|---:|---:|---|\n");
  std::vector<size_t> chosen(families.size(), 0);
  for (size_t f = 0; f < families.size(); ++f) {
    double best = -1;
    std::vector<FleetScore> scores;
    for (size_t i = 0; i < candidates[f].size(); ++i) {
      scores.push_back(drip::synthetic::ScoreFleet(
          generator.series(), ToFlags(generator.series(), candidates[f][i]->Flags())));
      if (scores.back().per_series.f1() > best) {
        best = scores.back().per_series.f1();
        chosen[f] = i;
      }
    }
    for (size_t i = 0; i < candidates[f].size(); ++i) {
      std::printf("| %s | %s | %.3f | %.3f | %.3f | %s |\n", candidates[f][i]->name().c_str(),
                  candidates[f][i]->params().c_str(), scores[i].per_series.precision(),
                  scores[i].per_series.recall(), scores[i].per_series.f1(),
                  i == chosen[f] ? "**yes**" : "");
    }
  }
  std::printf("\n");
  return chosen;
}

// Scores one fleet: every detector fed its samples in one pass.
std::vector<Scored> RunSeed(const Options& opt, uint64_t seed,
                            const std::vector<drip::bench::BaselineFamily>& families,
                            const std::vector<size_t>& chosen, bool verbose,
                            RolloutScore* rollout = nullptr) {
  FleetGenerator generator(SuiteSpec(opt, seed));
  const FleetSpec& spec = generator.spec();
  int leaking = 0;
  for (const auto& s : generator.series()) leaking += s.leaking ? 1 : 0;

  drip::analyzer::LeakDetector drip{opt.detector};
  std::vector<std::unique_ptr<BaselineDetector>> baselines;
  std::vector<BaselineDetector*> pointers;
  for (size_t f = 0; f < families.size() && opt.baselines; ++f) {
    baselines.push_back(families[f].grid[chosen[f]]());
    pointers.push_back(baselines.back().get());
  }
  const StreamResult pass = Stream(generator, &drip, pointers);

  std::printf(
      "Seed %llu: %d hosts, %zu series (%d leaking), %.1f days at %lld s, %llu samples; "
      "pass took %.1f s; Drip %.0f samples/s (Observe only), %zu bytes of state per series\n",
      static_cast<unsigned long long>(seed), spec.hosts, generator.series().size(), leaking,
      spec.duration_s / 86400.0, static_cast<long long>(spec.interval_s),
      static_cast<unsigned long long>(pass.samples), pass.generate_s,
      pass.samples / pass.drip_observe_s, drip::analyzer::LeakDetector::BytesPerSeries());

  std::vector<Scored> rows;
  rows.push_back({"drip", opt.detector_source,
                  drip::synthetic::ScoreFleet(generator.series(), DripFlags(drip)),
                  drip::analyzer::LeakDetector::BytesPerSeries()});
  for (const auto& b : baselines) {
    rows.push_back(
        {b->name(), b->params(),
         drip::synthetic::ScoreFleet(generator.series(), ToFlags(generator.series(), b->Flags())),
         b->BytesPerSeries()});
  }
  // Which of Drip's rules raised its flags, and how many were right.
  std::map<std::string, std::pair<int, int>> by_rule;  // rule -> (right, wrong)
  std::map<std::pair<std::string, std::string>, const SeriesSpec*> spec_of;
  for (const SeriesSpec& s : generator.series()) spec_of[{s.host, s.component}] = &s;
  std::map<std::string, std::map<std::string, int>> wrong_by_rule;  // rule -> behaviour -> n
  for (const auto& suspect : drip.Suspects()) {
    const SeriesSpec* s = spec_of[{suspect.host, suspect.component}];
    const bool right = s->leaking && suspect.first_flagged >= s->leak_start_s;
    auto& counts = by_rule[drip::analyzer::SuspectRuleName(suspect.rule)];
    (right ? counts.first : counts.second)++;
    if (!right) {
      ++wrong_by_rule[drip::analyzer::SuspectRuleName(suspect.rule)]
                     [drip::synthetic::BehaviourName(s->behaviour)];
    }
  }
  const RolloutScore versions = ScoreRollout(generator.series(), drip);
  if (rollout != nullptr) *rollout = versions;
  if (verbose) {
    std::printf("\n");
    PrintQuality(rows);
    std::printf(
        "\nRollout correlation, over the %d components Drip flags: %d of %d rollout leaks said "
        "to have arrived with their version, %d other components said so; growth began at "
        "the change on %d of %d leaking hosts of rollout leaks\n",
        versions.tp + versions.fp + versions.fn + versions.tn, versions.tp,
        versions.tp + versions.fn, versions.fp, versions.began, versions.rollout_hosts);
    PrintByBehaviour(rows, /*false_positives=*/true);
    PrintByBehaviour(rows, /*false_positives=*/false);
    PrintDelays(rows);
    PrintDelaysByRate(rows);
    {
      // The leaks Drip let reach their limit unflagged, by kind.
      std::map<std::string, int> late;
      std::map<std::string, std::vector<double>> hours_to_kill;
      for (const auto& l : rows.front().score.leaks) {
        if (l.first_oom_s < 0 || (l.found && l.flagged_s < l.first_oom_s)) continue;
        ++late[drip::synthetic::BehaviourName(l.behaviour)];
      }
      std::printf("\nDrip's leaks that reached their limit before a flag, by kind:");
      for (const auto& [kind, n] : late) std::printf(" %s=%d", kind.c_str(), n);
      std::printf("\n");
    }
    {
      // Drip's delays in the fast class, by kind: where the time goes.
      std::map<std::string, std::vector<double>> delays;
      std::map<std::string, int> missed;
      for (const auto& l : rows.front().score.leaks) {
        if (!RateClasses()[4].holds(l)) continue;
        const std::string kind = drip::synthetic::BehaviourName(l.behaviour);
        if (l.found) {
          delays[kind].push_back(l.delay_s);
        } else {
          ++missed[kind];
        }
      }
      std::printf(
          "\nDrip on leaks of >= 5 MiB/h or 1 %%/h, by kind (found, missed, median h, p90 h):");
      for (const auto& [kind, d] : delays) {
        std::printf("\n  %s: %zu, %d, %s, %s", kind.c_str(), d.size(), missed[kind],
                    Hours(MedianHours(d)).c_str(), Hours(PercentileHours(d, 0.9)).c_str());
      }
      std::printf("\n");
    }
    std::printf("\nDrip's flags by rule (right/wrong; what the wrong ones were):\n");
    for (const auto& [rule, counts] : by_rule) {
      std::printf("  %s: %d/%d", rule.c_str(), counts.first, counts.second);
      for (const auto& [behaviour, n] : wrong_by_rule[rule]) {
        std::printf(" %s=%d", behaviour.c_str(), n);
      }
      std::printf("\n");
    }
    const auto& mistakes = rows.front().score.mistakes;
    if (!mistakes.empty()) {
      std::printf("\nDrip's first mistakes:\n");
      for (const auto& m : mistakes) std::printf("  %s\n", m.c_str());
    }
    std::printf("\n");
  }
  return rows;
}

// Each detector's mean and worst over the seeds (worst: the lowest of each figure).
void PrintRolloutSummary(const std::vector<RolloutScore>& per_seed) {
  double p = 0, r = 0, worst_p = 1, worst_r = 1;
  for (const RolloutScore& s : per_seed) {
    p += s.precision();
    r += s.recall();
    worst_p = std::min(worst_p, s.precision());
    worst_r = std::min(worst_r, s.recall());
  }
  const double n = static_cast<double>(per_seed.size());
  std::printf(
      "\nRollout correlation (\"arrived with a version\" among the components Drip flags), "
      "mean (worst): precision %.3f (%.3f), recall %.3f (%.3f)\n",
      p / n, worst_p, r / n, worst_r);
}

void PrintSummary(const std::vector<std::vector<Scored>>& per_seed) {
  std::printf(
      "\nOver %zu seeds, mean (worst):\n\n| detector | series P | series R | series F1 | "
      "component P | component R | component F1 | median delay, slow leaks (h) | median "
      "delay, >= 5 MiB/h or 1 %%/h (h) | p90 delay, same (h) | reaching their limit 2 h or more "
      "after "
      "they could be seen: flagged before the first OOM kill |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      per_seed.size());
  const RateClass& fast = RateClasses()[4];
  // Which figures are delays (the worst is the longest) rather than shares.
  const std::vector<bool> is_delay = {false, false, false, false, false,
                                      false, true,  true,  true,  false};
  for (size_t d = 0; d < per_seed.front().size(); ++d) {
    std::vector<std::vector<double>> figures(is_delay.size());
    for (const auto& rows : per_seed) {
      const FleetScore& s = rows[d].score;
      const ClassDelay fast_delay = DelayOf(s, fast);
      figures[0].push_back(s.per_series.precision());
      figures[1].push_back(s.per_series.recall());
      figures[2].push_back(s.per_series.f1());
      figures[3].push_back(s.per_component.precision());
      figures[4].push_back(s.per_component.recall());
      figures[5].push_back(s.per_component.f1());
      figures[6].push_back(MedianHours(s.slow_leak_delays));
      figures[7].push_back(fast_delay.median_h);
      figures[8].push_back(fast_delay.p90_h);
      figures[9].push_back(OomOf(s).share_before());
    }
    std::printf("| %s |", per_seed.front()[d].detector.c_str());
    for (size_t f = 0; f < figures.size(); ++f) {
      double sum = 0;
      for (double v : figures[f]) sum += v;
      const double worst = is_delay[f] ? *std::max_element(figures[f].begin(), figures[f].end())
                                       : *std::min_element(figures[f].begin(), figures[f].end());
      if (is_delay[f]) {
        std::printf(" %s (%s) |", Hours(sum / figures[f].size()).c_str(), Hours(worst).c_str());
      } else {
        std::printf(" %.3f (%.3f) |", sum / figures[f].size(), worst);
      }
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"Drip's leak detector against baseline detectors on labeled synthetic fleets"};
  std::string profile = "hard";
  std::string seeds = "held-out";
  app.add_option("--profile", profile, "classic or hard (default hard)");
  app.add_option("--seeds", seeds,
                 "held-out (default), development, or a comma-separated list of seeds");
  app.add_option("--tune-seed", opt.tune_seed, "seed of the fleet the baselines are tuned on");
  app.add_option("--hosts", opt.hosts, "override the suite's host count (every fleet)")
      ->check(CLI::PositiveNumber);
  app.add_option("--days", opt.days, "override the suite's duration in days (every fleet)");
  bool no_tune = false;
  app.add_flag("--no-tune", no_tune, "use the recorded baseline parameters, skip tuning");
  bool drip_only = false;
  app.add_flag("--drip-only", drip_only, "run Drip alone, no baselines (implies --no-tune)");
  std::string config_path;
  app.add_option("--config", config_path,
                 "detector.yaml for Drip (development seeds only: the defaults are what counts)");
  CLI11_PARSE(app, argc, argv);
  if (!config_path.empty()) {
    auto reader = drip::ConfigReader::FromFile(config_path);
    absl::Status read = reader.ok() ? drip::analyzer::ReadDetectorConfig(*reader, "", &opt.detector)
                                    : reader.status();
    if (read.ok()) read = reader->CheckNoUnknownKeys();
    if (!read.ok()) {
      std::fprintf(stderr, "detector_bench: %s\n", std::string(read.message()).c_str());
      return 2;
    }
    opt.detector_source = config_path;
  }
  opt.tune = !no_tune && !drip_only;
  opt.baselines = !drip_only;
  if (profile == "hard") {
    opt.profile = drip::synthetic::Profile::kHard;
  } else if (profile == "classic") {
    opt.profile = drip::synthetic::Profile::kClassic;
  } else {
    std::fprintf(stderr, "detector_bench: --profile: '%s' is not classic or hard\n",
                 profile.c_str());
    return 2;
  }
  const bool hard = opt.profile == drip::synthetic::Profile::kHard;
  if (seeds == "held-out") {
    if (hard) {
      opt.seeds.assign(std::begin(drip::synthetic::kHeldOutSeeds),
                       std::end(drip::synthetic::kHeldOutSeeds));
    } else {
      opt.seeds = {42};
    }
  } else if (seeds == "development") {
    if (hard) {
      opt.seeds.assign(std::begin(drip::synthetic::kDevelopmentSeeds),
                       std::end(drip::synthetic::kDevelopmentSeeds));
    } else {
      opt.seeds = {7};
    }
  } else {
    for (std::string_view rest = seeds; !rest.empty();) {
      const size_t comma = rest.find(',');
      const std::string one(rest.substr(0, comma));
      rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
      char* end = nullptr;
      const unsigned long long value = std::strtoull(one.c_str(), &end, 10);
      if (one.empty() || *end != '\0') {
        std::fprintf(stderr, "detector_bench: --seeds: '%s' is not a seed\n", one.c_str());
        return 2;
      }
      opt.seeds.push_back(value);
    }
  }
  // Held-out seeds report what users get: never a tuned config.
  if (!config_path.empty() && hard) {
    for (const uint64_t seed : opt.seeds) {
      if (std::find(std::begin(drip::synthetic::kHeldOutSeeds),
                    std::end(drip::synthetic::kHeldOutSeeds),
                    seed) != std::end(drip::synthetic::kHeldOutSeeds)) {
        std::fprintf(stderr,
                     "detector_bench: --config: seed %llu is held out; the defaults are what "
                     "is reported there\n",
                     static_cast<unsigned long long>(seed));
        return 2;
      }
    }
  }
  if (opt.tune_seed == 0) opt.tune_seed = hard ? drip::synthetic::kDevelopmentSeeds[0] : 7;
  if (opt.tune && std::find(opt.seeds.begin(), opt.seeds.end(), opt.tune_seed) != opt.seeds.end()) {
    std::fprintf(stderr, "detector_bench: --tune-seed must not be one of the scored seeds\n");
    return 2;
  }

  const auto families = drip::bench::BaselineGrid::Families();
  std::vector<size_t> chosen;
  if (opt.tune) {
    chosen = Tune(families, opt);
  } else {
    for (const auto& f : families) chosen.push_back(f.untuned);
  }
  std::vector<std::vector<Scored>> per_seed;
  std::vector<RolloutScore> rollouts;
  for (uint64_t seed : opt.seeds) {
    per_seed.push_back(
        RunSeed(opt, seed, families, chosen, /*verbose=*/true, &rollouts.emplace_back()));
  }
  PrintSummary(per_seed);
  PrintRolloutSummary(rollouts);
  return 0;
}
