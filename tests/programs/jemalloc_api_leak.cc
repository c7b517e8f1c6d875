// drip-jemalloc-api-leak: a program that allocates through jemalloc's own API by name —
// mallocx, and sdallocx to free — as folly and other libraries do once they find jemalloc
// loaded. The preload shim interposes the malloc family only, so it cannot see these calls;
// attach mode probes them. The heap-snapshot tests check both: attach mode names the leak,
// preload mode says which calls it could not sample.
//
// Usage: drip-jemalloc-api-leak [SECONDS]   (default 0: until killed)
//   Prints `ready <pid>` once running. Leaks 1 KiB records at 100 KiB/s from
//   keep_order_record, and allocates and frees 512 B scratch buffers 2000 times a second.
//   SIGTERM / SIGINT: exit 0 within a tick (10 ms).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

// libjemalloc.so.2 exports these; Debian ships no header for them without -dev.
extern "C" void* mallocx(size_t size, int flags);
extern "C" void sdallocx(void* ptr, size_t size, int flags);

// The named functions keep their own frames (as in leak_scenarios.cc).
#if defined(__clang__)
#define DRIP_KEEP_FRAME __attribute__((noinline))
#else
#define DRIP_KEEP_FRAME __attribute__((noinline, noipa))
#endif

namespace {

std::atomic<bool> stop{false};
std::vector<void*> orders;  // never pruned: the leak

void OnSignal(int) { stop = true; }

}  // namespace

extern "C" DRIP_KEEP_FRAME void keep_order_record(size_t size) {
  void* p = mallocx(size, 0);
  if (p == nullptr) return;
  std::memset(p, 0x5a, size);
  orders.push_back(p);
}

extern "C" DRIP_KEEP_FRAME void scratch_buffer(size_t size) {
  void* p = mallocx(size, 0);
  if (p == nullptr) return;
  std::memset(p, 0x11, size);
  sdallocx(p, size, 0);
}

int main(int argc, char** argv) {
  char* end = nullptr;
  const long seconds = argc > 1 ? std::strtol(argv[1], &end, 10) : 0;
  if (argc > 2 || (argc > 1 && (*end != '\0' || seconds < 0))) {
    std::fprintf(stderr, "usage: %s [SECONDS]\n", argv[0]);
    return 2;
  }
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  orders.reserve(1 << 20);
  std::printf("ready %d\n", getpid());
  std::fflush(stdout);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto next = start;
  for (long tick = 0; !stop; ++tick) {
    if (seconds > 0 && Clock::now() - start >= std::chrono::seconds(seconds)) break;
    // 100 ticks/s: one record (1 KiB) and 20 scratch buffers each.
    for (int i = 0; i < 20; ++i) scratch_buffer(512);
    keep_order_record(1024);
    next += std::chrono::milliseconds(10);
    std::this_thread::sleep_until(next);
  }
  return 0;
}
