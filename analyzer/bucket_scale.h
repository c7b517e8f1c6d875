// BucketScale: the detector's log buckets of relative width w — bucket b holds levels
// of about (1 + w)^b bytes, so a 500 MB service and a 5 MB slab cache move through
// buckets alike, and a series' state is small integers.
#pragma once

#include <cstdint>

namespace drip::analyzer {

class BucketScale {
 public:
  explicit BucketScale(double width);
  int32_t BucketOf(uint64_t bytes) const;
  double BytesAt(double bucket) const;

 private:
  double log_step_;
};

}  // namespace drip::analyzer
