#include "agent/cgroup_limit_reader.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace drip::agent {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(CgroupLimitReaderTest, ParsesLimitsKillsAndTheMemoryCgroupOfAProcess) {
  EXPECT_EQ(CgroupLimitReader::ParseLimit("1073741824\n"), 1073741824u);
  EXPECT_FALSE(CgroupLimitReader::ParseLimit("max\n").has_value());
  // v1's "unlimited": the page counter's maximum.
  EXPECT_FALSE(CgroupLimitReader::ParseLimit("9223372036854771712\n").has_value());
  EXPECT_FALSE(CgroupLimitReader::ParseLimit("lots").has_value());

  EXPECT_EQ(CgroupLimitReader::ParseOomKills("low 0\nhigh 2\nmax 9\noom 4\noom_kill 3\n"), 3u);
  EXPECT_EQ(CgroupLimitReader::ParseOomKills("oom_kill_disable 0\nunder_oom 0\noom_kill 7\n"), 7u);
  EXPECT_FALSE(CgroupLimitReader::ParseOomKills("oom_kill_disable 0\nunder_oom 0\n").has_value());

  constexpr char kHybrid[] =
      "12:memory:/drip-test/leaf\n"
      "4:cpu,cpuacct:/user.slice\n"
      "1:name=systemd:/user.slice/user-0.slice/session-1.scope\n"
      "0::/user.slice/user-0.slice/session-1.scope\n";
  EXPECT_EQ(CgroupLimitReader::MemoryCgroupOf(kHybrid, false), "/drip-test/leaf");
  EXPECT_EQ(CgroupLimitReader::MemoryCgroupOf(kHybrid, true),
            "/user.slice/user-0.slice/session-1.scope");
  EXPECT_EQ(CgroupLimitReader::MemoryCgroupOf("5:cpu,memory:/a:b\n", false), "/a:b");
  EXPECT_EQ(CgroupLimitReader::MemoryCgroupOf("0::/x\n", false), "");
}

// Most fleets run cgroup v2: a prepared tree of its files, as systemd lays them out.
TEST(CgroupLimitReaderTest, AV2UnitRunsUnderItsSlicesLimitAndCountsItsOwnKills) {
  const fs::path root = fs::temp_directory_path() / ("drip-cgroup-v2-" + std::to_string(getpid()));
  fs::remove_all(root);
  Write(root / "memory.stat", "anon 0\n");  // the root has no memory.max
  Write(root / "system.slice/memory.max", "2147483648\n");
  Write(root / "system.slice/memory.high", "max\n");
  Write(root / "system.slice/memory.swap.max", "max\n");
  Write(root / "system.slice/memory.events", "oom 0\noom_kill 0\n");
  const fs::path unit = root / "system.slice/cache.service";
  Write(unit / "memory.max", "max\n");
  Write(unit / "memory.high", "max\n");
  Write(unit / "memory.swap.max", "max\n");
  Write(unit / "memory.events", "low 0\nhigh 0\nmax 12\noom 3\noom_kill 3\noom_group_kill 0\n");
  const fs::path tight = root / "system.slice/tight.service";
  Write(tight / "memory.max", "536870912\n");
  Write(tight / "memory.high", "402653184\n");
  Write(tight / "memory.swap.max", "0\n");
  Write(tight / "memory.events", "oom_kill 0\n");
  const fs::path free = root / "user.slice/free.scope";
  Write(free / "memory.max", "max\n");
  Write(free / "memory.events", "oom_kill 0\n");

  CgroupLimitReader reader(CgroupMount{root.string(), true, true});
  reader.BeginPass(/*host_swap_bytes=*/1 << 30);
  std::optional<drip::v1::MemoryLimit> cache = reader.LimitOf("/system.slice/cache.service");
  ASSERT_TRUE(cache.has_value());
  EXPECT_EQ(cache->max_bytes(), 2147483648u);
  EXPECT_EQ(cache->cgroup(), "/system.slice");
  EXPECT_EQ(cache->swap_bytes(), 1u << 30);  // unlimited swap: the host's
  EXPECT_EQ(cache->high_bytes(), 0u);
  EXPECT_EQ(cache->oom_kills(), 3u);

  std::optional<drip::v1::MemoryLimit> tight_limit = reader.LimitOf("/system.slice/tight.service");
  ASSERT_TRUE(tight_limit.has_value());
  EXPECT_EQ(tight_limit->max_bytes(), 536870912u);
  EXPECT_EQ(tight_limit->high_bytes(), 402653184u);
  EXPECT_EQ(tight_limit->swap_bytes(), 0u);
  EXPECT_EQ(tight_limit->cgroup(), "/system.slice/tight.service");

  // No limit on its path and no kill: nothing to report (the host's memory is its limit).
  EXPECT_FALSE(reader.LimitOf("/user.slice/free.scope").has_value());
  // Gone: sampled without one.
  EXPECT_FALSE(reader.LimitOf("/system.slice/gone.service").has_value());

  // What a pass read stays for the pass; the next pass reads again.
  Write(unit / "memory.events", "oom_kill 4\n");
  EXPECT_EQ(reader.LimitOf("/system.slice/cache.service")->oom_kills(), 3u);
  reader.BeginPass(1 << 30);
  EXPECT_EQ(reader.LimitOf("/system.slice/cache.service")->oom_kills(), 4u);
  fs::remove_all(root);
}

// This kernel's own v1 memory controller: a cgroup with a limit, a child under it, and a
// process the kernel OOM-kills there.
TEST(CgroupLimitReaderTest, TheV1KernelsLimitAndOomKillAreRead) {
  const fs::path v1 = "/sys/fs/cgroup/memory";
  if (geteuid() != 0 || !fs::exists(v1 / "memory.limit_in_bytes")) {
    GTEST_SKIP() << "needs root and the cgroup v1 memory controller at " << v1;
  }
  const std::string name = "drip-limit-test-" + std::to_string(getpid());
  const fs::path parent = v1 / name;
  const fs::path child = parent / "leaf";
  ASSERT_TRUE(fs::create_directory(parent)) << parent;
  ASSERT_TRUE(fs::create_directory(child)) << child;
  Write(parent / "memory.limit_in_bytes", "33554432\n");  // 32 MiB
  // No swap for it either, where swap is accounted: the kill comes at the limit.
  if (fs::exists(parent / "memory.memsw.limit_in_bytes")) {
    Write(parent / "memory.memsw.limit_in_bytes", "33554432\n");
  }

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::ofstream(child / "cgroup.procs") << getpid() << std::flush;
    // Touch memory until the kernel kills this process at its cgroup's limit.
    for (int i = 0; i < 256; ++i) {
      void* p = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) std::memset(p, 1, 1 << 20);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;

  CgroupLimitReader reader(CgroupMount{v1.string(), false, true});
  reader.BeginPass(0);
  std::optional<drip::v1::MemoryLimit> limit = reader.LimitOf("/" + name + "/leaf");
  ASSERT_TRUE(limit.has_value());
  EXPECT_EQ(limit->max_bytes(), 33554432u);
  EXPECT_EQ(limit->cgroup(), "/" + name);
  EXPECT_EQ(limit->swap_bytes(), 0u);
  EXPECT_EQ(limit->oom_kills(), 1u);
  fs::remove(child);
  fs::remove(parent);
}

}  // namespace
}  // namespace drip::agent
