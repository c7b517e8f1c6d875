#include "diagnoser/allocator_frames.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drip::diagnoser {
namespace {

StackFrame Fn(const std::string& function, const std::string& module = "/usr/bin/app") {
  StackFrame f;
  f.function = function;
  f.module = module;
  return f;
}

StackFrame Unsymbolized(const std::string& module, uint64_t offset) {
  StackFrame f;
  f.module = module;
  f.module_offset = offset;
  return f;
}

TEST(AllocatorFramesTest, CAllocationFunctionsAreAllocatorFrames) {
  for (const char* name :
       {"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
        "memalign", "valloc", "pvalloc", "__libc_malloc", "__libc_calloc", "__GI___libc_malloc",
        "_int_malloc", "malloc@@GLIBC_2.2.5", "malloc@plt"}) {
    EXPECT_TRUE(IsAllocatorFrame(Fn(name, "/usr/lib/x86_64-linux-gnu/libc.so.6"))) << name;
  }
}

TEST(AllocatorFramesTest, OperatorNewInMangledAndDemangledForms) {
  for (const char* name : {"_Znwm",
                           "_Znam",
                           "_ZnwmRKSt9nothrow_t",
                           "_ZnamRKSt9nothrow_t",
                           "_ZnwmSt11align_val_t",
                           "_ZnwmSt11align_val_tRKSt9nothrow_t",
                           "_ZnamSt11align_val_t",
                           "_Znwj",
                           "_ZdlPv",
                           "_ZdlPvm",
                           "_ZdaPv",
                           "_Znwm@plt",
                           "operator new(unsigned long)",
                           "operator new[](unsigned long)",
                           "operator new(unsigned long, std::nothrow_t const&)",
                           "operator new(unsigned long, std::align_val_t)",
                           "operator new[](unsigned long, std::align_val_t, std::nothrow_t const&)",
                           "::operator new(unsigned long)",
                           "operator new",
                           "operator delete(void*)",
                           "operator delete(void*, unsigned long)"}) {
    EXPECT_TRUE(IsAllocatorFrame(Fn(name, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"))) << name;
  }
}

TEST(AllocatorFramesTest, AllocatorInternalsAndStdAllocatorsAreAllocatorFrames) {
  for (const char* name :
       {"je_malloc", "je_mallocx", "tc_malloc", "tc_new",
        "tcmalloc::allocate_full_malloc_oom(unsigned long)",
        "tcmalloc::tcmalloc_internal::ThreadCache::Allocate(unsigned long, unsigned long)",
        "std::allocator<int>::allocate(unsigned long)",
        "std::__new_allocator<Session>::allocate(unsigned long, void const*)",
        "__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)",
        "std::allocator_traits<std::allocator<std::pair<int const, std::string> > >::allocate("
        "std::allocator<std::pair<int const, std::string> >&, unsigned long)",
        "std::__1::allocator<char>::allocate[abi:v15006](unsigned long)",
        "std::__1::__libcpp_allocate(unsigned long, unsigned long)",
        "std::allocator<void (*)(int)>::allocate(unsigned long)",
        "_ZNSaIiE8allocateEm",  // std::allocator<int>::allocate, mangled
        "_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv"}) {
    EXPECT_TRUE(IsAllocatorFrame(Fn(name))) << name;
  }
}

TEST(AllocatorFramesTest, ApplicationFunctionsAreNot) {
  for (const char* name :
       {"main", "Session::Append(std::string const&)", "mallocate_things", "my_malloc_wrapper",
        "std::vector<int, std::allocator<int> >::push_back(int const&)",
        "Pool::allocate(unsigned long)", "strdup", "Foo::operator new(unsigned long)",
        "operator newline", "_ZN7Session6AppendERKSs", "freelist_pop"}) {
    EXPECT_FALSE(IsAllocatorFrame(Fn(name))) << name;
  }
}

TEST(AllocatorFramesTest, ModulesThatAreAllocatorsDropEveryFrame) {
  EXPECT_TRUE(IsAllocatorFrame(Fn("drip_sample_alloc", "/usr/lib/drip/libdrip_sampler.so")));
  EXPECT_TRUE(IsAllocatorFrame(Unsymbolized("/usr/lib/drip/libdrip_sampler.so", 0x1234)));
  EXPECT_TRUE(IsAllocatorFrame(
      Fn("(anonymous namespace)::do_malloc(unsigned long)", "/usr/lib/libtcmalloc.so.4")));
  EXPECT_TRUE(IsAllocatorFrame(Unsymbolized("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", 0x99)));
  // Runtime libraries: only when the frame could not be symbolized.
  EXPECT_TRUE(IsAllocatorFrame(Unsymbolized("/usr/lib/x86_64-linux-gnu/libc.so.6", 0x9a0c0)));
  EXPECT_TRUE(IsAllocatorFrame(Unsymbolized("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 0xa9b0)));
  EXPECT_FALSE(IsAllocatorFrame(Fn("qsort", "/usr/lib/x86_64-linux-gnu/libc.so.6")));
  EXPECT_FALSE(IsAllocatorFrame(Unsymbolized("/usr/bin/app", 0x1000)));
  EXPECT_FALSE(IsAllocatorFrame(Unsymbolized("/opt/app/libdrip_sampler.so.txt", 0x1000)));
}

TEST(AllocatorFramesTest, DropsOnlyTheLeadingRun) {
  const std::vector<StackFrame> frames = {
      Fn("drip_sample_alloc", "/usr/lib/drip/libdrip_sampler.so"),
      Fn("malloc", "/usr/lib/drip/libdrip_sampler.so"),
      Fn("_Znwm", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
      Fn("__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)"),
      Fn("Pool::Grow()"),
      Fn("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),  // further out: kept
      Fn("main")};
  std::vector<StackFrame> kept = DropAllocatorFrames(frames);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].function, "Pool::Grow()");
  EXPECT_EQ(kept[1].function, "malloc");
  EXPECT_EQ(kept[2].function, "main");
}

TEST(AllocatorFramesTest, StackOfOnlyAllocatorFramesBecomesEmpty) {
  EXPECT_TRUE(DropAllocatorFrames({Fn("malloc"), Fn("_Znwm")}).empty());
  EXPECT_TRUE(DropAllocatorFrames({}).empty());
}

}  // namespace
}  // namespace drip::diagnoser
