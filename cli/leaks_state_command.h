// `dripctl leaks ack ID [--note TEXT]` and `dripctl leaks resolve ID [--note TEXT]`:
// on-call takes a leak report (acknowledged: someone is on it) or closes it (resolved:
// fixed or not a leak). The collector records who asked in the report's history and
// the audit log; dripctl names the person as "$USER@hostname" (cli/actor.h).
#pragma once

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "cli/query_client.h"
#include "drip/v1/report.pb.h"

namespace drip::cli {

struct LeakStateOptions {
  std::string id;
  std::string state;  // "acknowledged" or "resolved"
  std::string note;
  bool json = false;
};

// NOT_FOUND for an unknown id; FAILED_PRECONDITION (exit 2) when the report does not
// allow the change (already resolved, or acknowledging a mitigated report).
absl::Status RunLeakStateCommand(QueryClient& client, const LeakStateOptions& options,
                                 const std::string& actor, std::ostream& out);

// One line, "leak-7 (svc:api.service) is now acknowledged", or the report as JSON.
void RenderLeakStateChange(const drip::v1::LeakReport& report, bool json, std::ostream& out);

}  // namespace drip::cli
