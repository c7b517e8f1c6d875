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
  }
  return "unknown";
}

bool IsLeak(Behaviour behaviour) { return behaviour >= Behaviour::kFastLeak; }

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

FleetGenerator::FleetGenerator(const FleetSpec& spec) : spec_(spec) {
  const int64_t start = spec.start_s;
  const int64_t window = spec.duration_s;
  auto add = [&](int host, const std::string& component, Behaviour behaviour, uint64_t h) {
    SeriesSpec s;
    s.host = fmt::format("host-{:04d}", host);
    s.component = component;
    s.behaviour = behaviour;
    s.leaking = IsLeak(behaviour);
    s.seed = h;
    s.first_sample_s = start;
    s.base_bytes = static_cast<uint64_t>(Between(Hash(h, 1), 100, 2000) * kMiB);
    s.noise_fraction = Between(Hash(h, 2), 0.0005, 0.003);
    s.phase_s = static_cast<int64_t>(Between(Hash(h, 3), 0, kDay));
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
    }
    series_.push_back(std::move(s));
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

bool FleetGenerator::SampleAt(size_t index, int64_t t, SyntheticSample* out) {
  const SeriesSpec& s = series_[index];
  if (t < s.first_sample_s) return false;
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
      // Once a day a burst of work balloons the process until the OOM killer ends it.
      const int64_t day = (t - spec_.start_s) / kDay;
      int64_t kills = 0;
      double burst = 0;
      for (int64_t d = 0; d <= day; ++d) {
        const int64_t burst_start =
            spec_.start_s + d * kDay + static_cast<int64_t>(Between(Hash(h, 60, d), 0, 20 * kHour));
        const int64_t burst_len = static_cast<int64_t>(Between(Hash(h, 61, d), 10 * 60, 40 * 60));
        if (t >= burst_start + burst_len) {
          ++kills;
          instance_start = burst_start + burst_len;
        } else if (t >= burst_start) {
          burst = 1.5 * static_cast<double>(t - burst_start) / burst_len;
        }
      }
      instance = kills;
      if (kills > 0) {
        warm = 1.0 - 0.7 * std::exp(-static_cast<double>(t - instance_start) / (15.0 * 60));
      }
      bytes *= 1.0 + burst;
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

  bytes *= 1 + s.noise_fraction * Normal(Hash(h, 90, static_cast<uint64_t>(t)));
  instance_ =
      fmt::format("{}@{}", 1000 + (h % 30000) + static_cast<uint64_t>(instance), instance_start);
  // Hosts' clocks disagree by up to a minute, and samples jitter by a few seconds.
  const int64_t skew = static_cast<int64_t>(Hash(h, 91) % 121) - 60;
  const int64_t jitter = static_cast<int64_t>(Hash(h, 92, static_cast<uint64_t>(t)) % 7) - 3;
  out->timestamp_s = t + skew + jitter;
  out->instance = instance_;
  out->bytes = static_cast<uint64_t>(std::max(0.0, bytes));
  return true;
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
