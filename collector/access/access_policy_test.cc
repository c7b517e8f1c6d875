#include "collector/access/access_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

using ::testing::HasSubstr;

AccessPolicy Policy() {
  absl::StatusOr<AccessPolicy> policy = AccessPolicy::FromString(
      "principals:\n"
      "  - name: alice\n"
      "    role: operator\n"
      "    certificate: alice.oncall\n"
      "  - name: collector-b\n"
      "    role: member\n"
      "    certificate: collector-b.example.com\n"
      "  - name: grafana\n"
      "    role: viewer\n"
      "    token_sha256: " +
          Sha256Hex("s3cret") + "\n",
      "access.yaml");
  EXPECT_TRUE(policy.ok()) << policy.status();
  return std::move(*policy);
}

CallerCredentials Token(const std::string& token) { return {{}, token, "ipv4:10.0.0.5:5000"}; }
CallerCredentials Certificate(std::vector<std::string> names) {
  return {std::move(names), "", "ipv4:10.0.0.6:5000"};
}

TEST(AccessPolicyTest, Sha256HexMatchesSha256sum) {
  // printf %s abc | sha256sum
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(AccessPolicyTest, TokenOfAViewerReadsButCannotOperate) {
  AccessPolicy policy = Policy();
  absl::StatusOr<Caller> read = policy.Authorize(Token("s3cret"), Role::kViewer);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->name, "grafana");
  EXPECT_EQ(read->Describe(), "grafana (viewer, token) via ipv4:10.0.0.5:5000");
  absl::StatusOr<Caller> write = policy.Authorize(Token("s3cret"), Role::kOperator);
  EXPECT_EQ(write.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(write.status().message()), HasSubstr("grafana is a viewer"));
}

TEST(AccessPolicyTest, CertificateOfAnOperatorMatchesAnyOfItsNames) {
  absl::StatusOr<Caller> caller =
      Policy().Authorize(Certificate({"laptop-7", "alice.oncall"}), Role::kOperator);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "alice");
  EXPECT_EQ(caller->method, "certificate");
}

TEST(AccessPolicyTest, AMemberCollectorReadsAndRelaysButCannotOperate) {
  AccessPolicy policy = Policy();
  const CallerCredentials member = Certificate({"collector-b.example.com"});
  EXPECT_TRUE(policy.Authorize(member, Role::kViewer).ok());
  absl::StatusOr<Caller> relay = policy.Authorize(member, Role::kMember);
  ASSERT_TRUE(relay.ok()) << relay.status();
  EXPECT_EQ(relay->Describe(), "collector-b (member, certificate) via ipv4:10.0.0.6:5000");
  absl::StatusOr<Caller> write = policy.Authorize(member, Role::kOperator);
  EXPECT_EQ(write.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(write.status().message()), HasSubstr("collector-b is a member"));
  // A viewer is below a member; an operator above (the member API still admits members
  // alone: member_admission_test.cc).
  EXPECT_EQ(policy.Authorize(Token("s3cret"), Role::kMember).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(policy.Authorize(Certificate({"alice.oncall"}), Role::kMember).ok());
}

TEST(AccessPolicyTest, WrongTokenIsUnauthenticatedEvenWithAValidCertificate) {
  CallerCredentials both = Certificate({"alice.oncall"});
  both.bearer_token = "guess";
  EXPECT_EQ(Policy().Authorize(both, Role::kViewer).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(AccessPolicyTest, NoCredentialsAreUnauthenticated) {
  EXPECT_EQ(Policy().Authorize(CallerCredentials{}, Role::kViewer).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(AccessPolicyTest, UnlistedCertificateIsPermissionDenied) {
  absl::StatusOr<Caller> caller = Policy().Authorize(Certificate({"web-1"}), Role::kViewer);
  EXPECT_EQ(caller.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(caller.status().message()), HasSubstr("'web-1' is not a principal"));
}

TEST(AccessPolicyTest, WithoutAFileCertificatesAreViewersOverTls) {
  AccessPolicy policy(AccessPolicy::Default::kCertificatesView);
  EXPECT_TRUE(policy.Authorize(Certificate({"web-1"}), Role::kViewer).ok());
  EXPECT_EQ(policy.Authorize(Certificate({"web-1"}), Role::kOperator).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(policy.Authorize(CallerCredentials{}, Role::kViewer).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(AccessPolicyTest, WithoutAFileInPlaintextEverybodyOperates) {
  AccessPolicy policy(AccessPolicy::Default::kOpen);
  absl::StatusOr<Caller> caller = policy.Authorize(CallerCredentials{}, Role::kOperator);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->method, "unauthenticated");
}

TEST(AccessPolicyTest, PrincipalOfCertificateNamesTheUser) {
  AccessPolicy policy = Policy();
  EXPECT_EQ(policy.PrincipalOfCertificate({"alice.oncall"}), "alice");
  EXPECT_EQ(policy.PrincipalOfCertificate({"web-1"}), "");
}

struct BadFile {
  const char* yaml;
  const char* error;
};

class AccessPolicyFileTest : public ::testing::TestWithParam<BadFile> {};

TEST_P(AccessPolicyFileTest, MalformedFileIsAnErrorNamingLineAndKey) {
  absl::StatusOr<AccessPolicy> policy = AccessPolicy::FromString(GetParam().yaml, "access.yaml");
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(std::string(policy.status().message()), HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, AccessPolicyFileTest,
    ::testing::Values(
        BadFile{"principals:\n  - name: a\n    role: root\n    certificate: a\n",
                "access.yaml:3: principals[0].role: 'root' is not one of viewer, member, operator"},
        BadFile{"principals:\n  - name: a\n    role: viewer\n",
                "principals[0].certificate: each principal needs exactly one of certificate and "
                "token_sha256"},
        BadFile{"principals:\n  - name: a\n    role: viewer\n    certificate: a\n"
                "    token_sha256: abc\n",
                "exactly one of certificate and token_sha256"},
        BadFile{"principals:\n  - name: a\n    role: viewer\n    token_sha256: abc\n",
                "access.yaml:4: principals[0].token_sha256: must be 64 hex digits"},
        BadFile{"principals:\n  - name: a\n    role: viewer\n    certificate: x\n"
                "  - name: a\n    role: viewer\n    certificate: y\n",
                "'a' is listed twice"},
        BadFile{"principals:\n  - name: a\n    role: viewer\n    certificate: x\n"
                "  - name: b\n    role: viewer\n    certificate: x\n",
                "'x' belongs to another principal too"},
        BadFile{"principals:\n  - role: viewer\n    certificate: x\n",
                "principals[0].name: is required"},
        BadFile{"principal:\n  - name: a\n", "unknown key 'principal'"},
        BadFile{"principals:\n  - name: a\n    role: viewer\n    certificate: x\n    cert: y\n",
                "unknown key 'principals[0].cert'"}));

}  // namespace
}  // namespace drip::collector
