// Live series arithmetic: a stack's live bytes are read out once per interval, so between
// read-outs the value holds (a step function), and before a stack's first read-out it had
// nothing live (the agent reports a stack from its first sampled allocation on). These
// helpers add series and read them on a common time grid under that reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/base/heap_snapshot.h"

namespace drip::diagnoser {

// The pointwise sum of series on the union of their times. Sums beyond the int64 range
// are held at its maximum (they are estimates far past any real heap). Costs
// O(P log P) for P points in all, however many series there are.
std::vector<LivePoint> SumSeries(const std::vector<const std::vector<LivePoint>*>& series);
std::vector<LivePoint> SumSeries(const std::vector<LivePoint>& a, const std::vector<LivePoint>& b);

// The sorted union of the times of every stack's series; when that is longer than
// `max_points`, `max_points` evenly spaced times over the same span instead.
std::vector<int64_t> CommonTimes(const std::vector<SnapshotStack>& stacks, size_t max_points);

// Live bytes of `series` at each of `times` (sorted): the latest read-out at or before
// the time, 0 before the first.
std::vector<double> LiveBytesAt(const std::vector<LivePoint>& series,
                                const std::vector<int64_t>& times);

}  // namespace drip::diagnoser
