#include "collector/storage/host_sample_counts.h"

#include <vector>

#include "fmt/format.h"

namespace drip::collector {

absl::StatusOr<std::map<int64_t, uint64_t>> CountHostSamples(SeriesStore* store,
                                                             const std::string& host,
                                                             int64_t since_ms, int64_t window_ms) {
  if (window_ms <= 0) return absl::InvalidArgumentError("window_ms must be positive");
  absl::StatusOr<std::vector<std::string>> components = store->ListComponents(host);
  if (!components.ok()) return components.status();
  if (components->empty()) {
    return absl::NotFoundError(fmt::format("no sample of host '{}' is stored here", host));
  }
  // Whole windows, so that both copies count the same span whatever `since_ms` was.
  const int64_t from = since_ms - (((since_ms % window_ms) + window_ms) % window_ms);
  std::map<int64_t, uint64_t> counts;
  for (const std::string& component : *components) {
    // One component at a time: at most its retained samples in memory (a 10 s sampler
    // keeps 121k in 14 days, about 10 MiB decoded).
    absl::StatusOr<std::vector<drip::v1::Series>> read =
        store->ReadSeries(host, component, from, 0, 0);
    if (!read.ok()) return read.status();
    for (const drip::v1::Series& series : *read) {
      for (const drip::v1::Sample& sample : series.samples()) {
        const int64_t t = sample.timestamp_ms();
        ++counts[t - (((t % window_ms) + window_ms) % window_ms)];
      }
    }
  }
  return counts;
}

}  // namespace drip::collector
