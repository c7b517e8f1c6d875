// The sampled-address set's slow paths: insert on a sampled allocation, remove on a free
// that passed the filter. See sampled_set.h for the structure and why lookups may stop
// at the first empty slot. Runs inside malloc/free: no locks, no allocation.
#include "agent/sampler_shim/sampled_set.h"

namespace drip::sampler_shim {

// Zero-initialised .bss: nothing to set up before the first malloc, and pages cost RSS
// only once touched. The filter is read by every free and written only when sampling,
// so its lines stay shared in every core's cache.
alignas(64) std::atomic<uint8_t> g_filter[kFilterSize];

namespace {

// Slot values: addresses from malloc are never 0 or 1.
constexpr uintptr_t kEmpty = 0;
constexpr uintptr_t kTombstone = 1;
constexpr uint8_t kFilterStuck = 255;

alignas(4096) std::atomic<uintptr_t> g_slots[kSetSlots];

// Statistics, written only when sampling.
alignas(64) std::atomic<uint64_t> g_live_sampled{0};
std::atomic<uint64_t> g_sampled_total{0};
std::atomic<uint64_t> g_dropped_full{0};

// Fibonacci hashing (multiply by 2^64 / golden ratio, keep the high bits): unlike the
// filter's index, the slot must not follow the address bits, or blocks 1 MiB apart, and
// page-aligned mmap'ed blocks, would crowd the same windows.
size_t SlotIndex(uintptr_t address) {
  return static_cast<size_t>(((address >> 4) * 0x9e3779b97f4a7c15ULL) >> (64 - kSetBits));
}

std::atomic<uintptr_t>& Slot(size_t start, size_t i) {
  return g_slots[(start + i) & (kSetSlots - 1)];
}

void FilterIncrement(size_t index) {
  std::atomic<uint8_t>& counter = g_filter[index];
  uint8_t value = counter.load(std::memory_order_relaxed);
  while (value != kFilterStuck &&
         !counter.compare_exchange_weak(value, value + 1, std::memory_order_relaxed)) {
  }
}

void FilterDecrement(size_t index) {
  std::atomic<uint8_t>& counter = g_filter[index];
  uint8_t value = counter.load(std::memory_order_relaxed);
  // A stuck counter no longer knows how many addresses it covers, so it stays; 0 cannot
  // happen for a present address, but never wrap to 255 if it did.
  while (value != kFilterStuck && value != 0 &&
         !counter.compare_exchange_weak(value, value - 1, std::memory_order_relaxed)) {
  }
}

}  // namespace

bool InsertSampled(void* p) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  const size_t start = SlotIndex(address);
  for (;;) {
    // One pass over the window: is p already there (its free bypassed us), and where is
    // the first reusable slot? Nothing lies beyond an empty slot.
    std::atomic<uintptr_t>* free_slot = nullptr;
    uintptr_t free_value = kEmpty;
    for (size_t i = 0; i < kProbeWindow; ++i) {
      std::atomic<uintptr_t>& slot = Slot(start, i);
      const uintptr_t value = slot.load(std::memory_order_acquire);
      if (value == address) {
        g_sampled_total.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
      if ((value == kEmpty || value == kTombstone) && free_slot == nullptr) {
        free_slot = &slot;
        free_value = value;
      }
      if (value == kEmpty) break;
    }
    if (free_slot == nullptr) {
      g_dropped_full.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (free_slot->compare_exchange_strong(free_value, address, std::memory_order_acq_rel)) {
      break;
    }
    // Another thread took that slot for another address: look again.
  }
  FilterIncrement(FilterIndex(p));
  g_live_sampled.fetch_add(1, std::memory_order_relaxed);
  g_sampled_total.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool RemoveSampled(void* p) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  if (address == kEmpty) return false;  // free(NULL) may pass the filter
  const size_t start = SlotIndex(address);
  for (size_t i = 0; i < kProbeWindow; ++i) {
    std::atomic<uintptr_t>& slot = Slot(start, i);
    uintptr_t value = slot.load(std::memory_order_acquire);
    if (value == kEmpty) return false;
    if (value != address) continue;
    // Only a racing double free of p could change the slot under us; then one wins.
    if (!slot.compare_exchange_strong(value, kTombstone, std::memory_order_acq_rel)) {
      return false;
    }
    FilterDecrement(FilterIndex(p));
    g_live_sampled.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

uint64_t LiveSampled() { return g_live_sampled.load(std::memory_order_relaxed); }

uint64_t SampledTotal() { return g_sampled_total.load(std::memory_order_relaxed); }

uint64_t DroppedFull() { return g_dropped_full.load(std::memory_order_relaxed); }

}  // namespace drip::sampler_shim
