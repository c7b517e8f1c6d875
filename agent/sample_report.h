// SampleReport: what `drip-agent sample --once` prints — one sampling pass, most
// unreclaimable memory first, as a top-like table or as JSON for scripts:
//   {"sampler": "proc", "samples": [{"component": ..., "instance": ..., "timestamp_ms": ...,
//     "anon_rss_bytes": ..., "file_rss_bytes": ..., "shmem_rss_bytes": ...,
//     "swap_bytes": ..., "unreclaimable_bytes": ...}]}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "drip/v1/sample.pb.h"

namespace drip::agent {

// Sorts by unreclaimable bytes (common/sample_figures.h), largest first; ties by
// component then instance so that the output is stable.
void SortByUnreclaimable(std::vector<drip::v1::Sample>* samples);

// A table whose first line names the sampler and how many entities it saw.
std::string RenderSampleTable(std::string_view sampler,
                              const std::vector<drip::v1::Sample>& samples);

// One JSON object (with a trailing newline), in the order given.
std::string RenderSampleJson(std::string_view sampler,
                             const std::vector<drip::v1::Sample>& samples);

}  // namespace drip::agent
