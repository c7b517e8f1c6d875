#include "analyzer/climb.h"

#include <algorithm>
#include <cmath>

namespace drip::analyzer {

void Climb::Start(int64_t t, int32_t bucket) {
  active_ = true;
  start_t_ = last_t_ = last_record_t_ = t;
  start_bucket_ = max_bucket_ = last_bucket_ = bucket;
  records_ = 0;
  spacing_s_ = 0;
  checkpoint_count_ = 0;
  AddCheckpoint(t, bucket);
}

bool Climb::Add(int64_t t, int32_t bucket, int tolerance) {
  if (!active_) {
    Start(t, bucket);
    return true;
  }
  if (bucket < max_bucket_ - tolerance) {
    active_ = false;
    return false;
  }
  if (bucket > max_bucket_) {
    max_bucket_ = bucket;
    last_record_t_ = t;
    if (records_ < UINT16_MAX) ++records_;
  }
  last_t_ = t;
  last_bucket_ = bucket;
  AddCheckpoint(t, bucket);
  return true;
}

void Climb::AddCheckpoint(int64_t t, int32_t bucket) {
  const auto offset = static_cast<int32_t>(std::min<int64_t>(t - start_t_, INT32_MAX));
  if (checkpoint_count_ > 0) {
    // Between two kept checkpoints the newest floor replaces the provisional last one,
    // so the last checkpoint is always "now".
    if (checkpoint_count_ >= 2 && offset - offsets_[checkpoint_count_ - 2] < spacing_s_) {
      Set(checkpoint_count_ - 1, {offset, bucket});
      return;
    }
  }
  if (checkpoint_count_ == kCheckpoints) {
    // Keep every other checkpoint (the first always) and double the spacing: the climb
    // stays covered end to end at half the resolution.
    int kept = 0;
    for (int i = 0; i < kCheckpoints; i += 2) Set(kept++, At(i));
    checkpoint_count_ = static_cast<uint8_t>(kept);
    spacing_s_ = std::max<int32_t>(1, offsets_[1] - offsets_[0]);
  }
  Set(checkpoint_count_++, {offset, bucket});
}

double Climb::BucketAt(int64_t t) const {
  if (checkpoint_count_ == 0) return start_bucket_;
  const double offset = static_cast<double>(t - start_t_);
  if (offset <= offsets_[0]) return buckets_[0];
  for (int i = 1; i < checkpoint_count_; ++i) {
    const Checkpoint a = At(i - 1);
    const Checkpoint b = At(i);
    if (offset <= b.offset_s) {
      if (b.offset_s == a.offset_s) return b.bucket;
      const double f = (offset - a.offset_s) / (b.offset_s - a.offset_s);
      return a.bucket + f * (b.bucket - a.bucket);
    }
  }
  return buckets_[checkpoint_count_ - 1];
}

double Climb::Steadiness(const BucketScale& scale) const {
  const auto bytes_at = [&](int64_t t) { return scale.BytesAt(BucketAt(t)); };
  const double whole = bytes_at(last_t_) - bytes_at(start_t_);
  if (whole <= 0 || duration() <= 0) return 0;
  const int64_t third = duration() / 3;
  double smallest = whole;
  for (int i = 1; i < 3; ++i) {
    const int64_t from = start_t_ + i * third;
    const int64_t to = i == 2 ? last_t_ : from + third;
    smallest = std::min(smallest, bytes_at(to) - bytes_at(from));
  }
  return std::max(0.0, smallest / (whole / 3));
}

double Climb::LateRatio(const BucketScale& scale) const {
  const auto bytes_at = [&](int64_t t) { return scale.BytesAt(BucketAt(t)); };
  const int64_t third = duration() / 3;
  const double middle = bytes_at(start_t_ + 2 * third) - bytes_at(start_t_ + third);
  const double last = bytes_at(last_t_) - bytes_at(start_t_ + 2 * third);
  return middle > 0 ? std::max(0.0, last / middle) : 0;
}

double Climb::SlopeRatio(const BucketScale& scale) const {
  if (checkpoint_count_ < 4 || duration() <= 0) return 0;
  const int64_t middle = duration() / 2;
  // Least-squares slope of bytes over the checkpoints in [from, to] seconds of the climb.
  auto slope = [&](int64_t from, int64_t to) {
    double n = 0, st = 0, sb = 0, stt = 0, stb = 0;
    for (int i = 0; i < checkpoint_count_; ++i) {
      const Checkpoint c = At(i);
      if (c.offset_s < from || c.offset_s > to) continue;
      const double t = c.offset_s / 3600.0;
      const double b = scale.BytesAt(c.bucket);
      n += 1;
      st += t;
      sb += b;
      stt += t * t;
      stb += t * b;
    }
    const double denominator = n * stt - st * st;
    return n >= 2 && denominator > 0 ? (n * stb - st * sb) / denominator : 0.0;
  };
  const double first = slope(0, static_cast<int32_t>(middle));
  const double second = slope(static_cast<int32_t>(middle), static_cast<int32_t>(duration()));
  if (first <= 0) return second > 0 ? 1 : 0;
  return std::max(0.0, second / first);
}

bool Climb::StillRising(int64_t now, int64_t level_off_seconds) const {
  if (records_ == 0) return false;
  const int64_t mean_gap = duration() / records_;
  return now - last_record_t_ <= std::max(level_off_seconds, 3 * mean_gap);
}

}  // namespace drip::analyzer
