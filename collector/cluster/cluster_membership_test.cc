#include "collector/cluster/cluster_membership.h"

#include <gtest/gtest.h>

#include <string>

namespace drip::collector {
namespace {

constexpr char kPrefix[] = "/drip/members/";
constexpr int64_t kNowMs = 1'800'000'000'000;

EtcdKeyValue Record(std::string key, std::string value, int64_t lease = 0x42) {
  EtcdKeyValue kv;
  kv.key = std::move(key);
  kv.value = std::move(value);
  kv.lease = lease;
  kv.mod_revision = 7;
  return kv;
}

std::string Why(const EtcdKeyValue& kv) {
  absl::StatusOr<ClusterMember> m = DecodeMemberRecord(kPrefix, kv, kNowMs);
  return m.ok() ? "taken" : std::string(m.status().message());
}

TEST(ClusterMembershipTest, AMemberRecordOnALeaseUnderItsOwnNameIsTaken) {
  absl::StatusOr<ClusterMember> m = DecodeMemberRecord(
      kPrefix,
      Record("/drip/members/c1",
             R"({"name":"c1","address":"10.0.0.22:7070","started_ms":1799999990000,)"
             R"("hosts_connected":12})"),
      kNowMs);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name, "c1");
  EXPECT_EQ(m->address, "10.0.0.22:7070");
  EXPECT_EQ(m->started_ms, 1799999990000);
  EXPECT_EQ(m->hosts_connected, 12u);
  EXPECT_EQ(m->lease, 0x42);
}

// What the audit wrote with an agent's certificate: records an attacker could put into etcd
// to steer agents to a collector of its own.
TEST(ClusterMembershipTest, ForgedMemberRecordsAreIgnoredWithTheReason) {
  const std::string good =
      R"({"name":"zz2","address":"10.0.0.99:7070","started_ms":1799999990000})";
  EXPECT_EQ(Why(Record("/drip/members/zz2", good, /*lease=*/0)),
            "no lease: a member's record lives on its lease");
  EXPECT_EQ(Why(Record("/drip/members/c0", good)), "its name is not its key's");
  EXPECT_EQ(Why(Record("/drip/members/zz2",
                       R"({"name":"zz2","address":"unix:/run/x.sock","started_ms":1})")),
            "its address is not a TCP host:port");
  EXPECT_EQ(
      Why(Record("/drip/members/zz2", R"({"name":"zz2","address":"10.0.0.99:0","started_ms":1})")),
      "its address is not a TCP host:port");
  // Up for 20,785 days in `dripctl cluster`: a start time of 0, or one in the future.
  EXPECT_EQ(Why(Record("/drip/members/zz2", R"({"name":"zz2","address":"10.0.0.99:7070"})")),
            "its start time is missing or in the future");
  EXPECT_EQ(
      Why(Record("/drip/members/zz2",
                 R"({"name":"zz2","address":"10.0.0.99:7070","started_ms":9223372036854775807})")),
      "its start time is missing or in the future");
  EXPECT_EQ(
      Why(Record(
          "/drip/members/zz2",
          R"({"name":"zz2","address":"10.0.0.99:7070","started_ms":1,"hosts_connected":-1})")),
      "hosts_connected is not a count");
  EXPECT_EQ(Why(Record("/drip/members/a/b", good)), "not a member key");
  EXPECT_EQ(Why(Record("/drip/members/zz2", "[1,2]")), "not a JSON object");
  EXPECT_NE(Why(Record("/drip/members/zz2", std::string(5000, ' ') + good)).find("more than"),
            std::string::npos);
}

}  // namespace
}  // namespace drip::collector
