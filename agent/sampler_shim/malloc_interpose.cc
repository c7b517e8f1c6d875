// The interposed malloc family of libdrip_sampler.so and its USDT probes. Each function
// calls the allocator that follows the shim in the process's lookup order (glibc's, or
// jemalloc's or tcmalloc's when the program links one), asks the byte sampler whether
// the block is sampled, and fires:
//   drip:alloc(uint64 ptr, uint64 size, uint64 sampling_mean_bytes)
//       after the real allocation succeeded, for a sampled block (size as requested);
//   drip:free(uint64 ptr)
//       before the real free (or realloc) of a block that was sampled.
// The probes sit in the interposed functions themselves (AllocateAndSample and
// UntrackFreedBlock are always inlined), so that a tracer sees the stack
// <interposed function> -> application. Without a tracer a probe is a nop.
//
// Why the next allocator and not glibc's own: a program linked with jemalloc also calls
// jemalloc's malloc_usable_size, mallctl or nallocx on the blocks malloc gave it. Had the
// shim's malloc handed out glibc blocks, jemalloc would read them as its own and crash
// the program (redis-server did, at its first allocation).
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <new>  // the operators' tag types only: nothing of libstdc++ is linked

#include "agent/sampler_shim/byte_sampler.h"
#include "agent/sampler_shim/drip_sampler.h"
#include "agent/sampler_shim/sampled_set.h"

#define DRIP_INTERPOSE __attribute__((visibility("default")))

extern "C" {
// Removed from glibc's headers in 2.26 (binaries built earlier still call it).
DRIP_INTERPOSE void cfree(void* p) noexcept;
}

namespace drip::sampler_shim {
namespace {

// The allocator after the shim, resolved once with dlsym(RTLD_NEXT). Functions it does
// not have fall back to its malloc (memalign and valloc are served by posix_memalign when
// an allocator has only that).
struct NextAllocator {
  void* (*malloc)(size_t) = nullptr;
  void (*free)(void*) = nullptr;
  void* (*calloc)(size_t, size_t) = nullptr;
  void* (*realloc)(void*, size_t) = nullptr;
  int (*posix_memalign)(void**, size_t, size_t) = nullptr;
  void* (*memalign)(size_t, size_t) = nullptr;
  void* (*aligned_alloc)(size_t, size_t) = nullptr;
  void* (*valloc)(size_t) = nullptr;
  void* (*pvalloc)(size_t) = nullptr;
};

NextAllocator g_next;
const char* g_allocator_name = "";  // the file of the next allocator's malloc

// operator new and delete, every variant a compiler emits, by their mangled names (the
// shim has no libstdc++ to declare them with). A program linked with tcmalloc or jemalloc
// gets them from that allocator, and they do not go through malloc: without them here,
// the shim would see none of a C++ program's allocations. libstdc++'s call malloc and
// free, which the shim samples already: those the shim only forwards to, or a block
// would be sampled twice.
enum CxxOperator : int {
  kNew,
  kNewArray,
  kNewNothrow,
  kNewArrayNothrow,
  kNewAligned,
  kNewArrayAligned,
  kNewAlignedNothrow,
  kNewArrayAlignedNothrow,
  kDelete,
  kDeleteArray,
  kDeleteSized,
  kDeleteArraySized,
  kDeleteNothrow,
  kDeleteArrayNothrow,
  kDeleteAligned,
  kDeleteArrayAligned,
  kDeleteSizedAligned,
  kDeleteArraySizedAligned,
  kDeleteAlignedNothrow,
  kDeleteArrayAlignedNothrow,
  kCxxOperators,
};
constexpr const char* kCxxOperatorNames[kCxxOperators] = {
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};
void* g_next_cxx[kCxxOperators] = {};
// Whether the next operator new is the allocator's own (the shim samples it), not one
// that calls malloc (the shim's malloc samples it).
bool g_cxx_is_allocators = false;

// The hot four, called through these: until the allocator is resolved they point at
// stand-ins that resolve it (or serve the bootstrap arena while it is being resolved),
// so that the fast paths need no check of their own.
void* MallocWhileResolving(size_t size);
void FreeWhileResolving(void* p);
void* CallocWhileResolving(size_t n, size_t size);
void* ReallocWhileResolving(void* old, size_t size);
std::atomic<void* (*)(size_t)> g_malloc{&MallocWhileResolving};
std::atomic<void (*)(void*)> g_free{&FreeWhileResolving};
std::atomic<void* (*)(size_t, size_t)> g_calloc{&CallocWhileResolving};
std::atomic<void* (*)(void*, size_t)> g_realloc{&ReallocWhileResolving};
// 0: not resolved, 1: resolving (dlsym may allocate: served from the bootstrap arena),
// 2: ready.
std::atomic<int> g_state{0};

// What dlsym and anything else allocate while the shim resolves the next allocator (none
// is known to: glibc's dlsym allocates only on error). Its blocks are never freed (free
// ignores them); realloc moves them to the real allocator.
constexpr size_t kBootstrapBytes = 64 * 1024;
alignas(64) unsigned char g_bootstrap[kBootstrapBytes];
std::atomic<size_t> g_bootstrap_used{0};
constexpr size_t kBootstrapHeader = 16;  // the block's size, keeping 16-byte alignment

bool InBootstrap(const void* p) {
  return reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(g_bootstrap) <
         kBootstrapBytes;
}

void* BootstrapAllocate(size_t size, size_t alignment = 16) {
  if (alignment < 16) alignment = 16;
  const size_t need = size + kBootstrapHeader + alignment;
  const size_t start = g_bootstrap_used.fetch_add(need, std::memory_order_relaxed);
  if (start + need > kBootstrapBytes) return nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(g_bootstrap + start + kBootstrapHeader);
  p = (p + alignment - 1) & ~(uintptr_t{alignment} - 1);
  *reinterpret_cast<size_t*>(p - kBootstrapHeader) = size;
  // Pinned (a stuck counter never comes down): free looks further only past the filter.
  g_filter[FilterIndex(reinterpret_cast<void*>(p))].store(255, std::memory_order_relaxed);
  return reinterpret_cast<void*>(p);
}

template <typename Function>
Function Next(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

__attribute__((noinline)) void Resolve() {
  int expected = 0;
  if (!g_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    // Another thread is resolving: wait for it (a few dlsym calls).
    while (g_state.load(std::memory_order_acquire) != 2) {
    }
    return;
  }
  NextAllocator next;
  next.malloc = Next<decltype(next.malloc)>("malloc");
  next.free = Next<decltype(next.free)>("free");
  next.calloc = Next<decltype(next.calloc)>("calloc");
  next.realloc = Next<decltype(next.realloc)>("realloc");
  next.posix_memalign = Next<decltype(next.posix_memalign)>("posix_memalign");
  next.memalign = Next<decltype(next.memalign)>("memalign");
  next.aligned_alloc = Next<decltype(next.aligned_alloc)>("aligned_alloc");
  next.valloc = Next<decltype(next.valloc)>("valloc");
  next.pvalloc = Next<decltype(next.pvalloc)>("pvalloc");
  if (next.malloc == nullptr || next.free == nullptr || next.calloc == nullptr ||
      next.realloc == nullptr) {
    abort();  // no allocator after the shim: nothing could run
  }
  // A function the allocator lacks resolves to glibc's further down the lookup order;
  // its blocks would be freed by the other allocator. Only the allocator's own count.
  Dl_info owner{};
  if (dladdr(reinterpret_cast<void*>(next.malloc), &owner) != 0) {
    g_allocator_name = owner.dli_fname != nullptr ? owner.dli_fname : "";
    auto own = [&](auto function) -> decltype(function) {
      Dl_info info{};
      return function != nullptr && dladdr(reinterpret_cast<void*>(function), &info) != 0 &&
                     info.dli_fbase == owner.dli_fbase
                 ? function
                 : nullptr;
    };
    next.posix_memalign = own(next.posix_memalign);
    next.memalign = own(next.memalign);
    next.aligned_alloc = own(next.aligned_alloc);
    next.valloc = own(next.valloc);
    next.pvalloc = own(next.pvalloc);
  }
  for (int i = 0; i < kCxxOperators; ++i) g_next_cxx[i] = dlsym(RTLD_NEXT, kCxxOperatorNames[i]);
  Dl_info new_owner{};
  g_cxx_is_allocators = g_next_cxx[kNew] != nullptr && owner.dli_fbase != nullptr &&
                        dladdr(g_next_cxx[kNew], &new_owner) != 0 &&
                        new_owner.dli_fbase == owner.dli_fbase;
  g_next = next;
  g_malloc.store(next.malloc, std::memory_order_release);
  g_free.store(next.free, std::memory_order_release);
  g_calloc.store(next.calloc, std::memory_order_release);
  g_realloc.store(next.realloc, std::memory_order_release);
  g_state.store(2, std::memory_order_release);
}

__attribute__((always_inline)) inline bool Ready() {
  if (__builtin_expect(g_state.load(std::memory_order_acquire) == 2, 1)) return true;
  if (g_state.load(std::memory_order_acquire) == 1) return false;  // resolving: bootstrap
  Resolve();
  return g_state.load(std::memory_order_acquire) == 2;
}

// Resolved when the shim is loaded, before the program's own code runs.
__attribute__((constructor)) void ResolveAtLoad() { Ready(); }

void* MallocWhileResolving(size_t size) {
  return Ready() ? g_next.malloc(size) : BootstrapAllocate(size);
}

void FreeWhileResolving(void* p) {
  if (Ready()) g_next.free(p);
}

void* CallocWhileResolving(size_t n, size_t size) {
  return Ready() ? g_next.calloc(n, size) : BootstrapAllocate(n * size);  // the arena is zeroed
}

void* ReallocWhileResolving(void* old, size_t size) {
  return Ready() ? g_next.realloc(old, size) : BootstrapAllocate(size);  // old: null here
}

// memalign's semantics (a non-power-of-two alignment rounded up) from what the allocator
// has; every allocator has one of the two.
void* NextMemalign(size_t alignment, size_t size) {
  if (g_next.memalign != nullptr) return g_next.memalign(alignment, size);
  size_t rounded = sizeof(void*);
  while (rounded < alignment) rounded <<= 1;
  void* p = nullptr;
  return g_next.posix_memalign != nullptr && g_next.posix_memalign(&p, rounded, size) == 0
             ? p
             : nullptr;
}

// (Not a function-local static: its guard would need libstdc++.)
size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

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
// Returns false for a block of the bootstrap arena, which must not reach the real
// allocator. Its filter byte is pinned, so that check costs nothing on the fast path.
__attribute__((always_inline)) inline bool UntrackFreedBlock(void* p) {
  if (__builtin_expect(MaybeSampled(p), 0)) {
    if (InBootstrap(p)) return false;
    if (RemoveSampled(p)) {
      DTRACE_PROBE1(drip, free, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)));
    }
  }
  return true;
}

// realloc's contract for the probes: a sampled old block is freed (drip:free fires before
// the real realloc, since afterwards its address may already be another thread's new
// block), and the result is a new allocation of `size` bytes, sampled like any other.
// If the real realloc fails, the old block stays allocated but is no longer tracked.
// realloc(p, 0) frees p in glibc and returns NULL: nothing new is sampled.
// A block of the bootstrap arena (or a first block while resolving) moves to the real
// allocator once there is one.
__attribute__((noinline)) void* ReallocateBootstrap(void* old, size_t size) {
  void* moved = Ready() ? g_next.malloc(size) : BootstrapAllocate(size);
  if (moved != nullptr && old != nullptr && InBootstrap(old)) {
    const size_t old_size =
        *reinterpret_cast<const size_t*>(static_cast<const unsigned char*>(old) - kBootstrapHeader);
    memcpy(moved, old, old_size < size ? old_size : size);
  }
  return moved;
}

__attribute__((always_inline)) inline void* Reallocate(void* old, size_t size) {
  if (old != nullptr && !UntrackFreedBlock(old)) return ReallocateBootstrap(old, size);
  return AllocateAndSample(size,
                           [=] { return g_realloc.load(std::memory_order_relaxed)(old, size); });
}

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// Calls the next operator new `op` (aligned when alignment != 0, nothrow when nothrow !=
// nullptr). One the program's allocator lacks is served by its malloc (or memalign); a
// failed throwing form then aborts, as an uncaught bad_alloc would.
void* CallNextNew(CxxOperator op, size_t size, size_t alignment, const void* nothrow) {
  void* f = g_next_cxx[op];
  if (f == nullptr) {
    void* p = alignment != 0 ? NextMemalign(alignment, size) : g_next.malloc(size);
    if (p == nullptr && nothrow == nullptr) abort();
    return p;
  }
  if (alignment == 0 && nothrow == nullptr) return reinterpret_cast<void* (*)(size_t)>(f)(size);
  if (alignment == 0) return reinterpret_cast<void* (*)(size_t, const void*)>(f)(size, nothrow);
  if (nothrow == nullptr) return reinterpret_cast<void* (*)(size_t, size_t)>(f)(size, alignment);
  return reinterpret_cast<void* (*)(size_t, size_t, const void*)>(f)(size, alignment, nothrow);
}

// Calls the next operator delete `op` (sized when size != 0, aligned when alignment != 0,
// nothrow when nothrow != nullptr); the allocator's free when it has no such operator.
void CallNextDelete(CxxOperator op, void* p, size_t size, size_t alignment, const void* nothrow) {
  void* f = g_next_cxx[op];
  if (f == nullptr) {
    g_free.load(std::memory_order_relaxed)(p);
  } else if (nothrow != nullptr) {
    if (alignment != 0) {
      reinterpret_cast<void (*)(void*, size_t, const void*)>(f)(p, alignment, nothrow);
    } else {
      reinterpret_cast<void (*)(void*, const void*)>(f)(p, nothrow);
    }
  } else if (size != 0 && alignment != 0) {
    reinterpret_cast<void (*)(void*, size_t, size_t)>(f)(p, size, alignment);
  } else if (size != 0 || alignment != 0) {
    reinterpret_cast<void (*)(void*, size_t)>(f)(p, size != 0 ? size : alignment);
  } else {
    reinterpret_cast<void (*)(void*)>(f)(p);
  }
}

__attribute__((always_inline)) inline void* CxxNew(CxxOperator op, size_t size, size_t alignment,
                                                   const void* nothrow) {
  if (__builtin_expect(!Ready(), 0)) return BootstrapAllocate(size, alignment);
  if (!g_cxx_is_allocators) return CallNextNew(op, size, alignment, nothrow);
  return AllocateAndSample(size, [=] { return CallNextNew(op, size, alignment, nothrow); });
}

__attribute__((always_inline)) inline void CxxDelete(CxxOperator op, void* p, size_t size,
                                                     size_t alignment, const void* nothrow) {
  if (g_cxx_is_allocators && !UntrackFreedBlock(p)) return;  // a bootstrap block
  CallNextDelete(op, p, size, alignment, nothrow);
}

}  // namespace
}  // namespace drip::sampler_shim

using drip::sampler_shim::AllocateAndSample;
using drip::sampler_shim::BootstrapAllocate;
using drip::sampler_shim::g_calloc;
using drip::sampler_shim::g_free;
using drip::sampler_shim::g_malloc;
using drip::sampler_shim::g_next;
using drip::sampler_shim::InBootstrap;
using drip::sampler_shim::IsPowerOfTwo;
using drip::sampler_shim::NextMemalign;
using drip::sampler_shim::PageSize;
using drip::sampler_shim::Ready;
using drip::sampler_shim::Reallocate;
using drip::sampler_shim::UntrackFreedBlock;

extern "C" {

DRIP_INTERPOSE void* malloc(size_t size) noexcept {
  return AllocateAndSample(size, [=] { return g_malloc.load(std::memory_order_relaxed)(size); });
}

DRIP_INTERPOSE void free(void* p) noexcept {
  if (UntrackFreedBlock(p)) g_free.load(std::memory_order_relaxed)(p);
}

DRIP_INTERPOSE void cfree(void* p) noexcept { free(p); }

DRIP_INTERPOSE void* calloc(size_t n, size_t size) noexcept {
  size_t bytes = 0;
  // On overflow calloc fails with ENOMEM; there is nothing to sample.
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return AllocateAndSample(bytes,
                           [=] { return g_calloc.load(std::memory_order_relaxed)(n, size); });
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
  void* p = Ready() ? AllocateAndSample(size, [=] { return NextMemalign(alignment, size); })
                    : BootstrapAllocate(size, alignment);
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
  if (__builtin_expect(!Ready(), 0)) return BootstrapAllocate(size, alignment);
  return AllocateAndSample(size, [=] { return NextMemalign(alignment, size); });
}

// The obsolete ones keep glibc's semantics exactly (memalign rounds a non-power-of-two
// alignment up); they are sampled by the size requested.
DRIP_INTERPOSE void* memalign(size_t alignment, size_t size) noexcept {
  if (__builtin_expect(!Ready(), 0)) return BootstrapAllocate(size, alignment);
  return AllocateAndSample(size, [=] { return NextMemalign(alignment, size); });
}

DRIP_INTERPOSE void* valloc(size_t size) noexcept {
  if (__builtin_expect(!Ready(), 0)) return BootstrapAllocate(size, PageSize());
  return AllocateAndSample(size, [=] {
    return g_next.valloc != nullptr ? g_next.valloc(size) : NextMemalign(PageSize(), size);
  });
}

DRIP_INTERPOSE void* pvalloc(size_t size) noexcept {
  const size_t page = PageSize();
  if (__builtin_expect(!Ready(), 0)) return BootstrapAllocate(size, page);
  return AllocateAndSample(size, [=] {
    if (g_next.pvalloc != nullptr) return g_next.pvalloc(size);
    const size_t rounded = size == 0 ? page : (size + page - 1) / page * page;
    return rounded < size ? nullptr : NextMemalign(page, rounded);
  });
}

}  // extern "C"

// operator new and delete (see kCxxOperatorNames). A sized delete's size is at least 1,
// so 0 stands for "not sized" below; an alignment likewise.
using drip::sampler_shim::CxxDelete;
using drip::sampler_shim::CxxNew;
namespace op = drip::sampler_shim;

DRIP_INTERPOSE void* operator new(size_t size) { return CxxNew(op::kNew, size, 0, nullptr); }
DRIP_INTERPOSE void* operator new[](size_t size) { return CxxNew(op::kNewArray, size, 0, nullptr); }
DRIP_INTERPOSE void* operator new(size_t size, const std::nothrow_t& tag) noexcept {
  return CxxNew(op::kNewNothrow, size, 0, &tag);
}
DRIP_INTERPOSE void* operator new[](size_t size, const std::nothrow_t& tag) noexcept {
  return CxxNew(op::kNewArrayNothrow, size, 0, &tag);
}
DRIP_INTERPOSE void* operator new(size_t size, std::align_val_t alignment) {
  return CxxNew(op::kNewAligned, size, static_cast<size_t>(alignment), nullptr);
}
DRIP_INTERPOSE void* operator new[](size_t size, std::align_val_t alignment) {
  return CxxNew(op::kNewArrayAligned, size, static_cast<size_t>(alignment), nullptr);
}
DRIP_INTERPOSE void* operator new(size_t size, std::align_val_t alignment,
                                  const std::nothrow_t& tag) noexcept {
  return CxxNew(op::kNewAlignedNothrow, size, static_cast<size_t>(alignment), &tag);
}
DRIP_INTERPOSE void* operator new[](size_t size, std::align_val_t alignment,
                                    const std::nothrow_t& tag) noexcept {
  return CxxNew(op::kNewArrayAlignedNothrow, size, static_cast<size_t>(alignment), &tag);
}
DRIP_INTERPOSE void operator delete(void* p) noexcept { CxxDelete(op::kDelete, p, 0, 0, nullptr); }
DRIP_INTERPOSE void operator delete[](void* p) noexcept {
  CxxDelete(op::kDeleteArray, p, 0, 0, nullptr);
}
DRIP_INTERPOSE void operator delete(void* p, size_t size) noexcept {
  CxxDelete(op::kDeleteSized, p, size, 0, nullptr);
}
DRIP_INTERPOSE void operator delete[](void* p, size_t size) noexcept {
  CxxDelete(op::kDeleteArraySized, p, size, 0, nullptr);
}
DRIP_INTERPOSE void operator delete(void* p, const std::nothrow_t& tag) noexcept {
  CxxDelete(op::kDeleteNothrow, p, 0, 0, &tag);
}
DRIP_INTERPOSE void operator delete[](void* p, const std::nothrow_t& tag) noexcept {
  CxxDelete(op::kDeleteArrayNothrow, p, 0, 0, &tag);
}
DRIP_INTERPOSE void operator delete(void* p, std::align_val_t alignment) noexcept {
  CxxDelete(op::kDeleteAligned, p, 0, static_cast<size_t>(alignment), nullptr);
}
DRIP_INTERPOSE void operator delete[](void* p, std::align_val_t alignment) noexcept {
  CxxDelete(op::kDeleteArrayAligned, p, 0, static_cast<size_t>(alignment), nullptr);
}
DRIP_INTERPOSE void operator delete(void* p, size_t size, std::align_val_t alignment) noexcept {
  CxxDelete(op::kDeleteSizedAligned, p, size, static_cast<size_t>(alignment), nullptr);
}
DRIP_INTERPOSE void operator delete[](void* p, size_t size, std::align_val_t alignment) noexcept {
  CxxDelete(op::kDeleteArraySizedAligned, p, size, static_cast<size_t>(alignment), nullptr);
}
DRIP_INTERPOSE void operator delete(void* p, std::align_val_t alignment,
                                    const std::nothrow_t& tag) noexcept {
  CxxDelete(op::kDeleteAlignedNothrow, p, 0, static_cast<size_t>(alignment), &tag);
}
DRIP_INTERPOSE void operator delete[](void* p, std::align_val_t alignment,
                                      const std::nothrow_t& tag) noexcept {
  CxxDelete(op::kDeleteArrayAlignedNothrow, p, 0, static_cast<size_t>(alignment), &tag);
}

extern "C" {

const char* drip_sampler_allocator(void) {
  return Ready() ? drip::sampler_shim::g_allocator_name : "";
}

uint64_t drip_sampler_mean_bytes(void) { return drip::sampler_shim::MeanBytes(); }

uint64_t drip_sampler_live_sampled(void) { return drip::sampler_shim::LiveSampled(); }

uint64_t drip_sampler_sampled_total(void) { return drip::sampler_shim::SampledTotal(); }

uint64_t drip_sampler_dropped_full(void) { return drip::sampler_shim::DroppedFull(); }

}  // extern "C"
