#include "collector/cluster/member_admission.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

using ::testing::HasSubstr;

// Three live members; this collector is c0.
std::vector<ClusterMember> Members() {
  return {{"c0", "collector-a.example.com:4317", 1, 0, 7},
          {"c1", "collector-b.example.com:4317", 1, 0, 8},
          {"c2", "10.0.0.9:4317", 1, 0, 9}};
}

AccessPolicy FileWith(const std::string& principals) {
  absl::StatusOr<AccessPolicy> policy =
      AccessPolicy::FromString("principals:\n" + principals, "access.yaml");
  EXPECT_TRUE(policy.ok()) << policy.status();
  return std::move(*policy);
}

CallerCredentials Certificate(std::vector<std::string> names, bool serves) {
  CallerCredentials c;
  c.certificate_names = std::move(names);
  c.peer = "ipv4:10.0.0.6:5000";
  c.certificate_serves = serves;
  return c;
}

TEST(MemberAdmissionTest, ACollectorsCertificateNamingALiveMemberIsThatMember) {
  const AccessPolicy tls(AccessPolicy::Default::kCertificatesView);
  absl::StatusOr<Caller> caller =
      AdmitMember(tls, Certificate({"collector-b.example.com"}, true), Members(), "c0");
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "c1");
  EXPECT_EQ(caller->role, Role::kMember);
  EXPECT_EQ(caller->method, "certificate");
  // By an IP SAN as well as a DNS one.
  caller = AdmitMember(tls, Certificate({"10.0.0.9"}, true), Members(), "c0");
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "c2");
}

TEST(MemberAdmissionTest, TheAgentOnAMembersHostIsNoMember) {
  // Every host runs an agent, the collectors' hosts too, under the same name; only the key
  // usage tells them apart.
  const AccessPolicy tls(AccessPolicy::Default::kCertificatesView);
  absl::StatusOr<Caller> caller =
      AdmitMember(tls, Certificate({"collector-b.example.com"}, false), Members(), "c0");
  EXPECT_EQ(caller.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(caller.status().message()), HasSubstr("clientAuth only"));
}

TEST(MemberAdmissionTest, ACertificateOfNoLiveMemberOrOfThisOneIsRefused) {
  const AccessPolicy tls(AccessPolicy::Default::kCertificatesView);
  absl::StatusOr<Caller> caller =
      AdmitMember(tls, Certificate({"collector-z.example.com"}, true), Members(), "c0");
  EXPECT_EQ(caller.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(caller.status().message()), HasSubstr("no host a live member"));
  // This collector's own name is not a member calling it.
  caller = AdmitMember(tls, Certificate({"collector-a.example.com"}, true), Members(), "c0");
  EXPECT_EQ(caller.status().code(), absl::StatusCode::kPermissionDenied);
}

TEST(MemberAdmissionTest, TheAccessFilesRolesDecideAboveTheCertificate) {
  const AccessPolicy file = FileWith(
      "  - {name: collector-z, role: member, certificate: collector-z.example.com}\n"
      "  - {name: alice, role: operator, certificate: alice.oncall}\n"
      "  - {name: grafana, role: viewer, token_sha256: "
      "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae}\n");
  // Listed as a member: admitted whatever its key usage or the members' addresses.
  absl::StatusOr<Caller> caller =
      AdmitMember(file, Certificate({"collector-z.example.com"}, false), Members(), "c0");
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "collector-z");
  // An operator is a person: the member API is not theirs.
  caller = AdmitMember(file, Certificate({"alice.oncall"}, false), Members(), "c0");
  EXPECT_EQ(caller.status().code(), absl::StatusCode::kPermissionDenied);
  // A member that is not in the file is still known by its certificate and the members.
  caller = AdmitMember(file, Certificate({"collector-b.example.com"}, true), Members(), "c0");
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "c1");
}

TEST(MemberAdmissionTest, ATokenIsNeverAMembersCredential) {
  const AccessPolicy file = FileWith(
      "  - {name: grafana, role: member, token_sha256: "
      "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae}\n");
  CallerCredentials token = Certificate({"collector-b.example.com"}, true);
  token.bearer_token = "foo";  // sha256 2c26b4...: the member principal's
  absl::StatusOr<Caller> caller = AdmitMember(file, token, Members(), "c0");
  EXPECT_EQ(caller.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(caller.status().message()), HasSubstr("never forward"));
}

TEST(MemberAdmissionTest, APlaintextCollectorIsOpenOnlyWithoutAnAccessFile) {
  const AccessPolicy open(AccessPolicy::Default::kOpen);
  absl::StatusOr<Caller> caller = AdmitMember(open, CallerCredentials{}, Members(), "c0");
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->method, "unauthenticated");
  const AccessPolicy file = FileWith("  - {name: alice, role: operator, certificate: alice}\n");
  EXPECT_EQ(AdmitMember(file, CallerCredentials{}, Members(), "c0").status().code(),
            absl::StatusCode::kUnauthenticated);
}

}  // namespace
}  // namespace drip::collector
