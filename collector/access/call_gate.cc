#include "collector/access/call_gate.h"

#include <optional>
#include <string>
#include <string_view>

#include "collector/access/peer_credentials.h"
#include "collector/ingest/sample_validator.h"
#include "common/daemon/logging.h"
#include "common/rpc/grpc_conversions.h"

namespace drip::collector {
namespace {

constexpr std::string_view kQueryServicePrefix = "/drip.v1.QueryService/";
constexpr std::string_view kMemberServicePrefix = "/drip.v1.MemberService/";
constexpr std::string_view kAgentServicePrefix = "/drip.v1.AgentService/";

std::optional<std::string_view> Find(const grpc::AuthMetadataProcessor::InputMetadata& metadata,
                                     std::string_view key) {
  auto it = metadata.find(grpc::string_ref(key.data(), key.size()));
  if (it == metadata.end()) return std::nullopt;
  return std::string_view(it->second.data(), it->second.size());
}

}  // namespace

grpc::Status CallGate::Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                               OutputMetadata* /*consumed_auth_metadata*/,
                               OutputMetadata* /*response_metadata*/) {
  // The token stays in the metadata: the query API reads it again to name the principal.
  const CallerCredentials credentials =
      CallerCredentialsOf(context, Find(auth_metadata, "authorization"), "");
  const absl::Status known = access_->Authenticate(credentials);
  if (known.ok()) return grpc::Status::OK;
  const std::string_view path = Find(auth_metadata, ":path").value_or("");
  CountRefusal(path);
  // Debug: anyone who can reach the port can send these, as many as they like; the
  // counters above are the signal.
  Logger("collector")
      ->debug("call {} refused before it was read: {}", path.substr(0, 128),
              std::string(known.message()));
  return ToGrpcStatus(known);
}

void CallGate::CountRefusal(std::string_view path) {
  if (path.substr(0, kAgentServicePrefix.size()) == kAgentServicePrefix) {
    metrics_->Rejected(reject_reason::kUnauthenticated).Increment();
    return;
  }
  std::string method(kOtherMethod);
  if (path.substr(0, kQueryServicePrefix.size()) == kQueryServicePrefix) {
    const std::string_view named = path.substr(kQueryServicePrefix.size());
    for (std::string_view known : kQueryMethods) {
      if (named == known) method = known;
    }
  } else if (path.substr(0, kMemberServicePrefix.size()) == kMemberServicePrefix) {
    const std::string_view named = path.substr(kMemberServicePrefix.size());
    for (std::string_view known : kMemberMethods) {
      if (named == known) method = std::string(kMemberMethodPrefix) + std::string(known);
    }
  }
  metrics_->QueryDenied(method, absl::StatusCode::kUnauthenticated).Increment();
}

}  // namespace drip::collector
