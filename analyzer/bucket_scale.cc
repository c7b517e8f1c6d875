#include "analyzer/bucket_scale.h"

#include <cmath>

namespace drip::analyzer {

BucketScale::BucketScale(double width) : log_step_(std::log1p(width)), table_(kTableBuckets) {
  for (int32_t b = 0; b < kTableBuckets; ++b) table_[b] = Exact(b);
}

int32_t BucketScale::BucketOf(uint64_t bytes) const {
  return static_cast<int32_t>(std::floor(std::log1p(static_cast<double>(bytes)) / log_step_));
}

double BucketScale::Exact(double bucket) const { return std::expm1(bucket * log_step_); }

double BucketScale::BytesAt(double bucket) const {
  const double below = std::floor(bucket);
  if (!(below >= 0 && below < kTableBuckets - 1)) return Exact(bucket);
  const auto i = static_cast<int32_t>(below);
  return table_[i] + (bucket - below) * (table_[i + 1] - table_[i]);
}

}  // namespace drip::analyzer
