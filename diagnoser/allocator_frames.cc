#include "diagnoser/allocator_frames.h"

#include <cxxabi.h>

#include <array>
#include <cstdlib>
#include <string>
#include <string_view>

namespace drip::diagnoser {
namespace {

// The C allocation API and glibc's own names for its pieces ("__libc_*" by prefix).
constexpr std::array<std::string_view, 21> kCAllocatorFunctions = {"malloc",
                                                                   "calloc",
                                                                   "realloc",
                                                                   "reallocarray",
                                                                   "free",
                                                                   "cfree",
                                                                   "posix_memalign",
                                                                   "aligned_alloc",
                                                                   "memalign",
                                                                   "valloc",
                                                                   "pvalloc",
                                                                   "_int_malloc",
                                                                   "_int_free",
                                                                   "_int_realloc",
                                                                   "_int_memalign",
                                                                   "_mid_memalign",
                                                                   "sysmalloc",
                                                                   "tcache_init",
                                                                   "malloc_hook_ini",
                                                                   "realloc_hook_ini",
                                                                   "memalign_hook_ini"};

// Qualified names (before "::allocate") of the standard library's allocators and the
// traits that forward to them, libstdc++ and libc++.
constexpr std::array<std::string_view, 12> kStdAllocatorClasses = {
    "std::allocator<",
    "std::__new_allocator<",
    "__gnu_cxx::new_allocator<",
    "__gnu_cxx::malloc_allocator<",
    "__gnu_cxx::__pool_alloc<",
    "__gnu_cxx::__alloc_traits<",
    "std::allocator_traits<",
    "std::__allocator_traits_base",
    "std::__1::allocator<",
    "std::__1::allocator_traits<",
    "std::__1::__allocator_traits_base",
    "std::pmr::"};

// Internal functions of libc++ that only forward to operator new.
constexpr std::array<std::string_view, 4> kStdAllocateFunctions = {
    "std::__1::__libcpp_allocate", "std::__libcpp_allocate", "std::__1::__libcpp_operator_new",
    "std::__libcpp_operator_new"};

std::string_view Basename(std::string_view path) {
  if (auto slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  return path;
}

// Libraries that are nothing but an allocator: any frame of theirs is allocator code.
bool IsAllocatorLibrary(std::string_view module) {
  std::string_view base = Basename(module);
  if (base.starts_with("libtcmalloc") || base.starts_with("libjemalloc") ||
      base.starts_with("libmimalloc")) {
    return true;
  }
  // Drip's shim: "libdrip_sampler.so", or with a version suffix ("libdrip_sampler.so.1").
  constexpr std::string_view kShim = "libdrip_sampler.so";
  if (!base.starts_with(kShim)) return false;
  std::string_view suffix = base.substr(kShim.size());
  return suffix.empty() ||
         (suffix[0] == '.' && suffix.find_first_not_of(".0123456789") == std::string_view::npos);
}

// Runtime libraries whose unsymbolized innermost frames, in an allocation stack, can only
// be the allocator (their exported symbols normally name their frames).
bool IsRuntimeLibrary(std::string_view module) {
  std::string_view base = Basename(module);
  return base.starts_with("libc.so") || base.starts_with("libc-") ||
         base.starts_with("libstdc++.so") || base.starts_with("libc++.so") ||
         base.starts_with("libc++abi.so");
}

std::string Demangle(const std::string& mangled) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return mangled;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

// The function's name without ELF symbol versions ("malloc@@GLIBC_2.2.5", "_Znwm@plt"),
// compiler clone suffixes ("[clone .cold]", ".cold"), glibc's "__GI_" internal aliases,
// and demangled when mangled.
std::string NormalizedName(std::string_view name) {
  if (auto at = name.find('@'); at != std::string_view::npos) name = name.substr(0, at);
  if (auto clone = name.find(" [clone"); clone != std::string_view::npos) {
    name = name.substr(0, clone);
  }
  if (name.starts_with("__GI_")) name.remove_prefix(5);
  std::string result(name);
  if (result.starts_with("_Z")) {
    if (auto dot = result.find('.'); dot != std::string::npos) result.resize(dot);  // _Znwm.cold
    result = Demangle(result);
  }
  if (result.starts_with("::")) result.erase(0, 2);
  return result;
}

// A demangled name without its parameter list, trailing qualifiers and ABI tags:
// "std::allocator<Foo>::allocate[abi:cxx11](unsigned long)" -> "std::allocator<Foo>::allocate".
std::string QualifiedName(std::string_view name) {
  std::string out;
  int angle = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '[' && name.substr(i).starts_with("[abi:")) {
      size_t close = name.find(']', i);
      if (close == std::string_view::npos) break;
      i = close;
      continue;
    }
    if (c == '<') ++angle;
    if (c == '>' && angle > 0) --angle;
    // "operator new[](...)" and "operator()" keep their own parentheses.
    if (c == '(' && angle == 0 && !std::string_view(out).ends_with("operator")) break;
    out.push_back(c);
  }
  return out;
}

bool IsOperatorNewOrDelete(std::string_view name) {
  for (std::string_view op : {"operator new", "operator delete"}) {
    if (!name.starts_with(op)) continue;
    std::string_view rest = name.substr(op.size());
    if (rest.empty() || rest[0] == '(' || rest[0] == '[' || rest[0] == ' ') return true;
  }
  return false;
}

bool IsAllocatorFunction(std::string_view raw) {
  const std::string name = NormalizedName(raw);
  for (std::string_view c : kCAllocatorFunctions) {
    if (name == c) return true;
  }
  if (name.starts_with("__libc_") || name.starts_with("je_") || name.starts_with("tc_") ||
      name.find("tcmalloc::") != std::string::npos) {
    return true;
  }
  if (IsOperatorNewOrDelete(name)) return true;
  const std::string qualified = QualifiedName(name);
  for (std::string_view f : kStdAllocateFunctions) {
    if (qualified.starts_with(f)) return true;
  }
  if (std::string_view(qualified).ends_with("::allocate")) {
    for (std::string_view c : kStdAllocatorClasses) {
      if (qualified.starts_with(c)) return true;
    }
  }
  return false;
}

}  // namespace

bool IsAllocatorFrame(const StackFrame& frame) {
  if (IsAllocatorLibrary(frame.module)) return true;
  if (frame.function.empty()) return IsRuntimeLibrary(frame.module);
  return IsAllocatorFunction(frame.function);
}

std::vector<StackFrame> DropAllocatorFrames(const std::vector<StackFrame>& frames) {
  size_t first = 0;
  while (first < frames.size() && IsAllocatorFrame(frames[first])) ++first;
  return std::vector<StackFrame>(frames.begin() + static_cast<std::ptrdiff_t>(first), frames.end());
}

}  // namespace drip::diagnoser
