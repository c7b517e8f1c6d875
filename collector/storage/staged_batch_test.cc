#include "collector/storage/staged_batch.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "collector/storage/chunk_codec.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

drip::v1::Sample Process(int64_t ts, uint64_t anon) {
  drip::v1::Sample s;
  s.set_timestamp_ms(ts);
  s.mutable_process()->set_anon_rss_bytes(anon);
  s.mutable_process()->set_swap_bytes(anon / 3);
  return s;
}

struct Record {
  uint64_t series_id;
  int64_t window_start_ms;
  drip::v1::Sample sample;
};

std::vector<Record> Records() {
  drip::v1::Sample slab;
  slab.set_timestamp_ms(-3'600'000 + 17);
  slab.mutable_slab()->set_active_objects(9);
  slab.mutable_slab()->set_object_size_bytes(64);
  return {{1, 1'700'000'000'000 - 7'000, Process(1'700'000'000'000 - 6'000, 1 << 30)},
          {UINT64_MAX, 0, Process(0, 0)},
          {42, -3'600'000, slab},
          {7, INT64_MIN, Process(INT64_MIN + 5, UINT64_MAX)}};
}

std::string Encode(const std::vector<Record>& records, std::vector<size_t>* boundaries = nullptr) {
  std::string staged;
  StagedBatchWriter writer(&staged);
  if (boundaries != nullptr) boundaries->push_back(staged.size());
  for (const Record& r : records) {
    writer.Append(r.series_id, r.window_start_ms, r.sample);
    if (boundaries != nullptr) boundaries->push_back(staged.size());
  }
  return staged;
}

TEST(StagedBatchTest, RoundTripsSeriesWindowAndPoint) {
  const std::vector<Record> records = Records();
  const std::string staged = Encode(records);
  StagedBatchReader reader(staged);
  StagedPoint point;
  for (const Record& r : records) {
    ASSERT_TRUE(reader.Next(&point)) << reader.status();
    EXPECT_EQ(point.series_id, r.series_id);
    EXPECT_EQ(point.window_start_ms, r.window_start_ms);
    // The point is a chunk point: it decodes on its own with the window it came with.
    std::vector<drip::v1::Sample> decoded;
    ASSERT_TRUE(DecodeChunk(point.point, point.window_start_ms, &decoded).ok());
    ASSERT_EQ(decoded.size(), 1u);
    EXPECT_EQ(decoded[0].SerializeAsString(), r.sample.SerializeAsString());
  }
  EXPECT_FALSE(reader.Next(&point));
  EXPECT_TRUE(reader.status().ok());
}

TEST(StagedBatchTest, SamplesSharingAWindowCostOneByteForIt) {
  constexpr int64_t kWindow = 1'700'000'000'000;
  std::string one;
  StagedBatchWriter(&one).Append(3, kWindow, Process(kWindow, 1));
  std::string two;
  StagedBatchWriter writer(&two);
  writer.Append(3, kWindow, Process(kWindow, 1));
  writer.Append(3, kWindow, Process(kWindow, 1));
  // The first record spells the window out (6 bytes of varint), the second says "same".
  EXPECT_EQ(two.size() - one.size(), one.size() - 1 - 6 + 1);
}

TEST(StagedBatchTest, TruncationIsAnErrorUnlessAtARecordBoundary) {
  std::vector<size_t> boundaries;
  const std::string staged = Encode(Records(), &boundaries);
  for (size_t cut = 0; cut < staged.size(); ++cut) {
    StagedBatchReader reader(std::string_view(staged).substr(0, cut));
    StagedPoint point;
    size_t read = 0;
    while (reader.Next(&point)) ++read;
    const bool at_boundary =
        std::find(boundaries.begin(), boundaries.end(), cut) != boundaries.end();
    EXPECT_EQ(reader.status().ok(), at_boundary) << "cut at " << cut;
    if (!reader.status().ok()) {
      EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
    }
    size_t whole = 0;
    while (whole + 1 < boundaries.size() && boundaries[whole + 1] <= cut) ++whole;
    EXPECT_EQ(read, whole) << "cut at " << cut;
  }
}

TEST(StagedBatchTest, UnknownFormatIsAnError) {
  std::string staged = Encode(Records());
  staged[0] = 2;
  StagedBatchReader reader(staged);
  StagedPoint point;
  EXPECT_FALSE(reader.Next(&point));
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
}

// Deterministic seed: cannot flake. Run under ASan in CI for out-of-bounds reads.
TEST(StagedBatchTest, RandomDamageNeverCrashes) {
  std::mt19937_64 rng(7);
  const std::string valid = Encode(Records());
  for (int round = 0; round < 20'000; ++round) {
    std::string staged = valid;
    for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips) {
      staged[rng() % staged.size()] ^= static_cast<char>(1 + rng() % 255);
    }
    staged.resize(rng() % (staged.size() + 1));
    StagedBatchReader reader(staged);
    StagedPoint point;
    while (reader.Next(&point)) {
      ASSERT_GT(point.point.size(), 0u);
      ASSERT_GE(point.point.data(), staged.data());
      ASSERT_LE(point.point.data() + point.point.size(), staged.data() + staged.size());
    }
  }
}

}  // namespace
}  // namespace drip::collector
