// Trend: the two line fits the diagnoser reads a live-bytes series with. Theil–Sen (the
// median of the slopes between every pair of points) is the growth rate: a sampled
// series is a step function, and one large step or spike moves a median of slopes far
// less than a least-squares line. Least squares gives R² (how well a straight line — a
// leak — explains the series) and the slopes over parts of the window.
#pragma once

#include <cstddef>
#include <vector>

namespace drip::diagnoser {

// Series are fitted in bytes per hour over times in milliseconds.
inline constexpr double kMsPerHour = 3.6e6;

struct LineFit {
  double slope = 0;  // units of y per unit of t
  double intercept = 0;
  double r2 = 0;  // 0 when y is constant (a flat line explains nothing)
  size_t points = 0;
};

// Least squares over the points with begin <= index < end. Fewer than two points (or all
// at one t) give a zero fit.
LineFit FitLine(const std::vector<double>& t, const std::vector<double>& y, size_t begin,
                size_t end);

// Theil–Sen slope over at most `max_points` evenly spaced points of the series (the first
// and last always among them), so that the cost stays bounded. 0 for fewer than 2 points.
double TheilSenSlope(const std::vector<double>& t, const std::vector<double>& y, int max_points);

}  // namespace drip::diagnoser
