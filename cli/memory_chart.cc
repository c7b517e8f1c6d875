#include "cli/memory_chart.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "cli/table_printer.h"
#include "common/base/duration.h"
#include "fmt/format.h"

namespace drip::cli {

std::string RenderMemoryChart(const std::vector<MemoryPoint>& points,
                              const MemoryChartOptions& options) {
  const int width = std::max(options.width, 2);
  const int height = std::max(options.height, 2);
  if (points.size() < 2 || points.back().t_ms <= points.front().t_ms) return "";
  const int64_t t0 = points.front().t_ms;
  const double span = static_cast<double>(points.back().t_ms - t0);
  // Each column's peak: a spike between read-outs is what runs into a limit.
  std::vector<std::optional<uint64_t>> columns(static_cast<size_t>(width));
  uint64_t lo = points.front().bytes;
  uint64_t hi = points.front().bytes;
  for (const MemoryPoint& p : points) {
    const auto col = static_cast<size_t>(std::clamp<int64_t>(
        std::llround(static_cast<double>(p.t_ms - t0) / span * (width - 1)), 0, width - 1));
    columns[col] = std::max(columns[col].value_or(0), p.bytes);
    lo = std::min(lo, p.bytes);
    hi = std::max(hi, p.bytes);
  }
  // A limit within four times the peak is the top of the scale: the headroom shows. One
  // farther off would flatten the growth into the bottom row; it is named instead.
  const bool limit_drawn = options.limit_bytes > 0 && options.limit_bytes / 4 <= hi;
  if (limit_drawn) hi = std::max(hi, options.limit_bytes);
  if (hi == lo) hi = lo + 1;
  auto row_of = [&](uint64_t bytes) {  // 0 is the top row
    const double share = static_cast<double>(bytes - lo) / static_cast<double>(hi - lo);
    return height - 1 - static_cast<int>(std::llround(share * (height - 1)));
  };
  std::vector<std::string> grid(static_cast<size_t>(height), std::string(width, ' '));
  if (limit_drawn) {
    std::string& row = grid[static_cast<size_t>(row_of(options.limit_bytes))];
    for (int col = 0; col < width; col += 2) row[static_cast<size_t>(col)] = '-';
  }
  for (int col = 0; col < width; ++col) {
    if (columns[static_cast<size_t>(col)]) {
      grid[static_cast<size_t>(row_of(*columns[static_cast<size_t>(col)]))]
          [static_cast<size_t>(col)] = '*';
    }
  }
  std::string out;
  for (int row = 0; row < height; ++row) {
    std::string label;
    if (row == 0) label = FormatBytes(hi);
    if (row == height - 1) label = FormatBytes(lo);
    if (row == height / 2 && height > 2) {
      label =
          FormatBytes(lo + static_cast<uint64_t>(std::llround(static_cast<double>(hi - lo) *
                                                              (height - 1 - row) / (height - 1))));
    }
    std::string line = fmt::format("{:>10} |{}", label, grid[static_cast<size_t>(row)]);
    if (limit_drawn && row == row_of(options.limit_bytes)) {
      line += " limit " + FormatBytes(options.limit_bytes);
    } else if (options.limit_bytes > 0 && !limit_drawn && row == 0) {
      line += fmt::format(" (limit {}, off the chart)", FormatBytes(options.limit_bytes));
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  out += fmt::format("{:>10} +{}\n", "", std::string(width, '-'));
  const std::string from = FormatTimestamp(t0);
  const std::string to = FormatTimestamp(points.back().t_ms);
  const int gap = std::max(1, width - static_cast<int>(from.size() + to.size()));
  out += fmt::format("{:>10}  {}{}{}\n", "", from, std::string(gap, ' '), to);
  return out;
}

}  // namespace drip::cli
