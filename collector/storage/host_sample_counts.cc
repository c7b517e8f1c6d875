#include "collector/storage/host_sample_counts.h"

#include <algorithm>
#include <vector>

#include "fmt/format.h"

namespace drip::collector {

absl::StatusOr<std::map<int64_t, uint64_t>> CountHostSamples(SeriesStore* store,
                                                             const std::string& host,
                                                             int64_t since_ms, int64_t window_ms) {
  if (window_ms <= 0) return absl::InvalidArgumentError("window_ms must be positive");
  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store->ListHosts();
  if (!hosts.ok()) return hosts.status();
  auto known = std::find_if(hosts->begin(), hosts->end(),
                            [&](const drip::v1::HostInfo& h) { return h.host() == host; });
  if (known == hosts->end()) {
    return absl::NotFoundError(fmt::format("host '{}' is not stored here", host));
  }
  absl::StatusOr<std::vector<std::string>> components = store->ListComponents(host);
  if (!components.ok()) return components.status();
  std::map<int64_t, uint64_t> counts;
  // Whole windows, so that both copies count the same span whatever `since_ms` was.
  const int64_t from = since_ms - (((since_ms % window_ms) + window_ms) % window_ms);
  const int64_t slice_ms = std::max<int64_t>(window_ms, 24LL * 3600 * 1000 / window_ms * window_ms);
  const int64_t newest = std::max(known->last_sample_ms(), from);
  for (const std::string& component : *components) {
    for (int64_t start = from; start <= newest; start += slice_ms) {
      // The last slice is open: samples a clock ahead of ours stamped are counted too.
      const int64_t until = start + slice_ms > newest ? 0 : start + slice_ms;
      absl::StatusOr<std::vector<drip::v1::Series>> read =
          store->ReadSeries(host, component, start, until, 0);
      if (!read.ok()) return read.status();
      for (const drip::v1::Series& series : *read) {
        for (const drip::v1::Sample& sample : series.samples()) {
          const int64_t t = sample.timestamp_ms();
          ++counts[t - (((t % window_ms) + window_ms) % window_ms)];
        }
      }
      if (until == 0) break;
    }
  }
  return counts;
}

}  // namespace drip::collector
