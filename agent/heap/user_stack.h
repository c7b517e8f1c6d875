// A copy of one thread's user-space registers and the top of its user stack, taken in
// the kernel by the heap snapshotter's BPF programs at a sampled allocation. The agent
// unwinds it on the host with the target's .eh_frame / DWARF CFI (StackUnwinder), the
// way `perf --call-graph dwarf` does, so that stacks are complete through code built
// without frame pointers. The bytes are used for unwinding only and never leave the host.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace drip::agent {

// x86_64 registers in DWARF numbering (System V psABI): the CFI refers to them by these
// numbers, so the copy is kept in this order.
enum DwarfRegX86_64 : int {
  kRax = 0,
  kRdx = 1,
  kRcx = 2,
  kRbx = 3,
  kRsi = 4,
  kRdi = 5,
  kRbp = 6,
  kRsp = 7,
  kR8 = 8,
  kR9 = 9,
  kR10 = 10,
  kR11 = 11,
  kR12 = 12,
  kR13 = 13,
  kR14 = 14,
  kR15 = 15,
  kRip = 16,
  kDwarfRegCount = 17,
};

struct UserStack {
  int pid = 0;
  int tid = 0;
  std::array<uint64_t, kDwarfRegCount> regs{};
  // stack[i] is the byte at address regs[kRsp] + i, as copied at capture time.
  std::span<const uint8_t> stack;
};

}  // namespace drip::agent
