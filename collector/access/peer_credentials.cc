#include "collector/access/peer_credentials.h"

#include <grpc/grpc_security_constants.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string_view>
#include <utility>

namespace drip::collector {
namespace {

constexpr std::string_view kBearerPrefix = "Bearer ";
// Longer than any token an operator would make; a multi-megabyte header is an attack.
constexpr size_t kMaxTokenBytes = 4096;

// Whether the peer's verified certificate (PEM, as gRPC keeps it) allows serverAuth. A
// certificate without the extension allows every use (RFC 5280, 4.2.1.12).
bool PemCertificateServes(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (bio == nullptr) return false;
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
  if (cert == nullptr) return false;
  return (X509_get_extended_key_usage(cert.get()) & XKU_SSL_SERVER) != 0;
}

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

bool PeerCertificateServes(const grpc::ServerContextBase& context) {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return false;
  for (const grpc::string_ref& pem : auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME)) {
    return PemCertificateServes(std::string_view(pem.data(), pem.size()));
  }
  return false;
}

}  // namespace drip::collector
