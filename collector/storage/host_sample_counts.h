// HostSampleCounts: how many samples of one host a store keeps per fixed window of time,
// over every component and instance. Two members holding copies of a host compare these
// to find the windows where one copy lacks samples (docs/cluster.md, "Repair"): cheap to
// send (one number an hour), and equal counts mean equal windows, since the samples of
// one series are unique by timestamp in both copies.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "collector/storage/series_store.h"

namespace drip::collector {

// Window start (a multiple of `window_ms`) -> samples since `since_ms` (and within the
// retention) in it; windows without any are absent. Reads one component at a time.
// NOT_FOUND for a host the store holds no sample of.
absl::StatusOr<std::map<int64_t, uint64_t>> CountHostSamples(SeriesStore* store,
                                                             const std::string& host,
                                                             int64_t since_ms, int64_t window_ms);

}  // namespace drip::collector
