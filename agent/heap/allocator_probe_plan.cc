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
constexpr std::array<AllocatorFunction, 17> kAllocFunctions = {{
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
}};

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
  const Module* free_module = find("free", false);
  if (free_module != nullptr) {
    add_site(&plan.frees, {"free", free_module->path, free_module->open_path,
                           *free_module->index.FunctionOffset("free"), 0});
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
  return plan;
}

}  // namespace drip::agent
