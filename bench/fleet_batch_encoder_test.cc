#include "bench/fleet_batch_encoder.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace drip::bench {
namespace {

TEST(FleetBatchEncoderTest, WritesExactlyWhatProtobufWould) {
  // Sizes around the process/unit/slab split and a large host whose components repeat.
  for (int samples : {1, 2, 19, 20, 300, 2000}) {
    FleetBatchEncoder host(42, samples);
    for (uint64_t sequence : {uint64_t{1}, uint64_t{2}, uint64_t{1} << 40}) {
      std::string encoded;
      host.Encode(sequence, 1'760'000'123'456, &encoded);
      EXPECT_EQ(encoded, host.Build(sequence, 1'760'000'123'456).SerializeAsString())
          << samples << " samples, sequence " << sequence;
    }
  }
}

TEST(FleetBatchEncoderTest, BatchesLookLikeAnAgentsPass) {
  FleetBatchEncoder host(7, 300);
  EXPECT_EQ(host.host(), "bench-host-0007");
  EXPECT_EQ(host.samples(), 300);
  std::string encoded;
  host.Encode(3, 1'760'000'000'000, &encoded);
  drip::v1::AgentMessage msg;
  ASSERT_TRUE(msg.ParseFromString(encoded));
  ASSERT_TRUE(msg.has_batch());
  EXPECT_EQ(msg.batch().sequence(), 3u);
  ASSERT_EQ(msg.batch().samples_size(), 300);
  int processes = 0, units = 0, slabs = 0;
  std::set<std::string> series;
  for (const drip::v1::Sample& s : msg.batch().samples()) {
    EXPECT_TRUE(s.host().empty());  // the stream's host, as agents send it
    EXPECT_FALSE(s.component().empty());
    EXPECT_EQ(s.timestamp_ms(), 1'760'000'000'000);
    processes += s.has_process();
    units += s.has_cgroup();
    slabs += s.has_slab();
    if (s.has_process()) {
      EXPECT_GT(s.process().anon_rss_bytes(), 0u);
    }
    series.insert(s.component() + "/" + s.instance());
  }
  EXPECT_EQ(processes, 255);
  EXPECT_EQ(units, 30);
  EXPECT_EQ(slabs, 15);
  EXPECT_EQ(series.size(), 300u) << "every entity is its own series";
}

TEST(FleetBatchEncoderTest, FiguresChangeFromBatchToBatchButHostsStayDistinct) {
  FleetBatchEncoder a(1, 50), b(2, 50);
  EXPECT_NE(a.host(), b.host());
  const drip::v1::AgentMessage a1 = a.Build(1, 0), a2 = a.Build(2, 0), b1 = b.Build(1, 0);
  int changed = 0;
  for (int i = 0; i < 50; ++i) {
    changed +=
        a1.batch().samples(i).SerializeAsString() != a2.batch().samples(i).SerializeAsString();
  }
  EXPECT_GT(changed, 40);
  EXPECT_NE(a1.batch().samples(0).instance(), b1.batch().samples(0).instance());
}

TEST(FleetBatchEncoderTest, HelloNamesTheHost) {
  FleetBatchEncoder host(12, 10);
  drip::v1::AgentMessage hello = host.Hello();
  ASSERT_TRUE(hello.has_hello());
  EXPECT_EQ(hello.hello().host(), "bench-host-0012");
}

}  // namespace
}  // namespace drip::bench
