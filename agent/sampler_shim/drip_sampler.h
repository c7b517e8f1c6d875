// The C API of libdrip_sampler.so, Drip's LD_PRELOAD allocation-sampling shim (see
// docs/preload.md): read-only counters for tests and for the agent. A program that may
// or may not run with the shim preloaded looks these up with dlsym(RTLD_DEFAULT, ...)
// rather than linking the library. All functions are thread-safe, lock-free, and never
// allocate; counts are since the process started (a forked child inherits its parent's).
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DRIP_SAMPLER_API __attribute__((visibility("default")))

// The sampling mean T in bytes (DRIP_SAMPLE_BYTES, or 524288 when it is unset, 0 or not a
// plain decimal number; while the agent asks for another through drip_sampler_control,
// that one). An allocation of s bytes is sampled with probability
// 1 - exp(-s/T); T is also the third argument of the drip:alloc USDT probe.
DRIP_SAMPLER_API uint64_t drip_sampler_mean_bytes(void);

// Where the Drip agent asks a preloaded process for another T while a snapshot runs, so
// that a slow leak gets enough samples in the window (agent/heap/shim_sampling_control.h).
// The agent finds this object by its dynamic symbol, checks `magic`, and writes
// `requested_mean_bytes` with process_vm_writev: non-zero replaces DRIP_SAMPLE_BYTES for
// the countdowns drawn from then on (and as drip:alloc's T); 0 (the default, and what the
// agent writes back when the snapshot ends) returns to it. Programs must not write it.
#define DRIP_SAMPLER_CONTROL_MAGIC 0x504d415350495244ULL /* "DRIPSAMP", little-endian */
struct drip_sampler_control {
  uint64_t magic;
  uint64_t requested_mean_bytes;
};
DRIP_SAMPLER_API extern struct drip_sampler_control drip_sampler_control;

// Sampled allocations not yet freed (the addresses drip:free will fire for).
DRIP_SAMPLER_API uint64_t drip_sampler_live_sampled(void);

// Sampled allocations since start, i.e. drip:alloc probe firings.
DRIP_SAMPLER_API uint64_t drip_sampler_sampled_total(void);

// Allocations that were sampled but dropped (no drip:alloc) because the set of sampled
// live addresses had no room for them.
DRIP_SAMPLER_API uint64_t drip_sampler_dropped_full(void);

// The file of the allocator the shim forwards to: the one after it in the process's
// lookup order ("/lib/x86_64-linux-gnu/libc.so.6", or libjemalloc.so.2 and the like
// when the program links one). Never NULL.
DRIP_SAMPLER_API const char* drip_sampler_allocator(void);

#ifdef __cplusplus
}  // extern "C"
#endif
