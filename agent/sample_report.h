// SampleReport: what `drip-agent sample --once` prints — one sampling pass, most
// unreclaimable memory first, as a top-like table or as JSON for scripts:
//   {"sampler": "bpf", "fallback_reason": "", "samples": [{"component": ...,
//     "instance": ..., "timestamp_ms": ..., "kind": "process", "unreclaimable_bytes": ...,
//     and the figures of its kind: "anon_rss_bytes": ..., ...}]}
// Kinds: process, cgroup (systemd units), slab (kernel caches), exit (BPF sampler).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "drip/v1/sample.pb.h"

namespace drip::agent {

// Sorts by unreclaimable bytes (common/rpc/sample_figures.h), largest first; ties by
// component then instance so that the output is stable.
void SortByUnreclaimable(std::vector<drip::v1::Sample>* samples);

// A table whose first line names the sampler (and why it fell back from BPF, when
// `fallback_reason` is set) and how many entities it saw.
std::string RenderSampleTable(std::string_view sampler, std::string_view fallback_reason,
                              const std::vector<drip::v1::Sample>& samples);

// One JSON object (with a trailing newline), in the order given.
std::string RenderSampleJson(std::string_view sampler, std::string_view fallback_reason,
                             const std::vector<drip::v1::Sample>& samples);

}  // namespace drip::agent
