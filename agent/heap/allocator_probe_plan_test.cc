#include "agent/heap/allocator_probe_plan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/heap/elf_function_index.h"
#include "agent/heap/testing/sanitizer_runtime.h"

namespace drip::agent {
namespace {

bool HasSite(const std::vector<ProbeSite>& sites, const std::string& function) {
  for (const ProbeSite& s : sites) {
    if (s.function == function) return true;
  }
  return false;
}

// This test binary is a dynamically linked C++ program: glibc's malloc family and
// libstdc++'s operator new, as on most production services.
TEST(AllocatorProbePlanTest, FindsGlibcAllocatorAndLibstdcxxNewInThisProcess) {
  if (testing::kSanitizerRuntimeInExecutable) GTEST_SKIP() << testing::kSanitizerRuntimeSkip;
  auto plan = PlanAllocatorProbes(getpid());
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const char* f :
       {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign", "valloc"}) {
    EXPECT_TRUE(HasSite(plan->allocs, f)) << f;
  }
  EXPECT_TRUE(HasSite(plan->allocs, "_Znwm"));
  EXPECT_TRUE(HasSite(plan->frees, "free"));
  // realloc frees its argument: watched with the frees, whatever the duty cycle does.
  EXPECT_TRUE(HasSite(plan->frees, "realloc"));
  EXPECT_TRUE(plan->shim_path.empty());
  for (const ProbeSite& site : plan->allocs) {
    if (site.function == "_Znwm") {
      EXPECT_NE(site.module.find("libstdc++"), std::string::npos) << site.module;
    }
    EXPECT_GT(site.offset, 0u) << site.function;
  }
#if !defined(__SANITIZE_ADDRESS__)
  // Under GCC's AddressSanitizer libasan.so defines malloc, and that is the right answer
  // there.
  EXPECT_EQ(plan->allocator, "glibc");
#endif
}

TEST(AllocatorProbePlanTest, GoneProcessIsNotFound) {
  auto plan = PlanAllocatorProbes(0x3fffffff);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kNotFound);
}

TEST(ElfFunctionIndexTest, ReadsTheFunctionsOfThisExecutable) {
  auto index = ElfFunctionIndex::Read("/proc/self/exe");
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_GT(index->size(), 0u);
  EXPECT_FALSE(index->FunctionOffset("no_such_function_anywhere").has_value());
}

TEST(ElfFunctionIndexTest, NonElfFileIsAnError) {
  auto index = ElfFunctionIndex::Read("/proc/self/status");
  EXPECT_FALSE(index.ok());
}

}  // namespace
}  // namespace drip::agent
