#include "collector/storage/series_id_cache.h"

namespace drip::collector {

const std::string& SeriesIdCache::Key(std::string_view component, std::string_view instance) {
  // Length-prefixed so that no two (component, instance) pairs share a key.
  scratch_.clear();
  const uint32_t component_size = static_cast<uint32_t>(component.size());
  scratch_.append(reinterpret_cast<const char*>(&component_size), sizeof(component_size));
  scratch_.append(component);
  scratch_.append(instance);
  return scratch_;
}

std::optional<uint64_t> SeriesIdCache::Find(std::string_view component, std::string_view instance) {
  auto it = ids_.find(Key(component, instance));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

void SeriesIdCache::Insert(std::string_view component, std::string_view instance,
                           uint64_t series_id) {
  ids_.insert_or_assign(Key(component, instance), series_id);
}

void SeriesIdCache::Erase(std::string_view component, std::string_view instance) {
  ids_.erase(Key(component, instance));
}

void SeriesIdCache::TrimIfFull() {
  if (ids_.size() >= max_entries_) ids_.clear();
}

}  // namespace drip::collector
