#include "agent/cgroup_tree.h"

#include <sys/stat.h>

#include <filesystem>

#include "agent/cgroup_unit_sampler.h"
#include "gtest/gtest.h"

namespace drip::agent {
namespace {

constexpr char kHybrid[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr char kUnified[] =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(CgroupTreeTest, FindsTheCgroup2MountInMountinfo) {
  EXPECT_EQ(FindCgroup2Mount(kHybrid)->path, "/sys/fs/cgroup/unified");
  EXPECT_EQ(FindCgroup2Mount(kUnified)->path, "/sys/fs/cgroup");
  EXPECT_FALSE(FindCgroup2Mount("").has_value());
}

TEST(CgroupTreeTest, MemoryHierarchyIsV2WhenItHasTheControllerElseTheV1MemoryMount) {
  auto v2_with_memory = [](const std::string&) -> std::optional<std::string> {
    return "cpuset cpu io memory pids\n";
  };
  auto v2_without = [](const std::string&) -> std::optional<std::string> { return "hugetlb\n"; };
  auto unified = FindMemoryHierarchy(kUnified, v2_with_memory);
  ASSERT_TRUE(unified.ok());
  EXPECT_TRUE(unified->v2);
  EXPECT_EQ(unified->path, "/sys/fs/cgroup");

  auto hybrid = FindMemoryHierarchy(kHybrid, v2_without);
  ASSERT_TRUE(hybrid.ok());
  EXPECT_FALSE(hybrid->v2);
  EXPECT_EQ(hybrid->path, "/sys/fs/cgroup/memory");

  auto without = FindMemoryHierarchy(kUnified, v2_without);
  ASSERT_TRUE(without.ok());
  EXPECT_TRUE(without->v2);
  EXPECT_FALSE(without->memory) << "units are then summed from their processes";

  auto none = FindMemoryHierarchy("", v2_without);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no cgroup hierarchy is mounted"), std::string::npos)
      << none.status();
}

TEST(CgroupTreeTest, ListsServiceAndScopeUnitsUnderSystemAndUserSlicesAtAnyDepth) {
  const std::string root = ::testing::TempDir() + "/drip-cgroup-tree-" + std::to_string(getpid());
  std::filesystem::remove_all(root);
  for (const char* dir : {"/system.slice/nginx.service", "/system.slice/docker-abc.scope",
                          "/system.slice/system-getty.slice/getty@tty1.service",
                          "/user.slice/user-1000.slice/user@1000.service/app.slice/x.service",
                          "/init.scope", "/other/y.service"}) {
    std::filesystem::create_directories(root + dir);
  }
  CgroupTree tree(root);
  std::vector<std::string> names;
  for (const auto& unit : tree.ListUnits()) names.push_back(unit.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"docker-abc.scope", "nginx.service", "getty@tty1.service",
                                      "user@1000.service", "x.service"}));

  struct stat st {};
  ASSERT_EQ(stat((root + "/system.slice/nginx.service").c_str(), &st), 0);
  EXPECT_EQ(tree.PathOf(st.st_ino, 1), "/system.slice/nginx.service");
  ASSERT_EQ(stat(root.c_str(), &st), 0);
  EXPECT_EQ(tree.PathOf(st.st_ino, 1), "/");
  EXPECT_FALSE(tree.PathOf(1ull << 60, 1).has_value());
  std::filesystem::remove_all(root);
}

TEST(CgroupUnitSamplerTest, ParsesV2AndV1MemoryStat) {
  drip::v1::CgroupMemory v2;
  CgroupUnitSampler::ParseV2Stat(
      "anon 1000\nfile 5\nkernel 300\nkernel_stack 16384\nslab_reclaimable 7\n"
      "slab_unreclaimable 200\nsock 40\nshmem 50\n",
      &v2);
  EXPECT_EQ(v2.anon_bytes(), 1000u);
  EXPECT_EQ(v2.kernel_bytes(), 300u);
  EXPECT_EQ(v2.slab_unreclaimable_bytes(), 200u);
  EXPECT_EQ(v2.sock_bytes(), 40u);
  EXPECT_EQ(v2.shmem_bytes(), 50u);

  drip::v1::CgroupMemory v1;
  CgroupUnitSampler::ParseV1Stat(
      "cache 10\nrss 20\nshmem 1\nswap 2\ntotal_cache 100\ntotal_rss 2000\ntotal_shmem 30\n"
      "total_swap 40\n",
      &v1);
  EXPECT_EQ(v1.anon_bytes(), 2000u);
  EXPECT_EQ(v1.shmem_bytes(), 30u);
  EXPECT_EQ(v1.swap_bytes(), 40u);
}

}  // namespace
}  // namespace drip::agent
