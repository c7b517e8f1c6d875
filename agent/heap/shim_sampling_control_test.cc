#include "agent/heap/shim_sampling_control.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "agent/heap/allocator_probe_plan.h"
#include "agent/proc_files.h"

extern char** environ;

namespace drip::agent {
namespace {

// `sleep 60`, optionally with the shim preloaded; killed and reaped on destruction.
class Sleeper {
 public:
  explicit Sleeper(bool with_shim) {
    std::string preload = std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO;
    char* env[] = {with_shim ? preload.data() : nullptr, nullptr};
    char arg0[] = "sleep", arg1[] = "60";
    char* argv[] = {arg0, arg1, nullptr};
    if (posix_spawn(&pid_, "/bin/sleep", nullptr, nullptr, argv, env) != 0) pid_ = -1;
    // Wait until the dynamic loader has mapped what it maps.
    for (int i = 0; i < 200 && pid_ > 0; ++i) {
      std::string maps;
      if (ReadProcFile("/proc/" + std::to_string(pid_) + "/maps", &maps).ok() &&
          maps.find("libc.so") != std::string::npos) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~Sleeper() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

TEST(ShimSamplingControlTest, RequestsAnotherPeriodOfAPreloadedProcessAndGivesItBack) {
  Sleeper target(/*with_shim=*/true);
  ASSERT_GT(target.pid(), 0);
  auto plan = PlanAllocatorProbes(target.pid(), "/proc");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->shim_path.empty());
  auto control = ShimSamplingControl::Find(target.pid(), "/proc", plan->shim_path);
  ASSERT_TRUE(control.ok()) << control.status();
  EXPECT_EQ(control->Requested().value_or(1), 0u);
  ASSERT_TRUE(control->Request(4096).ok());
  EXPECT_EQ(control->Requested().value_or(0), 4096u);
  ASSERT_TRUE(control->Request(0).ok());
  EXPECT_EQ(control->Requested().value_or(1), 0u);
}

TEST(ShimSamplingControlTest, AProcessWithoutTheShimIsLeftAlone) {
  Sleeper target(/*with_shim=*/false);
  ASSERT_GT(target.pid(), 0);
  auto control = ShimSamplingControl::Find(
      target.pid(), "/proc",
      std::string("/proc/") + std::to_string(target.pid()) + "/root" + DRIP_SAMPLER_SO);
  ASSERT_FALSE(control.ok());
  EXPECT_NE(control.status().message().find("is not mapped"), std::string::npos)
      << control.status();
}

}  // namespace
}  // namespace drip::agent
