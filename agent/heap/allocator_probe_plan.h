// Where to probe a target's allocator: which mapped module really implements each
// allocator entry point (the executable when it is static or brings its own malloc,
// jemalloc / tcmalloc / mimalloc when loaded, else glibc; operator new from the
// executable, the allocator library or libstdc++), read from /proc/PID/maps and the
// modules' symbol tables. Also tells whether Drip's preload shim is loaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace drip::agent {

struct ProbeSite {
  std::string function;     // symbol name, e.g. "malloc", "_Znwm"
  std::string module;       // path as the target maps it
  std::string open_path;    // the same file seen from here (/proc/PID/root/...)
  uint64_t offset = 0;      // file offset of the function's entry
  uint32_t alloc_kind = 0;  // enum drip_alloc_kind for allocation sites; 0 for frees
};

struct AllocatorProbePlan {
  std::vector<ProbeSite> allocs;
  // free, operator delete where it does not end in the probed free, and realloc /
  // reallocarray again (for the pointer they free): attached for the whole snapshot.
  std::vector<ProbeSite> frees;
  std::string allocator;  // "glibc", "jemalloc", "tcmalloc", "mimalloc" or "executable"
  std::string shim_path;  // the mapped libdrip_sampler.so, seen from here; empty if none
  // The allocator's own entry points (jemalloc's mallocx/sdallocx, tcmalloc's tc_*,
  // mimalloc's mi_*) that some module of the process imports: calls the preload shim never
  // sees. unprobed_calls: those of them no probe above covers, which attach mode misses.
  std::vector<std::string> own_api_calls;
  std::vector<std::string> unprobed_calls;
};

// Fails with NotFound when the process is gone and FailedPrecondition when no module of
// it defines malloc.
absl::StatusOr<AllocatorProbePlan> PlanAllocatorProbes(int pid,
                                                       const std::string& proc_root = "/proc");

}  // namespace drip::agent
