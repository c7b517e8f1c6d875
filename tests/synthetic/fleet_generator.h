// FleetGenerator: a labeled synthetic fleet for the leak detector's tests and benchmarks.
// Every (host, component) series follows one behaviour — healthy ones that fool naive
// detectors (noise, diurnal load, GC sawtooth, caches that warm up and plateau, steps on
// reload, spikes, regular and OOM restarts) and leaks (fast, slow down to 1 MB/h on a
// 500 MB process, on a subset of hosts, starting mid-window with a rollout, under a
// sawtooth, reset by periodic restarts, kernel slab caches) — and carries its label.
//
// Two profiles. The classic one is what the detector was first built against. The hard
// one (docs/detector.md, "Evaluation") adds the hazards that fooled it on fleets it had
// never seen — versions rolled out to most hosts that settle higher and flat, batch work
// that ramps for hours and releases, strong daily load, growth that levels off after a
// day, gappy series, slab caches that warm up — and leaks hidden by them (under a
// sawtooth of hundreds of MB, reset by daily restarts, arriving with a rollout, under a
// daily swing, on a batch host, in a slab after its warm-up), every parameter drawn from
// a wide range per series. Detectors are tuned on development seeds only and reported on
// held-out seeds (kDevelopmentSeeds, kHeldOutSeeds).
//
// Samples are a pure function of (seed, series, time): nothing is stored, so a suite of
// any size streams in global time order (as a collector sees it) or series by series.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace drip::synthetic {

enum class Behaviour : uint8_t {
  // Healthy (decoys).
  kSteady,
  kDiurnal,
  kGcSawtooth,
  kCacheWarmup,
  kStepOnReload,
  kSpikes,
  kRegularRestarts,
  kOomRestarts,
  // Leaks.
  kFastLeak,
  kSlowLeak,
  kRolloutLeak,
  kLeakUnderSawtooth,
  kLeakResetByRestarts,
  kSlabLeak,
  // Healthy, hard profile.
  kRolloutFlat,  // a new version on most hosts: a restart, a warm-up, a higher flat level
  kBatchRamp,    // batch work ramping for 4-12 h, then released, day after day
  kSlowPlateau,  // growth that levels off after many hours (kernel caches, indexes)
  kGappy,        // steady with several silences of minutes to hours
  kSlabWarmup,   // a kernel slab cache filling after boot, then flat
  // Leaks, hard profile.
  kLeakUnderBigSawtooth,  // a GC sawtooth of 100-500 MB over a slow leak
  kLeakDailyRestarts,     // restarted every day, leaking in every instance
  kRolloutThatLeaks,      // the new version settles higher and leaks
  kLeakUnderDiurnal,      // a daily load swing over a leak
  kBatchRampLeak,         // batch ramps on a host that also leaks
  kSlabLeakAfterWarmup,   // a slab cache that warms up, and leaks later
  // Hard profile, issue 30: what a detector that knows no limit, and asks every series
  // for days of evidence, still got wrong.
  kRestartsUnderDiurnal,  // restarted every few hours under a daily load swing
  kWarmupRollout,         // a cache service rolled out with restarts, warming up for hours
  kLeakIntoLimit,         // a fast leak into the memory limit: OOM-killed again and again
  kWarmupRolloutLeak,     // a leaking version rolled out to a cache that warms up for hours
};
inline constexpr int kBehaviourCount = 29;

const char* BehaviourName(Behaviour behaviour);
bool IsLeak(Behaviour behaviour);

struct SeriesSpec {
  std::string host;
  std::string component;
  Behaviour behaviour = Behaviour::kSteady;
  bool leaking = false;
  int64_t first_sample_s = 0;  // the series may start mid-window
  // When the leak begins (-1: no leak); before first_sample_s for a leak already running
  // when watching began.
  int64_t leak_start_s = -1;
  double leak_bytes_per_hour = 0;
  uint64_t base_bytes = 0;
  double noise_fraction = 0;      // relative sd of per-sample noise
  double amplitude_fraction = 0;  // diurnal / sawtooth / step / warm-up size
  int64_t period_s = 0;           // diurnal day, GC cycle, restart interval
  int64_t phase_s = 0;
  int64_t event_s = 0;  // step time (reload), rollout time
  uint64_t seed = 0;
  // Hard profile: a second shape's size and time constant (ramp length, warm-up τ), and
  // how many silences the series has.
  double level_fraction = 0;  // a rollout's new level, relative to base
  int64_t duration2_s = 0;    // batch ramp length; warm-up or plateau time constant
  int gaps = 0;
  int64_t restart_s = 0;  // kRestartsUnderDiurnal: the restart interval (period_s is the day)
  // The memory limit the series runs under, its cgroup's (0: none, the host's memory is
  // what runs out), and when the kernel OOM-kills it there, in time order. A leak that
  // reaches its limit is killed, comes back at once as a new instance and leaks again;
  // of the healthy series only kOomRestarts is killed (its bursts). The cgroup outlives
  // its instances, so its kill counter only goes up.
  uint64_t limit_bytes = 0;
  std::vector<int64_t> oom_kills_s;
  int host_index = 0;
};

enum class Profile : uint8_t { kClassic, kHard };

// Seeds of the hard profile: tune on the first, report on the second, which no change may
// be tuned against.
inline constexpr uint64_t kDevelopmentSeeds[] = {11, 12, 13};
inline constexpr uint64_t kHeldOutSeeds[] = {9001, 9002, 9003, 9004, 9005};

struct FleetSpec {
  uint64_t seed = 1;
  Profile profile = Profile::kClassic;
  int hosts = 40;
  // Healthy components every host runs, and leaking components (each leaks on all, some
  // or one of the hosts running it); each gets a behaviour in turn so all are covered.
  int healthy_components = 16;
  int leaking_components = 8;
  int64_t start_s = 1'700'000'000;
  int64_t duration_s = 3 * 86400;
  int64_t interval_s = 60;
};

// One sample of one series.
struct SyntheticSample {
  int64_t timestamp_s;
  std::string_view instance;  // valid until the next sample of any series is generated
  uint64_t bytes;
  uint64_t limit_bytes = 0;  // SeriesSpec::limit_bytes
  uint64_t oom_kills = 0;    // the cgroup's OOM kills so far
};

class FleetGenerator {
 public:
  explicit FleetGenerator(const FleetSpec& spec);

  const FleetSpec& spec() const { return spec_; }
  const std::vector<SeriesSpec>& series() const { return series_; }
  // Each host's memory (bytes), by host index: what a series without a limit runs out of.
  uint64_t host_memory(int host) const { return host_memory_[static_cast<size_t>(host)]; }
  const std::string& host_name(int host) const { return host_names_[static_cast<size_t>(host)]; }

  // The sample of series `index` at `t` (a multiple of the interval), or false when the
  // series has no sample then (not started yet, or a gap).
  bool SampleAt(size_t index, int64_t t, SyntheticSample* out);

  // What series `s` runs over the window, as (since, version) in time order: "1.0" from its
  // first sample, and "2.0" from the rollout on a host a rollout reached. What its agent
  // would report (drip.v1.InstanceVersion), for the rollout correlation.
  static std::vector<std::pair<int64_t, std::string>> Versions(const SeriesSpec& s);

  // Every sample of the fleet in time order (all series at t, then t + interval, ...).
  void ForEachSample(const std::function<void(size_t series_index, const SyntheticSample&)>& fn);

  // The series of a suite with the given seed: small enough for a unit test.
  static FleetSpec TestSuite(uint64_t seed);
  // The benchmark's suite: hundreds of hosts over four days.
  static FleetSpec BenchmarkSuite(uint64_t seed);
  // The hard profile: 150 hosts over five days at 60 s, every hazard.
  static FleetSpec HardSuite(uint64_t seed);
  // The hard profile small enough for a unit test.
  static FleetSpec HardTestSuite(uint64_t seed);

 private:
  void AddClassicComponents();
  void AddHardComponents();
  void Add(int host, const std::string& component, Behaviour behaviour, uint64_t h);
  // The hard profile's parameters for a series (its SeriesSpec has the common ones).
  void DrawHard(int host, SeriesSpec* s, uint64_t component_hash);
  bool SampleHard(const SeriesSpec& s, int64_t t, SyntheticSample* out);
  // The hard profile's level of `s` at `t` before noise, the OOM kills of s.oom_kills_s up
  // to `t` included (each one restarts the instance and its leak), and its instance.
  double LevelHard(const SeriesSpec& s, int64_t t, int64_t* instance, int64_t* instance_start,
                   bool with_leak = true) const;
  // Draws the hard profile's memory limits and finds where each series is OOM-killed.
  void AddLimits();
  // The instance name and the sample's skewed, jittered time, as every profile writes them.
  void Finish(const SeriesSpec& s, int64_t t, int64_t instance, int64_t instance_start,
              double bytes, SyntheticSample* out);

  FleetSpec spec_;
  std::vector<SeriesSpec> series_;
  std::vector<uint64_t> host_memory_;
  std::vector<std::string> host_names_;
  std::string instance_;  // backing store of SyntheticSample::instance
};

}  // namespace drip::synthetic
