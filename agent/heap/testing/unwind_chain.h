// Test support for StackUnwinder: call chains whose innermost function captures its own
// stack (stack_capture.h). unwind_chain.cc is built with -fomit-frame-pointer -O2 and
// without sanitizers whatever the build type, so only CFI can unwind these frames.
#pragma once

#include "agent/heap/testing/stack_capture.h"

extern "C" {

// chain_level1 -> chain_level2 -> chain_level3, which captures. chain_level2 puts garbage
// in rbp before its call, so a frame-pointer walk from the capture cannot succeed.
int chain_level1(drip::agent::testing::CapturedStack* out);
int chain_level2(drip::agent::testing::CapturedStack* out);
int chain_level3(drip::agent::testing::CapturedStack* out);

// Sorts a few ints with qsort(3); chain_qsort_compare captures its stack on one of its
// calls from glibc's sort, so the capture is made below glibc's sorting frames.
int chain_qsort_caller(drip::agent::testing::CapturedStack* out);
int chain_qsort_compare(const void* a, const void* b);

}  // extern "C"

namespace drip::agent::testing {

// The source line of chain_level2's call to chain_level3 in unwind_chain.cc, once
// chain_level2 has run.
int ChainLevel2CallLine();

// A C++ method whose mangled name the unwinder must demangle.
class Foo {
 public:
  explicit Foo(CapturedStack* out) : out_(out) {}
  int Bar(int x);  // captures its own stack

 private:
  CapturedStack* out_;
};

// A deep stack, about 3 * depth + 20 frames: `depth` levels of recursion through
// std::function, then std::call_once (under glibc's pthread_once), an std::ostream write
// (libstdc++.so's operator<< calling back into a stream buffer) and std::sort, whose
// comparator captures.
void CaptureDeepStack(int depth, CapturedStack* out);

}  // namespace drip::agent::testing
