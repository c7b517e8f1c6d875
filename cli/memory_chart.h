// MemoryChart: a component's memory over time as a few lines of plain text, for
// `dripctl leaks show`: where people would rather look than read how fast it grows and how
// close it is to its limit. ASCII only ('*' the memory, '-' the limit, '|' and '+' the
// axes), so that a pipe, a pager, NO_COLOR or a dumb terminal gets nothing it cannot print.
//
//    1.9 GiB |- - - - - - - - - - - - - - - - - - - - - - - - - - limit 1.9 GiB
//            |                                          ****
//            |                             *************
//    1.2 GiB |                 ************
//            |       **********
//    512 MiB |*******
//            +--------------------------------------------------
//             2026-11-29 08:00:00                2026-11-29 10:00:00
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace drip::cli {

struct MemoryPoint {
  int64_t t_ms = 0;
  uint64_t bytes = 0;
};

struct MemoryChartOptions {
  int width = 60;            // columns of the plot; each shows the peak of the samples in it
  int height = 8;            // rows of the plot
  uint64_t limit_bytes = 0;  // 0: unknown
};

// The chart's lines, each ending in '\n'; empty when `points` (in time order) span no
// time. The scale runs from the lowest sample to the limit, so that the headroom shows,
// unless the limit is more than four times the highest sample: then to the highest, with
// the limit named on the top line ("limit 23.5 GiB, off the chart"), so that the growth
// still shows.
std::string RenderMemoryChart(const std::vector<MemoryPoint>& points,
                              const MemoryChartOptions& options);

}  // namespace drip::cli
