#include "agent/heap/allocator_probe_plan.h"

#include <unistd.h>

#include <algorithm>
#include <array>

#include "agent/bpf/heap_snapshot.h"
#include "agent/heap/elf_function_index.h"
#include "agent/proc_files.h"
#include "agent/proc_maps.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

struct AllocatorFunction {
  const char* name;
  uint32_t kind;
  bool cxx;
};

// Every entry point that hands out memory. The C++ ones are probed where they are
// defined so that the frame above the probe is the code that said `new`.
constexpr std::array<AllocatorFunction, 19> kAllocFunctions = {{
    {"malloc", DRIP_ALLOC_MALLOC, false},
    {"calloc", DRIP_ALLOC_CALLOC, false},
    {"realloc", DRIP_ALLOC_REALLOC, false},
    {"reallocarray", DRIP_ALLOC_REALLOCARRAY, false},
    {"posix_memalign", DRIP_ALLOC_POSIX_MEMALIGN, false},
    {"aligned_alloc", DRIP_ALLOC_MEMALIGN, false},
    {"memalign", DRIP_ALLOC_MEMALIGN, false},
    {"valloc", DRIP_ALLOC_MALLOC, false},
    {"pvalloc", DRIP_ALLOC_MALLOC, false},
    {"_Znwm", DRIP_ALLOC_MALLOC, true},
    {"_Znam", DRIP_ALLOC_MALLOC, true},
    {"_ZnwmRKSt9nothrow_t", DRIP_ALLOC_MALLOC, true},
    {"_ZnamRKSt9nothrow_t", DRIP_ALLOC_MALLOC, true},
    {"_ZnwmSt11align_val_t", DRIP_ALLOC_MALLOC, true},
    {"_ZnamSt11align_val_t", DRIP_ALLOC_MALLOC, true},
    {"_ZnwmSt11align_val_tRKSt9nothrow_t", DRIP_ALLOC_MALLOC, true},
    {"_ZnamSt11align_val_tRKSt9nothrow_t", DRIP_ALLOC_MALLOC, true},
    // jemalloc's own API, which programs that detect jemalloc call directly (folly does, and
    // frees what it got from malloc with sdallocx): separate code, not aliases of malloc.
    {"mallocx", DRIP_ALLOC_MALLOC, false},
    {"rallocx", DRIP_ALLOC_REALLOC, false},
}};

// What frees a block: free, and jemalloc's dallocx(ptr, flags) and sdallocx(ptr, size, flags).
constexpr std::array<const char*, 3> kFreeFunctions = {"free", "dallocx", "sdallocx"};

// Allocator entry points a program may call by their own names instead of the malloc
// family. The preload shim interposes none of them; attach mode samples those that are
// aliases of a probed entry point (tcmalloc's tc_* are) or are probed themselves.
constexpr std::array<const char*, 30> kOwnApiFunctions = {"mallocx",
                                                          "rallocx",
                                                          "xallocx",
                                                          "dallocx",
                                                          "sdallocx",
                                                          "tc_malloc",
                                                          "tc_calloc",
                                                          "tc_realloc",
                                                          "tc_free",
                                                          "tc_free_sized",
                                                          "tc_memalign",
                                                          "tc_posix_memalign",
                                                          "tc_valloc",
                                                          "tc_pvalloc",
                                                          "tc_new",
                                                          "tc_newarray",
                                                          "tc_new_nothrow",
                                                          "tc_newarray_nothrow",
                                                          "tc_delete",
                                                          "tc_deletearray",
                                                          "tc_delete_sized",
                                                          "tc_deletearray_sized",
                                                          "tc_malloc_skip_new_handler",
                                                          "mi_malloc",
                                                          "mi_zalloc",
                                                          "mi_calloc",
                                                          "mi_realloc",
                                                          "mi_reallocf",
                                                          "mi_malloc_aligned",
                                                          "mi_free"};

// operator delete is probed only where it does not end in a probed free(): libstdc++'s
// calls free, so probing it too would double the cost of every delete for nothing.
constexpr std::array<const char*, 8> kDeleteFunctions = {"_ZdlPv",
                                                         "_ZdaPv",
                                                         "_ZdlPvm",
                                                         "_ZdaPvm",
                                                         "_ZdlPvSt11align_val_t",
                                                         "_ZdaPvSt11align_val_t",
                                                         "_ZdlPvmSt11align_val_t",
                                                         "_ZdaPvmSt11align_val_t"};

struct Module {
  std::string path;
  std::string open_path;
  ElfFunctionIndex index;
};

bool BaseNameHas(const std::string& path, const char* needle) {
  const size_t slash = path.rfind('/');
  return path.find(needle, slash == std::string::npos ? 0 : slash) != std::string::npos;
}

std::string AllocatorLibraryName(const std::string& path) {
  for (const char* name : {"jemalloc", "tcmalloc", "mimalloc"}) {
    if (BaseNameHas(path, name)) return name;
  }
  return "";
}

}  // namespace

absl::StatusOr<AllocatorProbePlan> PlanAllocatorProbes(int pid, const std::string& proc_root) {
  const std::string proc = fmt::format("{}/{}", proc_root, pid);
  std::string maps;
  if (!ReadProcFile(proc + "/maps", &maps).ok()) {
    return absl::NotFoundError(fmt::format("process {} is gone", pid));
  }
  char exe_buf[4096];
  const ssize_t n = readlink((proc + "/exe").c_str(), exe_buf, sizeof(exe_buf) - 1);
  const std::string exe = n > 0 ? std::string(exe_buf, static_cast<size_t>(n)) : "";

  // Modules in the order the dynamic linker searches them for a symbol: the executable,
  // then preloaded and needed libraries roughly in mapping order.
  std::vector<std::string> paths;
  for (const MapsEntry& entry : ParseProcMaps(maps)) {
    const std::string& path = entry.path;
    if (path.empty() || path[0] != '/' || path.ends_with(" (deleted)")) continue;
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  }
  if (paths.empty()) return absl::NotFoundError(fmt::format("process {} has no mapped files", pid));

  AllocatorProbePlan plan;
  std::vector<Module> modules;
  auto add_module = [&](const std::string& path) {
    for (const Module& m : modules) {
      if (m.path == path) return;
    }
    const std::string open_path = proc + "/root" + path;
    auto index = ElfFunctionIndex::Read(open_path);
    if (index.ok()) modules.push_back({path, open_path, std::move(*index)});
  };
  for (const std::string& path : paths) {
    if (BaseNameHas(path, "libdrip_sampler.so")) plan.shim_path = proc + "/root" + path;
  }
  if (!exe.empty()) add_module(exe);
  for (const std::string& path : paths) {
    if (!AllocatorLibraryName(path).empty()) add_module(path);
  }
  for (const std::string& path : paths) {
    if (BaseNameHas(path, "libc.so") || BaseNameHas(path, "libstdc++.so")) add_module(path);
  }

  auto find = [&](const char* name, bool cxx) -> const Module* {
    for (const Module& m : modules) {
      // The executable may define operator new for itself; libc never does.
      if (cxx && BaseNameHas(m.path, "libc.so")) continue;
      if (!cxx && BaseNameHas(m.path, "libstdc++.so")) continue;
      if (m.index.FunctionOffset(name)) return &m;
    }
    return nullptr;
  };

  const Module* malloc_module = find("malloc", false);
  if (malloc_module == nullptr) {
    return absl::FailedPreconditionError(
        fmt::format("process {}: no mapped module defines malloc (stripped static binary?)", pid));
  }
  if (malloc_module->path == exe) {
    plan.allocator = "executable";
  } else if (std::string lib = AllocatorLibraryName(malloc_module->path); !lib.empty()) {
    plan.allocator = lib;
  } else {
    plan.allocator = "glibc";
  }
  // One probe per address: allocators alias their entry points (tcmalloc's free is also
  // operator delete and delete[], its operator new is also new[]). Two probes on one
  // address would both run on every call: the free counted three times against the budget,
  // and an allocation taken off the sampling countdown twice, which samples it twice as
  // often as its weight assumes.
  auto add_site = [](std::vector<ProbeSite>* sites, ProbeSite site) {
    for (const ProbeSite& s : *sites) {
      if (s.module == site.module && s.offset == site.offset) return;
    }
    sites->push_back(std::move(site));
  };
  const Module* new_module = nullptr;
  for (const AllocatorFunction& f : kAllocFunctions) {
    const Module* m = find(f.name, f.cxx);
    if (m == nullptr) continue;
    if (f.cxx && new_module == nullptr) new_module = m;
    add_site(&plan.allocs,
             {f.name, m->path, m->open_path, *m->index.FunctionOffset(f.name), f.kind});
  }
  for (const char* name : kFreeFunctions) {
    if (const Module* m = find(name, false)) {
      add_site(&plan.frees, {name, m->path, m->open_path, *m->index.FunctionOffset(name), 0});
    }
  }
  // realloc frees its first argument: watched with the frees, so that a tracked block
  // realloc'ed while the allocation probes are off is not taken for a leak.
  for (const ProbeSite& site : std::vector<ProbeSite>(plan.allocs)) {
    if (site.alloc_kind == DRIP_ALLOC_REALLOC || site.alloc_kind == DRIP_ALLOC_REALLOCARRAY) {
      add_site(&plan.frees, {site.function, site.module, site.open_path, site.offset, 0});
    }
  }
  if (new_module != nullptr && !BaseNameHas(new_module->path, "libstdc++.so")) {
    for (const char* name : kDeleteFunctions) {
      if (auto offset = new_module->index.FunctionOffset(name)) {
        add_site(&plan.frees, {name, new_module->path, new_module->open_path, *offset, 0});
      }
    }
  }

  // Which of the allocator's own entry points the program calls (imports), and whether a
  // probe sits at the address each one resolves to.
  std::vector<const ElfFunctionIndex*> importers;
  std::vector<ElfFunctionIndex> others;
  others.reserve(paths.size());
  for (const std::string& path : paths) {
    if (BaseNameHas(path, "libdrip_sampler.so")) continue;
    const Module* known = nullptr;
    for (const Module& m : modules) {
      if (m.path == path) known = &m;
    }
    if (known != nullptr) {
      importers.push_back(&known->index);
    } else if (auto index = ElfFunctionIndex::Read(proc + "/root" + path); index.ok()) {
      others.push_back(std::move(*index));
      importers.push_back(&others.back());
    }
  }
  for (const char* name : kOwnApiFunctions) {
    const bool imported = std::any_of(importers.begin(), importers.end(),
                                      [&](const ElfFunctionIndex* i) { return i->Imports(name); });
    const Module* m = find(name, false);
    if (!imported || m == nullptr) continue;
    plan.own_api_calls.push_back(name);
    const uint64_t offset = *m->index.FunctionOffset(name);
    auto at = [&](const ProbeSite& s) { return s.module == m->path && s.offset == offset; };
    if (std::none_of(plan.allocs.begin(), plan.allocs.end(), at) &&
        std::none_of(plan.frees.begin(), plan.frees.end(), at)) {
      plan.unprobed_calls.push_back(name);
    }
  }
  return plan;
}

}  // namespace drip::agent
