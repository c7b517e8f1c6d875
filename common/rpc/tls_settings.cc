#include "common/rpc/tls_settings.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/base/status_macros.h"
#include "fmt/format.h"
#include "grpcpp/security/server_credentials.h"

namespace drip {
namespace {

constexpr size_t kMaxSecretFileBytes = 1024 * 1024;

std::string Key(std::string_view prefix, std::string_view name) {
  return fmt::format("{}{}", prefix, name);
}

// A PEM file must at least look like one; a DER file or a path to the wrong file
// otherwise fails deep in the TLS handshake with a message that names neither.
absl::StatusOr<std::string> ReadPemFile(std::string_view key, const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadSecretFile(key, path));
  if (text.find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {}: not a PEM file (no -----BEGIN line)", key, path));
  }
  return text;
}

}  // namespace

absl::Status ReadTlsSettings(ConfigReader& reader, std::string_view prefix, TlsSettings* out) {
  RETURN_IF_ERROR(reader.ReadBool(Key(prefix, "plaintext"), &out->plaintext));
  RETURN_IF_ERROR(reader.ReadString(Key(prefix, "ca_file"), &out->ca_file));
  RETURN_IF_ERROR(reader.ReadString(Key(prefix, "cert_file"), &out->cert_file));
  RETURN_IF_ERROR(reader.ReadString(Key(prefix, "key_file"), &out->key_file));
  RETURN_IF_ERROR(reader.ReadString(Key(prefix, "server_name"), &out->server_name));
  return absl::OkStatus();
}

std::optional<TlsProblem> FindTlsProblem(const TlsSettings& tls, TlsRole role,
                                         std::string_view prefix) {
  const bool any_file = !tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty();
  if (tls.plaintext) {
    if (any_file) {
      return TlsProblem{Key(prefix, "plaintext"),
                        "is true but certificate files are set too; choose one"};
    }
    return std::nullopt;
  }
  const char* how = role == TlsRole::kOptionalClient
                        ? "set it (or --plaintext for a collector that serves without TLS)"
                        : "set it, or tls.plaintext: true to run without TLS";
  if (tls.ca_file.empty()) {
    return TlsProblem{Key(prefix, "ca_file"), fmt::format("is required for TLS; {}", how)};
  }
  if (role != TlsRole::kOptionalClient || !tls.cert_file.empty() || !tls.key_file.empty()) {
    if (tls.cert_file.empty()) {
      return TlsProblem{Key(prefix, "cert_file"),
                        role == TlsRole::kOptionalClient
                            ? std::string("is required when key_file is set")
                            : fmt::format("is required for TLS; {}", how)};
    }
    if (tls.key_file.empty()) {
      return TlsProblem{Key(prefix, "key_file"),
                        role == TlsRole::kOptionalClient
                            ? std::string("is required when cert_file is set")
                            : fmt::format("is required for TLS; {}", how)};
    }
  }
  if (role == TlsRole::kServer && !tls.server_name.empty()) {
    return TlsProblem{Key(prefix, "server_name"), "is a client setting; the collector has none"};
  }
  return std::nullopt;
}

absl::StatusOr<std::string> ReadSecretFile(std::string_view key, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        fmt::format("{}: cannot read {}: {}", key, path, std::strerror(errno)));
  }
  std::string text;
  text.resize(kMaxSecretFileBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxSecretFileBytes) {
    return absl::InvalidArgumentError(fmt::format("{}: {}: larger than 1 MiB", key, path));
  }
  if (text.empty()) return absl::InvalidArgumentError(fmt::format("{}: {}: empty file", key, path));
  return text;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsSettings& tls) {
  if (tls.plaintext) return grpc::InsecureServerCredentials();
  ASSIGN_OR_RETURN(std::string ca, ReadPemFile("tls.ca_file", tls.ca_file));
  ASSIGN_OR_RETURN(std::string cert, ReadPemFile("tls.cert_file", tls.cert_file));
  ASSIGN_OR_RETURN(std::string key, ReadPemFile("tls.key_file", tls.key_file));
  // Requested rather than required: agents must present one (the ingest service refuses
  // a stream without), while dripctl may authenticate with a token instead. A presented
  // certificate that does not chain to the CA fails the handshake either way.
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = std::move(ca);
  options.pem_key_cert_pairs.push_back({std::move(key), std::move(cert)});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsSettings& tls, grpc::ChannelArguments* args) {
  if (tls.plaintext) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  ASSIGN_OR_RETURN(options.pem_root_certs, ReadPemFile("tls.ca_file", tls.ca_file));
  if (!tls.cert_file.empty()) {
    ASSIGN_OR_RETURN(options.pem_cert_chain, ReadPemFile("tls.cert_file", tls.cert_file));
    ASSIGN_OR_RETURN(options.pem_private_key, ReadPemFile("tls.key_file", tls.key_file));
  }
  if (!tls.server_name.empty() && args != nullptr) {
    args->SetSslTargetNameOverride(tls.server_name);
  }
  return grpc::SslCredentials(options);
}

}  // namespace drip
