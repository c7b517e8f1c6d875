#include "analyzer/series_state.h"

#include <algorithm>
#include <cmath>

#include "analyzer/component_drift.h"

namespace drip::analyzer {
namespace {

// Bytes in KiB, in 32 bits (4 TiB).
uint32_t Kib(uint64_t bytes) {
  return static_cast<uint32_t>(std::min<uint64_t>(bytes >> 10, UINT32_MAX));
}

}  // namespace

void SeriesState::Begin(int64_t epoch_start, int64_t t, uint64_t instance_hash, uint64_t bytes) {
  first_seen_ = instance_start_ = t;
  instance_hash_ = instance_hash;
  last_sample_ = t;
  OpenEpoch(epoch_start, t, bytes);
}

void SeriesState::Fold(int64_t t, uint64_t bytes) {
  if (t >= last_sample_) last_kib_ = Kib(bytes);
  epoch_min_ = epoch_samples_ == 0 ? bytes : std::min(epoch_min_, bytes);
  ++epoch_samples_;
  epoch_last_sample_ = std::max(epoch_last_sample_, t);
  last_sample_ = std::max(last_sample_, t);
}

void SeriesState::OpenEpoch(int64_t epoch_start, int64_t t, uint64_t bytes) {
  if (instance_first_kib_ == 0) instance_first_kib_ = std::max<uint32_t>(Kib(bytes), 1);
  last_kib_ = Kib(bytes);
  epoch_start_ = epoch_start;
  epoch_min_ = bytes;
  epoch_samples_ = 1;
  epoch_last_sample_ = t;
  last_sample_ = std::max(last_sample_, t);
}

void SeriesState::ReadLimit(const LimitReading& limit) {
  limit_bytes_ = limit.limit_bytes;
  if (!limit.oom_kills) return;
  const auto counter = static_cast<uint32_t>(std::min<uint64_t>(*limit.oom_kills, kNoCounter - 1));
  // The first value read is where counting starts: kills before the series was watched
  // are no evidence about the instances it saw. A counter below the last one belongs to
  // a cgroup made anew, which counts from zero.
  const uint32_t rise = last_oom_counter_ == kNoCounter ? 0
                        : counter >= last_oom_counter_  ? counter - last_oom_counter_
                                                        : counter;
  last_oom_counter_ = counter;
  counter_kills_ =
      static_cast<uint16_t>(std::min<uint64_t>(uint64_t{counter_kills_} + rise, UINT16_MAX));
}

int32_t SeriesState::Floor() const { return trend_.LowestOf(floor_epochs_); }

void SeriesState::AddHourly(int64_t t, int32_t floor) {
  const int64_t hour = t / 3600;
  if (hourly_newest_ < 0 || hour - hourly_newest_ >= kHours) {
    hourly_.fill(kNoHour);
    hourly_newest_ = hour;
  }
  while (hourly_newest_ < hour) {
    ++hourly_newest_;
    hourly_[hourly_newest_ % kHours] = kNoHour;
  }
  if (hour <= hourly_newest_ - kHours) return;  // older than the ring
  int16_t& slot = hourly_[hour % kHours];
  slot = static_cast<int16_t>(std::min<int32_t>(slot, floor));
}

int32_t SeriesState::MinOverHours(int64_t now, int64_t seconds) const {
  const int64_t last = now / 3600;
  // The current instance's hours only: the ring keeps the instances before it too.
  const int64_t first = std::max(
      {last - (seconds + 3599) / 3600 + 1, hourly_newest_ - kHours + 1, instance_start_ / 3600});
  int32_t low = kNoHour;
  for (int64_t hour = first; hour <= std::min(last, hourly_newest_); ++hour) {
    low = std::min<int32_t>(low, hourly_[hour % kHours]);
  }
  return low;
}

void SeriesState::TrackReleases(const DetectorConfig& config, int64_t t, int32_t epoch_floor,
                                int32_t floor) {
  // A garbage collector's sawtooth longer than the floor's window: the epochs' floor
  // climbs through each tooth and the collection drops it at once, well beyond its noise,
  // tooth after tooth. The time from one such drop to the next, when the floor climbed
  // back in between, is a cycle of the series, which the floor over a whole cycle (its
  // trough) flattens, and a leak under it raises. The drops are no noise: left out of it.
  const int32_t noise = (floor_noise_16_ + 15) / 16;
  const bool sharp_drop =
      previous_floor_ != kNoFloor &&
      epoch_floor <= previous_floor_ - std::max(2 * config.min_rise_buckets, 6 * noise);
  if (sharp_drop) {
    const int32_t drop = previous_floor_ - epoch_floor;
    if (last_sharp_drop_t_ > 0 && t - last_sharp_drop_t_ <= kLongestSawtoothSeconds &&
        previous_floor_ - last_drop_bottom_ >= drop / 2) {
      own_period_s_ =
          std::max<int32_t>(own_period_s_, static_cast<int32_t>(t - last_sharp_drop_t_));
    }
    last_sharp_drop_t_ = t;
    last_drop_bottom_ = epoch_floor;
  } else if (rise_.active() && previous_floor_ != kNoFloor) {
    const int32_t step = std::abs(epoch_floor - previous_floor_) * 16;
    floor_noise_16_ += (step - floor_noise_16_) / 8;
  }
  previous_floor_ = epoch_floor;
  if (pending_rise_s_ > 0) {
    if (floor <= pending_low_ + (pending_high_ - pending_low_) / 2) {
      // Back halfway down by itself: the series climbs and releases like that.
      longest_released_rise_s_ = std::max<int64_t>(longest_released_rise_s_, pending_rise_s_);
      // The time from one release to the next is the cycle: twice the rise for a swing,
      // about the rise for a ramp that drops at once.
      if (last_release_t_ > 0) {
        const int64_t interval =
            std::clamp(t - last_release_t_, longest_released_rise_s_, 2 * longest_released_rise_s_);
        own_period_s_ = std::max<int32_t>(own_period_s_, static_cast<int32_t>(interval));
      }
      last_release_t_ = t;
      pending_rise_s_ = 0;
    } else if (floor > pending_high_) {
      pending_rise_s_ = 0;  // it went on rising
    }
  }
  if (rise_.Add(t, floor, config.climb_tolerance_buckets)) return;
  // A rise that stands well above the floor's own noise, and is not a blip.
  if (rise_.rise() >= std::max(2 * config.min_rise_buckets, 6 * noise) && rise_.records() >= 2 &&
      rise_.duration() >= 3600) {
    pending_rise_s_ = static_cast<int32_t>(std::min<int64_t>(rise_.duration(), INT32_MAX));
    pending_low_ = rise_.start_bucket();
    pending_high_ = rise_.max_bucket();
  }
  rise_.Start(t, floor);
}

void SeriesState::AddToHistogram(int32_t floor, uint16_t weight) {
  if (!hist_started_) {
    hist_anchor_ = floor - (kBins / 2) * kBinWidth;
    hist_started_ = true;
  }
  int32_t bin = floor >= hist_anchor_ ? (floor - hist_anchor_) / kBinWidth : 0;
  if (bin >= kBins) {
    // Shift the window up; what falls off the bottom is merged into bin 0 ("low").
    const int32_t shift = bin - (kBins - 1);
    uint32_t low = 0;
    for (int i = 0; i <= std::min<int32_t>(shift, kBins - 1); ++i) low += hist_[i];
    for (int i = 1; i < kBins; ++i) {
      hist_[i] = i + shift < kBins ? hist_[i + shift] : 0;
    }
    hist_[0] = static_cast<uint16_t>(std::min<uint32_t>(low, UINT16_MAX));
    hist_anchor_ += shift * kBinWidth;
    bin = kBins - 1;
  }
  hist_[bin] = static_cast<uint16_t>(std::min<uint32_t>(hist_[bin] + weight, UINT16_MAX));
  hist_total_ += weight;
  // Forget slowly: halving at a cap keeps roughly the last few days in view.
  constexpr uint32_t kCap = 512;
  if (hist_total_ >= kCap) {
    hist_total_ = 0;
    for (auto& count : hist_) {
      count = static_cast<uint16_t>(count / 2);
      hist_total_ += count;
    }
  }
}

int32_t SeriesState::NormalHigh(const DetectorConfig& config) const {
  const double threshold = std::max(1.0, config.normal_occupancy_fraction * hist_total_);
  for (int i = kBins - 1; i >= 0; --i) {
    if (hist_[i] >= threshold) return hist_anchor_ + i * kBinWidth + kBinWidth - 1;
  }
  return hist_anchor_ + kBins * kBinWidth;
}

int32_t SeriesState::NormalLow(const DetectorConfig& config) const {
  const double threshold = std::max(1.0, config.normal_occupancy_fraction * hist_total_);
  for (int i = 0; i < kBins; ++i) {
    if (hist_[i] >= threshold) return hist_anchor_ + i * kBinWidth;
  }
  return hist_anchor_;
}

int64_t SeriesState::RequiredClimbSeconds(const DetectorConfig& config, const Climb& climb) const {
  // The normal range's width, in buckets: how far the series wanders when healthy.
  const int32_t band =
      std::max(NormalHigh(config) - NormalLow(config) + 1, config.normal_high_margin_buckets);
  const double widths = static_cast<double>(climb.max_bucket() - excursion_high_) / band;
  if (widths <= 1) return config.min_climb_seconds;
  return std::max<int64_t>(
      kFastestClimbSeconds,
      static_cast<int64_t>(static_cast<double>(config.min_climb_seconds) / widths));
}

int32_t SeriesState::Pivot() const {
  int best = 0;
  for (int i = 1; i < kBins; ++i) {
    if (hist_[i] > hist_[best]) best = i;
  }
  return hist_anchor_ + best * kBinWidth + kBinWidth / 2;
}

bool SeriesState::established(const DetectorConfig& config) const {
  return last_sample_ - first_seen_ >= config.established_seconds &&
         static_cast<int64_t>(hist_total_) * config.epoch_seconds >=
             std::min<int64_t>(config.established_seconds / 2, 256 * config.epoch_seconds);
}

bool SeriesState::KeepsItsPace(const DetectorConfig& config, const BucketScale& scale, int64_t now,
                               int64_t span) const {
  // The judged floor at three times `span` apart, from the hourly minima.
  const int64_t window = std::max<int64_t>(cycle_window_s_, 3600);
  // Over the instance's whole life past its grace when that is longer: a cache that takes
  // days to fill slows down over days. The oldest hour of the ring may be partial.
  const int64_t lived = now - (instance_start_ + config.startup_grace_seconds) - window;
  span = std::max(span, lived / 2);
  span = std::min<int64_t>(span, (int64_t{kJudgedHours - 1} * 3600 - window) / 2);
  if (span < 3600) return true;
  const int32_t at_now = MinOverHours(now, window);
  const int32_t at_middle = MinOverHours(now - span, window);
  const int32_t at_start = MinOverHours(now - 2 * span, window);
  if (at_now == kNoHour || at_middle == kNoHour || at_start == kNoHour) return true;
  const double recent = scale.BytesAt(at_now) - scale.BytesAt(at_middle);
  const double before = scale.BytesAt(at_middle) - scale.BytesAt(at_start);
  return before <= 0 || recent >= config.min_recent_slope_ratio * before;
}

std::optional<DayOverDay> SeriesState::ReadDayOverDay(const DetectorConfig& config,
                                                      const BucketScale& scale, int64_t now,
                                                      bool rising_only) const {
  constexpr int64_t kDay = 24;  // hours
  // Full hours only: the one under way holds the minimum of part of an hour. Each hour of
  // the last day is read against the same hour a day and two days earlier.
  const int64_t last = now / 3600 - 1;
  const int64_t first = last - (kDay - 2);  // 23 hours: the ring holds 72
  if (last > hourly_newest_ || first - 2 * kDay < hourly_newest_ - kHours + 1 ||
      (first - 2 * kDay) * 3600 < instance_start_ + config.startup_grace_seconds) {
    return std::nullopt;
  }
  DayOverDay read;
  read.since = (first - 2 * kDay) * 3600;
  // The pairs in buckets first: a series that did not rise at (nearly) every hour is
  // answered without converting a bucket to bytes.
  std::array<std::array<int16_t, 3>, 2 * kDay> pairs{};  // later, earlier, day
  int count = 0;
  for (int64_t hour = first; hour <= last; ++hour) {
    for (int16_t day = 0; day < 2; ++day) {  // 0: the day before against the one before it
      const int16_t later = hourly_[(hour - (1 - day) * kDay) % kHours];
      const int16_t earlier = hourly_[(hour - (2 - day) * kDay) % kHours];
      if (later == kNoHour || earlier == kNoHour) continue;
      pairs[count++] = {later, earlier, day};
      if (later > earlier) ++read.higher;
    }
  }
  read.hours = count;
  if (rising_only && read.higher + kNoisyHours < read.hours) return std::nullopt;
  std::array<double, 2 * kDay> rises{};
  double growth[2] = {0, 0};
  int hours[2] = {0, 0};
  for (int i = 0; i < count; ++i) {
    const auto [later, earlier, day] = pairs[i];
    rises[i] = scale.BytesAt(later) - scale.BytesAt(earlier);
    growth[day] += rises[i];
    ++hours[day];
  }
  if (hours[0] == 0 || hours[1] == 0) return std::nullopt;
  read.older_bytes_per_day = growth[0] / hours[0];
  read.newer_bytes_per_day = growth[1] / hours[1];
  // The least rise but for the lowest few: a few hours may be off by noise.
  const int kept = std::min(kNoisyHours, read.hours - 1);
  std::nth_element(rises.begin(), rises.begin() + kept, rises.begin() + read.hours);
  read.least_rise_bytes = rises[kept];
  std::nth_element(rises.begin(), rises.begin() + read.hours / 2, rises.begin() + read.hours);
  read.median_rise_bytes = rises[read.hours / 2];
  read.from_bytes =
      static_cast<uint64_t>(scale.BytesAt(MinOverHours((first - kDay) * 3600, kDay * 3600)));
  read.to_bytes = static_cast<uint64_t>(scale.BytesAt(MinOverHours(last * 3600, kDay * 3600)));
  return read;
}

bool SeriesState::GrowsDayOverDay(const DetectorConfig& config, const BucketScale& scale,
                                  int64_t now) const {
  const std::optional<DayOverDay> read = ReadDayOverDay(config, scale, now, true);
  // At most two hours missing (a gap).
  if (!read || read->hours < 42) return false;
  // Each hour must have risen by what the detector would read as a rise (min_rise_buckets
  // of the floor), on both days, and evenly: by at least half what the typical hour rose.
  // A leak adds the same bytes at every hour. A daily swing whose size wanders from day
  // to day adds at some hours and takes at others; a step (a reload) adds to each hour on
  // one of the two days only. And the second day must keep the first's pace: a warm-up
  // under a daily swing rises day over day too, by less each day.
  const double meaningful = static_cast<double>(read->to_bytes) *
                            (std::pow(1 + config.bucket_width, config.min_rise_buckets) - 1);
  return read->least_rise_bytes >= meaningful &&
         read->least_rise_bytes >= 0.5 * read->median_rise_bytes &&
         read->newer_bytes_per_day >= config.min_recent_slope_ratio * read->older_bytes_per_day;
}

bool SeriesState::SlowingDown(const DetectorConfig& config, const BucketScale& scale,
                              const Climb& climb, double ratio) {
  // A rise of a few buckets cannot show its shape: two halves of it may hold 1 and 0.
  if (climb.rise() < 2 * config.min_rise_buckets) return false;
  return climb.SlopeRatio(scale) < ratio;
}

bool SeriesState::JudgeClimb(const DetectorConfig& config, const BucketScale& scale,
                             const Climb& climb, int64_t min_seconds, int min_rise,
                             int min_records) const {
  // The pace is compared over at least half a day, however short the climb: growth that
  // levels off over many hours looks steady within a few.
  const int64_t span = std::clamp<int64_t>(climb.duration(), 12 * 3600, 24 * 3600);
  // A rise of a few buckets has no shape to read (a slow leak moves one bucket every few
  // hours): its new highs, at different times, are its evidence of being gradual.
  const bool shape_readable = climb.rise() >= 2 * config.min_rise_buckets;
  return climb.active() && climb.last_time() >= fading_until_ && climb.duration() >= min_seconds &&
         climb.rise() >= min_rise && climb.records() >= min_records &&
         (!shape_readable || climb.Steadiness(scale) >= config.min_recent_slope_ratio) &&
         !SlowingDown(config, scale, climb, config.min_recent_slope_ratio) &&
         climb.StillRising(climb.last_time(), config.level_off_seconds) &&
         KeepsItsPace(config, scale, climb.last_time(), span);
}

EffectiveLimit SeriesState::Limit(uint64_t host_memory_bytes) const {
  if (limit_bytes_ > 0 && (host_memory_bytes == 0 || limit_bytes_ < host_memory_bytes)) {
    return {limit_bytes_, true};
  }
  return {host_memory_bytes, false};
}

int64_t SeriesState::LastHourAtOrBelow(int32_t bucket) const {
  // The floor's rise may have started long after the floor left it (flat within the
  // tolerance): the climb is as old as the last hour that still sat at its start.
  for (int64_t hour = hourly_newest_; hour >= 0 && hour > hourly_newest_ - kHours; --hour) {
    const int16_t floor = hourly_[hour % kHours];
    if (floor != kNoHour && floor <= bucket) return (hour + 1) * 3600;
  }
  return rise_.start_time();
}

SeriesState::HourRange SeriesState::RangeBefore(int64_t before) const {
  HourRange range;
  if (hourly_newest_ < 0) return range;
  std::array<int16_t, kHours> hours{};
  int count = 0;
  const int64_t last = std::min(before / 3600 - 1, hourly_newest_);
  for (int64_t hour = std::max(hourly_newest_ - kHours + 1, int64_t{0}); hour <= last; ++hour) {
    const int16_t floor = hourly_[hour % kHours];
    if (floor != kNoHour) hours[count++] = floor;
  }
  if (count == 0) return range;
  range.high = *std::max_element(hours.begin(), hours.begin() + count);
  std::nth_element(hours.begin(), hours.begin() + count / 2, hours.begin() + count);
  range.median = hours[count / 2];
  return range;
}

bool SeriesState::ApproachingLimit(const DetectorConfig& config, const BucketScale& scale,
                                   int64_t now, const EffectiveLimit& limit, double* eta) {
  urgent_epochs_ = 0;
  // An hour of points at least, and (cheap, before any fit) a rise worth reading.
  constexpr int kMinEpochs = 5;
  const int count = trend_.run();
  if (limit.bytes == 0 || count < kMinEpochs ||
      trend_.Newest() - trend_.LowestOf(count) < 2 * config.min_rise_buckets) {
    return false;
  }
  // The longest steady line through the newest points decides: the whole trend, else
  // its newer part (a climb that began after a flat stretch).
  int longer = INT_MAX;
  for (const int n : {count, 12, 8, kMinEpochs}) {
    if (n > count || n >= longer) continue;
    longer = n;
    const std::optional<EpochTrend::Line> line = trend_.Fit(n, scale, config.epoch_seconds);
    if (!line || line->bytes_per_hour <= 0) continue;
    const double rise = line->end_bytes - line->start_bytes;
    const double meaningful =
        line->end_bytes * (std::pow(1 + config.bucket_width, 2 * config.min_rise_buckets) - 1);
    // Steady: not slowing down (a warm-up), nor speeding up sharply (a burst of work
    // setting off, or a climb that began within the line: a shorter line reads it alone).
    // Within an instance's start-up grace, where warm-ups are, the line must not slow
    // down at all: a warm-up's first hour slows by a quarter, a leak's does not.
    const bool starting = now < instance_start_ + config.startup_grace_seconds;
    const double least_ratio = starting ? kStartingMinHalfRatio : config.min_recent_slope_ratio;
    const bool steady =
        line->r2 >= kUrgentMinR2 && rise >= meaningful &&
        line->newer_bytes_per_hour >= least_ratio * line->older_bytes_per_hour &&
        line->newer_bytes_per_hour <= kUrgentMaxSpeedUp * line->older_bytes_per_hour;
    if (!steady) continue;
    // Above everything the series held in the days before the climb, its restarts
    // included, by a quarter of how far its highest stood above its usual (the median
    // hour): a daily peak or a batch ramp it has been through before is no danger,
    // whatever its pace, and their size wanders. An hour's slot of the ring is the least
    // epoch of its hour, as the floor is of the last hour.
    const int64_t climb_start = now - static_cast<int64_t>(line->hours * 3600);
    HourRange before = RangeBefore(climb_start);
    if (previous_instance_top_ != kNoTop) {
      before.high = before.high == kNoHour ? previous_instance_top_
                                           : std::max<int32_t>(before.high, previous_instance_top_);
      if (before.median == kNoHour) before.median = previous_instance_top_;
    }
    if (before.high != kNoHour &&
        Floor() < before.high + std::max(config.normal_high_margin_buckets,
                                         (before.high - before.median) / 4)) {
      return false;
    }
    // An epoch's minimum of a rising series is where the epoch began: the level now is an
    // epoch further up the line.
    const double level = line->end_bytes + line->bytes_per_hour * config.epoch_seconds / 3600.0;
    const double headroom = std::max(0.0, static_cast<double>(limit.bytes) - level);
    const double eta_hours = headroom / line->bytes_per_hour;
    // A climb that slows down, a warm-up, levels off where a decay of its pace takes it:
    // a newer half at r times the older's pace decays with tau = (hours / 2) / ln(1/r),
    // and has newer pace × tau left to climb. Below the limit, it never gets there.
    if (line->newer_bytes_per_hour < line->older_bytes_per_hour) {
      const double r = line->newer_bytes_per_hour / line->older_bytes_per_hour;
      const double tau_hours = line->hours / 2 / std::log(1 / r);
      if (line->newer_bytes_per_hour * tau_hours < headroom) return false;
    }
    // How long a wait the evidence affords: hours of steady climb times a patience that
    // is larger when a day of the series' own history stands behind the climb.
    const bool seasoned = climb_start - first_seen_ >= config.established_seconds;
    const double patience = seasoned ? kSeasonedPatience : kYoungPatience;
    *eta = eta_hours;
    // (At least the hour of points a line needs, in epochs: a config that judges seconds
    // waits seconds.)
    const double least_hours = (kMinEpochs - 1) * static_cast<double>(config.epoch_seconds) / 3600;
    if (eta_hours <= patience * std::max(least_hours, line->hours)) {
      urgent_epochs_ = static_cast<uint8_t>(n);
      return true;
    }
    return false;
  }
  return false;
}

std::optional<EpochTrend::Line> SeriesState::UrgentLine(const DetectorConfig& config,
                                                        const BucketScale& scale) const {
  if (urgent_epochs_ == 0) return std::nullopt;
  return trend_.Fit(urgent_epochs_, scale, config.epoch_seconds);
}

EpochVerdict SeriesState::CloseEpoch(const DetectorConfig& config, const BucketScale& scale,
                                     const EpochContext& context) {
  EpochVerdict verdict;
  if (epoch_samples_ == 0) return verdict;
  const int64_t now = epoch_last_sample_;
  epoch_samples_ = 0;
  // An instance's first epoch began with the instance, mid-epoch: too short to place.
  const int32_t epoch_floor = scale.BucketOf(epoch_min_);
  trend_.Add(now, epoch_floor, config.epoch_seconds,
             trend_.count() == 0 && instance_start_ > epoch_start_);
  instance_top_ = std::max<int16_t>(instance_top_, static_cast<int16_t>(trend_.Newest()));
  floor_epochs_ = static_cast<uint8_t>(std::clamp(config.floor_epochs, 1, EpochTrend::kEpochs));

  const int32_t hour_floor = Floor();
  const int64_t hour_before = hourly_newest_;
  AddHourly(now, hour_floor);
  TrackReleases(config, now, epoch_floor, hour_floor);
  verdict.longest_released_rise_s = longest_released_rise_s_;
  // What repeats is normal: when the series (or another host of its component) climbs
  // and releases, the level judged is the floor over a whole such cycle — its trough —
  // so a daily swing or a batch ramp is not a climb, and a leak under one raises it. The
  // component's cycle counts too: a host seen for less than a cycle has not shown its
  // own, and noisy real machines release less cleanly than their fleet does.
  const int64_t own_period = own_period_s_ > 0 ? own_period_s_ : 2 * longest_released_rise_s_;
  const int64_t cycle = std::max(own_period, 2 * context.component_released_rise_s);
  const int64_t window = std::min<int64_t>(cycle + 3600, int64_t{kJudgedHours - 1} * 3600);
  const int64_t previous_window = cycle_window_s_;
  cycle_window_s_ = cycle > 0 ? static_cast<int32_t>(window) : 0;
  const bool longer_cycle = cycle_window_s_ >= previous_window + 3600;
  const int32_t floor = cycle > 0 ? std::min(hour_floor, MinOverHours(now, window)) : hour_floor;
  if (longer_cycle && hist_started_) {
    // The cycle is new or longer: the normal range learnt from the swinging floor is the
    // swing's, not the trough's. Keep the weight of what was learnt, at the trough.
    const uint32_t weight = std::clamp<uint32_t>(hist_total_, 1, UINT16_MAX);
    hist_.fill(0);
    hist_total_ = 0;
    hist_started_ = false;
    AddToHistogram(floor, static_cast<uint16_t>(weight));
    excursion_.Reset();
  }
  const int tolerance = config.climb_tolerance_buckets;
  const bool past_grace = now >= instance_start_ + config.startup_grace_seconds;
  const bool is_established = established(config);

  // A new instance (a restart, a new version) is an event: the level it settles at,
  // over its first relearn_after past the startup grace, is its normal — learnt with
  // weight, so a version that settles higher and flat is not an excursion. So is the
  // level a warm-up (a rise that slowed down) reaches while its tail fades: a cache
  // filling to its size, a new version taking hours to settle.
  const bool settling =
      (instance_start_ > first_seen_ &&
       now - instance_start_ < config.startup_grace_seconds + config.relearn_seconds) ||
      now < fading_until_;

  // Normal range and excursions above it.
  if (!is_established) {
    AddToHistogram(floor, 1);
  } else if (settling) {
    excursion_.Reset();
    // The level a new instance or a warm-up settles at is learnt, once it settles: a floor
    // still climbing past the normal range is not settled yet. A leak behind a cache that
    // refills after a restart climbs past the cache's old level and never settles; taking
    // each of its levels as normal on the way would launder it.
    const bool climbing_past_normal =
        floor > NormalHigh(config) + config.normal_high_margin_buckets &&
        trend_.run() >= floor_epochs_ &&
        trend_.Newest() - trend_.Newest(floor_epochs_ - 1) >= config.min_rise_buckets;
    if (past_grace && !climbing_past_normal) {
      AddToHistogram(floor, static_cast<uint16_t>(std::max<uint32_t>(1, hist_total_ / 16)));
    }
  } else if (!excursion_.active()) {
    const int32_t high = NormalHigh(config);
    if (past_grace && floor > high) {
      excursion_.Start(now, floor);
      excursion_high_ = high;
      excursion_prior_high_ = floor;
      plateau_bucket_ = floor;
      plateau_since_ = now;
    } else {
      AddToHistogram(floor, 1);
    }
  } else if (floor <= excursion_high_) {
    excursion_.Reset();
    AddToHistogram(floor, 1);
  } else {
    // A fall inside the excursion (still above normal) restarts its climb there.
    if (!excursion_.Add(now, floor, tolerance)) {
      excursion_prior_high_ = std::max(excursion_prior_high_, excursion_.max_bucket());
      excursion_.Start(now, floor);
    }
    if (std::abs(floor - plateau_bucket_) > tolerance) {
      plateau_bucket_ = floor;
      plateau_since_ = now;
    } else if (now - plateau_since_ >= config.relearn_seconds) {
      // It has held flat at a new level: that level is normal now (a step on reload).
      AddToHistogram(floor, static_cast<uint16_t>(std::max<uint32_t>(1, hist_total_ / 4)));
      excursion_.Reset();
    }
  }

  if (past_grace && !instance_climb_.Add(now, floor, tolerance)) {
    instance_climb_.Start(now, floor);
  }
  // Evidence starts when growth stops slowing down: a climb whose second half is slower
  // than its first is a warm-up, a cache filling, a new version settling — what follows
  // it is judged on its own, so a leak behind a warm-up is not hidden by it.
  // Under a short cycle (a long garbage collector's sawtooth) the judged floor rises as a
  // staircase, one stair a cycle, and a climb over one stair always looks slowed down:
  // slowing down is read over two cycles there.
  const int64_t short_cycle =
      cycle_window_s_ <= kLongestSawtoothSeconds + 3600 ? int64_t{cycle_window_s_} : 0;
  for (Climb* climb : {&instance_climb_, &excursion_}) {
    if (climb->active() && climb->duration() >= std::max<int64_t>(2 * 3600, 2 * short_cycle) &&
        SlowingDown(config, scale, *climb, config.min_recent_slope_ratio / 2)) {
      // A rise that decays like exp(-t/tau) climbs, over a stretch of duration d, with a
      // second half exp(-d/2tau) times as steep as its first: that gives tau. Its tail
      // goes on for about tau more and looks steady over a few hours; a leak behind it
      // stands out once the tail has faded.
      const double ratio = std::max(climb->SlopeRatio(scale), 0.05);
      const double tau = static_cast<double>(climb->duration()) / (2 * std::log(1 / ratio));
      fading_until_ = std::max<int64_t>(
          fading_until_,
          now + std::min<int64_t>(static_cast<int64_t>(tau), int64_t{kJudgedHours} * 3600));
      if (warmup_start_ < 0) warmup_start_ = climb->start_time();
      climb->Start(now, floor);
    }
  }

  // A warm-up is finished when its tail has faded and the floor has held level since it
  // was recognised (a leak behind it keeps the instance climbing).
  if (warmup_start_ >= 0 && now >= fading_until_) {
    if (!instance_climb_.active() || instance_climb_.rise() <= tolerance) {
      longest_warmup_s_ = std::max(longest_warmup_s_, fading_until_ - warmup_start_);
    }
    warmup_start_ = -1;
  }
  verdict.longest_warmup_s = longest_warmup_s_;
  // What the component's hosts do after they start, before they level off, is normal for
  // each of them: an instance is judged once it is older than the longest warm-up a share
  // of them finished (a cache or an index that takes a day to fill fills slower on some
  // hosts than on others; a leak climbs on past it).
  const bool within_fleet_warmup = now - instance_start_ < context.component_warmup_s;

  if (is_established) {
    verdict.band = ComponentDrift::BandOf(floor - NormalHigh(config));
  }
  if (is_established && excursion_.active()) {
    // A host counts towards the fleet rule only with a climb that is itself leak-shaped —
    // the full rise and new highs, steady, keeping its pace — over the fleet's shorter
    // span: hosts that merely moved or warmed up together (a rollout) do not arm it, nor
    // does a host still settling into a new instance. The fleet shortens the wait, not
    // the evidence.
    // The excursion is judged in its context: when the instance has been climbing since
    // before the range was learnt (a cache filling from startup, learnt as "normal" on
    // the way up), the whole climb must not be slowing down either.
    const bool context_slowing =
        instance_climb_.active() && instance_climb_.start_time() < excursion_.start_time() &&
        SlowingDown(config, scale, instance_climb_, config.min_recent_slope_ratio);
    const bool fleet_shaped = !settling && !context_slowing && !within_fleet_warmup &&
                              JudgeClimb(config, scale, excursion_, config.fleet_min_climb_seconds,
                                         config.min_rise_buckets, config.min_records);
    verdict.climbing = fleet_shaped;
    const bool above_margin =
        excursion_.max_bucket() >= excursion_high_ + config.normal_high_margin_buckets &&
        excursion_.max_bucket() >= excursion_prior_high_ + config.min_rise_buckets;
    if (above_margin && !context_slowing && !within_fleet_warmup &&
        JudgeClimb(config, scale, excursion_, RequiredClimbSeconds(config, excursion_),
                   config.min_rise_buckets, config.min_records)) {
      verdict.rule = SuspectRule::kClimbAboveNormal;
    } else if (context.fleet_armed && fleet_shaped) {
      verdict.rule = SuspectRule::kFleetDrift;
    }
  } else if (!is_established && instance_climb_.active() && !within_fleet_warmup) {
    const double start = scale.BytesAt(instance_climb_.start_bucket());
    const double rise_fraction =
        start > 0 ? scale.BytesAt(instance_climb_.max_bucket()) / start - 1 : 0;
    // Without a normal range to stand out from, a long climb needs twice the evidence.
    if (JudgeClimb(config, scale, instance_climb_, config.young_min_climb_seconds,
                   2 * config.min_rise_buckets, 2 * config.min_records) ||
        (config.young_fast_rise_fraction > 0 && rise_fraction >= config.young_fast_rise_fraction &&
         JudgeClimb(config, scale, instance_climb_, config.young_fast_min_climb_seconds,
                    config.min_rise_buckets, config.min_records))) {
      verdict.rule = SuspectRule::kYoungClimb;
    }
  }
  // The closer the limit, the less evidence a flag needs.
  // Not while the floor's current rise is no longer than the rises the series, or a share
  // of its component's hosts, climb and release (batch work, a daily load): that is what
  // it does, however steep.
  const int64_t usual_rise = std::max(longest_released_rise_s_, context.component_released_rise_s);
  const bool usual =
      usual_rise > 0 && rise_.active() &&
      now - LastHourAtOrBelow(rise_.start_bucket() + config.min_rise_buckets) <= usual_rise * 5 / 4;
  double eta_hours = 0;
  if (!verdict.rule && !usual &&
      ApproachingLimit(config, scale, now, Limit(context.host_memory_bytes), &eta_hours)) {
    verdict.rule = SuspectRule::kApproachingLimit;
  }
  // A climb rule flags only when its verdict is read twice within an hour: the shape
  // tests are read every epoch, and one near its threshold passes by chance on some epoch
  // sooner or later; a leak passes them again. But for a limit too near to wait an epoch.
  if (verdict.rule) {
    const bool no_time = verdict.rule == SuspectRule::kApproachingLimit &&
                         eta_hours * 3600 <= 4 * config.epoch_seconds;
    const bool confirmed = no_time || (last_rule_pass_ >= 0 && now - last_rule_pass_ <= 3600);
    last_rule_pass_ = now;
    if (!confirmed) verdict.rule.reset();
  }
  // A series that cycles (or whose component does) is judged against its own day as
  // well: the trough over a cycle rises once a day, a staircase whose stairs read as steps
  // or as warm-ups that levelled off, so a slow leak under a strong daily swing escapes
  // the climbs. Hour by hour against the day before, it does not.
  // It reads full hours only, so once an hour is enough (the first epoch of each hour).
  if (!verdict.rule && hourly_newest_ != hour_before && is_established && cycle_window_s_ > 0 &&
      !settling && !within_fleet_warmup && GrowsDayOverDay(config, scale, now)) {
    verdict.rule = SuspectRule::kDailyClimb;
  }
  return verdict;
}

EpochVerdict SeriesState::Restart(const DetectorConfig& config, const BucketScale& scale, int64_t t,
                                  uint64_t instance_hash, uint64_t host_memory_bytes) {
  EpochVerdict verdict;
  const Climb& ended = instance_climb_;
  const bool died_climbing =
      ended.active() && ended.duration() >= config.restart_min_climb_seconds &&
      ended.rise() >= 2 * config.min_rise_buckets &&
      ended.records() >= std::max(2, config.min_records / 2) &&
      ended.Steadiness(scale) >= config.restart_min_recent_slope_ratio &&
      (!SlowingDown(config, scale, ended, config.restart_min_recent_slope_ratio) ||
       // A long instance behind a cache that refilled after its start: the refill's tail
       // slows its first half, and its later thirds climb evenly.
       (ended.duration() >= kLongInstanceClimbSeconds &&
        ended.LateRatio(scale) >= config.restart_min_recent_slope_ratio)) &&
      ended.StillRising(last_sample_, config.level_off_seconds);
  if (died_climbing) {
    if (instances_died_climbing_ == 0) died_climbing_since_ = ended.start_time();
    if (instances_died_climbing_ < UINT8_MAX) ++instances_died_climbing_;
    const double grown = scale.BytesAt(ended.max_bucket()) - scale.BytesAt(ended.start_bucket());
    last_instance_growth_ = grown / (static_cast<double>(ended.duration()) / 3600.0);
    last_instance_rise_ = ended.rise();
    last_instance_climb_s_ = static_cast<int32_t>(std::min<int64_t>(ended.duration(), INT32_MAX));
  } else {
    instances_died_climbing_ = 0;
  }
  verdict.instance_ended_climbing = died_climbing;
  // Under a daily swing, instances restarted every few hours die climbing on its rising
  // half, several in a row; climbing instances spanning more than that half are no swing.
  // Whether a series swings cannot be told when its instances live a few hours, so this
  // holds for every series.
  if (instances_died_climbing_ >= config.restart_leak_instances &&
      last_sample_ - died_climbing_since_ >= kDailyRiseSeconds) {
    verdict.rule = SuspectRule::kRestartReset;
  }
  // OOM kills: an instance that grew steadily into its limit until the kernel killed it,
  // again and again, is a leak whatever its restarts hide. A kill after a burst (a flat
  // instance that ballooned in its last minutes) is not.
  const bool killed = oom_kills() > kills_at_instance_start_;
  bool grew = false;
  const EffectiveLimit limit = Limit(host_memory_bytes);
  if (killed && limit.bytes > 0 && trend_.run() < 3 && t - instance_start_ >= 120) {
    // Killed too soon after its start for a line (crash-looping on its limit): it grew
    // from where it started to most of the way to its limit.
    const double first = 1024.0 * instance_first_kib_;
    const double last = 1024.0 * last_kib_;
    grew = last >= first + kKilledMinRiseShare * (static_cast<double>(limit.bytes) - first);
    if (grew) {
      last_instance_growth_ =
          (last - first) / (static_cast<double>(last_sample_ - instance_start_) / 3600.0);
    }
  } else if (killed && limit.bytes > 0) {
    const std::optional<EpochTrend::Line> line =
        trend_.Fit(trend_.run(), scale, config.epoch_seconds);
    if (line && line->bytes_per_hour > 0) {
      const double rise = line->end_bytes - line->start_bytes;
      const double room = static_cast<double>(limit.bytes) - line->start_bytes;
      grew = line->r2 >= kKilledMinR2 && room > 0 && rise >= kKilledMinRiseShare * room &&
             line->older_bytes_per_hour >= kKilledMinHalfRatio * line->newer_bytes_per_hour &&
             line->newer_bytes_per_hour >= kKilledMinHalfRatio * line->older_bytes_per_hour;
      if (grew) last_instance_growth_ = line->bytes_per_hour;
    }
  }
  if (killed && grew) {
    if (instances_killed_growing_ < UINT8_MAX) ++instances_killed_growing_;
  } else {
    instances_killed_growing_ = 0;
  }
  if (!verdict.rule && instances_killed_growing_ >= kKilledInstances) {
    verdict.rule = SuspectRule::kOomKilled;
  }
  kills_at_instance_start_ = static_cast<uint16_t>(oom_kills());
  previous_instance_hash_ = instance_hash_;
  instance_hash_ = instance_hash;
  instance_start_ = t;
  instance_climb_.Reset();
  excursion_.Reset();
  rise_.Reset();
  fading_until_ = 0;
  warmup_start_ = -1;
  last_rule_pass_ = -1;
  pending_rise_s_ = 0;
  // The ring keeps the ended instance's hours (what the series did before), but for the
  // hour it ended in: the new instance's floors start there.
  if (hourly_newest_ >= 0 && t / 3600 <= hourly_newest_ && t / 3600 > hourly_newest_ - kHours) {
    hourly_[(t / 3600) % kHours] = kNoHour;
  }
  previous_instance_top_ = instance_top_;
  instance_top_ = kNoTop;
  trend_.Reset();
  urgent_epochs_ = 0;
  // A restart's low start is no collection.
  previous_floor_ = kNoFloor;
  last_sharp_drop_t_ = 0;
  instance_first_kib_ = 0;
  return verdict;
}

ClimbEvidence SeriesState::Evidence(const DetectorConfig& config, SuspectRule rule,
                                    const BucketScale& scale) const {
  ClimbEvidence evidence;
  const Climb* climb = nullptr;
  if (rule == SuspectRule::kDailyClimb) {
    evidence.daily = ReadDayOverDay(config, scale, last_sample_, false);
    if (evidence.daily) {
      evidence.growth_bytes_per_hour = std::max(0.0, evidence.daily->newer_bytes_per_day / 24);
      evidence.from_bytes = evidence.daily->from_bytes;
      evidence.to_bytes = evidence.daily->to_bytes;
    }
    return evidence;
  }
  if (rule == SuspectRule::kApproachingLimit) {
    if (const std::optional<EpochTrend::Line> line = UrgentLine(config, scale)) {
      evidence.growth_bytes_per_hour = line->bytes_per_hour;
      evidence.from_bytes = static_cast<uint64_t>(std::max(0.0, line->start_bytes));
      evidence.to_bytes = static_cast<uint64_t>(std::max(0.0, line->end_bytes));
      evidence.line_hours = line->hours;
      evidence.line = true;
      return evidence;
    }
  }
  if (rule == SuspectRule::kClimbAboveNormal || rule == SuspectRule::kFleetDrift) {
    climb = &excursion_;
    evidence.normal_high_bytes = static_cast<uint64_t>(scale.BytesAt(excursion_high_));
  } else if (rule == SuspectRule::kYoungClimb) {
    climb = &instance_climb_;
  }
  if (climb == nullptr || !climb->active() || climb->duration() <= 0) {
    evidence.growth_bytes_per_hour = last_instance_growth_;
    return evidence;
  }
  evidence.climb = climb;
  // Growth over the climb's second half: the current rate, not the average since a
  // start that may have been slower.
  const int64_t last = climb->last_time();
  const int64_t mid = last - climb->duration() / 2;
  const double grown = scale.BytesAt(climb->BucketAt(last)) - scale.BytesAt(climb->BucketAt(mid));
  evidence.growth_bytes_per_hour =
      last > mid ? std::max(0.0, grown / (static_cast<double>(last - mid) / 3600.0)) : 0;
  evidence.from_bytes = static_cast<uint64_t>(scale.BytesAt(climb->start_bucket()));
  evidence.to_bytes = static_cast<uint64_t>(scale.BytesAt(climb->max_bucket()));
  return evidence;
}

uint64_t SeriesState::CurrentBytes(const BucketScale& scale) const {
  if (trend_.count() == 0) return epoch_min_;
  return static_cast<uint64_t>(scale.BytesAt(Floor()));
}

uint64_t SeriesState::NormalBytes(const BucketScale& scale) const {
  return hist_started_ ? static_cast<uint64_t>(scale.BytesAt(Pivot())) : 0;
}

}  // namespace drip::analyzer
