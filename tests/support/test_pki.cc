#include "tests/support/test_pki.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace drip::testing {
namespace {

// Short-lived, P-256: fast to make, and what a modern fleet PKI issues.
constexpr const char* kKeyOptions = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

}  // namespace

TestPki::TestPki(std::string dir)
    : dir_(std::move(dir)), ca_file_(dir_ + "/ca.crt"), ca_key_(dir_ + "/ca.key") {}

TestPki::TestPki(TestPki&& other) noexcept
    : dir_(std::move(other.dir_)),
      ca_file_(std::move(other.ca_file_)),
      ca_key_(std::move(other.ca_key_)),
      issued_(other.issued_) {
  other.dir_.clear();
}

TestPki::~TestPki() {
  if (dir_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::StatusOr<TestPki> TestPki::Create(const std::string& name) {
  std::string pattern = std::filesystem::temp_directory_path().string() + "/drip-pki-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return absl::InternalError("mkdtemp failed");
  TestPki pki(pattern);
  absl::Status made =
      pki.Run(fmt::format("openssl req -x509 {} -days 2 -subj /CN={} -keyout {} -out {}",
                          kKeyOptions, name, pki.ca_key_, pki.ca_file_));
  if (!made.ok()) return made;
  return pki;
}

absl::Status TestPki::Run(const std::string& command) const {
  const std::string log = dir_ + "/openssl.log";
  const int status = std::system(fmt::format("{} >>{} 2>&1", command, log).c_str());
  if (status != 0) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return absl::InternalError(fmt::format("`{}` failed ({}): {}", command, status, text));
  }
  return absl::OkStatus();
}

absl::StatusOr<TestCertificate> TestPki::Issue(const std::string& common_name,
                                               const std::vector<std::string>& san,
                                               CertificateUse use) {
  const std::string base = fmt::format("{}/leaf{}", dir_, ++issued_);
  TestCertificate cert{base + ".crt", base + ".key"};
  std::string extensions =
      "basicConstraints=CA:FALSE\n"
      "keyUsage=digitalSignature,keyEncipherment\n"
      "extendedKeyUsage=" +
      std::string(use == CertificateUse::kClientOnly ? "clientAuth" : "serverAuth,clientAuth") +
      "\n";
  if (!san.empty()) extensions += fmt::format("subjectAltName={}\n", fmt::join(san, ","));
  WriteFile(fmt::format("leaf{}.ext", issued_), extensions);
  absl::Status made = Run(fmt::format("openssl req {} -subj /CN={} -keyout {} -out {}.csr",
                                      kKeyOptions, common_name, cert.key_file, base));
  if (made.ok()) {
    made = Run(fmt::format(
        "openssl x509 -req -in {0}.csr -CA {1} -CAkey {2} -CAcreateserial -days 2 -extfile "
        "{0}.ext -out {3}",
        base, ca_file_, ca_key_, cert.cert_file));
  }
  if (!made.ok()) return made;
  return cert;
}

std::string TestPki::TokenSha256(const std::string& token) {
  FILE* pipe = popen(fmt::format("printf %s '{}' | sha256sum", token).c_str(), "r");
  if (pipe == nullptr) return "";
  char hex[65] = {};
  const size_t read = std::fread(hex, 1, 64, pipe);
  pclose(pipe);
  return std::string(hex, read);
}

std::string TestPki::WriteFile(const std::string& name, const std::string& text) const {
  const std::string path = dir_ + "/" + name;
  std::ofstream out(path);
  out << text;
  return path;
}

}  // namespace drip::testing
