// TestPki: a throwaway certificate authority for tests, made with the openssl command
// line (as an operator would make one): a CA, and leaf certificates signed by it whose
// subject alternative names the test chooses, usable as server and client certificates,
// or as client certificates only (as an agent's or a user's should be). A second TestPki is
// a CA the first one's peers do not trust.
//
// Files live in a temp dir removed with the object. Not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace drip::testing {

struct TestCertificate {
  std::string cert_file;
  std::string key_file;
};

// What a leaf certificate may be used for (its extendedKeyUsage).
enum class CertificateUse { kServerAndClient, kClientOnly };

class TestPki {
 public:
  // Creates the CA (fails when openssl is missing or refuses).
  static absl::StatusOr<TestPki> Create(const std::string& name = "drip-test-ca");

  TestPki(TestPki&& other) noexcept;
  TestPki& operator=(TestPki&&) = delete;
  ~TestPki();

  // A certificate for `common_name` with these SAN entries ("DNS:web-1",
  // "IP:127.0.0.1"); none gives a certificate with only a CN.
  absl::StatusOr<TestCertificate> Issue(const std::string& common_name,
                                        const std::vector<std::string>& san = {},
                                        CertificateUse use = CertificateUse::kServerAndClient);

  // `printf %s TOKEN | sha256sum`, as an operator writes a token into an access file.
  static std::string TokenSha256(const std::string& token);

  // Writes `text` to a file in the PKI's dir and returns its path (tokens, access files).
  std::string WriteFile(const std::string& name, const std::string& text) const;

  const std::string& ca_file() const { return ca_file_; }
  const std::string& dir() const { return dir_; }

 private:
  explicit TestPki(std::string dir);
  absl::Status Run(const std::string& command) const;

  std::string dir_;
  std::string ca_file_;
  std::string ca_key_;
  int issued_ = 0;
};

}  // namespace drip::testing
