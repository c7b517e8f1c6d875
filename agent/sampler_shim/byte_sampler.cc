// The byte sampler's slow path: reading DRIP_SAMPLE_BYTES, seeding a thread's PRNG and
// drawing exponential countdowns. Runs on a thread's first allocation and on sampled
// allocations only (about once per T bytes), so it may afford log() and a syscall; it
// must not allocate, since it runs inside malloc.
#include "agent/sampler_shim/byte_sampler.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

namespace drip::sampler_shim {

__thread ThreadSamplerState tls_sampler_state __attribute__((tls_model("initial-exec")));
std::atomic<uint64_t> g_mean_bytes{0};

}  // namespace drip::sampler_shim

struct drip_sampler_control drip_sampler_control = {DRIP_SAMPLER_CONTROL_MAGIC, 0};

namespace drip::sampler_shim {

namespace {

// Parses a plain decimal number; 0 for anything else (empty, signs, suffixes, overflow).
// strtoull would do, but it consults the locale; this is obviously allocation-free.
uint64_t ParseDecimal(const char* text) {
  if (text == nullptr || *text == '\0') return 0;
  uint64_t value = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return 0;
    const uint64_t digit = static_cast<uint64_t>(*c - '0');
    if (value > (UINT64_MAX - digit) / 10) return 0;
    value = value * 10 + digit;
  }
  return value;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// xorshift64* (Vigna): fast, and its 53 high bits are plenty for one uniform draw.
uint64_t NextRandom(ThreadSamplerState& s) {
  uint64_t x = s.rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  s.rng = x;
  return x * 0x2545f4914f6cdd1dULL;
}

// Distinct per thread and per process run: the TLS block's address differs between the
// threads of a process, the tid between threads and processes, the clock between runs.
void Seed(ThreadSamplerState& s) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // vDSO; no allocation.
  uint64_t seed = reinterpret_cast<uintptr_t>(&s);
  seed = SplitMix64(seed ^ static_cast<uint64_t>(gettid()));
  seed = SplitMix64(seed ^ static_cast<uint64_t>(now.tv_nsec) ^
                    (static_cast<uint64_t>(now.tv_sec) << 30));
  s.rng = seed != 0 ? seed : 0x853c49e6748fea9bULL;
}

// The distance to the next sample point: Exponential with mean T, in whole bytes, >= 1.
// -log(u) for u uniform in (0, 1] is Exponential(1). Rounding up to whole bytes moves
// each point by < 1 byte, which is invisible next to T (>= 1; 512 KiB by default).
uint64_t Draw(ThreadSamplerState& s) {
  const uint64_t bits = NextRandom(s) >> 11;                     // 53 uniform bits
  const double u = (static_cast<double>(bits) + 1.0) * 0x1p-53;  // (0, 1]
  const double gap = -log(u) * static_cast<double>(MeanBytes());
  // -log(2^-53) * T is < 37 T; cap anyway so the conversion is always defined.
  if (!(gap < 0x1p62)) return uint64_t{1} << 62;
  return static_cast<uint64_t>(gap) + 1;
}

}  // namespace

uint64_t ReadMeanBytes() {
  // The environment is set up before the first malloc that reaches us (ld.so uses its
  // own allocator until relocation is done), and getenv does not allocate.
  uint64_t mean = ParseDecimal(getenv("DRIP_SAMPLE_BYTES"));
  if (mean == 0) mean = kDefaultMeanBytes;
  g_mean_bytes.store(mean, std::memory_order_relaxed);
  return mean;
}

namespace {

// Sets the countdown to a gap of `gap` bytes, stopping at the checkpoint first.
void Arm(ThreadSamplerState& s, uint64_t gap) {
  if (gap > kCheckpointBytes) {
    s.remaining = kCheckpointBytes;
    s.beyond = gap - kCheckpointBytes;
  } else {
    s.remaining = gap;
    s.beyond = 0;
  }
}

void ArmFresh(ThreadSamplerState& s) {
  s.drawn_mean = MeanBytes();
  Arm(s, Draw(s));
}

}  // namespace

bool ShouldSampleSlow(size_t size) {
  ThreadSamplerState& s = tls_sampler_state;
  if (s.rng == 0) {
    // The thread's first allocation: draw the distance to its first point, then decide
    // this allocation like any other.
    Seed(s);
    ArmFresh(s);
    if (size < s.remaining) {
      s.remaining -= size;
      return false;
    }
  }
  // size >= remaining. While what was reached is a checkpoint, the part of this
  // allocation past it meets the rest of the gap (or, when T changed, a fresh gap at the
  // new T).
  while (s.beyond != 0) {
    const uint64_t past = size - s.remaining;
    if (s.drawn_mean == MeanBytes()) {
      Arm(s, s.beyond);
    } else {
      ArmFresh(s);
    }
    if (past < s.remaining) {
      s.remaining -= past;
      return false;
    }
    size = past;
  }
  // A point falls inside this allocation. The next one is a fresh exponential gap past
  // its end (memorylessness; see byte_sampler.h).
  ArmFresh(s);
  return true;
}

}  // namespace drip::sampler_shim
