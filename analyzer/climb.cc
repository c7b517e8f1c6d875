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
    Checkpoint& last = checkpoints_[checkpoint_count_ - 1];
    // Between two kept checkpoints the newest floor replaces the provisional last one,
    // so the last checkpoint is always "now".
    if (checkpoint_count_ >= 2 &&
        offset - checkpoints_[checkpoint_count_ - 2].offset_s < spacing_s_) {
      last = {offset, bucket};
      return;
    }
  }
  if (checkpoint_count_ == kCheckpoints) {
    // Keep every other checkpoint (the first always) and double the spacing: the climb
    // stays covered end to end at half the resolution.
    int kept = 0;
    for (int i = 0; i < kCheckpoints; i += 2) checkpoints_[kept++] = checkpoints_[i];
    checkpoint_count_ = static_cast<uint8_t>(kept);
    spacing_s_ = std::max<int32_t>(1, checkpoints_[1].offset_s - checkpoints_[0].offset_s);
  }
  checkpoints_[checkpoint_count_++] = {offset, bucket};
}

double Climb::BucketAt(int64_t t) const {
  if (checkpoint_count_ == 0) return start_bucket_;
  const double offset = static_cast<double>(t - start_t_);
  if (offset <= checkpoints_[0].offset_s) return checkpoints_[0].bucket;
  for (int i = 1; i < checkpoint_count_; ++i) {
    const Checkpoint& a = checkpoints_[i - 1];
    const Checkpoint& b = checkpoints_[i];
    if (offset <= b.offset_s) {
      if (b.offset_s == a.offset_s) return b.bucket;
      const double f = (offset - a.offset_s) / (b.offset_s - a.offset_s);
      return a.bucket + f * (b.bucket - a.bucket);
    }
  }
  return checkpoints_[checkpoint_count_ - 1].bucket;
}

double Climb::Steadiness(double log_step) const {
  const auto bytes_at = [&](int64_t t) { return std::expm1(BucketAt(t) * log_step); };
  const double whole = bytes_at(last_t_) - bytes_at(start_t_);
  if (whole <= 0 || duration() <= 0) return 0;
  const int64_t third = duration() / 3;
  double smallest = whole;
  for (int i = 0; i < 3; ++i) {
    const int64_t from = start_t_ + i * third;
    const int64_t to = i == 2 ? last_t_ : from + third;
    smallest = std::min(smallest, bytes_at(to) - bytes_at(from));
  }
  return std::max(0.0, smallest / (whole / 3));
}

bool Climb::StillRising(int64_t now, int64_t level_off_seconds) const {
  if (records_ == 0) return false;
  const int64_t mean_gap = duration() / records_;
  return now - last_record_t_ <= std::max(level_off_seconds, 3 * mean_gap);
}

}  // namespace drip::analyzer
