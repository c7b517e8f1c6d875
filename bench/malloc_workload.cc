// drip-malloc-workload: a malloc-heavy program to measure the preload shim's cost
// (run it alone and with LD_PRELOAD=libdrip_sampler.so; docs/preload.md). Each thread
// loops over malloc/free of random small sizes (16..512 bytes): half the blocks are freed
// at once, half replace a random slot of a ring of 1024 live blocks, so frees are not
// only LIFO and the heap keeps a working set. With --leak-every N, every Nth operation
// also leaks a block through workload_leak_record, a known stack for snapshot tests.
// Prints one JSON line: {"ops_per_s": ..., "ops": ..., "seconds": ..., "threads": ...,
// "cpu_seconds": ..., "ops_per_cpu_s": ...} where an op is one malloc and one free.
// ops_per_cpu_s (ops over the process's CPU time) is the figure to compare on a busy
// machine: time spent descheduled does not count against it.
#include <time.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

struct LeakedBlock {
  LeakedBlock* next;
};

// Leaked blocks stay reachable from here, so that they are leaks only in the sense that
// matters to Drip (live and never freed), and no tool calls them unreachable.
std::atomic<LeakedBlock*> g_leaked{nullptr};

// Keeps p's memory "used": GCC may otherwise delete a malloc/free pair outright.
inline void Escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

}  // namespace

// Not static and never inlined, so that it is a frame of its own in leak stacks.
extern "C" __attribute__((noinline)) void workload_leak_record(size_t size) {
  auto* block = static_cast<LeakedBlock*>(
      std::malloc(size < sizeof(LeakedBlock) ? sizeof(LeakedBlock) : size));
  block->next = g_leaked.load(std::memory_order_relaxed);
  while (!g_leaked.compare_exchange_weak(block->next, block, std::memory_order_relaxed)) {
  }
}

namespace {

constexpr size_t kRing = 1024;
constexpr uint64_t kClockEvery = 4096;  // ops between clock reads

uint64_t NextRandom(uint64_t& state) {  // xorshift64
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

uint64_t RunThread(int index, std::chrono::steady_clock::time_point deadline, uint64_t leak_every) {
  uint64_t rng = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(index + 1);
  std::vector<void*> ring(kRing, nullptr);
  uint64_t ops = 0;
  for (;;) {
    for (uint64_t i = 0; i < kClockEvery; ++i) {
      const uint64_t r = NextRandom(rng);
      const size_t size = 16 + (r & 511) % 497;  // 16..512
      auto* p = static_cast<char*>(std::malloc(size));
      p[0] = static_cast<char>(r);
      Escape(p);
      if ((r >> 20) & 1) {
        std::free(p);
      } else {
        void*& slot = ring[(r >> 32) % kRing];
        std::free(slot);
        slot = p;
      }
      if (leak_every != 0 && (ops + i) % leak_every == leak_every - 1) {
        workload_leak_record(size);
      }
    }
    ops += kClockEvery;
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  for (void* p : ring) std::free(p);
  return ops;
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"drip-malloc-workload: malloc/free of small random sizes, for shim overhead"};
  int threads = 1;
  double seconds = 5;
  uint64_t leak_every = 0;
  app.add_option("--threads", threads, "worker threads")->check(CLI::Range(1, 1024));
  app.add_option("--seconds", seconds, "how long to run")->check(CLI::PositiveNumber);
  app.add_option("--leak-every", leak_every,
                 "leak one block through workload_leak_record every N ops (0: never)");
  CLI11_PARSE(app, argc, argv);

  const double cpu_start = ProcessCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(seconds));
  std::vector<uint64_t> ops(static_cast<size_t>(threads), 0);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back(
        [&, t] { ops[static_cast<size_t>(t)] = RunThread(t, deadline, leak_every); });
  }
  uint64_t total = 0;
  for (int t = 0; t < threads; ++t) {
    workers[static_cast<size_t>(t)].join();
    total += ops[static_cast<size_t>(t)];
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = ProcessCpuSeconds() - cpu_start;
  std::printf(
      "{\"ops_per_s\": %.0f, \"ops\": %llu, \"seconds\": %.3f, \"threads\": %d, "
      "\"cpu_seconds\": %.3f, \"ops_per_cpu_s\": %.0f}\n",
      static_cast<double>(total) / elapsed, static_cast<unsigned long long>(total), elapsed,
      threads, cpu, static_cast<double>(total) / cpu);
  return 0;
}
