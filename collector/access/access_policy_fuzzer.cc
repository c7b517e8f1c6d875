// Fuzzes the collector's access file (collector/access/access_policy.h): principals with roles,
// certificates and token hashes, read from YAML. A file that loads is then asked to
// authorize a few callers at each role, and must never let one in below the role asked
// for, nor answer with anything but OK, UNAUTHENTICATED or PERMISSION_DENIED.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/access/access_policy.h"
#include "tests/fuzz/config_outcome.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using drip::collector::AccessPolicy;
  using drip::collector::CallerCredentials;
  using drip::collector::Role;
  absl::StatusOr<AccessPolicy> policy =
      AccessPolicy::FromString(drip::fuzz::AsText(data, size), drip::fuzz::kConfigSource);
  drip::fuzz::CheckConfigOutcome(policy.status(), drip::fuzz::kConfigSource);
  if (!policy.ok()) return 0;
  // The seeds' principals: a certificate name, the token whose hash the example file
  // lists ("password"), and strangers.
  const std::vector<CallerCredentials> callers = {
      {{}, "", "peer"},
      {{"alice.oncall.example.com"}, "", "peer"},
      {{"stranger.example.com", "alice.oncall.example.com"}, "", "peer"},
      {{"stranger.example.com"}, "", "peer"},
      {{}, "password", "peer"},
      {{"alice.oncall.example.com"}, "not a token", "peer"},
  };
  for (const CallerCredentials& c : callers) {
    for (Role required : {Role::kViewer, Role::kMember, Role::kOperator}) {
      absl::StatusOr<drip::collector::Caller> caller = policy->Authorize(c, required);
      if (caller.ok()) {
        FUZZ_CHECK(caller->role >= required, "%s let in below the role asked for",
                   caller->Describe().c_str());
        continue;
      }
      const absl::StatusCode code = caller.status().code();
      FUZZ_CHECK(
          code == absl::StatusCode::kUnauthenticated || code == absl::StatusCode::kPermissionDenied,
          "%s", caller.status().ToString().c_str());
    }
  }
  return 0;
}
