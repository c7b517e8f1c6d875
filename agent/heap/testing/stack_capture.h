// Test support for StackUnwinder: captures the calling function's registers and the top
// of its stack from inside this process, the way the heap snapshotter's BPF programs
// capture a target's at a sampled allocation, so that the unwinder is tested on real
// stacks of code built without frame pointers (unwind_chain.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "agent/heap/user_stack.h"

namespace drip::agent::testing {

// What the kernel side copies by default (heap_snapshot's stack_bytes).
inline constexpr size_t kDefaultCopyBytes = 16 * 1024;

struct CapturedStack {
  std::array<uint64_t, kDwarfRegCount> regs{};
  std::vector<uint8_t> bytes;  // bytes[i] was at regs[kRsp] + i
  int pid = 0;
  int tid = 0;

  // A view that borrows `bytes`: valid while this CapturedStack is.
  UserStack AsUserStack() const {
    UserStack stack;
    stack.pid = pid;
    stack.tid = tid;
    stack.regs = regs;
    stack.stack = bytes;
    return stack;
  }
};

// Copies up to `max_bytes` from regs[kRsp] upward, never past the end of this thread's
// stack, and sets pid/tid. Called right after DRIP_CAPTURE_REGISTERS, from the function
// whose frame was captured: its frame and its callers' are above the captured rsp and
// stay as they were.
void CopyStack(CapturedStack* out, size_t max_bytes = kDefaultCopyBytes);

}  // namespace drip::agent::testing

// Stores the DWARF registers 0..16 of the function it is expanded in, at the point where it
// is expanded, into `regs` (uint64_t[17]); rip is the address of the first store, where
// every stored register has the stored value. A macro: a call would capture the callee.
#define DRIP_CAPTURE_REGISTERS(regs)      \
  asm volatile(                           \
      "1:\n\t"                            \
      "movq %%rax, 0(%0)\n\t"             \
      "movq %%rdx, 8(%0)\n\t"             \
      "movq %%rcx, 16(%0)\n\t"            \
      "movq %%rbx, 24(%0)\n\t"            \
      "movq %%rsi, 32(%0)\n\t"            \
      "movq %%rdi, 40(%0)\n\t"            \
      "movq %%rbp, 48(%0)\n\t"            \
      "movq %%rsp, 56(%0)\n\t"            \
      "movq %%r8, 64(%0)\n\t"             \
      "movq %%r9, 72(%0)\n\t"             \
      "movq %%r10, 80(%0)\n\t"            \
      "movq %%r11, 88(%0)\n\t"            \
      "movq %%r12, 96(%0)\n\t"            \
      "movq %%r13, 104(%0)\n\t"           \
      "movq %%r14, 112(%0)\n\t"           \
      "movq %%r15, 120(%0)\n\t"           \
      "leaq 1b(%%rip), %%rax\n\t"         \
      "movq %%rax, 128(%0)\n\t"           \
      :                                   \
      : "r"(static_cast<uint64_t*>(regs)) \
      : "rax", "memory")

// Registers, then the stack: the whole capture of the enclosing function's frame.
#define DRIP_CAPTURE_STACK(captured)                 \
  do {                                               \
    DRIP_CAPTURE_REGISTERS((captured)->regs.data()); \
    ::drip::agent::testing::CopyStack(captured);     \
  } while (0)
