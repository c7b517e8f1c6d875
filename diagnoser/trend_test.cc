#include "diagnoser/trend.h"

#include <gtest/gtest.h>

#include <vector>

namespace drip::diagnoser {
namespace {

TEST(TrendTest, LeastSquaresFitsALineExactly) {
  const std::vector<double> t = {0, 1, 2, 3};
  const std::vector<double> y = {5, 7, 9, 11};
  LineFit fit = FitLine(t, y, 0, t.size());
  EXPECT_DOUBLE_EQ(fit.slope, 2);
  EXPECT_DOUBLE_EQ(fit.intercept, 5);
  EXPECT_DOUBLE_EQ(fit.r2, 1);
  EXPECT_EQ(fit.points, 4u);
}

TEST(TrendTest, FlatSeriesHasNoExplainedVariance) {
  const std::vector<double> t = {0, 1, 2};
  const std::vector<double> y = {3, 3, 3};
  LineFit fit = FitLine(t, y, 0, 3);
  EXPECT_EQ(fit.slope, 0);
  EXPECT_EQ(fit.r2, 0);
  EXPECT_EQ(FitLine(t, y, 1, 2).points, 0u);
}

TEST(TrendTest, TheilSenIgnoresASingleSpike) {
  std::vector<double> t, y;
  for (int i = 0; i < 50; ++i) {
    t.push_back(i);
    y.push_back(10.0 * i + (i == 25 ? 1e9 : 0));
  }
  EXPECT_NEAR(TheilSenSlope(t, y, 64), 10, 1e-9);
  EXPECT_GT(FitLine(t, y, 0, t.size()).slope, 1000);
}

TEST(TrendTest, TheilSenOfOneStepIsZero) {
  std::vector<double> t, y;
  for (int i = 0; i < 100; ++i) {
    t.push_back(i);
    y.push_back(i < 10 ? 0 : 1000);
  }
  EXPECT_EQ(TheilSenSlope(t, y, 64), 0);
}

TEST(TrendTest, TheilSenSubsamplesLongSeries) {
  std::vector<double> t, y;
  for (int i = 0; i < 100000; ++i) {
    t.push_back(i);
    y.push_back(3.0 * i);
  }
  EXPECT_NEAR(TheilSenSlope(t, y, 64), 3, 1e-9);
  EXPECT_EQ(TheilSenSlope({1}, {1}, 64), 0);
}

}  // namespace
}  // namespace drip::diagnoser
