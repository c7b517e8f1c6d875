// dripctl's exit codes, documented in docs/dripctl.md; scripts depend on them. 0, 1 and 2
// are every Drip binary's (common/base/exit_codes.h): for dripctl, 1 means the collector
// answered with an error; the codes from 3 up are dripctl's own.
#pragma once

#include "absl/status/status.h"
#include "common/base/exit_codes.h"

namespace drip::cli {

using drip::kExitFailure;
using drip::kExitOk;
using drip::kExitUsage;
inline constexpr int kExitUnreachable = 3;  // no collector answered at the address
// `dripctl mitigate`: some host's action failed, was refused or timed out.
inline constexpr int kExitActionFailed = 4;
// No such leak report (NOT_FOUND for the ID given to leaks show/ack/resolve, mitigate,
// audit --report); only those commands use it, so `series` keeps exit 1 for NOT_FOUND.
inline constexpr int kExitNotFound = 5;
// `dripctl mitigate`: nothing failed, but some host had not answered when --wait ran out.
inline constexpr int kExitActionPending = 6;
// The collector's access policy refused the call: no or unknown credentials
// (UNAUTHENTICATED), or a role too low for it (PERMISSION_DENIED, e.g. a viewer mitigating).
inline constexpr int kExitDenied = 7;

inline int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return kExitUnreachable;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitDenied;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

// For the commands that name a leak report: an unknown ID gets its own code, so a
// script can tell "no such report" from "the collector failed".
inline int ReportExitCodeFor(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kNotFound) return kExitNotFound;
  return ExitCodeFor(status);
}

}  // namespace drip::cli
