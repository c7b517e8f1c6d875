// ComponentDrift: how one component's hosts sit against their own normal levels right
// now — the fleet half of the bucketed detector. Small integer counts, so the views of
// detectors sharded by host merge by addition (Merge), as RESIN's bucket counts do.
#pragma once

#include <array>
#include <cstdint>

namespace drip::analyzer {

struct ComponentDrift {
  // Hosts by how far their floor sits above their normal high, in fine buckets:
  // [0] at or below it, [1] 1–3, [2] 4–9, [3] 10–29, [4] 30 or more.
  static constexpr int kBands = 5;
  std::array<int32_t, kBands> hosts_by_band{};
  // Hosts whose series has an established normal range and is climbing above it now.
  int32_t hosts_climbing = 0;
  int32_t hosts_seen = 0;

  void Merge(const ComponentDrift& other) {
    for (int i = 0; i < kBands; ++i) hosts_by_band[i] += other.hosts_by_band[i];
    hosts_climbing += other.hosts_climbing;
    hosts_seen += other.hosts_seen;
  }
  static int BandOf(int buckets_above_normal_high);
  bool operator==(const ComponentDrift&) const = default;
};

}  // namespace drip::analyzer
