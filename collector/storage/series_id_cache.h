// SeriesIdCache: one host's (component, instance) -> series id map, so that the write
// path finds ids without reading the index. Bounded: a host whose processes restart
// all the time would otherwise grow it forever (each restart is a new instance). When
// full it is simply emptied; the ids are still in the index and come back on use.
//
// Not thread-safe: it lives in a HostState and is used under that host's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace drip::collector {

class SeriesIdCache {
 public:
  explicit SeriesIdCache(size_t max_entries) : max_entries_(max_entries) {}

  std::optional<uint64_t> Find(std::string_view component, std::string_view instance);
  void Insert(std::string_view component, std::string_view instance, uint64_t series_id);
  void Erase(std::string_view component, std::string_view instance);

  // Empties the cache if it is over its bound. Called between batches only, so that
  // a batch's new ids stay cached until it is written (see AppendBatch).
  void TrimIfFull();

  size_t size() const { return ids_.size(); }

 private:
  // Builds the map key into scratch_ (reused, so lookups do not allocate).
  const std::string& Key(std::string_view component, std::string_view instance);

  const size_t max_entries_;
  // Open addressing keeps the probe to one cache line plus the key compare; the
  // node-based std::unordered_map cost ~9% of the collector's ingest CPU here.
  absl::flat_hash_map<std::string, uint64_t> ids_;
  std::string scratch_;
};

}  // namespace drip::collector
