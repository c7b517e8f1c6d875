// TlsSettings: the `tls:` section that drip-collector, drip-agent and dripctl share, and
// the gRPC credentials built from it (docs/security.md).
//
// Every connection between Drip's parts is TLS unless a config says `tls.plaintext:
// true` in so many words: a missing section is an error, not a quiet fallback, because
// a root daemon that can restart production processes must not be reachable in the
// clear by accident. The collector asks every client for a certificate and verifies
// any it gets against tls.ca_file (mutual TLS for agents; dripctl may instead present
// a bearer token); clients verify the collector's certificate against the same CA.
//
// Certificates are read from files each time credentials are built, so a client that
// rebuilds its channel per connection attempt (the agent) picks up rotated files
// without a restart. A value type; the functions are thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/base/config_reader.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace drip {

struct TlsSettings {
  // No TLS at all: only for a loopback demo or a test. Every binary warns at start.
  bool plaintext = false;
  std::string ca_file;    // PEM CA bundle that the peer's certificate must chain to
  std::string cert_file;  // PEM certificate chain presented to the peer
  std::string key_file;   // PEM private key of cert_file
  // Clients: the name the collector's certificate must carry when it differs from the
  // host part of the address (e.g. dialling an IP address or a load balancer).
  std::string server_name;
};

// Which party reads the section, for what it requires.
enum class TlsRole {
  kServer,          // the collector: cert, key and the CA that client certificates chain to
  kAgent,           // mutual TLS: CA, cert and key
  kOptionalClient,  // dripctl: CA; cert and key together or not at all
};

// Reads `<prefix>plaintext`, `<prefix>ca_file`, ... (prefix "tls.").
absl::Status ReadTlsSettings(ConfigReader& reader, std::string_view prefix, TlsSettings* out);

struct TlsProblem {
  std::string key;  // e.g. "tls.cert_file"
  std::string what;
};

// What is missing or contradictory for `role`, naming the key under `prefix`; nullopt
// when the settings can work. Does not touch the files (see the Make* functions).
std::optional<TlsProblem> FindTlsProblem(const TlsSettings& tls, TlsRole role,
                                         std::string_view prefix = "tls.");

// The collector's credentials: its certificate, and every client asked for a
// certificate that, when presented, must chain to ca_file (a client without one gets
// through the handshake and is judged per call). Errors name the file and the key.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsSettings& tls);

// A client's credentials; also sets the target-name override in `args` when
// server_name is set. Plaintext settings give insecure credentials.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsSettings& tls, grpc::ChannelArguments* args);

// The whole of a small file (a certificate, a key, a token); the error names `key` and
// the path. Refuses files over 1 MiB, which no PEM file or token comes near.
absl::StatusOr<std::string> ReadSecretFile(std::string_view key, const std::string& path);

}  // namespace drip
