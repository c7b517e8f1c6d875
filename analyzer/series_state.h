// SeriesState: the bucketed detector's memory of one (host, component) series, bounded
// (~500 bytes) however long it runs. It folds samples into epochs (keeping each epoch's
// minimum), follows the floor (the minimum of the last few epochs) in log buckets, keeps
// a decaying occupancy histogram of the floor — where the series normally sits, its
// pivot and normal high — and judges climbs against it:
//
//   instance climb  the floor's rise since the current instance's startup grace ended;
//                   judged when the series is young, and when the instance dies;
//   excursion       the rise since the floor left its normal range upward; judged once
//                   the series is established. The histogram is frozen while the
//                   floor is out of range, so a slow leak cannot drag "normal" along
//                   with it; a new level that holds flat is learnt (a step on reload).
//
// LeakDetector owns the states and turns their verdicts into suspects.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <optional>

#include "analyzer/bucket_scale.h"
#include "analyzer/climb.h"
#include "analyzer/detector_config.h"
#include "analyzer/epoch_trend.h"
#include "analyzer/limit_reading.h"
#include "analyzer/suspect.h"

namespace drip::analyzer {

// What the rest of the fleet and the host tell about a series when one of its epochs is
// judged.
struct EpochContext {
  bool fleet_armed = false;  // the component's fleet rule is armed (hosts climbing together)
  // The longest rise any of the component's hosts released by itself, and the longest
  // warm-up its hosts finished (ComponentDrift::SharedCycleSeconds, SharedWarmupSeconds).
  int64_t component_released_rise_s = 0;
  int64_t component_warmup_s = 0;
  uint64_t host_memory_bytes = 0;  // 0: unknown
};

// The memory a series runs out of: its cgroup's limit, or the host's memory when it has
// none (or a larger one), and which of the two it is.
struct EffectiveLimit {
  uint64_t bytes = 0;  // 0: neither is known
  bool cgroup = false;
};

// What closing one epoch concluded about a series.
struct EpochVerdict {
  std::optional<SuspectRule> rule;  // set when a rule flags the series now
  bool climbing = false;            // established and climbing above its normal range
  int band = 0;                     // ComponentDrift band of the floor
  bool instance_ended_climbing = false;
  int64_t longest_released_rise_s = 0;  // the series' own, for ComponentDrift
  int64_t longest_warmup_s = 0;         // the series' own finished warm-up, likewise
};

// The daily cycle read hour by hour: each hour of the last day against the same hour a
// day earlier, and that one against the day before it.
struct DayOverDay {
  int hours = 0;                   // hour pairs compared (up to 2 × 23)
  int higher = 0;                  // ... in which the later floor sat higher
  double least_rise_bytes = 0;     // the least rise of a pair, but for the lowest few
  double median_rise_bytes = 0;    // the median rise of a pair
  double older_bytes_per_day = 0;  // mean rise, the day before against the one before it
  double newer_bytes_per_day = 0;  // ... the last day against the day before
  int64_t since = 0;               // the first hour read (s)
  uint64_t from_bytes = 0;         // the floor's trough over the day before the two
  uint64_t to_bytes = 0;           // ... and over the last day
};

// Evidence behind a verdict, for the suspect's growth, score and reason.
struct ClimbEvidence {
  std::optional<DayOverDay> daily;  // SuspectRule::kDailyClimb
  const Climb* climb = nullptr;
  double growth_bytes_per_hour = 0;
  uint64_t from_bytes = 0;
  uint64_t to_bytes = 0;
  uint64_t normal_high_bytes = 0;
  // SuspectRule::kApproachingLimit: the instance's recent line (from_bytes to to_bytes).
  bool line = false;
  double line_hours = 0;
};

class SeriesState {
 public:
  // --- Epoch bookkeeping, driven by LeakDetector::Observe.
  bool started() const { return epoch_start_ >= 0; }
  int64_t epoch_start() const { return epoch_start_; }
  int64_t last_sample() const { return last_sample_; }
  int64_t first_seen() const { return first_seen_; }
  uint64_t instance_hash() const { return instance_hash_; }
  uint64_t previous_instance_hash() const { return previous_instance_hash_; }
  int64_t instance_start() const { return instance_start_; }
  bool has_open_epoch() const { return epoch_samples_ > 0; }

  void Begin(int64_t epoch_start, int64_t t, uint64_t instance_hash, uint64_t bytes);
  void Fold(int64_t t, uint64_t bytes);
  void OpenEpoch(int64_t epoch_start, int64_t t, uint64_t bytes);
  // After a long silence the steadiness of a young climb cannot be judged across it:
  // its evidence starts again (an excursion above an established range is kept).
  void ForgetInstanceClimb() { instance_climb_.Reset(); }
  // Closes the open epoch and judges the series.
  EpochVerdict CloseEpoch(const DetectorConfig& config, const BucketScale& scale,
                          const EpochContext& context);
  // A new instance (restart) from time t: judges the instance that ended.
  EpochVerdict Restart(const DetectorConfig& config, const BucketScale& scale, int64_t t,
                       uint64_t instance_hash, uint64_t host_memory_bytes);

  // --- The memory limit and OOM kills, read with each sample (LeakDetector::Observe).
  void ReadLimit(const LimitReading& limit);
  void CountOomVictim() {
    if (victim_kills_ < UINT16_MAX) ++victim_kills_;
  }
  uint64_t limit_bytes() const { return limit_bytes_; }
  EffectiveLimit Limit(uint64_t host_memory_bytes) const;
  // Kills counted once, whichever told of them: the cgroup's counter or the victims.
  uint32_t oom_kills() const { return std::max<uint32_t>(counter_kills_, victim_kills_); }

  // --- Evidence for suspects.
  bool established(const DetectorConfig& config) const;
  ClimbEvidence Evidence(const DetectorConfig& config, SuspectRule rule,
                         const BucketScale& scale) const;
  uint64_t CurrentBytes(const BucketScale& scale) const;
  uint64_t NormalBytes(const BucketScale& scale) const;
  int instances_died_climbing() const { return instances_died_climbing_; }
  int instances_killed_growing() const { return instances_killed_growing_; }
  // The instance's recent line that the approaching-limit rule read (valid after a flag
  // by that rule, while the instance lives).
  std::optional<EpochTrend::Line> UrgentLine(const DetectorConfig& config,
                                             const BucketScale& scale) const;
  double last_instance_growth_bytes_per_hour() const { return last_instance_growth_; }
  int32_t last_instance_rise() const { return last_instance_rise_; }
  int64_t last_instance_climb_seconds() const { return last_instance_climb_s_; }

  int32_t suspect_index = -1;  // into LeakDetector's suspects, once flagged
  uint8_t band = 0;            // last reported ComponentDrift band
  bool climbing = false;       // last reported climbing state
  bool spans_gap = false;      // a silence longer than max_gap_seconds was seen
  bool releasing = false;      // counted in ComponentDrift::hosts_releasing
  bool warmed = false;         // counted in ComponentDrift::hosts_warmed

 private:
  static constexpr int kHours = 72;        // hourly floors kept: three days
  static constexpr int kJudgedHours = 48;  // the longest span a climb's pace is read over
  static constexpr int16_t kNoHour = INT16_MAX;
  static constexpr int kBins = 48;
  static constexpr int kBinWidth = 2;  // fine buckets per histogram bin

  int32_t Floor() const;
  // Hourly minima of the epochs, for the floor over a cycle.
  void AddHourly(int64_t t, int32_t floor);
  int32_t MinOverHours(int64_t now, int64_t seconds) const;
  // Rises that fall back by themselves (no restart): what this series normally does.
  // Noise is read from the epochs' own minima, which move more than the hour's floor:
  // a rise of the floor within that noise is chance, not a cycle.
  void TrackReleases(const DetectorConfig& config, int64_t t, int32_t epoch_floor, int32_t floor);
  void AddToHistogram(int32_t floor, uint16_t weight);
  int32_t NormalHigh(const DetectorConfig& config) const;
  // The bottom of the normal range, as NormalHigh is its top.
  int32_t NormalLow(const DetectorConfig& config) const;
  // How long a climb above the normal range must last: min_climb for one that rose a
  // normal range's width above it, less for one that rose several (a fast leak shows in
  // bytes long before it shows in hours), down to kFastestClimbSeconds.
  int64_t RequiredClimbSeconds(const DetectorConfig& config, const Climb& climb) const;
  static constexpr int64_t kFastestClimbSeconds = 3600;
  int32_t Pivot() const;
  // The climb's second half rose at less than `ratio` of its first half's pace, with
  // rise enough for that to mean something.
  static bool SlowingDown(const DetectorConfig& config, const BucketScale& scale,
                          const Climb& climb, double ratio);
  bool JudgeClimb(const DetectorConfig& config, const BucketScale& scale, const Climb& climb,
                  int64_t min_seconds, int min_rise, int min_records) const;
  // The floor's growth over the last stretch is not slower than over the stretch before
  // it (a leak keeps its pace; a cache or a warm-up slows down, often over a longer span
  // than the climb itself). True when there is not enough history to tell.
  bool KeepsItsPace(const DetectorConfig& config, const BucketScale& scale, int64_t now,
                    int64_t span) const;
  // The last day's hours against the two days before, once the instance has lived three
  // days past its startup grace; nullopt before. `rising_only`: nullopt too when more
  // than kNoisyHours pairs did not rise (the rule cannot hold), read from buckets alone.
  static constexpr int kNoisyHours = 3;
  std::optional<DayOverDay> ReadDayOverDay(const DetectorConfig& config, const BucketScale& scale,
                                           int64_t now, bool rising_only) const;
  // A steady climb that reaches the series' limit within a time that a little more
  // evidence would cost: the closer the limit, the shorter the climb needed. Judged from
  // the instance's start (start-up included), above everything the series held before
  // the climb; a series watched for less than a day before it must be nearer still.
  // `eta_hours`: when the line meets the limit, once a steady line was read.
  bool ApproachingLimit(const DetectorConfig& config, const BucketScale& scale, int64_t now,
                        const EffectiveLimit& limit, double* eta_hours);
  // The highest and the median hourly minimum before `before`, over the ring (three days,
  // its earlier instances included): what the series did before a climb. kNoHour when
  // nothing is known.
  struct HourRange {
    int32_t high = kNoHour;
    int32_t median = kNoHour;
  };
  HourRange RangeBefore(int64_t before) const;
  // The end of the last hour whose minimum sat at or below `bucket` (what the floor's rise
  // started from): how long it has climbed. The rise's start when no hour in the ring did.
  int64_t LastHourAtOrBelow(int32_t bucket) const;
  // The approaching-limit rule: a line through an hour or more of epochs explaining this
  // share of their variance; the wait it allows, in hours of climb, with and without a day
  // of history before the climb.
  static constexpr double kUrgentMinR2 = 0.9;
  static constexpr double kSeasonedPatience = 6;
  static constexpr double kYoungPatience = 1;
  static constexpr double kUrgentMaxSpeedUp = 2;        // the newer half's pace over the older's
  static constexpr double kStartingMinHalfRatio = 0.9;  // ... its least, in start-up grace
  // The OOM-kill rule: an instance killed at the end of a steady climb (a line explaining
  // this share, rising at least this share of its room to the limit, its halves within
  // this ratio of each other), this many in a row.
  static constexpr double kKilledMinR2 = 0.6;
  static constexpr double kKilledMinRiseShare = 0.3;
  static constexpr double kKilledMinHalfRatio = 0.4;
  static constexpr int kKilledInstances = 2;
  // Longest rising half of a daily swing: a streak of instances that died climbing and
  // spans more than this is no swing.
  static constexpr int64_t kDailyRiseSeconds = 20 * 3600;
  // An instance that climbed this long is judged by its later thirds when its halves
  // disagree (LateRatio).
  static constexpr int64_t kLongInstanceClimbSeconds = 12 * 3600;
  // The longest garbage collection cycle taken for one: drops further apart are left to
  // the released rises (batch work, daily load).
  static constexpr int64_t kLongestSawtoothSeconds = 6 * 3600;
  // Every hour of the last day (but for a few hours' noise) sat higher than a day
  // earlier, which sat higher than the day before, by a rise that means something and
  // without slowing down: a leak under a daily swing, whose troughs rise as a staircase
  // the climbs cannot read.
  bool GrowsDayOverDay(const DetectorConfig& config, const BucketScale& scale, int64_t now) const;

  // Small fields first: they share a word with the public ones above.
  uint8_t floor_epochs_ = 1;  // config.floor_epochs, for Floor()
  uint8_t instances_died_climbing_ = 0;
  bool hist_started_ = false;
  // OOM kills counted from the cgroup's counter and from victims seen exiting; the kills
  // when the instance started, and how many instances in a row grew until killed.
  uint16_t counter_kills_ = 0;
  uint16_t victim_kills_ = 0;
  uint16_t kills_at_instance_start_ = 0;
  uint8_t instances_killed_growing_ = 0;
  // The epochs the approaching-limit rule's line spans (0: it did not pass).
  uint8_t urgent_epochs_ = 0;
  // The highest epoch minimum of this instance and of the one before it (kNoTop: none):
  // what an instance restarted during its warm-up reached, which the hourly minima miss.
  static constexpr int16_t kNoTop = INT16_MIN;
  int16_t instance_top_ = kNoTop;
  int16_t previous_instance_top_ = kNoTop;
  int64_t epoch_start_ = -1;
  int64_t epoch_last_sample_ = 0;
  int64_t last_sample_ = 0;
  int64_t first_seen_ = 0;
  int64_t instance_start_ = 0;
  int64_t plateau_since_ = 0;
  uint64_t epoch_min_ = 0;
  uint64_t instance_hash_ = 0;
  uint64_t previous_instance_hash_ = 0;
  double last_instance_growth_ = 0;
  uint32_t epoch_samples_ = 0;
  int32_t hist_anchor_ = 0;
  int32_t excursion_high_ = 0;
  // The highest the excursion reached before its climb last restarted (after a fall): the
  // climb's new highs count from there.
  int32_t excursion_prior_high_ = 0;
  int32_t plateau_bucket_ = 0;
  int32_t last_instance_rise_ = 0;
  uint32_t hist_total_ = 0;
  // How much the floor moves from epoch to epoch on its own (EWMA, in 1/16 bucket):
  // a rise must stand well above it to count as released rather than noise.
  int32_t floor_noise_16_ = 0;
  static constexpr int32_t kNoFloor = INT32_MIN;
  int32_t previous_floor_ = kNoFloor;
  int32_t last_drop_bottom_ = 0;  // where the last sharp drop took the epochs' floor
  int32_t own_period_s_ = 0;      // release to release (0: fewer than two releases)
  // Durations, in 32 bits (68 years):
  int32_t last_instance_climb_s_ = 0;
  int32_t pending_rise_s_ = 0;  // the rise that ended, until released or gone on
  int32_t cycle_window_s_ = 0;  // the window of the judged floor (0: the floor itself)
  std::array<uint16_t, kBins> hist_{};
  Climb instance_climb_;
  Climb excursion_;
  // Hourly minima (the least epoch of each hour), newest at hour hourly_newest_ (kNoHour:
  // no sample then), across restarts: what judges the current instance reads from its
  // start on, what the series did before a climb reads them all.
  std::array<int16_t, kHours> hourly_{};  // buckets fit 16 bits (see Climb)
  int64_t hourly_newest_ = -1;
  // Every rise of the floor, restarts aside, followed until it falls back: the longest
  // one released is what the series normally does. A rise that ended is pending until
  // the floor is back halfway down (released) or above its high again (it went on).
  Climb rise_;
  int64_t longest_released_rise_s_ = 0;
  int64_t last_release_t_ = 0;
  int32_t pending_low_ = 0;
  int32_t pending_high_ = 0;
  // Until then the tail of the last warm-up (a climb that slowed down) is still fading:
  // no climb is judged, and the level reached is learnt as normal.
  int64_t fading_until_ = 0;
  // When a climb rule last passed (-1: not in this instance): a pass confirms another
  // within the hour.
  int64_t last_rule_pass_ = -1;
  // The warm-up whose tail is fading began here (-1: none); once the tail has faded with
  // the floor level, it is a finished warm-up of this length.
  int64_t warmup_start_ = -1;
  int64_t longest_warmup_s_ = 0;
  // When the streak of instances that died climbing began (their first climb's start).
  int64_t died_climbing_since_ = 0;
  // The last sharp drop of the epochs' floor (a collection), for a sawtooth's period.
  int64_t last_sharp_drop_t_ = 0;
  // The current instance's epochs: the floor, and the line the limit rules read.
  EpochTrend trend_;
  // The memory limit (0: none of its own), and the OOM kill counter's last value
  // (kNoCounter: none read yet).
  uint64_t limit_bytes_ = 0;
  static constexpr uint32_t kNoCounter = UINT32_MAX;
  uint32_t last_oom_counter_ = kNoCounter;
  // The instance's first sample and the latest one (KiB): what a short instance's life did.
  uint32_t instance_first_kib_ = 0;
  uint32_t last_kib_ = 0;
};

}  // namespace drip::analyzer
