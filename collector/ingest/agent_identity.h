// CheckAgentIdentity: whether the client of an agent stream may speak for the host its
// Hello names. With TLS, an agent proves its host with its client certificate: the
// Hello's host must be one of the certificate's names (SAN entries, else the CN), so a
// compromised host cannot file samples, or answer commands, as another. Without TLS
// (tls.plaintext) there is nothing to check and every host is taken at its word.
//
// Stateless; thread-safe.
#pragma once

#include <string>

#include "collector/access/access_policy.h"
#include "collector/ingest/sample_validator.h"

namespace drip::collector {

// Whether the caller may open an agent stream at all, whatever host it will name: with
// TLS, a certificate that is not a dripctl principal's. Checked when the stream opens,
// before its first message is read, so that a caller without one never gets a message
// parsed. `tls` says whether the collector serves TLS; `access` (may be null) names the
// dripctl principals, whose certificates are refused as agents.
Verdict CheckAgentCertificate(const CallerCredentials& credentials, bool tls,
                              const AccessPolicy* access);

// CheckAgentCertificate, then whether the certificate names `host` (the Hello's).
Verdict CheckAgentIdentity(const CallerCredentials& credentials, const std::string& host, bool tls,
                           const AccessPolicy* access);

}  // namespace drip::collector
