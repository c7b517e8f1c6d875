// dripctl's exit codes, documented in docs/dripctl.md; scripts depend on them.
#pragma once

#include "absl/status/status.h"

namespace drip::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // the collector answered with an error
inline constexpr int kExitUsage = 2;        // bad flags, bad config, bad input file
inline constexpr int kExitUnreachable = 3;  // no collector answered at the address

inline int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return kExitUnreachable;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

}  // namespace drip::cli
