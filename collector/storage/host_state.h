// HostState: what the store keeps in memory for one host, so that the write path needs
// no reads: the host record (high-water mark and counters, as last written to meta) and
// the host's series ids. The mutex serialises everything that reads and rewrites this
// host's record or index entries, which is what applies one host's batches in order
// while other hosts write concurrently.
#pragma once

#include <cstddef>
#include <mutex>

#include "collector/storage/series_id_cache.h"
#include "drip/v1/query.pb.h"

namespace drip::collector {

// A host runs a few hundred to a few thousand processes; beyond this many cached series
// the host is restarting processes faster than the cache is useful.
inline constexpr size_t kMaxCachedSeriesPerHost = 16384;

struct HostState {
  std::mutex mu;
  // Guarded by mu.
  bool loaded = false;  // `record` reflects meta (read lazily on first use)
  bool exists = false;  // meta holds a record for this host
  drip::v1::HostInfo record;
  SeriesIdCache series{kMaxCachedSeriesPerHost};
};

}  // namespace drip::collector
