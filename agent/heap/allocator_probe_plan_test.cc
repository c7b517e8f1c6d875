#include "agent/heap/allocator_probe_plan.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
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
       {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "valloc"}) {
    EXPECT_TRUE(HasSite(plan->allocs, f)) << f;
  }
  // memalign is aligned_alloc under another name in recent glibc: probed once, as that.
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

// tcmalloc aliases its entry points: free is also operator delete and delete[], operator
// new is also new[]. Each address gets one probe, or every free would be counted (and
// cost) three times and an operator new taken off the sampling countdown twice.
TEST(AllocatorProbePlanTest, AliasedEntryPointsOfTcmallocGetOneProbeEach) {
  const std::string tcmalloc = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4";
  if (access(tcmalloc.c_str(), R_OK) != 0) {
    GTEST_FAIL() << tcmalloc << " missing: scripts/install-deps.sh installs libtcmalloc-minimal4";
  }
  const std::string preload = "LD_PRELOAD=" + tcmalloc;
  char* const argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("30"), nullptr};
  char* const envp[] = {const_cast<char*>(preload.c_str()), nullptr};
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, "/bin/sleep", nullptr, nullptr, argv, envp), 0);
  absl::StatusOr<AllocatorProbePlan> plan = absl::NotFoundError("not yet");
  // Until the loader has mapped tcmalloc.
  for (int i = 0; i < 100; ++i) {
    plan = PlanAllocatorProbes(child);
    if (plan.ok() && plan->allocator == "tcmalloc") break;
    usleep(20'000);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->allocator, "tcmalloc");
  for (const std::vector<ProbeSite>* sites : {&plan->allocs, &plan->frees}) {
    for (size_t i = 0; i < sites->size(); ++i) {
      for (size_t j = i + 1; j < sites->size(); ++j) {
        EXPECT_FALSE((*sites)[i].module == (*sites)[j].module &&
                     (*sites)[i].offset == (*sites)[j].offset)
            << (*sites)[i].function << " and " << (*sites)[j].function << " share an address";
      }
    }
  }
  EXPECT_TRUE(HasSite(plan->frees, "free"));
  EXPECT_TRUE(HasSite(plan->allocs, "_Znwm"));
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
