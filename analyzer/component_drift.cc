#include "analyzer/component_drift.h"

namespace drip::analyzer {

int ComponentDrift::BandOf(int buckets_above_normal_high) {
  if (buckets_above_normal_high <= 0) return 0;
  if (buckets_above_normal_high < 4) return 1;
  if (buckets_above_normal_high < 10) return 2;
  if (buckets_above_normal_high < 30) return 3;
  return 4;
}

}  // namespace drip::analyzer
