// shim_allocation_driver: the program sampler_shim_test runs with libdrip_sampler.so in
// LD_PRELOAD. Each mode allocates known amounts through the malloc family and prints
// what the shim counted, as `key=value` lines (checks of the allocators' standard
// behaviour print `check.<name>=ok` or `check.<name>=FAIL: why`). The shim's counters
// are read through dlsym of its C API, so the program also runs (and says so) without
// the shim. Usage: shim_allocation_driver MODE  (modes: see main).
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Counter = uint64_t (*)();

struct ShimApi {
  Counter mean_bytes = nullptr;
  Counter live_sampled = nullptr;
  Counter sampled_total = nullptr;
  Counter dropped_full = nullptr;
};

ShimApi g_api;

bool LoadShimApi() {
  g_api.mean_bytes = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "drip_sampler_mean_bytes"));
  g_api.live_sampled = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "drip_sampler_live_sampled"));
  g_api.sampled_total =
      reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "drip_sampler_sampled_total"));
  g_api.dropped_full = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "drip_sampler_dropped_full"));
  return g_api.mean_bytes && g_api.live_sampled && g_api.sampled_total && g_api.dropped_full;
}

// Makes the compiler assume p's memory is used, so that no new/delete or malloc/free
// pair is elided (GCC may drop unused allocations).
void Escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

void Print(const char* key, double value) { std::printf("%s=%.17g\n", key, value); }
void Print(const char* key, uint64_t value) {
  std::printf("%s=%llu\n", key, static_cast<unsigned long long>(value));
}
void Print(const char* key, int64_t value) {
  std::printf("%s=%lld\n", key, static_cast<long long>(value));
}

int64_t LiveDelta(uint64_t since) {
  return static_cast<int64_t>(g_api.live_sampled()) - static_cast<int64_t>(since);
}

// splitmix64: a deterministic stream of sizes, independent of the shim's PRNG.
uint64_t NextRandom(uint64_t& state) {
  uint64_t x = (state += 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// `sampling uniform|mixed`: allocates blocks one at a time (single thread, so a rise of
// sampled_total right after a malloc means that block was sampled), in batches kept
// live, then freed. Prints the number of samples and its expectation sum p(s), the
// Horvitz-Thompson byte estimate sum s/p(s) over sampled blocks against the true bytes,
// and what the test needs to bound their deviations (variances, largest term).
int Sampling(std::string_view sizes) {
  const double mean = static_cast<double>(g_api.mean_bytes());
  const bool mixed = sizes == "mixed";
  const int kAllocations = mixed ? 100000 : 200000;
  const int kBatch = 1000;
  uint64_t rng = 42;
  double true_bytes = 0, estimate = 0, estimate_variance = 0, max_weight = 0;
  double expected_samples = 0, samples_variance = 0;
  uint64_t samples = 0;
  int64_t worst_batch_mismatch = 0, live_after_batches_max = 0;
  std::vector<void*> batch(kBatch);
  const uint64_t live_before = g_api.live_sampled();  // after `batch` (it may be sampled)
  for (int done = 0; done < kAllocations; done += kBatch) {
    uint64_t batch_samples = 0;
    const uint64_t live_batch_start = g_api.live_sampled();
    for (int i = 0; i < kBatch; ++i) {
      size_t size = 1000;
      if (mixed) {
        // Log-uniform over [16, 4 T]: most blocks far below T, some far above.
        const double u = static_cast<double>(NextRandom(rng) >> 11) * 0x1p-53;
        size = static_cast<size_t>(16.0 * std::pow(4.0 * mean / 16.0, u));
      }
      const uint64_t total_before = g_api.sampled_total();
      void* p = std::malloc(size);
      const bool sampled = g_api.sampled_total() != total_before;
      std::memset(p, 1, size < 64 ? size : 64);
      batch[i] = p;
      const double s = static_cast<double>(size);
      const double prob = -std::expm1(-s / mean);
      true_bytes += s;
      expected_samples += prob;
      samples_variance += prob * (1 - prob);
      estimate_variance += s * s * (1 - prob) / prob;
      if (s / prob > max_weight) max_weight = s / prob;
      if (sampled) {
        ++samples;
        ++batch_samples;
        estimate += s / prob;
      }
    }
    // Every sampled block of the batch is live and tracked...
    const int64_t mismatch = LiveDelta(live_batch_start) - static_cast<int64_t>(batch_samples);
    if (std::llabs(mismatch) > worst_batch_mismatch) worst_batch_mismatch = std::llabs(mismatch);
    for (void* p : batch) std::free(p);
    // ...and freeing them all empties the set again.
    const int64_t left = LiveDelta(live_before);
    if (std::llabs(left) > live_after_batches_max) live_after_batches_max = std::llabs(left);
  }
  Print("mean_bytes", static_cast<uint64_t>(mean));
  Print("allocations", static_cast<uint64_t>(kAllocations));
  Print("samples", samples);
  Print("expected_samples", expected_samples);
  Print("samples_variance", samples_variance);
  Print("true_bytes", true_bytes);
  Print("estimate", estimate);
  Print("estimate_variance", estimate_variance);
  Print("max_weight", max_weight);
  Print("worst_batch_live_mismatch", worst_batch_mismatch);
  Print("worst_live_after_free", live_after_batches_max);
  Print("dropped_full", g_api.dropped_full());
  return 0;
}

struct Big {
  char bytes[64 << 20];
};

// `bignew`: a 64 MiB `new` reaches the shim through libstdc++'s operator new -> malloc.
int BigNew() {
  const uint64_t total_before = g_api.sampled_total();
  const uint64_t live_before = g_api.live_sampled();
  Big* big = new Big;
  Escape(big);
  const uint64_t total_after_new = g_api.sampled_total();
  const int64_t live_while_alive = LiveDelta(live_before);
  delete big;
  const int64_t live_after_delete = LiveDelta(live_before);
  Print("sampled_by_new", total_after_new - total_before);
  Print("live_while_alive", live_while_alive);
  Print("live_after_delete", live_after_delete);
  return 0;
}

// --- `standards`: the interposed functions keep the malloc family's contracts. ---

int g_failures = 0;

void Check(const char* name, bool ok, const std::string& why = "") {
  if (ok) {
    std::printf("check.%s=ok\n", name);
  } else {
    ++g_failures;
    std::printf("check.%s=FAIL: %s\n", name, why.c_str());
  }
}

bool Aligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

bool AllBytesAre(const void* p, size_t n, unsigned char value) {
  const auto* bytes = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    if (bytes[i] != value) return false;
  }
  return true;
}

// Library calls through volatile pointers: the compiler must not reason about (or warn
// on) the deliberately invalid arguments, nor fold the calls away.
void* (*volatile g_malloc)(size_t) = std::malloc;
void* (*volatile g_calloc)(size_t, size_t) = std::calloc;
void* (*volatile g_realloc)(void*, size_t) = std::realloc;
void* (*volatile g_reallocarray)(void*, size_t, size_t) = reallocarray;
int (*volatile g_posix_memalign)(void**, size_t, size_t) = posix_memalign;
void* (*volatile g_aligned_alloc)(size_t, size_t) = aligned_alloc;
void* (*volatile g_memalign)(size_t, size_t) = memalign;
void* (*volatile g_valloc)(size_t) = valloc;
void* (*volatile g_pvalloc)(size_t) = pvalloc;

int Standards() {
  const uint64_t live_before = g_api.live_sampled();
  const uint64_t total_before = g_api.sampled_total();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  constexpr size_t kHuge = SIZE_MAX / 2;  // never satisfiable

  // malloc(0) returns a unique pointer that free accepts; free(NULL) is a no-op.
  {
    void* a = g_malloc(0);
    void* b = g_malloc(0);
    Check("malloc_zero", a != nullptr && b != nullptr && a != b);
    std::free(a);
    std::free(b);
    std::free(nullptr);
  }
  // malloc of an impossible size: NULL and ENOMEM.
  {
    errno = 0;
    void* p = g_malloc(kHuge);
    Check("malloc_huge_enomem", p == nullptr && errno == ENOMEM);
  }
  // calloc zeroes, even memory that was dirty when it was last freed.
  {
    for (int round = 0; round < 8; ++round) {
      void* dirty = g_malloc(4000);
      std::memset(dirty, 0xab, 4000);
      std::free(dirty);
      void* p = g_calloc(500, 8);
      const bool ok = p != nullptr && AllBytesAre(p, 4000, 0);
      std::free(p);
      if (!ok) {
        Check("calloc_zeroes", false, "nonzero byte in calloc'ed block");
        break;
      }
      if (round == 7) Check("calloc_zeroes", true);
    }
  }
  // calloc with n * size overflowing: NULL and ENOMEM.
  {
    errno = 0;
    void* p = g_calloc(SIZE_MAX / 2, 4);
    Check("calloc_overflow_enomem", p == nullptr && errno == ENOMEM);
  }
  // realloc keeps the contents when growing and when shrinking; realloc(NULL, n) is
  // malloc(n); realloc(p, 0) frees p and returns NULL (glibc).
  {
    auto* p = static_cast<unsigned char*>(g_realloc(nullptr, 100));
    Check("realloc_null_is_malloc", p != nullptr);
    for (int i = 0; i < 100; ++i) p[i] = static_cast<unsigned char>(i);
    p = static_cast<unsigned char*>(g_realloc(p, 1 << 20));
    bool ok = p != nullptr;
    for (int i = 0; ok && i < 100; ++i) ok = p[i] == i;
    Check("realloc_grow_keeps_contents", ok);
    p = static_cast<unsigned char*>(g_realloc(p, 10));
    ok = p != nullptr;
    for (int i = 0; ok && i < 10; ++i) ok = p[i] == i;
    Check("realloc_shrink_keeps_contents", ok);
    errno = 0;
    void* failed = g_realloc(p, kHuge);
    Check("realloc_huge_enomem_keeps_block",
          failed == nullptr && errno == ENOMEM && p[0] == 0 && p[9] == 9);
    Check("realloc_zero_frees", g_realloc(p, 0) == nullptr);
  }
  // reallocarray: realloc(p, n * size), or NULL, ENOMEM and p untouched on overflow.
  {
    auto* p = static_cast<uint32_t*>(g_reallocarray(nullptr, 10, sizeof(uint32_t)));
    Check("reallocarray_null_is_malloc", p != nullptr);
    for (uint32_t i = 0; i < 10; ++i) p[i] = i * 7;
    errno = 0;
    void* failed = g_reallocarray(p, SIZE_MAX / 2, 4);
    Check("reallocarray_overflow_enomem", failed == nullptr && errno == ENOMEM);
    Check("reallocarray_overflow_keeps_block", p[0] == 0 && p[9] == 63);
    p = static_cast<uint32_t*>(g_reallocarray(p, 100000, sizeof(uint32_t)));
    bool ok = p != nullptr;
    for (uint32_t i = 0; ok && i < 10; ++i) ok = p[i] == i * 7;
    Check("reallocarray_grow_keeps_contents", ok);
    std::free(p);
  }
  // posix_memalign: aligned on success; EINVAL for an alignment that is not a power of
  // two multiple of sizeof(void*); ENOMEM when out of memory; *memptr untouched and
  // errno unchanged on failure.
  {
    bool ok = true;
    for (size_t alignment :
         {sizeof(void*), size_t{16}, size_t{64}, size_t{4096}, size_t{1} << 16, size_t{1} << 21}) {
      void* p = nullptr;
      const int rc = g_posix_memalign(&p, alignment, 1000);
      ok = ok && rc == 0 && p != nullptr && Aligned(p, alignment);
      if (p != nullptr) std::memset(p, 1, 1000);
      std::free(p);
    }
    Check("posix_memalign_aligns", ok);
    void* sentinel = &ok;
    ok = true;
    for (size_t alignment : {size_t{0}, size_t{4}, size_t{24}, size_t{3}, size_t{100}}) {
      void* p = sentinel;
      errno = 1234;
      const int rc = g_posix_memalign(&p, alignment, 64);
      ok = ok && rc == EINVAL && p == sentinel && errno == 1234;
    }
    Check("posix_memalign_bad_alignment_einval", ok);
    void* p = sentinel;
    errno = 1234;
    const int rc = g_posix_memalign(&p, 64, kHuge);
    Check("posix_memalign_huge_enomem", rc == ENOMEM && p == sentinel && errno == 1234);
    p = nullptr;
    Check("posix_memalign_zero_size", g_posix_memalign(&p, 64, 0) == 0);
    std::free(p);
  }
  // aligned_alloc: aligned for powers of two, any size; NULL and EINVAL otherwise.
  {
    bool ok = true;
    for (size_t alignment : {size_t{1}, size_t{8}, size_t{64}, size_t{4096}, size_t{1} << 20}) {
      void* p = g_aligned_alloc(alignment, 100);  // 100: not a multiple (C17 allows it)
      ok = ok && p != nullptr && Aligned(p, alignment);
      std::free(p);
    }
    Check("aligned_alloc_aligns", ok);
    ok = true;
    for (size_t alignment : {size_t{0}, size_t{24}, size_t{48}, size_t{3}}) {
      errno = 0;
      void* p = g_aligned_alloc(alignment, 48);
      ok = ok && p == nullptr && errno == EINVAL;
    }
    Check("aligned_alloc_bad_alignment_einval", ok);
    errno = 0;
    Check("aligned_alloc_huge_enomem", g_aligned_alloc(64, kHuge) == nullptr && errno == ENOMEM);
  }
  // memalign, valloc, pvalloc: glibc's semantics.
  {
    void* p = g_memalign(256, 100);
    Check("memalign_aligns", p != nullptr && Aligned(p, 256));
    std::free(p);
    p = g_memalign(48, 100);  // glibc rounds the alignment up to 64
    Check("memalign_rounds_alignment_up", p != nullptr && Aligned(p, 64));
    std::free(p);
    p = g_valloc(100);
    Check("valloc_page_aligned", p != nullptr && Aligned(p, page));
    std::free(p);
    p = g_pvalloc(page + 1);
    Check("pvalloc_rounds_to_pages",
          p != nullptr && Aligned(p, page) && malloc_usable_size(p) >= 2 * page);
    std::free(p);
  }
  // malloc_usable_size is glibc's own and works on any block, sampled or not.
  {
    bool ok = true;
    for (size_t size : {size_t{1}, size_t{24}, size_t{1000}, size_t{1} << 18}) {
      void* p = g_malloc(size);
      ok = ok && malloc_usable_size(p) >= size;
      std::free(p);
    }
    Check("malloc_usable_size", ok);
  }
  // Everything above was freed: nothing sampled may be left live.
  Print("sampled_delta", g_api.sampled_total() - total_before);
  Print("live_delta", LiveDelta(live_before));
  Print("failures", static_cast<uint64_t>(g_failures));
  return 0;
}

// `storm THREADS OPS`: threads allocate through the whole family and free each other's
// blocks through a shared exchange array; at the end everything is freed. The counters
// are read while all threads are alive and idle: creating a thread allocates its DTV
// (which glibc keeps in its stack cache after the thread exits), and that block may be
// sampled too.
int Storm(int threads, int ops_per_thread) {
  constexpr size_t kExchange = 4096;
  static std::atomic<void*> exchange[kExchange];
  std::atomic<int> ready{0}, done{0};
  std::atomic<bool> start{false}, exit{false};
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!start.load()) std::this_thread::yield();
      uint64_t rng = 1000 + static_cast<uint64_t>(t);
      for (int i = 0; i < ops_per_thread; ++i) {
        const uint64_t r = NextRandom(rng);
        const size_t size = 16 + r % 2048;
        void* p = nullptr;
        switch ((r >> 16) % 6) {
          case 0:
            p = std::calloc(1, size);
            break;
          case 1:
            p = std::realloc(std::malloc(size / 2 + 1), size);
            break;
          case 2:
            if (posix_memalign(&p, 64, size) != 0) p = nullptr;
            break;
          case 3:
            p = aligned_alloc(32, size);
            break;
          default:
            p = std::malloc(size);
        }
        static_cast<char*>(p)[0] = 1;
        if ((r >> 24) % 2 == 0) {
          std::free(p);
        } else {
          // Someone else's block (or nothing) comes back; free it here.
          std::free(exchange[(r >> 32) % kExchange].exchange(p));
        }
      }
      done.fetch_add(1);
      while (!exit.load()) std::this_thread::yield();
    });
  }
  while (ready.load() != threads) std::this_thread::yield();
  const uint64_t live_before = g_api.live_sampled();
  const uint64_t total_before = g_api.sampled_total();
  const uint64_t dropped_before = g_api.dropped_full();
  start.store(true);
  while (done.load() != threads) std::this_thread::yield();
  for (auto& slot : exchange) std::free(slot.exchange(nullptr));
  Print("sampled_delta", g_api.sampled_total() - total_before);
  Print("dropped_delta", g_api.dropped_full() - dropped_before);
  Print("live_delta", LiveDelta(live_before));
  exit.store(true);
  for (auto& w : workers) w.join();
  return 0;
}

// `fill COUNT` (run with DRIP_SAMPLE_BYTES=1, so every 64-byte block is sampled but
// with probability e^-64): more live
// sampled blocks than the set holds. The excess is dropped and counted; after freeing
// everything the set is empty, and its tombstones are reused for new samples.
int Fill(size_t count) {
  const uint64_t live_before = g_api.live_sampled();
  const uint64_t dropped_before = g_api.dropped_full();
  std::vector<void*> blocks(count);
  const uint64_t live_start = g_api.live_sampled();  // the vector itself is sampled
  for (auto& b : blocks) b = std::malloc(64);
  Print("live_peak", LiveDelta(live_start));
  Print("dropped_delta", g_api.dropped_full() - dropped_before);
  for (auto& b : blocks) std::free(b);
  Print("live_after_free", LiveDelta(live_start));
  const uint64_t dropped_mid = g_api.dropped_full();
  const uint64_t total_mid = g_api.sampled_total();
  for (size_t i = 0; i < 10000; ++i) blocks[i] = std::malloc(64);
  Print("resampled", g_api.sampled_total() - total_mid);
  Print("dropped_after_reuse", g_api.dropped_full() - dropped_mid);
  for (size_t i = 0; i < 10000; ++i) std::free(blocks[i]);
  std::vector<void*>().swap(blocks);  // frees the vector's own block
  Print("live_end", LiveDelta(live_before));
  return 0;
}

// `fork` (DRIP_SAMPLE_BYTES=1): a child inherits the parent's set and frees the parent's
// sampled blocks; the parent's own set is unaffected.
int Fork() {
  constexpr int kBlocks = 100;
  void* blocks[kBlocks];
  const uint64_t live_before = g_api.live_sampled();
  for (auto& b : blocks) b = std::malloc(256);
  Print("parent_live_after_alloc", LiveDelta(live_before));
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    const uint64_t child_start = g_api.live_sampled();
    for (auto& b : blocks) std::free(b);
    Print("child_live_change", LiveDelta(child_start));
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  Print("child_exit", static_cast<uint64_t>(WIFEXITED(status) ? WEXITSTATUS(status) : 255));
  Print("parent_live_after_child", LiveDelta(live_before));
  for (auto& b : blocks) std::free(b);
  Print("parent_live_end", LiveDelta(live_before));
  return 0;
}

// `foreign` (DRIP_SAMPLE_BYTES=1): what a program linked with its own allocator
// (jemalloc, tcmalloc) does with the shim preloaded: the malloc family, and that
// allocator's malloc_usable_size on every block. It reads the allocator's own metadata,
// so a block from another allocator would crash it.
int Foreign() {
  using Name = const char* (*)();
  const auto allocator = reinterpret_cast<Name>(dlsym(RTLD_DEFAULT, "drip_sampler_allocator"));
  std::printf("allocator=%s\n", allocator != nullptr ? allocator() : "?");
  const uint64_t live_before = g_api.live_sampled();
  const uint64_t sampled_before = g_api.sampled_total();
  constexpr int kRounds = 100;
  static void* blocks[6 * kRounds];
  static size_t sizes[6 * kRounds];
  int count = 0;
  for (int i = 0; i < kRounds; ++i) {
    const size_t size = 16 + static_cast<size_t>(i) * 37;
    auto keep = [&](void* p, size_t bytes) {
      sizes[count] = bytes;
      blocks[count++] = p;
    };
    keep(std::malloc(size), size);
    keep(std::calloc(3, size), 3 * size);
    keep(std::realloc(std::malloc(size), 3 * size), 3 * size);
    void* aligned = nullptr;
    keep(posix_memalign(&aligned, 64, size) == 0 ? aligned : nullptr, size);
    keep(aligned_alloc(128, size), size);
    keep(memalign(256, size), size);
  }
  uint64_t short_blocks = 0;
  for (int i = 0; i < count; ++i) {
    if (blocks[i] == nullptr || malloc_usable_size(blocks[i]) < sizes[i]) ++short_blocks;
  }
  for (int i = 0; i < count; ++i) std::free(blocks[i]);
  Print("short_blocks", short_blocks);
  Print("sampled_delta", g_api.sampled_total() - sampled_before);
  Print("live_delta", LiveDelta(live_before));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // stdio would malloc its buffer on the first printf, in the middle of a measurement
  // (with DRIP_SAMPLE_BYTES=1 that block is sampled and never freed).
  static char stdout_buffer[1 << 16];
  setvbuf(stdout, stdout_buffer, _IOFBF, sizeof(stdout_buffer));
  if (!LoadShimApi()) {
    std::fprintf(stderr, "shim_allocation_driver: libdrip_sampler.so is not loaded\n");
    return 2;
  }
  const std::string_view mode = argc > 1 ? argv[1] : "";
  const char* arg2 = argc > 2 ? argv[2] : "";
  const char* arg3 = argc > 3 ? argv[3] : "";
  if (mode == "counters") {
    Print("mean_bytes", g_api.mean_bytes());
    Print("live_sampled", g_api.live_sampled());
    Print("sampled_total", g_api.sampled_total());
    Print("dropped_full", g_api.dropped_full());
    return 0;
  }
  if (mode == "sampling") return Sampling(arg2);
  if (mode == "bignew") return BigNew();
  if (mode == "standards") return Standards();
  if (mode == "storm") return Storm(std::atoi(arg2), std::atoi(arg3));
  if (mode == "fill") return Fill(std::strtoull(arg2, nullptr, 10));
  if (mode == "fork") return Fork();
  if (mode == "foreign") return Foreign();
  std::fprintf(stderr,
               "usage: shim_allocation_driver counters|sampling uniform|sampling mixed|bignew|"
               "standards|storm THREADS OPS|fill COUNT|fork|foreign\n");
  return 2;
}
