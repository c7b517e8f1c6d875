#include "agent/heap/live_heap_tracker.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace drip::agent {

uint64_t LiveHeapTracker::FindStack(const std::vector<uint64_t>& pcs) const {
  auto it = index_.find(pcs);
  return it == index_.end() ? 0 : stacks_[it->second].id;
}

uint64_t LiveHeapTracker::AddStack(const std::vector<uint64_t>& pcs,
                                   std::vector<StackFrame> frames) {
  if (uint64_t id = FindStack(pcs); id != 0) return id;
  if (full()) return overflow_stack();
  SnapshotStack stack;
  stack.id = stacks_.size() + 1;
  stack.frames = std::move(frames);
  // Every series has a point at every read-out: zeros before the stack was first seen.
  for (int64_t t : point_times_) stack.series.push_back({t, 0, 0});
  index_.emplace(pcs, static_cast<uint32_t>(stacks_.size()));
  stacks_.push_back(std::move(stack));
  totals_.emplace_back();
  alloc_buckets_.emplace_back();
  watches_.emplace_back();
  hazard_.push_back(0);
  return stacks_.back().id;
}

uint64_t LiveHeapTracker::overflow_stack() {
  if (overflow_index_ < 0) {
    SnapshotStack stack;
    stack.id = stacks_.size() + 1;
    StackFrame other;
    other.function = "[other stacks]";
    stack.frames.push_back(other);
    for (int64_t t : point_times_) stack.series.push_back({t, 0, 0});
    overflow_index_ = static_cast<int64_t>(stacks_.size());
    stacks_.push_back(std::move(stack));
    totals_.emplace_back();
    alloc_buckets_.emplace_back();
    watches_.emplace_back();
    hazard_.push_back(0);
  }
  return stacks_[static_cast<size_t>(overflow_index_)].id;
}

double LiveHeapTracker::WeightOf(uint32_t window) const {
  if (window == 0) return 1;
  auto it = windows_.find(window);
  return it == windows_.end() ? 1 : it->second.weight;
}

void LiveHeapTracker::Charge(uint32_t stack_index, uint32_t window, const Totals& unweighted) {
  const double w = WeightOf(window);
  Totals& totals = totals_[stack_index];
  totals.live_bytes += w * unweighted.live_bytes;
  totals.live_allocs += w * unweighted.live_allocs;
  totals.allocated_bytes += w * unweighted.allocated_bytes;
  totals.freed_bytes += w * unweighted.freed_bytes;
  if (window != 0) {
    Window& own = windows_[window];
    if (!own.final) {
      Totals& t = own.by_stack[stack_index];
      t.live_bytes += unweighted.live_bytes;
      t.live_allocs += unweighted.live_allocs;
      t.allocated_bytes += unweighted.allocated_bytes;
      t.freed_bytes += unweighted.freed_bytes;
    }
  }
  Publish(stack_index);
}

void LiveHeapTracker::Publish(uint32_t stack_index) {
  SnapshotStack& stack = stacks_[stack_index];
  stack.allocated_bytes = std::llround(totals_[stack_index].allocated_bytes);
  stack.freed_bytes = std::llround(totals_[stack_index].freed_bytes);
}

void LiveHeapTracker::OnAlloc(uint64_t stack_id, uint64_t address, uint64_t size,
                              uint64_t mean_bytes, int64_t t_ms, uint32_t window,
                              double extra_weight) {
  if (stack_id == 0 || stack_id > stacks_.size()) return;
  const uint32_t index = static_cast<uint32_t>(stack_id - 1);
  // p = 1 - exp(-s/T); expm1 keeps precision for s << T, where p ≈ s/T.
  const double p = mean_bytes == 0
                       ? 1.0
                       : -std::expm1(-static_cast<double>(size) / static_cast<double>(mean_bytes));
  LiveObject object{index,
                    window,
                    p > 0 ? extra_weight * static_cast<double>(size) / p : 0.0,
                    p > 0 ? extra_weight / p : 0.0,
                    t_ms,
                    UnwatchedMsBy(t_ms)};
  // An address handed out again without its free seen (its free was missed): the old
  // object is gone.
  if (auto it = live_.find(address); it != live_.end()) OnFree(address, t_ms);
  live_.emplace(address, object);
  Charge(index, window, {object.weight_bytes, object.weight_count, object.weight_bytes, 0});
  SnapshotStack& stack = stacks_[index];
  stack.sampled_allocs++;
  if (stack.first_alloc_ms == 0) stack.first_alloc_ms = t_ms;
  stack.last_alloc_ms = t_ms;
  CountAllocation(index, t_ms);
}

size_t LiveHeapTracker::BucketOf(int64_t t_ms) const {
  return static_cast<size_t>(std::max<int64_t>(0, t_ms - origin_ms_) / bucket_ms_);
}

void LiveHeapTracker::CountAllocation(uint32_t stack_index, int64_t t_ms) {
  if (origin_ms_ < 0) origin_ms_ = t_ms;
  while (BucketOf(t_ms) >= kMaxBuckets) {
    bucket_ms_ *= 2;
    for (std::vector<uint32_t>& buckets : alloc_buckets_) {
      for (size_t i = 0; i < buckets.size(); ++i) {
        buckets[i / 2] = (i % 2 == 0 ? 0 : buckets[i / 2]) + buckets[i];
      }
      buckets.resize((buckets.size() + 1) / 2);
    }
  }
  std::vector<uint32_t>& buckets = alloc_buckets_[stack_index];
  const size_t bucket = BucketOf(t_ms);
  if (buckets.size() <= bucket) buckets.resize(bucket + 1, 0);
  ++buckets[bucket];
}

std::vector<SnapshotStack> LiveHeapTracker::StacksWithCohorts(int64_t start_ms,
                                                              int64_t end_ms) const {
  std::vector<SnapshotStack> stacks = stacks_;
  if (origin_ms_ < 0 || end_ms <= start_ms) return stacks;
  // A bucket belongs to the slice its middle falls in; live objects are placed by their
  // bucket too, so that a slice's live never counts objects its allocs do not.
  const double slice_ms = static_cast<double>(end_ms - start_ms) / kCohorts;
  auto slice_of_bucket = [&](size_t bucket) {
    const double middle = static_cast<double>(origin_ms_) +
                          (static_cast<double>(bucket) + 0.5) * static_cast<double>(bucket_ms_);
    const double slice = std::floor((middle - static_cast<double>(start_ms)) / slice_ms);
    return static_cast<size_t>(std::clamp(slice, 0.0, static_cast<double>(kCohorts - 1)));
  };
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (alloc_buckets_[i].empty()) continue;
    stacks[i].cohorts.assign(kCohorts, {});
    for (size_t b = 0; b < alloc_buckets_[i].size(); ++b) {
      stacks[i].cohorts[slice_of_bucket(b)].allocs += alloc_buckets_[i][b];
    }
  }
  for (const auto& [address, object] : live_) {
    std::vector<AllocationCohort>& cohorts = stacks[object.stack_index].cohorts;
    if (!cohorts.empty()) cohorts[slice_of_bucket(BucketOf(object.t_ms))].live++;
  }
  if (frees_ever_unwatched_) {
    // The objects freed unseen, as expected: off the cohorts' live, onto the freed bytes.
    std::vector<std::vector<double>> dead(stacks.size());
    for (const auto& [address, object] : live_) {
      std::vector<AllocationCohort>& cohorts = stacks[object.stack_index].cohorts;
      if (cohorts.empty()) continue;
      std::vector<double>& d = dead[object.stack_index];
      d.resize(kCohorts, 0.0);
      d[slice_of_bucket(BucketOf(object.t_ms))] += DeadChance(object, end_ms);
    }
    const std::vector<Unseen> unseen = UnseenDeaths(end_ms);
    for (size_t i = 0; i < stacks.size(); ++i) {
      stacks[i].freed_bytes += std::llround(unseen[i].bytes);
      for (size_t c = 0; c < dead[i].size(); ++c) {
        stacks[i].cohorts[c].live =
            std::max<int64_t>(0, stacks[i].cohorts[c].live - std::llround(dead[i][c]));
      }
    }
  }
  return stacks;
}

double LiveHeapTracker::UnwatchedMsBy(int64_t t_ms) const {
  return unwatched_ms_ +
         (frees_watched_ ? 0.0
                         : static_cast<double>(std::max<int64_t>(0, t_ms - watch_changed_ms_)));
}

size_t LiveHeapTracker::AgeBucket(double unwatched_ms) {
  // Buckets of 0.5 s doubling: [0, 0.5 s), [0.5, 1), [1, 2), ... [128 s, ...).
  if (unwatched_ms < 500) return 0;
  return std::min<size_t>(kAgeBuckets - 1, 1 + static_cast<size_t>(std::log2(unwatched_ms / 500)));
}

double LiveHeapTracker::Hazard(uint32_t stack_index) const {
  if (hazard_[stack_index] >= 0) return hazard_[stack_index];
  const WatchRecord& w = watches_[stack_index];
  double deaths = 0;
  for (double d : w.deaths) deaths += d;
  double best_h = 0;
  if (deaths > 0) {
    // log L(h) = sum over watches and age buckets of D log(h e^(-h u)) - N d h e^(-h u),
    // scanned on a log grid from a life of 10 ms to one of 10^7 s; on a tie (one age
    // only cannot tell many objects dying slowly from few dying fast) the faster wins,
    // which takes more off and so calls fewer leaks.
    double best = -std::numeric_limits<double>::infinity();
    constexpr int kGridPoints = 360;  // 10^-1 down to 10^-10 per ms, 40 a decade
    for (int i = 0; i <= kGridPoints; ++i) {
      const double h = std::pow(10.0, -1.0 - 9.0 * i / kGridPoints);
      double ll = 0;
      for (size_t b = 0; b < kAgeBuckets; ++b) {
        if (w.exposure_ms[b] <= 0) continue;
        const double u = w.exposure_unwatched[b] / w.exposure_ms[b];
        const double rate = h * std::exp(-h * u);
        ll += w.deaths[b] * std::log(std::max(rate, 1e-300)) - w.exposure_ms[b] * rate;
      }
      if (ll > best + 1e-9) {
        best = ll;
        best_h = h;
      }
    }
  }
  hazard_[stack_index] = best_h;
  return best_h;
}

double LiveHeapTracker::DeadChance(const LiveObject& object, int64_t t_ms) const {
  const double hazard = Hazard(object.stack_index);
  if (hazard <= 0) return 0;
  return -std::expm1(-hazard * (UnwatchedMsBy(t_ms) - object.unwatched_ms_at_birth));
}

std::vector<LiveHeapTracker::Unseen> LiveHeapTracker::UnseenDeaths(int64_t t_ms) const {
  std::vector<Unseen> unseen(stacks_.size());
  if (!frees_ever_unwatched_) return unseen;
  for (const auto& [address, object] : live_) {
    const double dead = DeadChance(object, t_ms);
    if (dead <= 0) continue;
    const double w = WeightOf(object.window);
    unseen[object.stack_index].bytes += dead * w * object.weight_bytes;
    unseen[object.stack_index].allocs += dead * w * object.weight_count;
  }
  return unseen;
}

void LiveHeapTracker::SetFreesWatched(bool watched, int64_t t_ms) {
  if (watched == frees_watched_) return;
  t_ms = std::max(t_ms, watch_changed_ms_);
  if (frees_watched_) {
    // A watch ends: the objects that waited for its length are exposed for all of it.
    if (frees_ever_unwatched_) {
      const auto watched_ms = static_cast<double>(t_ms - watch_changed_ms_);
      for (size_t i = 0; i < watches_.size(); ++i) {
        WatchRecord& w = watches_[i];
        for (size_t b = 0; b < kAgeBuckets; ++b) {
          if (w.count[b] <= 0) continue;
          w.exposure_ms[b] += w.count[b] * watched_ms;
          w.exposure_unwatched[b] += w.sum_unwatched_ms[b] * watched_ms;
          w.count[b] = 0;
          w.sum_unwatched_ms[b] = 0;
          hazard_[i] = -1;
        }
      }
    }
    frees_ever_unwatched_ = true;
  } else {
    // A watch begins: what it can see die is what is tracked now, by the unwatched time
    // each has lived through.
    unwatched_ms_ += static_cast<double>(t_ms - watch_changed_ms_);
    for (const auto& [address, object] : live_) {
      const double u = unwatched_ms_ - object.unwatched_ms_at_birth;
      if (u <= 0) continue;
      WatchRecord& w = watches_[object.stack_index];
      const size_t bucket = AgeBucket(u);
      w.count[bucket] += 1;
      w.sum_unwatched_ms[bucket] += u;
    }
  }
  frees_watched_ = watched;
  watch_changed_ms_ = t_ms;
}

void LiveHeapTracker::OnFree(uint64_t address, int64_t t_ms) {
  auto it = live_.find(address);
  if (it == live_.end()) return;
  const LiveObject object = it->second;
  live_.erase(it);
  // A death seen in a watch, of an object allocated before the watch began.
  if (frees_watched_ && frees_ever_unwatched_ && object.t_ms < watch_changed_ms_) {
    const double u = unwatched_ms_ - object.unwatched_ms_at_birth;
    if (u > 0) {
      watches_[object.stack_index].deaths[AgeBucket(u)] += 1;
      hazard_[object.stack_index] = -1;
    }
  }
  Charge(object.stack_index, object.window,
         {-object.weight_bytes, -object.weight_count, 0, object.weight_bytes});
  stacks_[object.stack_index].sampled_frees++;
}

void LiveHeapTracker::SetWindowWeight(uint32_t window, double weight, bool final) {
  if (window == 0) return;
  Window& own = windows_[window];
  if (own.final) return;
  const double delta = weight - own.weight;
  if (delta != 0) {
    for (const auto& [stack_index, t] : own.by_stack) {
      Totals& totals = totals_[stack_index];
      totals.live_bytes += delta * t.live_bytes;
      totals.live_allocs += delta * t.live_allocs;
      totals.allocated_bytes += delta * t.allocated_bytes;
      totals.freed_bytes += delta * t.freed_bytes;
      Publish(stack_index);
    }
  }
  own.weight = weight;
  if (final) {
    own.final = true;
    own.by_stack = {};
  }
}

void LiveHeapTracker::TakePoint(int64_t t_ms) {
  point_times_.push_back(t_ms);
  const std::vector<Unseen> unseen = UnseenDeaths(t_ms);
  for (size_t i = 0; i < stacks_.size(); ++i) {
    stacks_[i].series.push_back(
        {t_ms, std::max<int64_t>(0, std::llround(totals_[i].live_bytes - unseen[i].bytes)),
         std::max<int64_t>(0, std::llround(totals_[i].live_allocs - unseen[i].allocs))});
  }
}

}  // namespace drip::agent
