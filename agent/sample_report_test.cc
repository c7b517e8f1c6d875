#include "agent/sample_report.h"

#include <gtest/gtest.h>

#include "nlohmann/json.hpp"

namespace drip::agent {
namespace {

drip::v1::Sample ProcessSample(const std::string& component, const std::string& instance,
                               uint64_t anon, uint64_t swap, uint64_t file = 0) {
  drip::v1::Sample s;
  s.set_component(component);
  s.set_instance(instance);
  s.set_timestamp_ms(1'700'000'000'000);
  s.mutable_process()->set_anon_rss_bytes(anon);
  s.mutable_process()->set_swap_bytes(swap);
  s.mutable_process()->set_file_rss_bytes(file);
  return s;
}

TEST(SampleReportTest, SortsByUnreclaimableBytesLargestFirst) {
  std::vector<drip::v1::Sample> samples = {
      ProcessSample("proc:small", "1@1", 10, 0, /*file=*/1'000'000),
      ProcessSample("svc:big.service", "2@1", 1000, 500), ProcessSample("proc:mid", "3@1", 600, 0)};
  SortByUnreclaimable(&samples);
  EXPECT_EQ(samples[0].component(), "svc:big.service");
  EXPECT_EQ(samples[1].component(), "proc:mid");
  EXPECT_EQ(samples[2].component(), "proc:small");
}

TEST(SampleReportTest, JsonHasTheDocumentedShape) {
  std::vector<drip::v1::Sample> samples = {
      ProcessSample("svc:nginx.service", "42@1700000000", 4096, 1024, 2048)};
  samples[0].mutable_process()->set_shmem_rss_bytes(512);
  nlohmann::json out = nlohmann::json::parse(RenderSampleJson("proc", "", samples));
  EXPECT_EQ(out["sampler"], "proc");
  EXPECT_EQ(out["fallback_reason"], "");
  EXPECT_EQ(out["samples"][0]["kind"], "process");
  ASSERT_EQ(out["samples"].size(), 1u);
  const auto& s = out["samples"][0];
  EXPECT_EQ(s["component"], "svc:nginx.service");
  EXPECT_EQ(s["instance"], "42@1700000000");
  EXPECT_EQ(s["timestamp_ms"], 1'700'000'000'000);
  EXPECT_EQ(s["anon_rss_bytes"], 4096);
  EXPECT_EQ(s["file_rss_bytes"], 2048);
  EXPECT_EQ(s["shmem_rss_bytes"], 512);
  EXPECT_EQ(s["swap_bytes"], 1024);
  EXPECT_EQ(s["unreclaimable_bytes"], 4096 + 1024);
}

TEST(SampleReportTest, JsonSurvivesInvalidUtf8) {
  std::vector<drip::v1::Sample> samples = {ProcessSample("proc:bad\xff", "1@1", 1, 0)};
  EXPECT_FALSE(nlohmann::json::parse(RenderSampleJson("proc", "", samples)).is_discarded());
}

TEST(SampleReportTest, TableSaysWhichSamplerAndListsEveryProcess) {
  std::vector<drip::v1::Sample> samples = {ProcessSample("proc:redis-server", "7@1", 200 << 20, 0),
                                           ProcessSample("proc:bash", "8@1", 1 << 20, 0)};
  std::string table = RenderSampleTable("proc", "", samples);
  EXPECT_EQ(table.rfind("sampler: proc (2 processes, 2 entities)\n", 0), 0u) << table;
  EXPECT_NE(table.find("COMPONENT"), std::string::npos);
  EXPECT_NE(table.find("proc:redis-server"), std::string::npos);
  EXPECT_NE(table.find("200.0 MiB"), std::string::npos);
  EXPECT_LT(table.find("proc:redis-server"), table.find("proc:bash"));
}

TEST(SampleReportTest, TableSaysWhyTheSamplerFellBackFromBpf) {
  std::vector<drip::v1::Sample> samples = {ProcessSample("proc:bash", "8@1", 1 << 20, 0)};
  std::string table = RenderSampleTable("proc", "BPF: the kernel refused", samples);
  EXPECT_EQ(table.rfind("sampler: proc (fallback: BPF: the kernel refused) (1 processes, 1 "
                        "entities)\n",
                        0),
            0u)
      << table;
}

}  // namespace
}  // namespace drip::agent
