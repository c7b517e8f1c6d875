#include "agent/slab_sampler.h"

#include "gtest/gtest.h"

namespace drip::agent {
namespace {

constexpr char kSlabinfo[] =
    "slabinfo - version: 2.1\n"
    "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : "
    "tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> "
    "<sharedavail>\n"
    "kmalloc-512        12293  12400    512   16    2 : tunables    0    0    0 : slabdata    775"
    "    775      0\n"
    "btrfs_inode            0      0   1016   16    4 : tunables    0    0    0 : slabdata      0"
    "      0      0\n";

TEST(SlabSamplerTest, ParsesActiveObjectsAndObjectSizePerCache) {
  auto caches = SlabSampler::Parse(kSlabinfo, "/proc/slabinfo");
  ASSERT_TRUE(caches.ok()) << caches.status();
  ASSERT_EQ(caches->size(), 2u);
  EXPECT_EQ((*caches)[0].name, "kmalloc-512");
  EXPECT_EQ((*caches)[0].active_objects, 12293u);
  EXPECT_EQ((*caches)[0].object_size_bytes, 512u);
}

TEST(SlabSamplerTest, MalformedLineIsAnErrorNamingFileAndLine) {
  auto caches = SlabSampler::Parse("slabinfo - version: 2.1\n# header\nkmalloc-64 lots\n", "f");
  ASSERT_FALSE(caches.ok());
  EXPECT_NE(caches.status().message().find("f:3:"), std::string::npos) << caches.status();
  caches = SlabSampler::Parse("slabinfo - version: 1.1\n", "f");
  ASSERT_FALSE(caches.ok());
  EXPECT_NE(caches.status().message().find("f:1: not slabinfo version 2.x"), std::string::npos);
}

TEST(SlabSamplerTest, EmptyCachesAreLeftOutAndTheInstanceIsTheBoot) {
  const std::string path = ::testing::TempDir() + "/drip-slabinfo-" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(kSlabinfo, f);
  std::fclose(f);
  SlabSampler sampler(path, 1'700'000'000);
  std::vector<drip::v1::Sample> samples;
  ASSERT_TRUE(sampler.AppendSamples(42, &samples).ok());
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].component(), "kernel:slab:kmalloc-512");
  EXPECT_EQ(samples[0].instance(), "boot@1700000000");
  EXPECT_EQ(samples[0].timestamp_ms(), 42);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace drip::agent
