#include "common/base/duration.h"

#include <gtest/gtest.h>

namespace drip {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, SpansReadLikeAPersonWouldSayThem) {
  EXPECT_EQ(FormatSpan(59), "59 s");
  EXPECT_EQ(FormatSpan(600), "10 min");
  EXPECT_EQ(FormatSpan(7.5 * 3600), "7.5 h");
  EXPECT_EQ(FormatSpan(3 * 86400), "3.0 d");
}

TEST(DurationTest, GrowthRatesCarryTheirSignAndZeroHasNone) {
  EXPECT_EQ(FormatByteRate(4.0 * 1024 * 1024), "+4.0 MiB/h");
  EXPECT_EQ(FormatByteRate(-512), "-512 B/h");
  EXPECT_EQ(FormatByteRate(0.2), "0 B/h");
  EXPECT_EQ(FormatByteRate(-0.2), "0 B/h");
  EXPECT_EQ(FormatByteRate(1e300), "? B/h");
}

TEST(DurationTest, ParsesEveryUnit) {
  EXPECT_EQ(*ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("10s"), milliseconds(10'000));
  EXPECT_EQ(*ParseDuration("10"), milliseconds(10'000));
  EXPECT_EQ(*ParseDuration("5m"), milliseconds(300'000));
  EXPECT_EQ(*ParseDuration("1.5h"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("14d"), milliseconds(14LL * 86'400'000));
}

TEST(DurationTest, RejectsGarbageNamingTheText) {
  auto bad = ParseDuration("ten seconds");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ten seconds"), std::string::npos);
  EXPECT_FALSE(ParseDuration("5 weeks").ok());
  EXPECT_FALSE(ParseDuration("-5s").ok());
  EXPECT_FALSE(ParseDuration("").ok());
}

TEST(DurationTest, ParsesByteSizes) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("64MiB"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("1GB"), 1'000'000'000u);
  EXPECT_FALSE(ParseByteSize("12 parsecs").ok());
}

TEST(DurationTest, ParsesGrowthRatesAsFormatByteRateWritesThem) {
  EXPECT_DOUBLE_EQ(*ParseByteRate("1KiB/s"), 1024.0 * 3600);
  EXPECT_DOUBLE_EQ(*ParseByteRate("2MiB/h"), 2.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(*ParseByteRate("24GB/d"), 1e9);
  EXPECT_DOUBLE_EQ(*ParseByteRate(FormatByteRate(4.0 * (1 << 20))), 4.0 * (1 << 20));
  EXPECT_FALSE(ParseByteRate("4KiB").ok());
  EXPECT_FALSE(ParseByteRate("4KiB/fortnight").ok());
  EXPECT_FALSE(ParseByteRate("-4KiB/s").ok());
}

TEST(DurationTest, FormatsRoundTrip) {
  EXPECT_EQ(FormatDuration(milliseconds(3'600'000)), "1h");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatBytes(200u << 20), "200.0 MiB");
}

}  // namespace
}  // namespace drip
