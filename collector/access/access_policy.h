// AccessPolicy: who may call the collector's query API, and as what (docs/security.md).
//
// Three roles, ordered: a viewer reads (hosts, series, suspects, leak reports, the audit
// log); a member is another collector of the cluster, which also has this one deliver
// mitigations it decided on to the hosts streaming here (RelayCommand, which the query
// service grants the member role alone: people mitigate within the policy's limits), but
// changes no report; an operator reads and changes things (acknowledges and resolves
// reports, mitigates). Callers
// prove who they are with a client certificate (its SAN or CN) or a bearer token
// (`authorization: Bearer <token>` metadata), matched against the principals of the
// access file the collector reads at start:
//
//   principals:
//     - name: alice                      # recorded in the audit log
//       role: operator
//       certificate: alice.oncall.example.com
//     - name: grafana
//       role: viewer
//       token_sha256: 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
//
// Only a token's SHA-256 is kept, so the file does not hand out the tokens it checks.
// Without an access file, a TLS collector treats every verified client certificate as
// a viewer (nobody may mutate), and a plaintext one lets everybody operate (a loopback
// demo); the collector warns at start either way.
//
// Immutable after construction; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace drip::collector {

enum class Role { kNone = 0, kViewer = 1, kMember = 2, kOperator = 3 };

std::string_view RoleName(Role role);

// What the collector knows about a caller before judging it.
struct CallerCredentials {
  std::vector<std::string> certificate_names;  // verified SAN entries, else the CN
  std::string bearer_token;                    // empty when none was sent
  std::string peer;                            // gRPC's peer address, for the audit log
  // Whether the certificate may serve as well as call (extendedKeyUsage serverAuth, or
  // none at all): a collector's, never an agent's or a user's (docs/security.md, "Key
  // usage"), which is how the member API tells a collector from an agent on its host.
  // Set by the member API alone (PeerCertificateServes).
  bool certificate_serves = false;
};

// A caller the policy let in.
struct Caller {
  std::string name;  // the principal's name, or the certificate name without a file
  Role role = Role::kNone;
  std::string method;  // "certificate", "token" or "unauthenticated" (open policy)
  std::string peer;

  // "alice (operator, token) via ipv4:10.0.0.5:51234": what the audit log records.
  std::string Describe() const;
};

class AccessPolicy {
 public:
  enum class Default {
    kCertificatesView,  // TLS without an access file: verified certificates are viewers
    kOpen,              // plaintext without an access file: everybody operates
  };

  // A policy without an access file.
  explicit AccessPolicy(Default fallback) : fallback_(fallback), has_file_(false) {}

  // Reads the access file; errors name file:line:key.
  static absl::StatusOr<AccessPolicy> FromFile(const std::string& path);
  static absl::StatusOr<AccessPolicy> FromString(std::string_view yaml, std::string source);
  // The collector's policy: from `access_file` (auth.access_file) when one is named, else
  // the default for the transport (kOpen in plaintext, kCertificatesView over TLS). Logs
  // what it means for who may do what, and warns of what plaintext gives away, since an
  // operator reads the start-up log to learn it. Errors as FromFile, under
  // "auth.access_file".
  static absl::StatusOr<AccessPolicy> ForCollector(const std::string& access_file, bool plaintext,
                                                   const std::string& listen_address);

  // Lets `credentials` in with at least `required`, or says why not: UNAUTHENTICATED
  // when no usable credential was sent (or a token matches nobody), PERMISSION_DENIED
  // when the caller is known but its role is too low. A token is tried first.
  absl::StatusOr<Caller> Authorize(const CallerCredentials& credentials, Role required) const;

  // Whether `credentials` prove an identity at all, whatever it may do: a token of a
  // principal, or a verified client certificate (an agent's too), or nothing where the
  // policy is open. UNAUTHENTICATED otherwise. CallGate asks it of every call before
  // gRPC reads the call's first message.
  absl::Status Authenticate(const CallerCredentials& credentials) const;

  // The principal whose certificate carries one of `names`, or "" when none: agent
  // streams refuse user certificates, so an operator's key cannot pose as a host.
  std::string PrincipalOfCertificate(const std::vector<std::string>& names) const;

  bool has_file() const { return has_file_; }
  size_t principal_count() const { return by_certificate_.size() + by_token_hash_.size(); }

 private:
  struct Principal {
    std::string name;
    Role role = Role::kNone;
  };

  AccessPolicy() = default;

  Default fallback_ = Default::kCertificatesView;
  bool has_file_ = true;
  std::map<std::string, Principal> by_certificate_;  // certificate name -> principal
  std::map<std::string, Principal> by_token_hash_;   // lowercase hex SHA-256 -> principal
};

// Lowercase hex SHA-256 of `text`, as `sha256sum` prints it.
std::string Sha256Hex(std::string_view text);

}  // namespace drip::collector
