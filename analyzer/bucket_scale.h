// BucketScale: the detector's log buckets of relative width w — bucket b holds levels
// of about (1 + w)^b bytes, so a 500 MB service and a 5 MB slab cache move through
// buckets alike, and a series' state is small integers. Every conversion of a bucket back
// to bytes goes through here: a table of the buckets a series can hold (16 bits) makes it
// a lookup, which a replay does tens of millions of times.
#pragma once

#include <cstdint>
#include <vector>

namespace drip::analyzer {

class BucketScale {
 public:
  explicit BucketScale(double width);
  int32_t BucketOf(uint64_t bytes) const;
  // Bytes at a bucket; between two buckets, on the straight line between them (within a
  // bucket of 0.25 % that is the curve to a part in a million).
  double BytesAt(double bucket) const;
  double BytesAt(int32_t bucket) const {
    return bucket >= 0 && bucket < kTableBuckets ? table_[bucket] : Exact(bucket);
  }

 private:
  static constexpr int32_t kTableBuckets = 1 << 15;
  double Exact(double bucket) const;

  double log_step_;
  std::vector<double> table_;
};

}  // namespace drip::analyzer
