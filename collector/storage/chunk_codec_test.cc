#include "collector/storage/chunk_codec.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "collector/storage/varint.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

using google::protobuf::util::MessageDifferencer;

constexpr int64_t kWindow = 1'700'000'400'000;  // a window start

std::vector<drip::v1::Sample> EveryKind() {
  std::vector<drip::v1::Sample> samples(9);
  samples[0].set_timestamp_ms(kWindow);
  auto* p = samples[0].mutable_process();
  p->set_anon_rss_bytes(52'428'800);
  p->set_file_rss_bytes(20'971'520);
  p->set_shmem_rss_bytes(1);
  p->set_swap_bytes(UINT64_MAX);  // the widest varint
  samples[1].set_timestamp_ms(kWindow + 3'599'999);
  auto* c = samples[1].mutable_cgroup();
  c->set_current_bytes(1);
  c->set_anon_bytes(2);
  c->set_kernel_bytes(3);
  c->set_slab_unreclaimable_bytes(4);
  c->set_sock_bytes(5);
  c->set_shmem_bytes(6);
  c->set_swap_bytes(7);
  samples[2].set_timestamp_ms(kWindow + 10);
  samples[2].mutable_slab()->set_active_objects(123'456);
  samples[2].mutable_slab()->set_object_size_bytes(512);
  samples[3].set_timestamp_ms(kWindow + 20);  // no memory set
  samples[4].set_timestamp_ms(kWindow + 30);
  samples[4].mutable_process();  // all zero
  samples[5].set_timestamp_ms(kWindow + 40);
  samples[5].mutable_process_exit()->set_peak_rss_bytes(157'286'400);
  samples[5].mutable_process_exit()->set_wait_status(9);
  // With a memory limit and OOM kills (version 1 points), among version 0 ones.
  samples[6].set_timestamp_ms(kWindow + 50);
  samples[6].mutable_process()->set_anon_rss_bytes(400'000'000);
  auto* limit = samples[6].mutable_limit();
  limit->set_max_bytes(536'870'912);
  limit->set_high_bytes(402'653'184);
  limit->set_swap_bytes(UINT64_MAX);
  limit->set_oom_kills(3);
  samples[7].set_timestamp_ms(kWindow + 60);
  samples[7].mutable_process_exit()->set_peak_rss_bytes(536'870'912);
  samples[7].mutable_process_exit()->set_wait_status(9);
  samples[7].mutable_process_exit()->set_oom_killed(true);
  samples[8].set_timestamp_ms(kWindow + 70);
  samples[8].mutable_cgroup()->set_anon_bytes(1);
  samples[8].mutable_limit()->set_oom_kills(1);  // killed, but no limit on its path
  return samples;
}

std::string Encode(const std::vector<drip::v1::Sample>& samples) {
  std::string chunk;
  for (const auto& s : samples) AppendPoint(s, kWindow, &chunk);
  return chunk;
}

TEST(ChunkCodecTest, RoundTripsEveryKindExactly) {
  const std::vector<drip::v1::Sample> samples = EveryKind();
  std::vector<drip::v1::Sample> decoded;
  ASSERT_TRUE(DecodeChunk(Encode(samples), kWindow, &decoded).ok());
  ASSERT_EQ(decoded.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(decoded[i], samples[i]))
        << i << ": " << decoded[i].DebugString() << " vs " << samples[i].DebugString();
  }
}

TEST(ChunkCodecTest, DropsNamesSinceTheKeyCarriesThem) {
  drip::v1::Sample s;
  s.set_host("h");
  s.set_component("proc:x");
  s.set_instance("1@2");
  s.set_timestamp_ms(kWindow + 5);
  s.mutable_process()->set_anon_rss_bytes(100);
  std::string chunk;
  AppendPoint(s, kWindow, &chunk);
  EXPECT_LE(chunk.size(), 7u);  // offset, tag, four small figures
  std::vector<drip::v1::Sample> decoded;
  ASSERT_TRUE(DecodeChunk(chunk, kWindow, &decoded).ok());
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_EQ(decoded[0].component(), "");
  EXPECT_EQ(decoded[0].timestamp_ms(), kWindow + 5);
}

TEST(ChunkCodecTest, ALimitKeepsItsFiguresButNotItsCgroupsName) {
  drip::v1::Sample s;
  s.set_timestamp_ms(kWindow + 5);
  s.mutable_process()->set_anon_rss_bytes(100);
  s.mutable_limit()->set_max_bytes(1 << 20);
  s.mutable_limit()->set_cgroup("/system.slice/x.service");
  std::string chunk;
  AppendPoint(s, kWindow, &chunk);
  EXPECT_LE(chunk.size(), 7u + 1 + 6);  // the flags, a 1 MiB limit, three zeros
  std::vector<drip::v1::Sample> decoded;
  ASSERT_TRUE(DecodeChunk(chunk, kWindow, &decoded).ok());
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_EQ(decoded[0].limit().max_bytes(), 1u << 20);
  EXPECT_EQ(decoded[0].limit().cgroup(), "");

  // An empty limit is no limit: the point stays version 0, as small as before.
  drip::v1::Sample plain;
  plain.set_timestamp_ms(kWindow + 5);
  plain.mutable_process()->set_anon_rss_bytes(100);
  plain.mutable_limit();
  chunk.clear();
  AppendPoint(plain, kWindow, &chunk);
  EXPECT_EQ(static_cast<uint8_t>(chunk[1]) >> 4, 0);
  decoded.clear();
  ASSERT_TRUE(DecodeChunk(chunk, kWindow, &decoded).ok());
  EXPECT_FALSE(decoded[0].has_limit());
}

TEST(ChunkCodecTest, PointLengthFindsEachPointsEnd) {
  std::string chunk;
  std::vector<size_t> lengths;
  for (const auto& s : EveryKind()) {
    const size_t before = chunk.size();
    AppendPoint(s, kWindow, &chunk);
    lengths.push_back(chunk.size() - before);
  }
  std::string_view rest = chunk;
  for (size_t length : lengths) {
    ASSERT_EQ(PointLength(rest), length);
    // One byte short is never a whole point.
    EXPECT_EQ(PointLength(rest.substr(0, length - 1)), 0u);
    rest.remove_prefix(length);
  }
  EXPECT_EQ(PointLength(""), 0u);
}

TEST(ChunkCodecTest, EmptyChunkHasNoPoints) {
  std::vector<drip::v1::Sample> decoded;
  EXPECT_TRUE(DecodeChunk("", kWindow, &decoded).ok());
  EXPECT_TRUE(decoded.empty());
}

TEST(ChunkCodecTest, TruncationAnywhereIsAnErrorOrAWholePointBoundary) {
  const std::vector<drip::v1::Sample> samples = EveryKind();
  std::vector<size_t> boundaries = {0};
  std::string chunk;
  for (const auto& s : samples) {
    AppendPoint(s, kWindow, &chunk);
    boundaries.push_back(chunk.size());
  }
  for (size_t cut = 0; cut < chunk.size(); ++cut) {
    std::vector<drip::v1::Sample> decoded;
    absl::Status status = DecodeChunk(std::string_view(chunk).substr(0, cut), kWindow, &decoded);
    const bool at_boundary =
        std::find(boundaries.begin(), boundaries.end(), cut) != boundaries.end();
    EXPECT_EQ(status.ok(), at_boundary) << "cut at " << cut;
    if (!status.ok()) {
      EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
      EXPECT_NE(std::string(status.message()).find("corrupt chunk"), std::string::npos);
    }
    // The points before the damage are kept.
    size_t whole = 0;
    while (whole + 1 < boundaries.size() && boundaries[whole + 1] <= cut) ++whole;
    EXPECT_EQ(decoded.size(), whole) << "cut at " << cut;
  }
}

TEST(ChunkCodecTest, UnknownKindOrFormatIsAnError) {
  std::string chunk;
  PutVarint64(5, &chunk);
  chunk.push_back('\x09');  // kind 9 does not exist
  std::vector<drip::v1::Sample> decoded;
  absl::Status status = DecodeChunk(chunk, kWindow, &decoded);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(std::string(status.message()).find("unknown kind"), std::string::npos);

  chunk.back() = '\x21';  // format version 2, not written by this code
  status = DecodeChunk(chunk, kWindow, &decoded);
  EXPECT_NE(std::string(status.message()).find("unknown format"), std::string::npos);
}

TEST(ChunkCodecTest, OverlongVarintIsAnError) {
  std::string chunk(11, '\xff');
  std::vector<drip::v1::Sample> decoded;
  EXPECT_EQ(DecodeChunk(chunk, kWindow, &decoded).code(), absl::StatusCode::kDataLoss);
  // Ten bytes whose last carries more than bit 63.
  chunk = std::string(9, '\x80') + '\x02';
  EXPECT_EQ(DecodeChunk(chunk, kWindow, &decoded).code(), absl::StatusCode::kDataLoss);
}

TEST(ChunkCodecTest, TimestampOverflowIsAnError) {
  std::string chunk;
  PutVarint64(UINT64_MAX, &chunk);
  chunk.push_back('\0');
  std::vector<drip::v1::Sample> decoded;
  EXPECT_EQ(DecodeChunk(chunk, kWindow, &decoded).code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(decoded.empty());
}

// Random bytes and random corruptions of a valid chunk must decode or fail cleanly,
// never read out of bounds (run under ASan in CI). Deterministic seed: cannot flake.
TEST(ChunkCodecTest, RandomDamageNeverCrashes) {
  std::mt19937_64 rng(20240501);
  const std::string valid = Encode(EveryKind());
  for (int round = 0; round < 20'000; ++round) {
    std::string chunk;
    if (round % 2 == 0) {
      chunk.resize(rng() % 64);
      for (char& c : chunk) c = static_cast<char>(rng());
    } else {
      chunk = valid;
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
        chunk[rng() % chunk.size()] ^= static_cast<char>(1 + rng() % 255);
      }
    }
    std::vector<drip::v1::Sample> decoded;
    absl::Status status = DecodeChunk(chunk, kWindow, &decoded);
    if (!status.ok()) {
      ASSERT_EQ(status.code(), absl::StatusCode::kDataLoss);
    }
  }
}

}  // namespace
}  // namespace drip::collector
