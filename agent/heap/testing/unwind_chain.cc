#include "agent/heap/testing/unwind_chain.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <vector>

namespace {

// Keeps the functions apart: distinct side effects defeat identical-code folding, and a
// use after each call keeps every call a call rather than a jump (with
// -fno-optimize-sibling-calls from the build as well).
volatile int g_sink = 0;

int g_level2_call_line = 0;

drip::agent::testing::CapturedStack* g_qsort_out = nullptr;
int g_qsort_calls = 0;
constexpr int kQsortCaptureCall = 12;

}  // namespace

extern "C" {

__attribute__((noinline)) int chain_level3(drip::agent::testing::CapturedStack* out) {
  DRIP_CAPTURE_STACK(out);
  g_sink = g_sink + 3;
  return static_cast<int>(out->bytes.size() % 7) + g_sink;
}

__attribute__((noinline)) int chain_level2(drip::agent::testing::CapturedStack* out) {
  // rbp is an ordinary callee-saved register here: saved by the prologue (with CFI
  // saying where), then garbage until the epilogue restores it.
  asm volatile("movq $0x5a5a5a5a5a5a5a5a, %%rbp" ::: "rbp");
  g_level2_call_line = __LINE__ + 1;
  int result = chain_level3(out);
  g_sink = g_sink + 2;
  return result + g_sink;
}

__attribute__((noinline)) int chain_level1(drip::agent::testing::CapturedStack* out) {
  int result = chain_level2(out);
  g_sink = g_sink + 1;
  return result * 3 + g_sink;
}

__attribute__((noinline)) int chain_qsort_compare(const void* a, const void* b) {
  // Not on the first call: ASan's qsort interceptor first calls the comparator itself
  // over the array (nmemb - 1 calls) before handing it to glibc.
  if (g_qsort_out != nullptr && ++g_qsort_calls == kQsortCaptureCall) {
    DRIP_CAPTURE_STACK(g_qsort_out);
    g_qsort_out = nullptr;
  }
  const int x = *static_cast<const int*>(a);
  const int y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

__attribute__((noinline)) int chain_qsort_caller(drip::agent::testing::CapturedStack* out) {
  // glibc's merge sort makes about 25 comparisons of these 10 values.
  int values[] = {9, 3, 7, 1, 8, 2, 6, 4, 5, 0};
  g_qsort_out = out;
  g_qsort_calls = 0;
  qsort(values, sizeof values / sizeof values[0], sizeof values[0], chain_qsort_compare);
  g_sink = g_sink + values[0];
  return values[9] + g_sink;
}

}  // extern "C"

namespace drip::agent::testing {

int ChainLevel2CallLine() { return g_level2_call_line; }

__attribute__((noinline)) int Foo::Bar(int x) {
  DRIP_CAPTURE_STACK(out_);
  g_sink = g_sink + x;
  return g_sink;
}

namespace {

__attribute__((noinline)) void CaptureInComparator(CapturedStack* out) {
  DRIP_CAPTURE_STACK(out);
  g_sink = g_sink + 1;
}

// A stream buffer whose writes sort with a capturing comparator: written to through
// std::ostream's operator<<, which is compiled into libstdc++.so, not into this file.
class SortingStreamBuf : public std::streambuf {
 public:
  explicit SortingStreamBuf(CapturedStack* out) : out_(out) {}

 protected:
  std::streamsize xsputn(const char* text, std::streamsize size) override {
    std::vector<char> chars(text, text + size);
    bool captured = false;
    std::sort(chars.begin(), chars.end(), [&](char a, char b) {
      if (!captured) {
        captured = true;
        CaptureInComparator(out_);
      }
      return a < b;
    });
    g_sink = g_sink + chars[0];
    return size;
  }

 private:
  CapturedStack* out_;
};

__attribute__((noinline)) void StreamSortAndCapture(CapturedStack* out) {
  std::once_flag once;
  std::call_once(once, [out] {
    SortingStreamBuf buffer(out);
    std::ostream stream(&buffer);
    stream << "the quick brown fox jumps over the lazy dog";
  });
  g_sink = g_sink + 1;
}

// Opaque to the optimizer, so that the std::function call stays an indirect call
// through libstdc++'s _Function_handler rather than being devirtualized.
__attribute__((noipa)) void Invoke(const std::function<void(int)>& function, int argument) {
  function(argument);
  g_sink = g_sink + 1;
}

__attribute__((noinline)) void Recurse(int depth, CapturedStack* out) {
  if (depth == 0) {
    StreamSortAndCapture(out);
  } else {
    Invoke([out](int d) { Recurse(d, out); }, depth - 1);
  }
  g_sink = g_sink + depth;
}

}  // namespace

void CaptureDeepStack(int depth, CapturedStack* out) { Recurse(depth, out); }

}  // namespace drip::agent::testing
