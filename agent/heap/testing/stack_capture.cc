#include "agent/heap/testing/stack_capture.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace drip::agent::testing {
namespace {

uint64_t StackEnd() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  void* addr = nullptr;
  size_t size = 0;
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  return reinterpret_cast<uint64_t>(addr) + size;
}

}  // namespace

// The copy reads other frames' bytes, ASan's redzones among them: uninstrumented (this
// file is also built with -fno-sanitize=all), and with volatile word loads, which the
// compiler cannot turn into a memcpy call that ASan would intercept and check.
__attribute__((no_sanitize("address", "undefined"))) void CopyStack(CapturedStack* out,
                                                                    size_t max_bytes) {
  const uint64_t sp = out->regs[kRsp];
  const uint64_t end = StackEnd();
  size_t size = end > sp ? std::min<uint64_t>(max_bytes, end - sp) : 0;
  size &= ~size_t{7};
  out->bytes.resize(size);
  const volatile uint64_t* source = reinterpret_cast<const volatile uint64_t*>(sp);
  uint8_t* target = out->bytes.data();
  for (size_t i = 0; i < size / 8; ++i) {
    const uint64_t word = source[i];
    __builtin_memcpy(target + 8 * i, &word, 8);
  }
  out->pid = getpid();
  out->tid = static_cast<int>(syscall(SYS_gettid));
}

}  // namespace drip::agent::testing
