// ComponentDrift: how one component's hosts sit against their own normal levels right
// now — the fleet half of the bucketed detector. Small integer counts, so the views of
// detectors sharded by host merge by addition (Merge), as RESIN's bucket counts do.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

namespace drip::analyzer {

struct ComponentDrift {
  // Hosts by how far their floor sits above their normal high, in fine buckets:
  // [0] at or below it, [1] 1–3, [2] 4–9, [3] 10–29, [4] 30 or more.
  static constexpr int kBands = 5;
  std::array<int32_t, kBands> hosts_by_band{};
  // Hosts whose series has an established normal range and is climbing above it now.
  int32_t hosts_climbing = 0;
  int32_t hosts_seen = 0;
  // The longest rise any host of the component climbed and then released by itself
  // (no restart): batch work, a daily load. A climb no longer than this is what the
  // component normally does, on any of its hosts (merged by maximum).
  int64_t longest_released_rise_s = 0;
  // Hosts that have released a rise at all: the component's cycle counts for every host
  // only when it is what a share of them do, not one odd host.
  int32_t hosts_releasing = 0;
  // The longest warm-up any host of the component went through and finished: a climb
  // that slowed down and then held level once its tail had faded (a cache filling, an
  // index building). Another host's climb no longer than this is what the component's
  // hosts do before they level off.
  int64_t longest_warmup_s = 0;
  int32_t hosts_warmed = 0;  // hosts that have finished a warm-up

  // Counts saturate rather than wrap: shares read from other members are sums of counts
  // each up to 2^31 - 1, and a wrapped sum would read as a negative host count.
  void Merge(const ComponentDrift& other) {
    for (int i = 0; i < kBands; ++i) AddCount(&hosts_by_band[i], other.hosts_by_band[i]);
    AddCount(&hosts_climbing, other.hosts_climbing);
    AddCount(&hosts_seen, other.hosts_seen);
    longest_released_rise_s = std::max(longest_released_rise_s, other.longest_released_rise_s);
    AddCount(&hosts_releasing, other.hosts_releasing);
    longest_warmup_s = std::max(longest_warmup_s, other.longest_warmup_s);
    AddCount(&hosts_warmed, other.hosts_warmed);
  }

  // The cycle every host of the component is judged over: the longest released rise,
  // once at least a fifth of the hosts (and two) release rises.
  int64_t SharedCycleSeconds() const {
    return hosts_releasing >= std::max(2, hosts_seen / 5) ? longest_released_rise_s : 0;
  }
  // How long a climb of any host may go on and still be the component's warm-up: the
  // longest finished warm-up, once at least a fifth of the hosts (and two) finished one.
  int64_t SharedWarmupSeconds() const {
    return hosts_warmed >= std::max(2, hosts_seen / 5) ? longest_warmup_s : 0;
  }
  static int BandOf(int buckets_above_normal_high);
  bool operator==(const ComponentDrift&) const = default;

 private:
  static void AddCount(int32_t* count, int32_t more) {
    const int64_t sum = int64_t{*count} + int64_t{more};
    *count = static_cast<int32_t>(std::clamp<int64_t>(sum, 0, std::numeric_limits<int32_t>::max()));
  }
};

}  // namespace drip::analyzer
