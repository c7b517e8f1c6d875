#include "analyzer/bucket_scale.h"

#include <cmath>

namespace drip::analyzer {

BucketScale::BucketScale(double width) : log_step_(std::log1p(width)) {}

int32_t BucketScale::BucketOf(uint64_t bytes) const {
  return static_cast<int32_t>(std::floor(std::log1p(static_cast<double>(bytes)) / log_step_));
}

double BucketScale::BytesAt(double bucket) const { return std::expm1(bucket * log_step_); }

}  // namespace drip::analyzer
