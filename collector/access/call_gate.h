// CallGate: identity before anything is read. On a TLS collector gRPC hands every call's
// metadata to this gate before it dispatches the call, and reads none of the call's
// messages until the gate answers; a call whose caller proves no identity (no verified
// client certificate, no bearer token of a principal) is refused UNAUTHENTICATED there,
// so nobody unauthenticated ever gets a message parsed, however large. What a caller
// may do (its role, the host an agent speaks for) is judged later, by the query API
// (AccessPolicy::Authorize) and the agent stream (CheckAgentIdentity).
//
// Refusals are counted as the methods' own would be: drip_query_denied_total{method,
// code="unauthenticated"} for the query API and the member API ("member.<method>";
// method "other" for a path neither knows, so that a caller cannot invent label values),
// drip_ingest_rejected_total {reason="unauthenticated"} for agent streams.
//
// Thread-safe: gRPC calls Process from its own threads; it never blocks.
#pragma once

#include "collector/access/access_policy.h"
#include "collector/collector_metrics.h"
#include "grpcpp/security/auth_metadata_processor.h"

namespace drip::collector {

class CallGate final : public grpc::AuthMetadataProcessor {
 public:
  // `access` and `metrics` must outlive every call the server serves.
  CallGate(const AccessPolicy* access, CollectorMetrics* metrics)
      : access_(access), metrics_(metrics) {}

  // A hash lookup at most: run on gRPC's thread, not a separate pool.
  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  void CountRefusal(std::string_view path);

  const AccessPolicy* const access_;
  CollectorMetrics* const metrics_;
};

}  // namespace drip::collector
