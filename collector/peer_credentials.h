// CallerCredentialsOf: what a gRPC call proves about its caller — the names of a
// client certificate that verified against the collector's CA, and a bearer token if
// one was sent — for AccessPolicy (query API) and the ingest stream's host check.
//
// Reads only the call's auth context and metadata; thread-safe.
#pragma once

#include "collector/access_policy.h"
#include "grpcpp/server_context.h"

namespace drip::collector {

// Certificate names are the subject alternative names when the certificate has any
// (DNS, IP, URI or e-mail entries, as gRPC lists them), else its common name: the
// rule of RFC 6125 that gRPC's own peer identity follows. Empty over plaintext or
// when the client presented no certificate.
CallerCredentials CallerCredentialsOf(const grpc::ServerContextBase& context);

}  // namespace drip::collector
