// The byte sampler of libdrip_sampler.so: decides, per allocation, whether it is sampled,
// the way tcmalloc's Sampler and heapprofd's client do. Its fast path is inlined into
// every interposed allocation function, so it is a thread-local subtract and compare.
//
// The maths. Treat the bytes a thread allocates as one long line, each allocation a
// segment of that line as long as its size. Put points on the line by a Poisson process
// of rate 1/T (T = the mean, DRIP_SAMPLE_BYTES), i.e. the gaps between points are
// independent Exponential(mean T) lengths. An allocation is sampled when at least one
// point falls inside its segment. The number of points in a segment of length s is
// Poisson(s/T), so
//     P(sampled) = p(s) = 1 - P(no point) = 1 - exp(-s/T),
// independently for every allocation (disjoint segments of a Poisson process are
// independent). Small allocations are sampled with p ~ s/T, allocations much larger
// than T almost surely.
//
// The countdown implements it: `remaining` is the distance from the end of the last
// allocation to the next point. An allocation of size s is sampled when s >= remaining;
// otherwise remaining -= s. This is exact because the exponential is memoryless: given
// that no point fell in the segment, the distance left to the next point is again
// Exponential(T), and after a sampled allocation the distance from its end to the next
// point is a fresh Exponential(T) draw (the points beyond the first inside the segment
// are irrelevant; the segment is sampled once), which is what Draw() returns.
//
// The estimate. Whoever reads the samples (the agent's BPF, through the drip:alloc USDT
// probe, which carries T) weighs a sampled allocation of size s by s / p(s). Writing
// X_i for the indicator that allocation i is sampled, E[X_i] = p(s_i), so
//     E[ sum_i X_i * s_i / p(s_i) ] = sum_i p(s_i) * s_i / p(s_i) = sum_i s_i,
// the true byte count: the estimate is unbiased, for live bytes per stack as for total
// bytes, with variance sum_i s_i^2 (1 - p_i) / p_i (large allocations, p ~ 1, add none).
// The expected number of samples is sum_i p(s_i) <= total_bytes / T.
//
// Thread-safety: all state is thread-local (initial-exec TLS, so that touching it never
// calls malloc); a thread's first allocation seeds its state. Nothing here allocates. A
// forked child inherits the forking thread's state, PRNG included.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/sampler_shim/drip_sampler.h"

namespace drip::sampler_shim {

// DRIP_SAMPLE_BYTES when it is unset, 0 or not a plain decimal number.
inline constexpr uint64_t kDefaultMeanBytes = 524288;

// Checkpoints. A countdown drawn at T = 512 KiB takes a thread allocating 5 KB/s almost
// two minutes to run out, so a T the agent asks for (drip_sampler_control) would reach
// it only after the snapshot is over. So the countdown stops at most every
// kCheckpointBytes: `remaining` is the distance to the sample point or to the next
// checkpoint, whichever comes first, and `beyond` what is left past the checkpoint. At a
// checkpoint the slow path carries on with `beyond` when T is still the one it was drawn
// with (a few instructions, no log, no draw), else draws a fresh gap at the new T: exact,
// since the exponential is memoryless. The fast path is unchanged.
inline constexpr uint64_t kCheckpointBytes = 64 * 1024;

struct ThreadSamplerState {
  // Bytes left until the next sample point or checkpoint; 0 until the thread's first
  // allocation, so that the first one takes the slow path, which seeds the thread
  // (ShouldSampleSlow).
  uint64_t remaining;
  // xorshift64* state; never 0 once seeded.
  uint64_t rng;
  // The rest of the gap past the checkpoint `remaining` counts down to (0: `remaining`
  // ends at the sample point itself), and the T the gap was drawn with.
  uint64_t beyond;
  uint64_t drawn_mean;
};

// Zero-initialised per thread. Initial-exec: an access is a load of the offset from the
// GOT and a %fs-relative access, never a call to __tls_get_addr (which may call malloc).
extern __thread ThreadSamplerState tls_sampler_state __attribute__((tls_model("initial-exec")));

// The sampling mean T in bytes, 0 until first read. Threads racing to read it store the
// same value, so relaxed is enough.
extern std::atomic<uint64_t> g_mean_bytes;

// Reads DRIP_SAMPLE_BYTES into g_mean_bytes and returns it (getenv and a hand-written
// parser: no allocation). Use MeanBytes().
uint64_t ReadMeanBytes();

// The sampling mean T in bytes: DRIP_SAMPLE_BYTES, read once from the environment on
// first use. Any thread may call it.
inline uint64_t MeanBytes() {
  // Only the slow path reads T (drawing a countdown, firing drip:alloc), so the agent's
  // request costs the fast path nothing.
  const uint64_t requested =
      __atomic_load_n(&drip_sampler_control.requested_mean_bytes, __ATOMIC_RELAXED);
  if (requested != 0) return requested;
  const uint64_t mean = g_mean_bytes.load(std::memory_order_relaxed);
  if (__builtin_expect(mean != 0, 1)) return mean;
  return ReadMeanBytes();
}

// Whether this thread's allocation of `size` bytes is sampled, P = 1 - exp(-size/T), is
// decided in two steps, so that callers can keep the slow step out of line:
//   if (ChargeUnsampled(size)) -> not sampled;  else sampled = ShouldSampleSlow(size).
// Call once per allocation request, in order.

// The fast path: charges `size` to the countdown and returns true when the countdown
// does not reach it (not sampled), false when ShouldSampleSlow must decide.
inline bool ChargeUnsampled(size_t size) {
  ThreadSamplerState& s = tls_sampler_state;
  if (__builtin_expect(size < s.remaining, 1)) {
    s.remaining -= size;
    return true;
  }
  return false;
}

// The slow path: seeds the thread on its first allocation, else the countdown reached
// this allocation. Returns whether `size` is sampled and re-arms the countdown.
bool ShouldSampleSlow(size_t size);

}  // namespace drip::sampler_shim
