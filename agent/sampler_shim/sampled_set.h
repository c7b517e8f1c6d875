// The set of sampled live addresses of libdrip_sampler.so: free() must tell, for every
// pointer, whether it was a sampled allocation (then it fires drip:free), and almost no
// pointer is. So the question is answered in two steps, the first cheap and almost
// always final:
//
//   free(p) ──► filter[(p >> 4) mod 2^16] == 0? ──yes──► not sampled   (one byte load)
//                  │no
//                  ▼
//              probe slots[h(p) ...] ──► sampled or not   (open addressing, lock-free)
//
// The filter is a counting Bloom filter with one hash: 2^16 8-bit counters, each the
// number of live sampled addresses that map to it. A counter that reaches 255 sticks
// there (it only costs false positives). With n live sampled addresses a non-sampled
// free reaches the slots with probability ~ n / 65536. The index is the address bits
// 4..19 themselves, not a hash: glibc's blocks are 16-byte aligned, and neighbouring
// blocks then share filter lines, so the filter's cache footprint follows the heap's
// working set (a hot heap of H bytes touches H/16 filter bytes, not 64 KiB at random).
// Sampled addresses are spread over the heap, which is all the filter needs. There is
// no "any sampled block live?" test before it: a service almost always has some, and
// measured on drip-malloc-workload, that extra load and branch cost more than it saved.
//
// The slots are a fixed open-addressing table of kSetSlots addresses with linear probing
// over a bounded window of kProbeWindow slots. A slot goes empty -> address -> tombstone
// -> address -> tombstone ..., never back to empty, so a lookup may stop at the first
// empty slot: every entry was placed past only non-empty slots, and they stay non-empty.
// Inserts reuse tombstones; when a window has no free slot the sample is dropped and
// counted (DroppedFull) — the table is full for that address, not resized (no locks, no
// allocation). Memory: 2 MiB of zero-filled .bss for the slots, 64 KiB for the filter,
// paid in RSS only for the pages touched.
//
// Thread-safety: all functions may be called from any thread concurrently, lock-free.
// Ordering: an insert of p completes before malloc returns p, and an application that
// frees p on another thread has synchronised with that return, so relaxed atomics
// suffice for the filter and the count; slots are CASed. Fork-safe (no locks): the child
// keeps the parent's set. Not async-signal-safe (neither is malloc). Never allocates.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace drip::sampler_shim {

inline constexpr size_t kFilterBits = 16;
inline constexpr size_t kFilterSize = size_t{1} << kFilterBits;
inline constexpr size_t kSetBits = 18;
inline constexpr size_t kSetSlots = size_t{1} << kSetBits;
inline constexpr size_t kProbeWindow = 64;

// Read by every free, written only when sampling.
extern std::atomic<uint8_t> g_filter[kFilterSize];

// Address bits 4..19 (glibc's blocks are 16-byte aligned: the low 4 bits carry nothing).
inline size_t FilterIndex(const void* p) {
  return static_cast<size_t>((reinterpret_cast<uintptr_t>(p) >> 4) & (kFilterSize - 1));
}

// Whether p may be a sampled live address: false means certainly not. Inlined into free.
inline bool MaybeSampled(const void* p) {
  return g_filter[FilterIndex(p)].load(std::memory_order_relaxed) != 0;
}

// Adds p (a block just returned by the real allocator). Returns false, and counts the
// drop, when p's probe window is full; then p is not tracked. p already present (its
// free bypassed us) is kept once and returns true. p must not be null.
bool InsertSampled(void* p);

// Removes p if present; returns whether it was. Call before the real free of p.
bool RemoveSampled(void* p);

uint64_t LiveSampled();   // addresses in the set
uint64_t SampledTotal();  // successful InsertSampled calls since start
uint64_t DroppedFull();   // InsertSampled calls that found p's window full

}  // namespace drip::sampler_shim
