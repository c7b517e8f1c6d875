// StackUnwinder: turns a UserStack copied from a target process into its call stack, and
// a pc into a symbolized StackFrame, on the host, with elfutils' libdw (Dwfl).
//
// The target's modules come from /proc/PID/maps (executable, shared libraries with their
// load bias, [vdso]); CFI comes from .eh_frame / .debug_frame, with the frame-pointer
// fallback for code that has no CFI. Symbols come from .symtab/.dynsym (and separate debug
// files found by build-id or .gnu_debuglink), are demangled, and carry file:line from
// DWARF when present. An address no module covers keeps its raw pc.
//
// Not thread-safe: one snapshotter thread owns an instance.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/heap/user_stack.h"
#include "common/base/heap_snapshot.h"

namespace drip::agent {

// The function of a frame whose pc lies in no mapped file (JIT code, anonymous memory).
inline constexpr std::string_view kUnknownFunction = "[unknown]";

class StackUnwinder {
 public:
  // Reads the target's memory map under `proc_root`. NotFound when the process is gone,
  // PermissionDenied when its maps cannot be read.
  static absl::StatusOr<std::unique_ptr<StackUnwinder>> ForProcess(
      int pid, const std::string& proc_root = "/proc");
  virtual ~StackUnwinder() = default;

  // The pcs of the stack, innermost first: regs[kRip] first, then each caller's return
  // address. Stops at max_frames, at the end of the copied stack, or where CFI ends.
  // Only the copied stack and the read-only segments of the mapped files are read, never
  // the target's memory. An error only when not even the first frame can be produced
  // (pc 0, max_frames < 1).
  virtual absl::StatusOr<std::vector<uint64_t>> Unwind(const UserStack& stack, int max_frames) = 0;

  // Symbolizes one pc (cached per pc). `is_return_address` is true for every frame but
  // the innermost: the call instruction is at pc - 1, which is what gets looked up.
  // The frame's address is `pc`; module_offset is the ELF virtual address of the looked-up
  // address (pc - 1 for a return address) in `module`, what `addr2line -e module` takes;
  // function, file and line are those of the looked-up address. `module` is the path as
  // the target's maps name it ("... (deleted)" for a replaced file), "[vdso]" for the vDSO.
  // A pc in no module re-reads
  // the maps (at most once a second) and otherwise yields a frame with no address (the
  // raw pc would expose the target's layout) and kUnknownFunction as its function.
  virtual StackFrame Symbolize(uint64_t pc, bool is_return_address) = 0;

  // Re-reads /proc/PID/maps, for modules mapped after ForProcess (dlopen), and empties
  // the per-pc cache; modules still mapped keep what was loaded of them. Unwind and
  // Symbolize call it themselves, rate-limited, when a pc falls outside every module.
  virtual absl::Status RefreshModules() = 0;
};

}  // namespace drip::agent
