// InstanceVersionBook: what each host's instances of each component run, as the agents
// report it (drip.v1.InstanceVersion), for the leak reports' rollout correlation
// (analyzer/rollout_correlation.h). Kept as version eras: consecutive instances of one
// version on a host are one era, so a component restarted daily on ten thousand hosts
// costs a few entries per host, not one per restart. Loaded from the store at start and
// fed by every stored batch.
//
// Thread-safe: the ingest threads add, the leak pipeline reads.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/rollout_correlation.h"
#include "collector/storage/series_store.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

class InstanceVersionBook {
 public:
  // Eras kept per (host, component): the current one and those before it.
  static constexpr size_t kErasPerComponent = 4;

  // Adds what the store keeps (after a restart of the collector).
  absl::Status Load(SeriesStore* store);

  // Versions without host or name are ignored. Versions arrive in time order per host;
  // one first seen before the host's latest era began is dropped rather than reorder it.
  void Add(const drip::v1::InstanceVersion& version);

  // Every host of `component` with a known version, sorted by host.
  std::vector<analyzer::HostVersions> Fleet(const std::string& component) const;

  // How on-call reads a version: its label ("2.4.1"), else "build " and the first 12 hex
  // digits of the build-id; "" when the instance has neither.
  static std::string VersionName(const drip::v1::InstanceVersion& version);

  size_t size() const;

 private:
  mutable std::mutex mu_;
  // component -> host -> eras, oldest first.
  std::map<std::string, std::map<std::string, std::vector<analyzer::VersionRun>>> eras_;
  size_t size_ = 0;
};

}  // namespace drip::collector
