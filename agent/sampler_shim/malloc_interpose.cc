// The interposed malloc family of libdrip_sampler.so and its USDT probes. Each function
// calls glibc's real allocator through its __libc_* entry point (not dlsym, which may
// allocate and so recurse while we bootstrap), asks the byte sampler whether the block
// is sampled, and fires:
//   drip:alloc(uint64 ptr, uint64 size, uint64 sampling_mean_bytes)
//       after the real allocation succeeded, for a sampled block (size as requested);
//   drip:free(uint64 ptr)
//       before the real free (or realloc) of a block that was sampled.
// The probes sit in the interposed functions themselves (AllocateAndSample and
// UntrackFreedBlock are always inlined), so that a tracer sees the stack
// <interposed function> -> application. Without a tracer a probe is a nop.
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/sdt.h>

#include <cstdint>

#include "agent/sampler_shim/byte_sampler.h"
#include "agent/sampler_shim/drip_sampler.h"
#include "agent/sampler_shim/sampled_set.h"

#define DRIP_INTERPOSE __attribute__((visibility("default")))

// glibc's allocator under its own names (exported by libc.so.6 since 2.2.5). They never
// call back into the malloc we export.
extern "C" {
void* __libc_malloc(size_t size) noexcept;
void __libc_free(void* p) noexcept;
void* __libc_calloc(size_t n, size_t size) noexcept;
void* __libc_realloc(void* p, size_t size) noexcept;
void* __libc_memalign(size_t alignment, size_t size) noexcept;
void* __libc_valloc(size_t size) noexcept;
void* __libc_pvalloc(size_t size) noexcept;
// Removed from glibc's headers in 2.26 (binaries built earlier still call it).
DRIP_INTERPOSE void cfree(void* p) noexcept;
}

namespace drip::sampler_shim {
namespace {

// The slow path of AllocateAndSample, for a request the countdown reached: a sampled
// block, and its size if it is now tracked (else 0; a sampled request is never of 0
// bytes, since the countdown is >= 1). Returned in two registers, so that the caller
// needs no stack frame of its own on its fast path.
struct SampledBlock {
  void* p;
  uint64_t size;
};

template <typename Allocate>
__attribute__((noinline)) SampledBlock AllocateSlow(size_t size, Allocate allocate) {
  if (!ShouldSampleSlow(size)) return {allocate(), 0};
  void* p = allocate();
  if (p == nullptr || !InsertSampled(p)) return {p, 0};
  return {p, size};
}

// Returns allocate()'s block, the real allocation for a request of `size` bytes, and
// samples it. The common case is a subtract and a tail call into glibc; otherwise the
// probe fires here, in the interposed function, once AllocateSlow has returned. Every
// request is charged to the countdown, failed ones included (they are rare, and skipping
// them would cost a branch on the fast path).
template <typename Allocate>
__attribute__((always_inline)) inline void* AllocateAndSample(size_t size, Allocate allocate) {
  if (__builtin_expect(ChargeUnsampled(size), 1)) return allocate();
  const SampledBlock block = AllocateSlow(size, allocate);
  if (block.size != 0) {
    DTRACE_PROBE3(drip, alloc, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(block.p)),
                  block.size, static_cast<uint64_t>(MeanBytes()));
  }
  return block.p;
}

// Call before the real allocator frees (or may free) p.
__attribute__((always_inline)) inline void UntrackFreedBlock(void* p) {
  if (__builtin_expect(MaybeSampled(p), 0) && RemoveSampled(p)) {
    DTRACE_PROBE1(drip, free, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)));
  }
}

// realloc's contract for the probes: a sampled old block is freed (drip:free fires before
// the real realloc, since afterwards its address may already be another thread's new
// block), and the result is a new allocation of `size` bytes, sampled like any other.
// If the real realloc fails, the old block stays allocated but is no longer tracked.
// realloc(p, 0) frees p in glibc and returns NULL: nothing new is sampled.
__attribute__((always_inline)) inline void* Reallocate(void* old, size_t size) {
  if (old != nullptr) UntrackFreedBlock(old);
  return AllocateAndSample(size, [=] { return __libc_realloc(old, size); });
}

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace
}  // namespace drip::sampler_shim

using drip::sampler_shim::AllocateAndSample;
using drip::sampler_shim::IsPowerOfTwo;
using drip::sampler_shim::Reallocate;
using drip::sampler_shim::UntrackFreedBlock;

extern "C" {

DRIP_INTERPOSE void* malloc(size_t size) noexcept {
  return AllocateAndSample(size, [=] { return __libc_malloc(size); });
}

DRIP_INTERPOSE void free(void* p) noexcept {
  UntrackFreedBlock(p);
  __libc_free(p);
}

DRIP_INTERPOSE void cfree(void* p) noexcept {
  UntrackFreedBlock(p);
  __libc_free(p);
}

DRIP_INTERPOSE void* calloc(size_t n, size_t size) noexcept {
  size_t bytes = 0;
  // On overflow glibc's calloc fails with ENOMEM; there is nothing to sample.
  if (__builtin_mul_overflow(n, size, &bytes)) return __libc_calloc(n, size);
  return AllocateAndSample(bytes, [=] { return __libc_calloc(n, size); });
}

DRIP_INTERPOSE void* realloc(void* old, size_t size) noexcept { return Reallocate(old, size); }

// As glibc's (and OpenBSD's): realloc(old, n * size), or NULL with ENOMEM and old left
// untouched when n * size overflows.
DRIP_INTERPOSE void* reallocarray(void* old, size_t n, size_t size) noexcept {
  size_t bytes = 0;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return Reallocate(old, bytes);
}

// POSIX: alignment must be a power of two multiple of sizeof(void*), else EINVAL; ENOMEM
// when out of memory; *memptr is set only on success, and errno is left alone.
DRIP_INTERPOSE int posix_memalign(void** memptr, size_t alignment, size_t size) noexcept {
  if (alignment % sizeof(void*) != 0 || !IsPowerOfTwo(alignment)) return EINVAL;
  const int saved_errno = errno;
  void* p = AllocateAndSample(size, [=] { return __libc_memalign(alignment, size); });
  errno = saved_errno;
  if (p == nullptr) return ENOMEM;
  *memptr = p;
  return 0;
}

// C11/C17 (DR 460) and glibc >= 2.38: an alignment that is not a power of two is
// rejected with NULL and errno EINVAL (glibc 2.36's own aligned_alloc, an alias of
// memalign, would round it up instead). Any size is accepted (C17 dropped the
// multiple-of-alignment requirement).
DRIP_INTERPOSE void* aligned_alloc(size_t alignment, size_t size) noexcept {
  if (!IsPowerOfTwo(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return AllocateAndSample(size, [=] { return __libc_memalign(alignment, size); });
}

// The obsolete ones keep glibc's semantics exactly (memalign rounds a non-power-of-two
// alignment up); they are sampled by the size requested.
DRIP_INTERPOSE void* memalign(size_t alignment, size_t size) noexcept {
  return AllocateAndSample(size, [=] { return __libc_memalign(alignment, size); });
}

DRIP_INTERPOSE void* valloc(size_t size) noexcept {
  return AllocateAndSample(size, [=] { return __libc_valloc(size); });
}

DRIP_INTERPOSE void* pvalloc(size_t size) noexcept {
  return AllocateAndSample(size, [=] { return __libc_pvalloc(size); });
}

uint64_t drip_sampler_mean_bytes(void) { return drip::sampler_shim::MeanBytes(); }

uint64_t drip_sampler_live_sampled(void) { return drip::sampler_shim::LiveSampled(); }

uint64_t drip_sampler_sampled_total(void) { return drip::sampler_shim::SampledTotal(); }

uint64_t drip_sampler_dropped_full(void) { return drip::sampler_shim::DroppedFull(); }

}  // extern "C"
