#include "collector/ingest/agent_identity.h"

#include <algorithm>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace drip::collector {

Verdict CheckAgentCertificate(const CallerCredentials& credentials, bool tls,
                              const AccessPolicy* access) {
  if (!tls) return Verdict::Accept();
  const std::vector<std::string>& names = credentials.certificate_names;
  if (names.empty()) {
    return Verdict{absl::UnauthenticatedError(
                       "agents must present a client certificate issued by the collector's CA "
                       "(agent config tls.cert_file and tls.key_file)"),
                   reject_reason::kUnauthenticated};
  }
  if (access != nullptr) {
    if (std::string principal = access->PrincipalOfCertificate(names); !principal.empty()) {
      return Verdict{absl::PermissionDeniedError(fmt::format(
                         "the client certificate belongs to query principal '{}'; agents need "
                         "certificates of their own",
                         principal)),
                     reject_reason::kUserCertificate};
    }
  }
  return Verdict::Accept();
}

Verdict CheckAgentIdentity(const CallerCredentials& credentials, const std::string& host, bool tls,
                           const AccessPolicy* access) {
  if (Verdict caller = CheckAgentCertificate(credentials, tls, access); !caller.ok() || !tls) {
    return caller;
  }
  const std::vector<std::string>& names = credentials.certificate_names;
  if (std::find(names.begin(), names.end(), host) == names.end()) {
    return Verdict{
        absl::PermissionDeniedError(fmt::format(
            "hello names host '{}' but the client certificate is for {}; an agent may only "
            "speak for the host its certificate names",
            host, fmt::join(names, ", "))),
        reject_reason::kHostIdentityMismatch};
  }
  return Verdict::Accept();
}

}  // namespace drip::collector
