// Trailing metadata with which a collector ends an agent's stream and tells the agent
// what to do next (proto/drip/v1/agent.proto describes the stream; docs/collector.md,
// "Wire behaviour"). Both ends read these names from here: they are part of the protocol.
#pragma once

namespace drip {

// The batch a refusal is about: the agent drops that batch rather than resend it.
inline constexpr const char* kRejectedSequenceKey = "drip-rejected-sequence";

// The address of the collector that owns the agent's host, when collectors share a fleet
// (docs/cluster.md): the stream ends with FAILED_PRECONDITION, at the hello or later when
// a member joins that takes the host (after the acks of what was stored), and the agent
// dials that address next.
inline constexpr const char* kOwnerAddressKey = "drip-owner-address";

}  // namespace drip
