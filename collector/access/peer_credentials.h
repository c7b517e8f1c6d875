// CallerCredentialsOf: what a gRPC call proves about its caller — the names of a
// client certificate that verified against the collector's CA, and a bearer token if
// one was sent — for AccessPolicy (query API) and the ingest stream's host check.
//
// Reads only the call's auth context and metadata; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "collector/access/access_policy.h"
#include "grpcpp/security/auth_context.h"
#include "grpcpp/server_context.h"

namespace drip::collector {

// Certificate names are the subject alternative names when the certificate has any
// (DNS, IP, URI or e-mail entries, as gRPC lists them), else its common name: the
// rule of RFC 6125 that gRPC's own peer identity follows. Empty over plaintext or
// when the client presented no certificate.
CallerCredentials CallerCredentialsOf(const grpc::ServerContextBase& context);

// Whether the call's verified client certificate may serve as well as call (see
// CallerCredentials::certificate_serves). Parses the certificate: only the member API,
// which needs it, asks; CallerCredentialsOf leaves the field false.
bool PeerCertificateServes(const grpc::ServerContextBase& context);

// The same from a connection's auth context (may be null) and the call's `authorization`
// metadata, if it sent one: what CallGate sees before the call is dispatched.
CallerCredentials CallerCredentialsOf(const grpc::AuthContext* auth,
                                      std::optional<std::string_view> authorization,
                                      std::string peer);

}  // namespace drip::collector
