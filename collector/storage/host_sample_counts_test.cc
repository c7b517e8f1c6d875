#include "collector/storage/host_sample_counts.h"

#include <memory>

#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/scoped_temp_dir.h"
#include "common/base/clock.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

constexpr int64_t kOneHourMs = 3'600'000;
constexpr int64_t kCountsNowMs = 472'222 * kOneHourMs;

drip::v1::Sample SampleAt(const std::string& component, const std::string& instance, int64_t ts) {
  drip::v1::Sample s;
  s.set_component(component);
  s.set_instance(instance);
  s.set_timestamp_ms(ts);
  s.mutable_process()->set_anon_rss_bytes(1);
  return s;
}

TEST(HostSampleCountsTest, CountsEveryComponentAndInstanceOfTheHostPerWindow) {
  ScopedTempDir dir;
  FakeClock clock{kCountsNowMs};
  RocksDbSeriesStoreOptions options;
  options.path = dir.path() + "/store";
  options.clock = &clock;
  options.sync_writes = false;
  options.fold_interval = std::chrono::milliseconds(0);
  absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();

  EXPECT_EQ(CountHostSamples(store->get(), "h", 0, kOneHourMs).status().code(),
            absl::StatusCode::kNotFound);
  drip::v1::SampleBatch batch;
  batch.set_sequence(1);
  // Two days back (another read slice), the last hour with two components and two
  // instances, and a sample ahead of the clock.
  for (const drip::v1::Sample& s :
       {SampleAt("proc:a", "1", kCountsNowMs - 49 * kOneHourMs),
        SampleAt("proc:a", "1", kCountsNowMs - kOneHourMs + 5),
        SampleAt("proc:a", "2", kCountsNowMs - 10), SampleAt("cg:b", "", kCountsNowMs - 20),
        SampleAt("proc:a", "1", kCountsNowMs + 60'000)}) {
    *batch.add_samples() = s;
  }
  ASSERT_TRUE((*store)->AppendBatch("h", batch).ok());
  drip::v1::SampleBatch other;
  other.set_sequence(1);
  *other.add_samples() = SampleAt("proc:a", "1", kCountsNowMs - 10);
  ASSERT_TRUE((*store)->AppendBatch("other-host", other).ok());

  absl::StatusOr<std::map<int64_t, uint64_t>> counts =
      CountHostSamples(store->get(), "h", kCountsNowMs - 72 * kOneHourMs + 1, kOneHourMs);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(*counts, (std::map<int64_t, uint64_t>{{kCountsNowMs - 49 * kOneHourMs, 1},
                                                  {kCountsNowMs - kOneHourMs, 3},
                                                  {kCountsNowMs, 1}}));
  // Since a time within a window: the whole window is counted, as the other copy does.
  counts = CountHostSamples(store->get(), "h", kCountsNowMs - kOneHourMs / 2, kOneHourMs);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(*counts,
            (std::map<int64_t, uint64_t>{{kCountsNowMs - kOneHourMs, 3}, {kCountsNowMs, 1}}));
}

}  // namespace
}  // namespace drip::collector
