#include "collector/peer_credentials.h"

#include <string_view>
#include <utility>

namespace drip::collector {
namespace {

constexpr std::string_view kBearerPrefix = "Bearer ";
// Longer than any token an operator would make; a multi-megabyte header is an attack.
constexpr size_t kMaxTokenBytes = 4096;

}  // namespace

CallerCredentials CallerCredentialsOf(const grpc::AuthContext* auth,
                                      std::optional<std::string_view> authorization,
                                      std::string peer) {
  CallerCredentials credentials;
  credentials.peer = std::move(peer);
  // gRPC marks the peer authenticated only when its certificate verified against the
  // CA; an unverified certificate never gets this far (the handshake fails).
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    for (const grpc::string_ref& name : auth->GetPeerIdentity()) {
      credentials.certificate_names.emplace_back(name.data(), name.size());
    }
  }
  if (authorization) {
    std::string_view value = *authorization;
    if (value.substr(0, kBearerPrefix.size()) == kBearerPrefix) {
      value.remove_prefix(kBearerPrefix.size());
    }
    // Anything else sent as a credential is kept whole, so that it fails to match a
    // principal (UNAUTHENTICATED) instead of being ignored as if nothing was sent.
    credentials.bearer_token = std::string(value.substr(0, kMaxTokenBytes));
    if (credentials.bearer_token.empty()) credentials.bearer_token = "(empty)";
  }
  return credentials;
}

CallerCredentials CallerCredentialsOf(const grpc::ServerContextBase& context) {
  std::optional<std::string_view> authorization;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    authorization = std::string_view(it->second.data(), it->second.size());
  }
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  return CallerCredentialsOf(auth.get(), authorization, context.peer());
}

}  // namespace drip::collector
