// Allocator frames: the innermost frames of an allocation stack that belong to the
// allocator (malloc and friends, operator new, tcmalloc/jemalloc internals,
// std::allocator::allocate, Drip's own preload shim) rather than to the code that asked
// for memory. The diagnoser drops them so that stacks read from the allocation site
// outwards, and so that the same site reached through malloc or operator new is one stack.
#pragma once

#include <vector>

#include "common/base/heap_snapshot.h"

namespace drip::diagnoser {

// True for a frame of an allocator: by function name (mangled or demangled, glibc
// versioned names like "malloc@@GLIBC_2.2.5" included), by module for libraries that are
// nothing but an allocator (libtcmalloc, libjemalloc, libmimalloc, libdrip_sampler.so),
// and for unsymbolized frames in libc or the C++ runtime.
bool IsAllocatorFrame(const StackFrame& frame);

// `frames` (innermost first) without its leading run of allocator frames. Only the
// leading run: a frame further out that happens to match (a custom allocator calling
// malloc) stays. All frames go when all are allocator frames.
std::vector<StackFrame> DropAllocatorFrames(const std::vector<StackFrame>& frames);

}  // namespace drip::diagnoser
