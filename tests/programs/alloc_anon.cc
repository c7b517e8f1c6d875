// drip-test-alloc MIB [SECONDS]: allocates MIB MiB of anonymous memory, touches every
// page so it is resident, prints "ready" and sleeps (forever by default). Integration
// tests use it as a process whose anon RSS they know.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: drip-test-alloc MIB [SECONDS]\n");
    return 2;
  }
  size_t bytes = std::strtoull(argv[1], nullptr, 10) << 20;
  long seconds = argc > 2 ? std::strtol(argv[2], nullptr, 10) : -1;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  std::memset(p, 0x5a, bytes);  // non-zero, so no page stays shared with the zero page
  std::printf("ready\n");
  std::fflush(stdout);
  for (long s = 0; seconds < 0 || s < seconds; ++s) sleep(1);
  return 0;
}
