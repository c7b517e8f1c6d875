#include "agent/host_sampler.h"

#include "common/base/clock.h"
#include "gtest/gtest.h"

namespace drip::agent {
namespace {

// A process sampler with a fixed answer.
class FixedSampler final : public Sampler {
 public:
  explicit FixedSampler(std::vector<drip::v1::Sample> samples) : samples_(std::move(samples)) {}
  absl::StatusOr<std::vector<drip::v1::Sample>> SampleOnce() override { return samples_; }
  std::string name() const override { return "fixed"; }

 private:
  std::vector<drip::v1::Sample> samples_;
};

drip::v1::Sample Process(const std::string& instance, uint64_t anon) {
  drip::v1::Sample s;
  s.set_component("proc:x");
  s.set_instance(instance);
  s.mutable_process()->set_anon_rss_bytes(anon);
  return s;
}

TEST(HostSamplerTest, CapKeepsExitsAndTheLargestProcessesAndCountsTheRest) {
  std::vector<drip::v1::Sample> processes = {Process("1@1", 10), Process("2@1", 500),
                                             Process("3@1", 20), Process("4@1", 300)};
  drip::v1::Sample exit;
  exit.set_component("proc:y");
  exit.set_instance("5@1");
  exit.mutable_process_exit()->set_peak_rss_bytes(1);
  processes.push_back(exit);
  HostSampler sampler(std::make_unique<FixedSampler>(processes), "", nullptr, nullptr, 3,
                      SystemClock::Get());
  auto pass = sampler.SampleOnce();
  ASSERT_TRUE(pass.ok());
  ASSERT_EQ(pass->size(), 3u);
  EXPECT_EQ((*pass)[0].instance(), "5@1");
  EXPECT_EQ((*pass)[1].instance(), "2@1");
  EXPECT_EQ((*pass)[2].instance(), "4@1");
  EXPECT_EQ(sampler.last_pass().skipped, 2u);
  EXPECT_EQ(sampler.skipped_entities(), 2u);
  ASSERT_TRUE(sampler.SampleOnce().ok());
  EXPECT_EQ(sampler.skipped_entities(), 4u);
  EXPECT_EQ(sampler.name(), "fixed");
}

TEST(HostSamplerTest, UnderTheCapEverythingIsKeptInOrder) {
  HostSampler sampler(std::make_unique<FixedSampler>(
                          std::vector<drip::v1::Sample>{Process("1@1", 10), Process("2@1", 500)}),
                      "BPF: refused", nullptr, nullptr, 100, SystemClock::Get());
  auto pass = sampler.SampleOnce();
  ASSERT_TRUE(pass.ok());
  ASSERT_EQ(pass->size(), 2u);
  EXPECT_EQ((*pass)[0].instance(), "1@1");
  EXPECT_EQ(sampler.skipped_entities(), 0u);
  EXPECT_EQ(sampler.fallback_reason(), "BPF: refused");
}

}  // namespace
}  // namespace drip::agent
