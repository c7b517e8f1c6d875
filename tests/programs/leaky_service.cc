// drip-leaky-example: the bundled leaking program of Drip's demo and tests. It looks
// like a small request-serving daemon: per "request" it allocates transient buffers
// (freed at once), fills a bounded cache (which plateaus), and — the bug — remembers
// every session in a registry that is never pruned, a few calls deep:
//   main -> ServeForever -> HandleRequest -> OpenSession -> RememberSession (leaks)
// Usage: drip-leaky-example [--leak-kib-per-s N] [--seconds S] [--secret TEXT]
// --secret writes TEXT into every leaked session and every request's stack buffer, so
// that a test can check no snapshot ever carries memory contents.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Session {
  char token[1000];  // ~1 KiB per leaked session
  uint64_t id;
};

// The leak: sessions are registered and never removed.
std::vector<Session*> g_session_registry;
std::string g_secret;

__attribute__((noinline)) void RememberSession(uint64_t id) {
  auto* session = new Session;
  std::memset(session->token, static_cast<int>('a' + id % 26), sizeof(session->token));
  std::memcpy(session->token, g_secret.data(), std::min(g_secret.size(), sizeof(session->token)));
  session->id = id;
  g_session_registry.push_back(session);
}

__attribute__((noinline)) void OpenSession(uint64_t id) { RememberSession(id); }

// A cache that warms up and then plateaus: bounded at 4 MiB, not a leak.
std::deque<std::unique_ptr<std::string>> g_response_cache;

__attribute__((noinline)) void CacheResponse(uint64_t id) {
  g_response_cache.push_back(std::make_unique<std::string>(4096, static_cast<char>('A' + id % 26)));
  if (g_response_cache.size() > 1024) g_response_cache.pop_front();
}

__attribute__((noinline)) uint64_t HandleRequest(uint64_t id) {
  // Transient work: allocated and freed within the request.
  std::vector<char> scratch(16384);
  std::memset(scratch.data(), 1, scratch.size());
  // On the stack too: the attach mode copies user stacks to unwind them.
  char on_stack[256];
  std::memset(on_stack, 0, sizeof(on_stack));
  std::memcpy(on_stack, g_secret.data(), std::min(g_secret.size(), sizeof(on_stack) - 1));
  asm volatile("" : : "r"(on_stack) : "memory");
  CacheResponse(id);
  OpenSession(id);
  return static_cast<uint64_t>(scratch[id % scratch.size()]);
}

__attribute__((noinline)) void ServeForever(double leak_kib_per_s, double seconds) {
  // One leaked session (~1 KiB) per request, so the request rate sets the leak rate.
  const double requests_per_s = leak_kib_per_s * 1024.0 / sizeof(Session);
  const auto start = std::chrono::steady_clock::now();
  uint64_t id = 0;
  volatile uint64_t sink = 0;
  for (;;) {
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 0 && elapsed >= seconds) break;
    auto due = static_cast<uint64_t>(elapsed * requests_per_s);
    while (id < due) sink = sink + HandleRequest(id++);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

int main(int argc, char** argv) {
  double leak_kib_per_s = 1024;  // 1 MiB/s: visible within a minute
  double seconds = 0;            // 0: until killed
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--leak-kib-per-s" && i + 1 < argc) {
      leak_kib_per_s = std::atof(argv[++i]);
    } else if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--secret" && i + 1 < argc) {
      g_secret = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: drip-leaky-example [--leak-kib-per-s N] [--seconds S] [--secret T]\n");
      return 2;
    }
  }
  std::printf("drip-leaky-example: pid %d leaking %.0f KiB/s\n", getpid(), leak_kib_per_s);
  std::fflush(stdout);
  ServeForever(leak_kib_per_s, seconds);
  return 0;
}
