#include "tests/synthetic/fleet_generator.h"

#include <algorithm>
#include <cmath>

#include "fmt/format.h"

namespace drip::synthetic {
namespace {

constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 24 * kHour;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kPi = 3.14159265358979323846;

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
uint64_t Hash(uint64_t a, uint64_t b, uint64_t c = 0) { return Mix(Mix(Mix(a) ^ b) ^ c); }
double Uniform(uint64_t h) { return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); }
double Between(uint64_t h, double lo, double hi) { return lo + (hi - lo) * Uniform(h); }

// OOM restarts: once a day (from `start_s`) a burst of work balloons the process until the
// OOM killer ends it. By `t`: how many kills, when the last was, and the burst now.
struct OomHistory {
  int64_t kills = 0;
  int64_t last_kill_s = 0;
  double burst = 0;  // how far above its level the process is, 0 outside a burst
};
OomHistory OomBursts(uint64_t h, int64_t start_s, int64_t t) {
  OomHistory history;
  const int64_t day = (t - start_s) / kDay;
  for (int64_t d = 0; d <= day; ++d) {
    const int64_t burst_start =
        start_s + d * kDay + static_cast<int64_t>(Between(Hash(h, 60, d), 0, 20 * kHour));
    const int64_t burst_len = static_cast<int64_t>(Between(Hash(h, 61, d), 10 * 60, 40 * 60));
    if (t >= burst_start + burst_len) {
      ++history.kills;
      history.last_kill_s = burst_start + burst_len;
    } else if (t >= burst_start) {
      history.burst = 1.5 * static_cast<double>(t - burst_start) / burst_len;
    }
  }
  return history;
}
// Standard normal from two hashes (Box-Muller).
double Normal(uint64_t h) {
  const double u1 = std::max(1e-12, Uniform(Mix(h)));
  const double u2 = Uniform(Mix(h ^ 0x5555));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * kPi * u2);
}

constexpr Behaviour kDecoys[] = {Behaviour::kSteady,          Behaviour::kDiurnal,
                                 Behaviour::kGcSawtooth,      Behaviour::kCacheWarmup,
                                 Behaviour::kStepOnReload,    Behaviour::kSpikes,
                                 Behaviour::kRegularRestarts, Behaviour::kOomRestarts};
constexpr Behaviour kLeaks[] = {Behaviour::kSlowLeak,
                                Behaviour::kFastLeak,
                                Behaviour::kRolloutLeak,
                                Behaviour::kLeakUnderSawtooth,
                                Behaviour::kLeakResetByRestarts,
                                Behaviour::kSlabLeak};

// What a leaking component's healthy hosts do.
Behaviour HealthyTwin(Behaviour leak) {
  switch (leak) {
    case Behaviour::kLeakUnderSawtooth:
      return Behaviour::kGcSawtooth;
    case Behaviour::kLeakResetByRestarts:
      return Behaviour::kRegularRestarts;
    default:
      return Behaviour::kSteady;
  }
}

}  // namespace

const char* BehaviourName(Behaviour behaviour) {
  switch (behaviour) {
    case Behaviour::kSteady:
      return "steady";
    case Behaviour::kDiurnal:
      return "diurnal";
    case Behaviour::kGcSawtooth:
      return "gc_sawtooth";
    case Behaviour::kCacheWarmup:
      return "cache_warmup";
    case Behaviour::kStepOnReload:
      return "step_on_reload";
    case Behaviour::kSpikes:
      return "spikes";
    case Behaviour::kRegularRestarts:
      return "regular_restarts";
    case Behaviour::kOomRestarts:
      return "oom_restarts";
    case Behaviour::kFastLeak:
      return "fast_leak";
    case Behaviour::kSlowLeak:
      return "slow_leak";
    case Behaviour::kRolloutLeak:
      return "rollout_leak";
    case Behaviour::kLeakUnderSawtooth:
      return "leak_under_sawtooth";
    case Behaviour::kLeakResetByRestarts:
      return "leak_reset_by_restarts";
    case Behaviour::kSlabLeak:
      return "slab_leak";
    case Behaviour::kRolloutFlat:
      return "rollout_flat";
    case Behaviour::kBatchRamp:
      return "batch_ramp";
    case Behaviour::kSlowPlateau:
      return "slow_plateau";
    case Behaviour::kGappy:
      return "gappy";
    case Behaviour::kSlabWarmup:
      return "slab_warmup";
    case Behaviour::kLeakUnderBigSawtooth:
      return "leak_under_big_sawtooth";
    case Behaviour::kLeakDailyRestarts:
      return "leak_daily_restarts";
    case Behaviour::kRolloutThatLeaks:
      return "rollout_that_leaks";
    case Behaviour::kLeakUnderDiurnal:
      return "leak_under_diurnal";
    case Behaviour::kBatchRampLeak:
      return "batch_ramp_leak";
    case Behaviour::kSlabLeakAfterWarmup:
      return "slab_leak_after_warmup";
    case Behaviour::kRestartsUnderDiurnal:
      return "restarts_under_diurnal";
    case Behaviour::kWarmupRollout:
      return "warmup_rollout";
    case Behaviour::kLeakIntoLimit:
      return "leak_into_limit";
    case Behaviour::kWarmupRolloutLeak:
      return "warmup_rollout_leak";
  }
  return "unknown";
}

bool IsLeak(Behaviour behaviour) {
  switch (behaviour) {
    case Behaviour::kFastLeak:
    case Behaviour::kSlowLeak:
    case Behaviour::kRolloutLeak:
    case Behaviour::kLeakUnderSawtooth:
    case Behaviour::kLeakResetByRestarts:
    case Behaviour::kSlabLeak:
    case Behaviour::kLeakUnderBigSawtooth:
    case Behaviour::kLeakDailyRestarts:
    case Behaviour::kRolloutThatLeaks:
    case Behaviour::kLeakUnderDiurnal:
    case Behaviour::kBatchRampLeak:
    case Behaviour::kSlabLeakAfterWarmup:
    case Behaviour::kLeakIntoLimit:
    case Behaviour::kWarmupRolloutLeak:
      return true;
    default:
      return false;
  }
}

std::vector<std::pair<int64_t, std::string>> FleetGenerator::Versions(const SeriesSpec& s) {
  std::vector<std::pair<int64_t, std::string>> versions = {{s.first_sample_s, "1.0"}};
  const bool rollout =
      s.behaviour == Behaviour::kRolloutFlat || s.behaviour == Behaviour::kRolloutLeak ||
      s.behaviour == Behaviour::kRolloutThatLeaks || s.behaviour == Behaviour::kWarmupRollout ||
      s.behaviour == Behaviour::kWarmupRolloutLeak;
  // The classic rollout leak starts its new instance when the leak starts.
  const int64_t at = s.behaviour == Behaviour::kRolloutLeak ? s.leak_start_s : s.event_s;
  if (rollout && at > s.first_sample_s) versions.emplace_back(at, "2.0");
  return versions;
}

FleetSpec FleetGenerator::TestSuite(uint64_t seed) {
  FleetSpec spec;
  spec.seed = seed;
  spec.hosts = 24;
  spec.healthy_components = 16;
  spec.leaking_components = 18;
  spec.duration_s = 3 * kDay;
  spec.interval_s = 120;
  return spec;
}

FleetSpec FleetGenerator::BenchmarkSuite(uint64_t seed) {
  FleetSpec spec;
  spec.seed = seed;
  spec.hosts = 200;
  spec.healthy_components = 32;
  spec.leaking_components = 36;
  spec.duration_s = 4 * kDay;
  spec.interval_s = 60;
  return spec;
}

FleetSpec FleetGenerator::HardSuite(uint64_t seed) {
  FleetSpec spec;
  spec.seed = seed;
  spec.profile = Profile::kHard;
  spec.hosts = 150;
  spec.healthy_components = 24;
  spec.leaking_components = 28;
  spec.duration_s = 5 * kDay;
  spec.interval_s = 60;
  return spec;
}

FleetSpec FleetGenerator::HardTestSuite(uint64_t seed) {
  FleetSpec spec = HardSuite(seed);
  spec.hosts = 20;
  spec.interval_s = 300;
  return spec;
}

FleetGenerator::FleetGenerator(const FleetSpec& spec) : spec_(spec) {
  for (int host = 0; host < spec.hosts; ++host) {
    host_names_.push_back(fmt::format("host-{:04d}", host));
    // 16-256 GiB, in whole GiB.
    host_memory_.push_back(
        static_cast<uint64_t>(std::round(std::exp(Between(
            Hash(spec.seed, 555, static_cast<uint64_t>(host)), std::log(16.0), std::log(256.0))))) *
        1024 * 1024 * 1024);
  }
  if (spec.profile == Profile::kHard) {
    AddHardComponents();
    AddLimits();
  } else {
    AddClassicComponents();
  }
}

void FleetGenerator::Add(int host, const std::string& component, Behaviour behaviour, uint64_t h) {
  const int64_t start = spec_.start_s;
  const int64_t window = spec_.duration_s;
  {
    SeriesSpec s;
    s.host = host_names_[static_cast<size_t>(host)];
    s.host_index = host;
    s.component = component;
    s.behaviour = behaviour;
    s.leaking = IsLeak(behaviour);
    s.seed = h;
    s.first_sample_s = start;
    s.base_bytes = static_cast<uint64_t>(Between(Hash(h, 1), 100, 2000) * kMiB);
    s.noise_fraction = Between(Hash(h, 2), 0.0005, 0.003);
    s.phase_s = static_cast<int64_t>(Between(Hash(h, 3), 0, kDay));
    if (spec_.profile == Profile::kHard) {
      DrawHard(host, &s, Hash(spec_.seed, std::hash<std::string>{}(component)));
      series_.push_back(std::move(s));
      return;
    }
    switch (behaviour) {
      case Behaviour::kSteady:
        break;
      case Behaviour::kDiurnal:
        s.amplitude_fraction = Between(Hash(h, 4), 0.03, 0.10);
        s.period_s = kDay;
        break;
      case Behaviour::kGcSawtooth:
        s.amplitude_fraction = Between(Hash(h, 4), 0.10, 0.40);
        s.period_s = static_cast<int64_t>(Between(Hash(h, 5), 5 * 60, 45 * 60));
        break;
      case Behaviour::kCacheWarmup:
        // Some start mid-window: a new host or a new service.
        if (Uniform(Hash(h, 6)) < 0.5) {
          s.first_sample_s = start + static_cast<int64_t>(Between(Hash(h, 7), 0, window / 2));
        }
        s.amplitude_fraction = Between(Hash(h, 4), 0.3, 1.5);
        s.period_s = static_cast<int64_t>(Between(Hash(h, 5), 0.5 * kHour, 3 * kHour));  // tau
        break;
      case Behaviour::kStepOnReload:
        s.amplitude_fraction = Between(Hash(h, 4), 0.05, 0.25);
        s.event_s = start + static_cast<int64_t>(Between(Hash(h, 5), 0.3 * window, 0.8 * window));
        break;
      case Behaviour::kSpikes:
        s.amplitude_fraction = Between(Hash(h, 4), 0.2, 1.0);
        break;
      case Behaviour::kRegularRestarts:
        s.period_s = static_cast<int64_t>(Between(Hash(h, 5), 4 * kHour, 24 * kHour));
        break;
      case Behaviour::kOomRestarts:
        break;
      case Behaviour::kSlowLeak:
        s.base_bytes = static_cast<uint64_t>(Between(Hash(h, 1), 400, 600) * kMiB);
        s.noise_fraction = Between(Hash(h, 2), 0.0005, 0.002);
        s.leak_bytes_per_hour = Between(Hash(h, 4), 0.7, 1.0) * kMiB;
        s.leak_start_s = start + static_cast<int64_t>(Between(Hash(h, 5), 0.35, 0.45) * window);
        break;
      case Behaviour::kFastLeak:
        s.base_bytes = static_cast<uint64_t>(Between(Hash(h, 1), 200, 1000) * kMiB);
        s.leak_bytes_per_hour = s.base_bytes * Between(Hash(h, 4), 0.03, 0.10);
        s.leak_start_s = start;
        break;
      case Behaviour::kRolloutLeak:
        // The new version reaches hosts over a few hours, each restarting into it.
        s.leak_start_s = start + static_cast<int64_t>(0.4 * window) + host * 10 * 60;
        s.leak_bytes_per_hour = s.base_bytes * Between(Hash(h, 4), 0.005, 0.03);
        break;
      case Behaviour::kLeakUnderSawtooth:
        s.amplitude_fraction = Between(Hash(h, 4), 0.10, 0.40);
        s.period_s = static_cast<int64_t>(Between(Hash(h, 5), 5 * 60, 45 * 60));
        s.leak_bytes_per_hour = s.base_bytes * Between(Hash(h, 6), 0.003, 0.02);
        s.leak_start_s = start + static_cast<int64_t>(Between(Hash(h, 7), 0.3, 0.5) * window);
        break;
      case Behaviour::kLeakResetByRestarts:
        s.period_s = static_cast<int64_t>(Between(Hash(h, 5), 6 * kHour, 12 * kHour));
        s.leak_bytes_per_hour = s.base_bytes * Between(Hash(h, 6), 0.01, 0.04);
        s.leak_start_s = start;
        break;
      case Behaviour::kSlabLeak:
        s.base_bytes = static_cast<uint64_t>(Between(Hash(h, 1), 20, 200) * kMiB);
        s.noise_fraction = Between(Hash(h, 2), 0.001, 0.005);
        s.leak_bytes_per_hour = s.base_bytes * Between(Hash(h, 4), 0.005, 0.03);
        s.leak_start_s = start + static_cast<int64_t>(Between(Hash(h, 5), 0.3, 0.5) * window);
        break;
      default:  // the hard profile's, drawn by DrawHard
        break;
    }
    series_.push_back(std::move(s));
  }
}

void FleetGenerator::AddClassicComponents() {
  const FleetSpec& spec = spec_;
  auto add = [this](int host, const std::string& component, Behaviour behaviour, uint64_t h) {
    Add(host, component, behaviour, h);
  };
  for (int c = 0; c < spec.healthy_components; ++c) {
    const Behaviour behaviour = kDecoys[c % std::size(kDecoys)];
    const std::string component =
        c % 7 == 6 ? fmt::format("kernel:slab:cache-{:02d}", c)
                   : fmt::format("svc:{}-{:02d}.service", BehaviourName(behaviour), c);
    for (int host = 0; host < spec.hosts; ++host) {
      const uint64_t h = Hash(spec.seed, static_cast<uint64_t>(c) + 1, static_cast<uint64_t>(host));
      if (Uniform(Hash(h, 99)) < 0.15) continue;  // not every host runs every service
      add(host, component, behaviour, h);
    }
  }
  for (int c = 0; c < spec.leaking_components; ++c) {
    const Behaviour leak = kLeaks[c % std::size(kLeaks)];
    const int scope = (c / static_cast<int>(std::size(kLeaks))) % 3;  // all, some, one
    const std::string component =
        leak == Behaviour::kSlabLeak
            ? fmt::format("kernel:slab:leaky-{:02d}", c)
            : fmt::format("svc:leaky-{}-{:02d}.service", BehaviourName(leak), c);
    const int leaking_host = static_cast<int>(Hash(spec.seed, 777, c) % spec.hosts);
    for (int host = 0; host < spec.hosts; ++host) {
      const uint64_t h =
          Hash(spec.seed, 1000 + static_cast<uint64_t>(c), static_cast<uint64_t>(host));
      bool leaks = scope == 0 || (scope == 1 && Uniform(Hash(h, 98)) < 0.3) ||
                   (scope == 2 && host == leaking_host);
      if (scope == 1 && host == leaking_host) leaks = true;  // at least one
      add(host, component, leaks ? leak : HealthyTwin(leak), h);
    }
  }
}

namespace {

// log-uniform in [lo, hi]
double LogBetween(uint64_t h, double lo, double hi) {
  return std::exp(Between(h, std::log(lo), std::log(hi)));
}

// The hard profile's components: the hazards that fooled the detector, twice or three
// times over, next to the classic decoys; and every kind of leak, twice (each time on a
// different share of its hosts).
constexpr Behaviour kHardDecoys[] = {Behaviour::kRolloutFlat, Behaviour::kBatchRamp,
                                     Behaviour::kDiurnal,     Behaviour::kSlowPlateau,
                                     Behaviour::kGappy,       Behaviour::kSlabWarmup,
                                     Behaviour::kSteady,      Behaviour::kGcSawtooth,
                                     Behaviour::kCacheWarmup, Behaviour::kStepOnReload,
                                     Behaviour::kSpikes,      Behaviour::kRegularRestarts,
                                     Behaviour::kOomRestarts, Behaviour::kRolloutFlat,
                                     Behaviour::kBatchRamp,   Behaviour::kDiurnal,
                                     Behaviour::kSlowPlateau, Behaviour::kRolloutFlat,
                                     Behaviour::kBatchRamp,   Behaviour::kRestartsUnderDiurnal,
                                     Behaviour::kSlowPlateau, Behaviour::kWarmupRollout,
                                     Behaviour::kSlabWarmup,  Behaviour::kRestartsUnderDiurnal};
constexpr Behaviour kHardLeaks[] = {Behaviour::kSlowLeak,
                                    Behaviour::kFastLeak,
                                    Behaviour::kRolloutLeak,
                                    Behaviour::kLeakUnderSawtooth,
                                    Behaviour::kLeakResetByRestarts,
                                    Behaviour::kSlabLeak,
                                    Behaviour::kLeakUnderBigSawtooth,
                                    Behaviour::kLeakDailyRestarts,
                                    Behaviour::kRolloutThatLeaks,
                                    Behaviour::kLeakUnderDiurnal,
                                    Behaviour::kBatchRampLeak,
                                    Behaviour::kSlabLeakAfterWarmup,
                                    Behaviour::kLeakIntoLimit,
                                    Behaviour::kWarmupRolloutLeak};

bool IsSlab(Behaviour b) {
  return b == Behaviour::kSlabLeak || b == Behaviour::kSlabWarmup ||
         b == Behaviour::kSlabLeakAfterWarmup;
}

// What a leaking component's healthy hosts do, in the hard profile.
Behaviour HardTwin(Behaviour leak) {
  switch (leak) {
    case Behaviour::kLeakUnderSawtooth:
    case Behaviour::kLeakUnderBigSawtooth:
      return Behaviour::kGcSawtooth;
    case Behaviour::kLeakResetByRestarts:
    case Behaviour::kLeakDailyRestarts:
      return Behaviour::kRegularRestarts;
    case Behaviour::kRolloutThatLeaks:
      return Behaviour::kRolloutFlat;
    case Behaviour::kLeakUnderDiurnal:
      return Behaviour::kDiurnal;
    case Behaviour::kBatchRampLeak:
      return Behaviour::kBatchRamp;
    case Behaviour::kSlabLeak:
    case Behaviour::kSlabLeakAfterWarmup:
      return Behaviour::kSlabWarmup;
    case Behaviour::kWarmupRolloutLeak:
      return Behaviour::kWarmupRollout;
    default:
      return Behaviour::kSteady;
  }
}

}  // namespace

void FleetGenerator::AddHardComponents() {
  const FleetSpec& spec = spec_;
  auto name = [](Behaviour b, const char* prefix, int c) {
    return IsSlab(b) ? fmt::format("kernel:slab:{}{}-{:02d}", prefix, BehaviourName(b), c)
                     : fmt::format("svc:{}{}-{:02d}.service", prefix, BehaviourName(b), c);
  };
  for (int c = 0; c < spec.healthy_components; ++c) {
    const Behaviour behaviour = kHardDecoys[c % std::size(kHardDecoys)];
    const std::string component = name(behaviour, "", c);
    const uint64_t ch = Hash(spec.seed, std::hash<std::string>{}(component));
    // A rollout reaches most of the component's hosts, not always all.
    const double reach = Between(Hash(ch, 20), 0.5, 1.0);
    for (int host = 0; host < spec.hosts; ++host) {
      const uint64_t h = Hash(spec.seed, static_cast<uint64_t>(c) + 1, static_cast<uint64_t>(host));
      if (Uniform(Hash(h, 99)) < 0.15) continue;  // not every host runs every service
      Behaviour b = behaviour;
      if (b == Behaviour::kRolloutFlat && Uniform(Hash(h, 21)) >= reach) b = Behaviour::kSteady;
      Add(host, component, b, h);
    }
  }
  for (int c = 0; c < spec.leaking_components; ++c) {
    const Behaviour leak = kHardLeaks[c % std::size(kHardLeaks)];
    const int scope = (c + c / static_cast<int>(std::size(kHardLeaks))) % 3;  // all, some, one
    const std::string component = name(leak, "leaky-", c);
    const int leaking_host = static_cast<int>(Hash(spec.seed, 777, c) % spec.hosts);
    const double share = Between(Hash(spec.seed, 778, c), 0.1, 0.5);
    for (int host = 0; host < spec.hosts; ++host) {
      const uint64_t h =
          Hash(spec.seed, 1000 + static_cast<uint64_t>(c), static_cast<uint64_t>(host));
      if (host != leaking_host && Uniform(Hash(h, 99)) < 0.15) continue;
      const bool leaks =
          scope == 0 || host == leaking_host || (scope == 1 && Uniform(Hash(h, 98)) < share);
      Add(host, component, leaks ? leak : HardTwin(leak), h);
    }
  }
}

void FleetGenerator::DrawHard(int host, SeriesSpec* s, uint64_t ch) {
  const int64_t start = spec_.start_s;
  const double window = static_cast<double>(spec_.duration_s);
  const uint64_t h = s->seed;
  s->base_bytes = static_cast<uint64_t>(LogBetween(Hash(h, 1), 50, 4000) * kMiB);
  s->noise_fraction = LogBetween(Hash(h, 2), 0.0005, 0.01);
  // Components share a clock: daily load and rollouts happen on all their hosts at about
  // the same time.
  const int64_t component_phase = static_cast<int64_t>(Between(Hash(ch, 3), 0, kDay));
  const int64_t rollout = start + static_cast<int64_t>(Between(Hash(ch, 4), 0.25, 0.6) * window) +
                          host * static_cast<int64_t>(Between(Hash(ch, 5), 60, 15 * 60));
  auto leak_from = [&](double lo, double hi) {
    return start + static_cast<int64_t>(Between(Hash(h, 30), lo, hi) * window);
  };
  auto relative_rate = [&](double lo, double hi) {
    return static_cast<double>(s->base_bytes) * LogBetween(Hash(h, 31), lo, hi);
  };
  auto diurnal = [&] {
    s->amplitude_fraction = LogBetween(Hash(h, 4), 0.03, 0.40);
    s->period_s = kDay;
    s->phase_s = component_phase + static_cast<int64_t>(Between(Hash(h, 5), -3600, 3600));
    s->level_fraction = Between(Hash(h, 6), 0, 0.3);  // the second harmonic's share
  };
  auto batch = [&] {
    s->period_s = Uniform(Hash(h, 4)) < 0.6
                      ? kDay
                      : static_cast<int64_t>(Between(Hash(h, 5), 12, 60) * kHour);
    s->duration2_s = std::min<int64_t>(static_cast<int64_t>(Between(Hash(h, 6), 4, 12) * kHour),
                                       s->period_s - kHour);
    s->amplitude_fraction = LogBetween(Hash(h, 7), 0.10, 0.80);
  };
  auto sawtooth = [&](double lo, double hi) {
    s->amplitude_fraction = Between(Hash(h, 4), lo, hi);
    s->period_s = static_cast<int64_t>(LogBetween(Hash(h, 5), 2 * 60, 60 * 60));
  };
  auto slab = [&] {
    s->base_bytes = static_cast<uint64_t>(LogBetween(Hash(h, 1), 10, 300) * kMiB);
    s->noise_fraction = LogBetween(Hash(h, 2), 0.002, 0.02);
    s->level_fraction = Between(Hash(h, 8), 0.2, 0.6);  // where the warm-up starts
    s->duration2_s = static_cast<int64_t>(LogBetween(Hash(h, 9), 1, 8) * kHour);
  };
  auto rollout_to_new_level = [&] {
    s->event_s = rollout;
    s->level_fraction = 1 + Between(Hash(ch, 6), 0.10, 0.30) * Between(Hash(h, 6), 0.9, 1.1);
    s->duration2_s = static_cast<int64_t>(LogBetween(Hash(ch, 7), 5 * 60, 3 * kHour));
  };
  switch (s->behaviour) {
    case Behaviour::kSteady:
      break;
    case Behaviour::kDiurnal:
      diurnal();
      break;
    case Behaviour::kGcSawtooth:
      sawtooth(0.05, 0.6);
      break;
    case Behaviour::kCacheWarmup:
      if (Uniform(Hash(h, 6)) < 0.5) {
        s->first_sample_s = start + static_cast<int64_t>(Between(Hash(h, 7), 0, window / 2));
      }
      s->amplitude_fraction = LogBetween(Hash(h, 4), 0.2, 2.0);
      s->period_s = static_cast<int64_t>(LogBetween(Hash(h, 5), 0.3 * kHour, 6 * kHour));
      break;
    case Behaviour::kStepOnReload:
      s->amplitude_fraction =
          (Uniform(Hash(h, 6)) < 0.3 ? -1 : 1) * Between(Hash(h, 4), 0.05, 0.40);
      s->event_s = start + static_cast<int64_t>(Between(Hash(h, 5), 0.2, 0.9) * window);
      break;
    case Behaviour::kSpikes:
      s->amplitude_fraction = LogBetween(Hash(h, 4), 0.2, 3.0);
      break;
    case Behaviour::kRegularRestarts:
      s->period_s = static_cast<int64_t>(LogBetween(Hash(h, 5), 2, 48) * kHour);
      s->duration2_s = static_cast<int64_t>(LogBetween(Hash(h, 7), 5 * 60, 2 * kHour));
      break;
    case Behaviour::kOomRestarts:
      break;
    case Behaviour::kRolloutFlat:
      rollout_to_new_level();
      break;
    case Behaviour::kBatchRamp:
      batch();
      break;
    case Behaviour::kSlowPlateau:
      if (Uniform(Hash(h, 6)) < 0.3) {
        s->first_sample_s = start + static_cast<int64_t>(Between(Hash(h, 7), 0, window / 2));
      }
      s->event_s = s->first_sample_s;
      s->amplitude_fraction = LogBetween(Hash(h, 4), 0.1, 1.0);
      s->duration2_s = static_cast<int64_t>(LogBetween(Hash(h, 5), 4, 36) * kHour);
      break;
    case Behaviour::kGappy:
      s->gaps = 2 + static_cast<int>(Hash(h, 10) % 5);
      break;
    case Behaviour::kSlabWarmup:
      slab();
      break;
    case Behaviour::kSlowLeak:
      s->base_bytes = static_cast<uint64_t>(LogBetween(Hash(h, 1), 200, 2000) * kMiB);
      s->noise_fraction = LogBetween(Hash(h, 2), 0.0005, 0.003);
      s->leak_bytes_per_hour = LogBetween(Hash(h, 31), 1, 3) * kMiB;
      s->leak_start_s = leak_from(0.2, 0.6);
      break;
    case Behaviour::kFastLeak:
      s->leak_bytes_per_hour = relative_rate(0.02, 0.15);
      s->leak_start_s = leak_from(0, 0.5);
      break;
    case Behaviour::kRolloutLeak:
      s->event_s = rollout;
      s->duration2_s = 20 * 60;
      s->level_fraction = 1;
      s->leak_bytes_per_hour = relative_rate(0.003, 0.03);
      s->leak_start_s = rollout;
      break;
    case Behaviour::kLeakUnderSawtooth:
      sawtooth(0.1, 0.4);
      s->leak_bytes_per_hour = relative_rate(0.003, 0.02);
      s->leak_start_s = leak_from(0.2, 0.5);
      break;
    case Behaviour::kLeakResetByRestarts:
      s->period_s = static_cast<int64_t>(Between(Hash(h, 5), 6, 12) * kHour);
      s->duration2_s = 20 * 60;
      s->leak_bytes_per_hour = relative_rate(0.01, 0.04);
      s->leak_start_s = start;
      break;
    case Behaviour::kSlabLeak:
      slab();
      s->level_fraction = 1;  // no warm-up
      s->leak_bytes_per_hour = relative_rate(0.005, 0.03);
      s->leak_start_s = leak_from(0.2, 0.5);
      break;
    case Behaviour::kLeakUnderBigSawtooth: {
      s->base_bytes = static_cast<uint64_t>(LogBetween(Hash(h, 1), 1024, 4096) * kMiB);
      const double swing = Between(Hash(h, 4), 100, 500) * kMiB;
      s->amplitude_fraction = swing / static_cast<double>(s->base_bytes);
      s->period_s = static_cast<int64_t>(LogBetween(Hash(h, 5), 2 * 60, 30 * 60));
      s->leak_bytes_per_hour = LogBetween(Hash(h, 31), 5, 60) * kMiB;
      s->leak_start_s = leak_from(0.2, 0.5);
      break;
    }
    case Behaviour::kLeakDailyRestarts:
      s->period_s = kDay + static_cast<int64_t>(Between(Hash(h, 5), -1800, 1800));
      s->duration2_s = static_cast<int64_t>(LogBetween(Hash(h, 7), 5 * 60, kHour));
      s->leak_bytes_per_hour = relative_rate(0.01, 0.06);
      s->leak_start_s = start;
      break;
    case Behaviour::kRolloutThatLeaks:
      rollout_to_new_level();
      s->leak_bytes_per_hour = relative_rate(0.003, 0.03);
      s->leak_start_s = rollout;
      break;
    case Behaviour::kLeakUnderDiurnal:
      diurnal();
      s->amplitude_fraction = std::min(s->amplitude_fraction, 0.3);
      s->leak_bytes_per_hour = relative_rate(0.002, 0.02);
      s->leak_start_s = leak_from(0.2, 0.5);
      break;
    case Behaviour::kBatchRampLeak:
      batch();
      s->leak_bytes_per_hour = relative_rate(0.002, 0.02);
      s->leak_start_s = leak_from(0.2, 0.5);
      break;
    case Behaviour::kSlabLeakAfterWarmup:
      slab();
      s->leak_bytes_per_hour = relative_rate(0.005, 0.03);
      s->leak_start_s = leak_from(0.35, 0.6);
      break;
    case Behaviour::kRestartsUnderDiurnal:
      diurnal();
      s->amplitude_fraction = LogBetween(Hash(h, 4), 0.1, 0.4);
      s->restart_s = static_cast<int64_t>(LogBetween(Hash(h, 12), 2, 8) * kHour);
      s->duration2_s = static_cast<int64_t>(LogBetween(Hash(h, 7), 5 * 60, kHour));
      break;
    case Behaviour::kWarmupRollout:
    case Behaviour::kWarmupRolloutLeak:
      // A cache warm before the window, restarted into the new version: it fills again
      // over 4-12 h (three time constants), after every start.
      s->event_s = rollout;
      s->level_fraction = 1;
      s->duration2_s = static_cast<int64_t>(LogBetween(Hash(ch, 7), 4, 12) * kHour / 3);
      if (s->behaviour == Behaviour::kWarmupRolloutLeak) {
        s->leak_bytes_per_hour = LogBetween(Hash(h, 31), 6, 44) * kMiB;
        s->leak_start_s = rollout;
      }
      break;
    case Behaviour::kLeakIntoLimit:
      s->base_bytes = static_cast<uint64_t>(LogBetween(Hash(h, 1), 200, 4000) * kMiB);
      s->leak_bytes_per_hour = relative_rate(0.1, 0.5);
      s->leak_start_s = leak_from(0.1, 0.5);
      break;
  }
  // A quarter of the leaks that can be were already running when watching began.
  const bool can_run_before =
      s->behaviour == Behaviour::kSlowLeak || s->behaviour == Behaviour::kFastLeak ||
      s->behaviour == Behaviour::kLeakUnderSawtooth ||
      s->behaviour == Behaviour::kLeakUnderBigSawtooth ||
      s->behaviour == Behaviour::kLeakUnderDiurnal || s->behaviour == Behaviour::kBatchRampLeak ||
      s->behaviour == Behaviour::kSlabLeak || s->behaviour == Behaviour::kLeakIntoLimit;
  if (can_run_before && Uniform(Hash(h, 32)) < 0.25) {
    s->leak_start_s = start - static_cast<int64_t>(LogBetween(Hash(h, 33), kHour, 2 * kDay));
  }
  // Besides the gappy ones, some series of every kind go silent a few times.
  if (s->gaps == 0 && Uniform(Hash(h, 11)) < 0.08) s->gaps = 1 + static_cast<int>(Hash(h, 12) % 3);
}

bool FleetGenerator::SampleAt(size_t index, int64_t t, SyntheticSample* out) {
  const SeriesSpec& s = series_[index];
  if (t < s.first_sample_s) return false;
  out->limit_bytes = 0;
  out->oom_kills = 0;
  if (spec_.profile == Profile::kHard) return SampleHard(s, t, out);
  const uint64_t h = s.seed;
  // A few series go silent for a few hours once (a host reboot, a network partition).
  if (Uniform(Hash(h, 50)) < 0.06) {
    const int64_t gap_start =
        spec_.start_s + static_cast<int64_t>(Between(Hash(h, 51), 0.2, 0.8) * spec_.duration_s);
    if (t >= gap_start &&
        t < gap_start + static_cast<int64_t>(Between(Hash(h, 52), 2, 6) * kHour)) {
      return false;
    }
  }
  const double base = static_cast<double>(s.base_bytes);
  double bytes = base;
  int64_t instance = 0;
  int64_t instance_start = s.first_sample_s;
  const double since_start = static_cast<double>(t - s.first_sample_s);

  // Restart schedules.
  auto periodic = [&](int64_t period) {
    instance = (t - s.first_sample_s + s.phase_s) / period;
    instance_start = std::max(s.first_sample_s, s.first_sample_s - s.phase_s + instance * period);
  };
  double warm = 1.0;  // fraction of the normal level reached since the instance started
  switch (s.behaviour) {
    case Behaviour::kRegularRestarts:
    case Behaviour::kLeakResetByRestarts:
      periodic(s.period_s);
      if (instance > 0) {
        warm = 1.0 - 0.7 * std::exp(-static_cast<double>(t - instance_start) / (20.0 * 60));
      }
      break;
    case Behaviour::kOomRestarts: {
      const OomHistory oom = OomBursts(h, spec_.start_s, t);
      instance = oom.kills;
      if (oom.kills > 0) {
        instance_start = oom.last_kill_s;
        warm = 1.0 - 0.7 * std::exp(-static_cast<double>(t - instance_start) / (15.0 * 60));
      }
      bytes *= 1.0 + oom.burst;
      break;
    }
    case Behaviour::kRolloutLeak:
      if (t >= s.leak_start_s) {
        instance = 1;
        instance_start = s.leak_start_s;
        warm = 1.0 - 0.7 * std::exp(-static_cast<double>(t - instance_start) / (20.0 * 60));
      }
      break;
    default:
      break;
  }
  bytes *= warm;

  // Shapes.
  switch (s.behaviour) {
    case Behaviour::kDiurnal: {
      // Load follows the clock: the same phase on every host of the component.
      const double day_phase = 2 * kPi * static_cast<double>((t + s.seed % 3600) % kDay) / kDay;
      const double day = static_cast<double>((t - spec_.start_s) / kDay);
      const double amplitude = s.amplitude_fraction * (1 + 0.03 * Normal(Hash(h, 70, day)));
      bytes *= 1 + amplitude * std::sin(day_phase);
      break;
    }
    case Behaviour::kGcSawtooth:
    case Behaviour::kLeakUnderSawtooth: {
      const double cycle =
          static_cast<double>((t + s.phase_s) % s.period_s) / static_cast<double>(s.period_s);
      bytes *= 1 + s.amplitude_fraction * cycle;
      break;
    }
    case Behaviour::kCacheWarmup:
      bytes *= 1 + s.amplitude_fraction * (1 - std::exp(-since_start / s.period_s));
      break;
    case Behaviour::kStepOnReload:
      if (t >= s.event_s) bytes *= 1 + s.amplitude_fraction;
      break;
    case Behaviour::kSpikes: {
      const int64_t slot = (t - spec_.start_s) / kHour;
      const uint64_t sh = Hash(h, 80, slot);
      if (Uniform(sh) < 0.35) {
        const int64_t spike_start =
            spec_.start_s + slot * kHour + static_cast<int64_t>(Between(Mix(sh), 0, 40 * 60));
        const int64_t spike_len = static_cast<int64_t>(Between(Mix(sh ^ 1), 60, 20 * 60));
        if (t >= spike_start && t < spike_start + spike_len) bytes *= 1 + s.amplitude_fraction;
      }
      break;
    }
    default:
      break;
  }

  // Leaks.
  if (s.leaking && t >= s.leak_start_s) {
    const int64_t leaking_since = s.behaviour == Behaviour::kLeakResetByRestarts
                                      ? std::max(instance_start, s.leak_start_s)
                                      : s.leak_start_s;
    bytes += s.leak_bytes_per_hour * static_cast<double>(t - leaking_since) / kHour;
  }

  Finish(s, t, instance, instance_start, bytes, out);
  return true;
}

void FleetGenerator::Finish(const SeriesSpec& s, int64_t t, int64_t instance,
                            int64_t instance_start, double bytes, SyntheticSample* out) {
  const uint64_t h = s.seed;
  bytes *= 1 + s.noise_fraction * Normal(Hash(h, 90, static_cast<uint64_t>(t)));
  instance_ =
      fmt::format("{}@{}", 1000 + (h % 30000) + static_cast<uint64_t>(instance), instance_start);
  // Hosts' clocks disagree by up to a minute, and samples jitter by a few seconds.
  const int64_t skew = static_cast<int64_t>(Hash(h, 91) % 121) - 60;
  const int64_t jitter = static_cast<int64_t>(Hash(h, 92, static_cast<uint64_t>(t)) % 7) - 3;
  out->timestamp_s = t + skew + jitter;
  out->instance = instance_;
  // The kernel keeps a cgroup under its limit (reclaiming, then killing).
  if (s.limit_bytes > 0) bytes = std::min(bytes, static_cast<double>(s.limit_bytes));
  out->bytes = static_cast<uint64_t>(std::max(0.0, bytes));
}

bool FleetGenerator::SampleHard(const SeriesSpec& s, int64_t t, SyntheticSample* out) {
  const uint64_t h = s.seed;
  for (int g = 0; g < s.gaps; ++g) {
    const int64_t gap_start =
        spec_.start_s +
        static_cast<int64_t>(Between(Hash(h, 50, g), 0.05, 0.95) * spec_.duration_s);
    const double longest = s.behaviour == Behaviour::kGappy ? 10 * kHour : 6 * kHour;
    if (t >= gap_start &&
        t < gap_start + static_cast<int64_t>(LogBetween(Hash(h, 51, g), 300, longest))) {
      return false;
    }
  }
  int64_t instance = 0;
  int64_t instance_start = s.first_sample_s;
  const double bytes = LevelHard(s, t, &instance, &instance_start);
  out->limit_bytes = s.limit_bytes;
  out->oom_kills =
      s.behaviour == Behaviour::kOomRestarts
          ? static_cast<uint64_t>(OomBursts(h, spec_.start_s, t).kills)
          : static_cast<uint64_t>(std::upper_bound(s.oom_kills_s.begin(), s.oom_kills_s.end(), t) -
                                  s.oom_kills_s.begin());
  Finish(s, t, instance, instance_start, bytes, out);
  return true;
}

double FleetGenerator::LevelHard(const SeriesSpec& s, int64_t t, int64_t* instance_out,
                                 int64_t* instance_start_out, bool with_leak) const {
  const uint64_t h = s.seed;
  double bytes = static_cast<double>(s.base_bytes);
  int64_t instance = 0;
  int64_t instance_start = s.first_sample_s;
  // From `from` (a fraction of the level) to the whole of it, with time constant tau.
  auto warm_up = [&](double from, int64_t since, int64_t tau) {
    return 1.0 - (1.0 - from) * std::exp(-static_cast<double>(since) / static_cast<double>(tau));
  };

  // Restarts and rollouts.
  switch (s.behaviour) {
    case Behaviour::kRegularRestarts:
    case Behaviour::kLeakResetByRestarts:
    case Behaviour::kLeakDailyRestarts:
      instance = (t - s.first_sample_s + s.phase_s) / s.period_s;
      instance_start =
          std::max(s.first_sample_s, s.first_sample_s - s.phase_s + instance * s.period_s);
      if (instance > 0) bytes *= warm_up(0.3, t - instance_start, s.duration2_s);
      break;
    case Behaviour::kRestartsUnderDiurnal: {
      const auto offset = static_cast<int64_t>(Hash(h, 14) % static_cast<uint64_t>(s.restart_s));
      instance = (t - s.first_sample_s + offset) / s.restart_s;
      instance_start =
          std::max(s.first_sample_s, s.first_sample_s - offset + instance * s.restart_s);
      if (instance > 0) bytes *= warm_up(0.3, t - instance_start, s.duration2_s);
      break;
    }
    case Behaviour::kOomRestarts: {
      const OomHistory oom = OomBursts(h, spec_.start_s, t);
      instance = oom.kills;
      if (oom.kills > 0) {
        instance_start = oom.last_kill_s;
        bytes *= warm_up(0.3, t - instance_start, 15 * 60);
      }
      bytes *= 1.0 + oom.burst;
      break;
    }
    case Behaviour::kRolloutFlat:
    case Behaviour::kRolloutLeak:
    case Behaviour::kRolloutThatLeaks:
      if (t >= s.event_s) {
        instance = 1;
        instance_start = s.event_s;
        bytes *= s.level_fraction * warm_up(0.3, t - s.event_s, s.duration2_s);
      }
      break;
    case Behaviour::kWarmupRollout:
    case Behaviour::kWarmupRolloutLeak:
      if (t >= s.event_s) {
        instance = 1;
        instance_start = s.event_s;
        bytes *= warm_up(0.2, t - s.event_s, s.duration2_s);
      }
      break;
    default:
      break;
  }
  // An OOM kill restarts the instance (at once, under systemd's Restart=): it starts low
  // again, warms up, and its leak starts over.
  const auto kills = static_cast<int64_t>(
      std::upper_bound(s.oom_kills_s.begin(), s.oom_kills_s.end(), t) - s.oom_kills_s.begin());
  if (kills > 0) {
    const int64_t last_kill = s.oom_kills_s[static_cast<size_t>(kills - 1)];
    if (last_kill >= instance_start) {
      const bool cache =
          s.behaviour == Behaviour::kWarmupRollout || s.behaviour == Behaviour::kWarmupRolloutLeak;
      // The level computed so far is the instance's before the kill: start it over.
      bytes = static_cast<double>(s.base_bytes) *
              (s.behaviour == Behaviour::kRolloutThatLeaks ? s.level_fraction : 1.0) *
              warm_up(cache ? 0.2 : 0.3, t - last_kill, cache ? s.duration2_s : 15 * 60);
      instance_start = last_kill;
    }
    instance += 1000 * kills;
  }

  // Shapes.
  const double since_first = static_cast<double>(t - s.first_sample_s);
  switch (s.behaviour) {
    case Behaviour::kDiurnal:
    case Behaviour::kLeakUnderDiurnal:
    case Behaviour::kRestartsUnderDiurnal: {
      const double day_phase = 2 * kPi * static_cast<double>((t + s.phase_s) % kDay) / kDay;
      const auto day = static_cast<uint64_t>((t - spec_.start_s) / kDay);
      const double amplitude = s.amplitude_fraction * (1 + 0.1 * Normal(Hash(h, 70, day)));
      bytes *= 1 + amplitude * (std::sin(day_phase) +
                                s.level_fraction * std::sin(2 * day_phase + s.seed % 7));
      break;
    }
    case Behaviour::kGcSawtooth:
    case Behaviour::kLeakUnderSawtooth:
    case Behaviour::kLeakUnderBigSawtooth: {
      const double cycle =
          static_cast<double>((t + s.phase_s) % s.period_s) / static_cast<double>(s.period_s);
      bytes += static_cast<double>(s.base_bytes) * s.amplitude_fraction * cycle;
      break;
    }
    case Behaviour::kCacheWarmup:
      bytes *= 1 + s.amplitude_fraction * (1 - std::exp(-since_first / s.period_s));
      break;
    case Behaviour::kSlowPlateau:
      bytes *= 1 + s.amplitude_fraction *
                       (1 - std::exp(-static_cast<double>(t - s.event_s) / s.duration2_s));
      break;
    case Behaviour::kStepOnReload:
      if (t >= s.event_s) bytes *= 1 + s.amplitude_fraction;
      break;
    case Behaviour::kSpikes: {
      const int64_t slot = (t - spec_.start_s) / kHour;
      const uint64_t sh = Hash(h, 80, slot);
      if (Uniform(sh) < 0.35) {
        const int64_t spike_start =
            spec_.start_s + slot * kHour + static_cast<int64_t>(Between(Mix(sh), 0, 40 * 60));
        const int64_t spike_len = static_cast<int64_t>(Between(Mix(sh ^ 1), 60, 20 * 60));
        if (t >= spike_start && t < spike_start + spike_len) bytes *= 1 + s.amplitude_fraction;
      }
      break;
    }
    case Behaviour::kBatchRamp:
    case Behaviour::kBatchRampLeak: {
      // Ramp k starts about period × k after the phase, lasts about duration2_s, climbs
      // about amplitude, and is released over minutes.
      const int64_t k = (t - spec_.start_s + s.phase_s) / s.period_s;
      for (int64_t cycle = k - 1; cycle <= k; ++cycle) {
        if (cycle < 0) continue;
        const uint64_t ch = Hash(h, 75, static_cast<uint64_t>(cycle));
        const int64_t ramp_start = spec_.start_s - s.phase_s + cycle * s.period_s +
                                   static_cast<int64_t>(Between(ch, -3600, 3600));
        const auto ramp_len = static_cast<int64_t>(s.duration2_s * Between(Mix(ch), 0.8, 1.2));
        const auto release = static_cast<int64_t>(Between(Mix(ch ^ 2), 60, 30 * 60));
        const double height = s.amplitude_fraction * Between(Mix(ch ^ 3), 0.8, 1.2);
        const int64_t into = t - ramp_start;
        if (into >= 0 && into < ramp_len) {
          bytes *= 1 + height * static_cast<double>(into) / ramp_len;
        } else if (into >= ramp_len && into < ramp_len + release) {
          bytes *= 1 + height * (1 - static_cast<double>(into - ramp_len) / release);
        }
      }
      break;
    }
    case Behaviour::kSlabWarmup:
    case Behaviour::kSlabLeakAfterWarmup:
      bytes *= warm_up(s.level_fraction, t - s.first_sample_s, s.duration2_s);
      break;
    default:
      break;
  }

  // Leaks: the memory leaked since the leak began, or since the instance started when a
  // restart takes the leaked memory with it (every OOM kill does).
  if (with_leak && s.leaking && t >= s.leak_start_s) {
    const bool per_instance = s.behaviour == Behaviour::kLeakResetByRestarts ||
                              s.behaviour == Behaviour::kLeakDailyRestarts || kills > 0;
    const int64_t leaking_since =
        per_instance ? std::max(instance_start, s.leak_start_s) : s.leak_start_s;
    bytes += s.leak_bytes_per_hour * static_cast<double>(t - leaking_since) / kHour;
  }
  *instance_out = instance;
  *instance_start_out = instance_start;
  return bytes;
}

void FleetGenerator::AddLimits() {
  const int64_t end = spec_.start_s + spec_.duration_s;
  constexpr int64_t kStep = 300;
  int64_t instance = 0;
  int64_t instance_start = 0;
  for (SeriesSpec& s : series_) {
    const uint64_t h = s.seed;
    if (s.behaviour == Behaviour::kOomRestarts) {
      s.limit_bytes = static_cast<uint64_t>(2.5 * static_cast<double>(s.base_bytes));
      continue;  // its bursts are what the kernel kills (OomBursts)
    }
    // Kernel caches are the host's; of the services, a quarter have no limit of their own.
    if (IsSlab(s.behaviour) || Uniform(Hash(h, 40)) < 0.25) continue;
    // Limited at 1.3-3 times their normal size: the most they take without their leak.
    double peak = 0;
    for (int64_t t = s.first_sample_s; t < end; t += kStep) {
      peak = std::max(peak, LevelHard(s, t, &instance, &instance_start, false));
    }
    double limit = peak * LogBetween(Hash(h, 41), 1.3, 3.0);
    // A leak that ran before the window did not get there yet.
    if (s.leaking) {
      limit = std::max(limit, 1.15 * LevelHard(s, s.first_sample_s, &instance, &instance_start));
    }
    s.limit_bytes = static_cast<uint64_t>(limit);
    if (!s.leaking) continue;
    // Where the leak takes it to its limit, the kernel kills it.
    for (int64_t t = s.first_sample_s; t < end; t += kStep) {
      if (LevelHard(s, t, &instance, &instance_start) >= limit) s.oom_kills_s.push_back(t);
    }
  }
}

void FleetGenerator::ForEachSample(
    const std::function<void(size_t series_index, const SyntheticSample&)>& fn) {
  SyntheticSample sample{};
  for (int64_t t = spec_.start_s; t < spec_.start_s + spec_.duration_s; t += spec_.interval_s) {
    for (size_t i = 0; i < series_.size(); ++i) {
      if (SampleAt(i, t, &sample)) fn(i, sample);
    }
  }
}

}  // namespace drip::synthetic
