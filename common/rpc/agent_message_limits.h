// The largest strings and maps an agent's messages may carry: the collector refuses more
// (drip_ingest_rejected_total{reason="field_too_long"}), and the agent checks its own
// configuration against the same numbers, so that a label too long is an error at start
// rather than a refusal loop.
//
// Why bound them at all: a host's labels and status are kept and listed to every dripctl
// user, and each component is a detector series and index entries replayed at every
// collector start; one agent must not be able to make those megabytes. An agent's own
// strings are far shorter: a DNS name is at most 253 bytes, a component a unit or
// executable name (255) with its prefix, an instance "pid@start" or an invocation id.
#pragma once

#include <cstddef>

namespace drip::agent_limits {

inline constexpr size_t kMaxHostBytes = 253;
inline constexpr size_t kMaxComponentBytes = 512;
inline constexpr size_t kMaxInstanceBytes = 256;
inline constexpr size_t kMaxHelloLabels = 64;
// The agent adds kernel, os and arch; the operator's own labels get the rest.
inline constexpr size_t kMaxOperatorLabels = kMaxHelloLabels - 3;
inline constexpr size_t kMaxLabelKeyBytes = 128;
inline constexpr size_t kMaxLabelValueBytes = 1024;
// agent_version, and the status's sampler and fallback reason.
inline constexpr size_t kMaxStatusTextBytes = 1024;

}  // namespace drip::agent_limits
