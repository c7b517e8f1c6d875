#include "diagnoser/trend.h"

#include <algorithm>

namespace drip::diagnoser {

LineFit FitLine(const std::vector<double>& t, const std::vector<double>& y, size_t begin,
                size_t end) {
  LineFit fit;
  end = std::min(end, std::min(t.size(), y.size()));
  if (begin >= end || end - begin < 2) return fit;
  const double n = static_cast<double>(end - begin);
  double mean_t = 0, mean_y = 0;
  for (size_t i = begin; i < end; ++i) {
    mean_t += t[i];
    mean_y += y[i];
  }
  mean_t /= n;
  mean_y /= n;
  double stt = 0, sty = 0, syy = 0;
  for (size_t i = begin; i < end; ++i) {
    const double dt = t[i] - mean_t, dy = y[i] - mean_y;
    stt += dt * dt;
    sty += dt * dy;
    syy += dy * dy;
  }
  fit.points = end - begin;
  if (stt <= 0) return fit;
  fit.slope = sty / stt;
  fit.intercept = mean_y - fit.slope * mean_t;
  if (syy > 0) fit.r2 = std::clamp(sty * sty / (stt * syy), 0.0, 1.0);
  return fit;
}

double TheilSenSlope(const std::vector<double>& t, const std::vector<double>& y, int max_points) {
  const size_t n = std::min(t.size(), y.size());
  if (n < 2) return 0;
  const size_t m = std::clamp<size_t>(static_cast<size_t>(std::max(max_points, 2)), 2, n);
  std::vector<size_t> picks(m);
  for (size_t k = 0; k < m; ++k) picks[k] = k * (n - 1) / (m - 1);
  std::vector<double> slopes;
  slopes.reserve(m * (m - 1) / 2);
  for (size_t a = 0; a < m; ++a) {
    for (size_t b = a + 1; b < m; ++b) {
      const double dt = t[picks[b]] - t[picks[a]];
      if (dt > 0) slopes.push_back((y[picks[b]] - y[picks[a]]) / dt);
    }
  }
  if (slopes.empty()) return 0;
  const size_t mid = slopes.size() / 2;
  std::nth_element(slopes.begin(), slopes.begin() + static_cast<std::ptrdiff_t>(mid), slopes.end());
  if (slopes.size() % 2 == 1) return slopes[mid];
  const double upper = slopes[mid];
  const double lower =
      *std::max_element(slopes.begin(), slopes.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

}  // namespace drip::diagnoser
