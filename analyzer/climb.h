// Climb: one stretch over which a series' floor keeps rising through buckets without
// falling back — the unit of evidence of the bucketed detector. It keeps a dozen evenly
// spaced checkpoints of the stretch (spacing doubles when they run out), enough to tell
// a steady rise (a leak) from a step, a warm-up that slows down, or half a daily cycle.
//
// Fixed size (~120 bytes) whatever the climb's length.
#pragma once

#include <array>
#include <cstdint>

#include "analyzer/bucket_scale.h"

namespace drip::analyzer {

class Climb {
 public:
  bool active() const { return active_; }
  void Reset() { active_ = false; }

  // Starts a climb at floor bucket `bucket` at time `t`.
  void Start(int64_t t, int32_t bucket);
  // Adds the next floor. Returns false (and ends the climb) when it fell more than
  // `tolerance` buckets below the climb's maximum.
  bool Add(int64_t t, int32_t bucket, int tolerance);

  int64_t start_time() const { return start_t_; }
  int64_t last_time() const { return last_t_; }
  int64_t duration() const { return last_t_ - start_t_; }
  int32_t start_bucket() const { return start_bucket_; }
  int32_t max_bucket() const { return max_bucket_; }
  int32_t last_bucket() const { return last_bucket_; }
  int32_t rise() const { return max_bucket_ - start_bucket_; }
  int records() const { return records_; }
  int64_t last_record_time() const { return last_record_t_; }

  // Steadiness: the smaller rise in bytes over the climb's second and last thirds, as a
  // fraction of a third of the whole rise. ~1 for a linear rise (a leak adds bytes at a
  // constant rate, which in log buckets would look like slowing down), above 1 for one
  // that speeds up, ~0 for a step or a warm-up that levelled off. The first third is
  // left out: a leak seen through a lagging floor (a trough over a cycle) starts slow.
  double Steadiness(const BucketScale& scale) const;
  // Not slowing down: the least-squares slope (in bytes) of the climb's second half over
  // that of its first half, from the checkpoints. ~1 for a leak, which adds bytes at a
  // constant rate; below 1 for a warm-up or a cache filling towards its size, whose
  // rate decays; 0 when the second half did not rise at all.
  double SlopeRatio(const BucketScale& scale) const;
  // The bytes the climb rose over its last third against those over its middle third:
  // ~1 for a leak, also when the first third held the tail of a warm-up; below 1 for
  // growth that decays all along. 0 when the middle third did not rise.
  double LateRatio(const BucketScale& scale) const;
  // Floor bucket at time t (linear between checkpoints).
  double BucketAt(int64_t t) const;
  // Still rising: a new high within max(level_off, 3 × the mean time between highs).
  bool StillRising(int64_t now, int64_t level_off_seconds) const;

 private:
  static constexpr int kCheckpoints = 12;
  struct Checkpoint {
    int32_t offset_s;  // from start_t_
    int32_t bucket;
  };
  void AddCheckpoint(int64_t t, int32_t bucket);
  Checkpoint At(int i) const { return {offsets_[i], buckets_[i]}; }
  void Set(int i, Checkpoint c) {
    offsets_[i] = c.offset_s;
    buckets_[i] = static_cast<int16_t>(c.bucket);
  }

  int64_t start_t_ = 0;
  int64_t last_t_ = 0;
  int64_t last_record_t_ = 0;
  int32_t start_bucket_ = 0;
  int32_t max_bucket_ = 0;
  int32_t last_bucket_ = 0;
  int32_t spacing_s_ = 0;  // between kept checkpoints; 0 = keep every one
  uint16_t records_ = 0;
  uint8_t checkpoint_count_ = 0;
  bool active_ = false;
  // Checkpoints as two arrays: a bucket fits 16 bits (a bucket's bytes grow by
  // bucket_width per step, so 32767 buckets are far beyond any memory size).
  std::array<int32_t, kCheckpoints> offsets_{};
  std::array<int16_t, kCheckpoints> buckets_{};
};

}  // namespace drip::analyzer
