// Conversions at the gRPC boundary, so that every component crosses it the same way:
// absl::Status and grpc::Status share the canonical code numbering, and gRPC's channel
// arguments take durations as int milliseconds.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace drip {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// A duration as gRPC's int-millisecond channel arguments take it, saturated.
inline int GrpcMilliseconds(std::chrono::milliseconds duration) {
  return static_cast<int>(std::clamp<int64_t>(duration.count(), 0, INT_MAX));
}

}  // namespace drip
