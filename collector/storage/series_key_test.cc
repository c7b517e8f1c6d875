#include "collector/storage/series_key.h"

#include <algorithm>
#include <string>
#include <vector>

#include "collector/storage/meta_record.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

TEST(SeriesKeyTest, ChunkKeyRoundTrips) {
  for (int64_t window :
       {INT64_MIN, int64_t{-3'600'000}, int64_t{0}, int64_t{1'700'000'000'000}, INT64_MAX}) {
    for (uint64_t id : {uint64_t{1}, uint64_t{0xdeadbeef}, UINT64_MAX}) {
      std::string key = ChunkKey(id, window);
      ASSERT_EQ(key.size(), kChunkKeySize);
      uint64_t parsed_id = 0;
      int64_t parsed_window = 0;
      ASSERT_TRUE(ParseChunkKey(key, &parsed_id, &parsed_window));
      EXPECT_EQ(parsed_id, id);
      EXPECT_EQ(parsed_window, window);
    }
  }
  uint64_t id = 0;
  int64_t window = 0;
  EXPECT_FALSE(ParseChunkKey("too short", &id, &window));
}

TEST(SeriesKeyTest, ChunkKeysSortBySeriesThenTime) {
  struct Entry {
    uint64_t id;
    int64_t window;
  };
  // Deliberately unordered, with negative windows and ids whose bytes differ late.
  std::vector<Entry> entries = {{2, 0},           {1, 7'200'000}, {1, -3'600'000},
                                {256, -1},        {1, 0},         {2, -7'200'000},
                                {255, INT64_MAX}, {1, INT64_MIN}, {256, INT64_MIN}};
  std::vector<std::string> keys;
  for (const Entry& e : entries) keys.push_back(ChunkKey(e.id, e.window));
  std::sort(keys.begin(), keys.end());
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.id != b.id ? a.id < b.id : a.window < b.window;
  });
  for (size_t i = 0; i < keys.size(); ++i) {
    uint64_t id = 0;
    int64_t window = 0;
    ASSERT_TRUE(ParseChunkKey(keys[i], &id, &window));
    EXPECT_EQ(id, entries[i].id) << i;
    EXPECT_EQ(window, entries[i].window) << i;
  }
}

TEST(SeriesKeyTest, WindowStartRoundsDownAlsoForNegativeTimes) {
  EXPECT_EQ(WindowStart(0, 1000), 0);
  EXPECT_EQ(WindowStart(999, 1000), 0);
  EXPECT_EQ(WindowStart(1000, 1000), 1000);
  EXPECT_EQ(WindowStart(-1, 1000), -1000);
  EXPECT_EQ(WindowStart(-1000, 1000), -1000);
  EXPECT_EQ(WindowStart(-1001, 1000), -2000);
  EXPECT_EQ(WindowStart(INT64_MIN, 1), INT64_MIN);
}

TEST(SeriesKeyTest, SeriesIndexPrefixMatchesExactlyOneComponent) {
  const std::string prefix = SeriesIndexPrefix("host-a", "proc:redis");
  const std::string key = SeriesIndexKey("host-a", "proc:redis", "42@100");
  ASSERT_EQ(key.rfind(prefix, 0), 0u);
  std::string instance;
  ASSERT_TRUE(ParseSeriesIndexInstance(key, prefix, &instance));
  EXPECT_EQ(instance, "42@100");

  // A component that extends this one, or a host that does, is not under the prefix.
  EXPECT_NE(SeriesIndexKey("host-a", "proc:redis-server", "1").rfind(prefix, 0), 0u);
  EXPECT_NE(SeriesIndexKey("host-ab", "proc:redis", "1").rfind(prefix, 0), 0u);
  // The empty instance is a valid instance.
  ASSERT_TRUE(
      ParseSeriesIndexInstance(SeriesIndexKey("host-a", "proc:redis", ""), prefix, &instance));
  EXPECT_EQ(instance, "");
}

TEST(SeriesKeyTest, NamesWithNulBytesNeitherCollideNorEscapeTheirPrefix) {
  using namespace std::string_literals;
  // Naive \0 separators would make these two the same key.
  EXPECT_NE(SeriesIndexKey("a\0b"s, "c", "i"), SeriesIndexKey("a", "b\0c"s, "i"));
  const std::string prefix = SeriesIndexPrefix("a\0b"s, "c");
  std::string instance;
  ASSERT_TRUE(ParseSeriesIndexInstance(SeriesIndexKey("a\0b"s, "c", "x\0y"s), prefix, &instance));
  EXPECT_EQ(instance, "x\0y"s);
  EXPECT_NE(SeriesIndexKey("a", "b\0c"s, "i").rfind(prefix, 0), 0u);
}

TEST(SeriesKeyTest, SeriesIndexKeysKeepNameOrder) {
  using namespace std::string_literals;
  // In std::string order, which the encoded keys must keep.
  const std::vector<std::string> instances = {""s, "a"s, "a\0"s, "a\x01"s, "ab"s, "b"s};
  ASSERT_TRUE(std::is_sorted(instances.begin(), instances.end()));
  std::vector<std::string> keys;
  for (const std::string& i : instances) keys.push_back(SeriesIndexKey("h", "c", i));
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

TEST(SeriesKeyTest, GapKeysSortBySequence) {
  const std::string prefix = GapRecordPrefix("h");
  std::string low = GapRecordKey("h", 9);
  std::string high = GapRecordKey("h", 256);
  EXPECT_LT(low, high);
  uint64_t from = 0;
  ASSERT_TRUE(ParseGapRecordKey(high, prefix, &from));
  EXPECT_EQ(from, 256u);
}

TEST(MetaRecordTest, RoundTripsAndRejectsDamage) {
  using namespace std::string_literals;
  std::string names = EncodeSeriesNames("h\0x"s, "proc:a", "");
  SeriesNames decoded;
  ASSERT_TRUE(DecodeSeriesNames(names, &decoded));
  EXPECT_EQ(decoded.host, "h\0x"s);
  EXPECT_EQ(decoded.component, "proc:a");
  EXPECT_EQ(decoded.instance, "");
  EXPECT_FALSE(DecodeSeriesNames(names.substr(0, names.size() - 1), &decoded));
  EXPECT_FALSE(DecodeSeriesNames(names + "x", &decoded));

  GapRecord gap{5, 9, 1'700'000'000'000};
  GapRecord read;
  std::string value = EncodeGapValue(gap);
  ASSERT_TRUE(DecodeGapValue(value, &read));
  EXPECT_EQ(read.to_sequence, 9u);
  EXPECT_EQ(read.recorded_ms, gap.recorded_ms);
  EXPECT_FALSE(DecodeGapValue(value.substr(0, 1), &read));

  uint64_t n = 0;
  ASSERT_TRUE(DecodeUint64(EncodeUint64(0x0102030405060708), &n));
  EXPECT_EQ(n, 0x0102030405060708u);
  EXPECT_FALSE(DecodeUint64("1234567", &n));
}

}  // namespace
}  // namespace drip::collector
