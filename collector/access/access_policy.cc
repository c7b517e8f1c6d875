#include "collector/access/access_policy.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "common/base/config_reader.h"
#include "common/base/status_macros.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

bool IsHexSha256(const std::string& text) {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(c) != 0; });
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kViewer:
      return "viewer";
    case Role::kMember:
      return "member";
    case Role::kOperator:
      return "operator";
    case Role::kNone:
      break;
  }
  return "none";
}

std::string Caller::Describe() const {
  return fmt::format("{} ({}, {}) via {}", name, RoleName(role), method, peer);
}

std::string Sha256Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // EVP_Digest cannot fail for SHA-256 with a valid output buffer short of an
  // allocation failure inside OpenSSL, which would be a broken process.
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), length));
}

absl::StatusOr<AccessPolicy> AccessPolicy::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot open access file", path));
  std::stringstream text;
  text << in.rdbuf();
  return FromString(text.str(), path);
}

absl::StatusOr<AccessPolicy> AccessPolicy::FromString(std::string_view yaml, std::string source) {
  ASSIGN_OR_RETURN(ConfigReader reader, ConfigReader::FromString(yaml, source));
  ASSIGN_OR_RETURN(std::vector<ConfigReader> entries, reader.ReadMappingList("principals"));
  RETURN_IF_ERROR(reader.CheckNoUnknownKeys());
  AccessPolicy policy;
  std::map<std::string, int> names;
  for (ConfigReader& entry : entries) {
    std::string name;
    std::string role;
    std::string certificate;
    std::string token_sha256;
    RETURN_IF_ERROR(entry.ReadString("name", &name));
    RETURN_IF_ERROR(entry.ReadEnum("role", {"viewer", "member", "operator"}, &role));
    RETURN_IF_ERROR(entry.ReadString("certificate", &certificate));
    RETURN_IF_ERROR(entry.ReadString("token_sha256", &token_sha256));
    RETURN_IF_ERROR(entry.CheckNoUnknownKeys());
    if (name.empty()) return entry.Error("name", "is required");
    if (role.empty()) return entry.Error("role", "is required (viewer, member or operator)");
    if (certificate.empty() == token_sha256.empty()) {
      return entry.Error("certificate",
                         "each principal needs exactly one of certificate and token_sha256");
    }
    if (++names[name] > 1) return entry.Error("name", fmt::format("'{}' is listed twice", name));
    const Role level = role == "operator" ? Role::kOperator
                       : role == "member" ? Role::kMember
                                          : Role::kViewer;
    Principal principal{name, level};
    if (!certificate.empty()) {
      if (!policy.by_certificate_.emplace(certificate, principal).second) {
        return entry.Error("certificate",
                           fmt::format("'{}' belongs to another principal too", certificate));
      }
    } else {
      if (!IsHexSha256(token_sha256)) {
        return entry.Error("token_sha256",
                           "must be 64 hex digits, as `printf %s TOKEN | sha256sum` prints");
      }
      if (!policy.by_token_hash_.emplace(Lower(token_sha256), principal).second) {
        return entry.Error("token_sha256", "the same token belongs to another principal too");
      }
    }
  }
  return policy;
}

absl::Status AccessPolicy::Authenticate(const CallerCredentials& credentials) const {
  if (!credentials.bearer_token.empty()) {
    // Deliberately the same answer whether a file exists or not: a wrong token says
    // nothing about which tokens exist.
    if (by_token_hash_.count(Sha256Hex(credentials.bearer_token)) == 0) {
      return absl::UnauthenticatedError("the bearer token matches no principal");
    }
    return absl::OkStatus();
  }
  if (!credentials.certificate_names.empty()) return absl::OkStatus();
  if (!has_file_ && fallback_ == Default::kOpen) return absl::OkStatus();
  return absl::UnauthenticatedError(
      "no credentials: present a client certificate or an `authorization: Bearer` token");
}

absl::StatusOr<Caller> AccessPolicy::Authorize(const CallerCredentials& credentials,
                                               Role required) const {
  RETURN_IF_ERROR(Authenticate(credentials));
  Caller caller;
  caller.peer = credentials.peer;
  if (!credentials.bearer_token.empty()) {
    const Principal& principal = by_token_hash_.at(Sha256Hex(credentials.bearer_token));
    caller.name = principal.name;
    caller.role = principal.role;
    caller.method = "token";
  } else if (!credentials.certificate_names.empty()) {
    caller.method = "certificate";
    if (has_file_) {
      const std::string principal = PrincipalOfCertificate(credentials.certificate_names);
      if (principal.empty()) {
        return absl::PermissionDeniedError(
            fmt::format("client certificate '{}' is not a principal of the access file",
                        credentials.certificate_names.front()));
      }
      for (const std::string& name : credentials.certificate_names) {
        auto it = by_certificate_.find(name);
        if (it != by_certificate_.end()) {
          caller.name = it->second.name;
          caller.role = it->second.role;
          break;
        }
      }
    } else {
      caller.name = credentials.certificate_names.front();
      caller.role = fallback_ == Default::kOpen ? Role::kOperator : Role::kViewer;
    }
  } else {  // an open policy (Authenticate let it in)
    caller.name = "anonymous";
    caller.role = Role::kOperator;
    caller.method = "unauthenticated";
  }
  if (caller.role < required) {
    return absl::PermissionDeniedError(fmt::format("{} is a {}; this call needs the {} role",
                                                   caller.name, RoleName(caller.role),
                                                   RoleName(required)));
  }
  return caller;
}

std::string AccessPolicy::PrincipalOfCertificate(const std::vector<std::string>& names) const {
  for (const std::string& name : names) {
    auto it = by_certificate_.find(name);
    if (it != by_certificate_.end()) return it->second.name;
  }
  return "";
}

absl::StatusOr<AccessPolicy> AccessPolicy::ForCollector(const std::string& access_file,
                                                        bool plaintext,
                                                        const std::string& listen_address) {
  auto log = Logger("collector");
  if (plaintext) {
    log->warn(
        "TLS is off (tls.plaintext: true): samples, commands and queries travel in the clear and "
        "agents' host names are taken on trust; use it only on loopback or in a test");
  }
  if (access_file.empty()) {
    if (plaintext) {
      log->warn(
          "no auth.access_file: anyone who can reach {} may read, acknowledge, resolve and "
          "mitigate",
          listen_address);
      return AccessPolicy(Default::kOpen);
    }
    log->warn(
        "no auth.access_file: clients with a certificate from the CA may read; nobody may "
        "acknowledge, resolve or mitigate");
    return AccessPolicy(Default::kCertificatesView);
  }
  absl::StatusOr<AccessPolicy> policy = FromFile(access_file);
  if (!policy.ok()) return WithContext(policy.status(), "auth.access_file");
  log->info("query API access from {}: {} principals", access_file, policy->principal_count());
  if (plaintext) log->warn("bearer tokens travel in the clear: tls.plaintext is true");
  return policy;
}

}  // namespace drip::collector
