// The largest gRPC message any Drip process exchanges: the ceiling of the collector's
// grpc.max_message_bytes (which bounds what it sends as well as what it takes), and so
// what dripctl must be ready to read, whatever a collector is configured with.
#pragma once

#include <cstdint>

namespace drip {

inline constexpr uint64_t kMaxMessageBytesLimit = 512ull * 1024 * 1024;

}  // namespace drip
