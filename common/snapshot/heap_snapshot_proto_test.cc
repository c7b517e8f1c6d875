#include "common/snapshot/heap_snapshot_proto.h"

#include <gtest/gtest.h>

#include <string>

#include "common/snapshot/heap_snapshot_json.h"
#include "common/snapshot/heap_snapshot_test_util.h"

namespace drip {
namespace {

using drip::testing::ExpectSnapshotsEqual;
using drip::testing::FullSnapshot;

TEST(HeapSnapshotProtoTest, RoundTripKeepsEveryField) {
  const HeapSnapshot original = FullSnapshot();
  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(original, &proto);
  // Through the wire format too, as an agent's payload travels.
  std::string bytes;
  ASSERT_TRUE(proto.SerializeToString(&bytes));
  drip::v1::HeapSnapshot received;
  ASSERT_TRUE(received.ParseFromString(bytes));
  auto parsed = ParseHeapSnapshotProto(received, "payload");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectSnapshotsEqual(original, *parsed);
}

TEST(HeapSnapshotProtoTest, JsonAndProtoFormsCarryTheSameSnapshot) {
  const std::string json = HeapSnapshotToJson(FullSnapshot());
  auto from_json = ParseHeapSnapshotJson(json, "snap.json");
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(*from_json, &proto);
  EXPECT_EQ(HeapSnapshotToJson(HeapSnapshotFromProto(proto)), json);
}

TEST(HeapSnapshotProtoTest, ToProtoReplacesWhatWasThere) {
  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(FullSnapshot(), &proto);
  HeapSnapshot small = FullSnapshot();
  small.stacks.resize(1);
  HeapSnapshotToProto(small, &proto);
  EXPECT_EQ(proto.stacks_size(), 1);
}

TEST(HeapSnapshotProtoTest, AbsentDutyCycleReadsAsProbesAlwaysOn) {
  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(FullSnapshot(), &proto);
  proto.clear_duty_cycle();
  EXPECT_EQ(HeapSnapshotFromProto(proto).duty_cycle.on_fraction, 1);
}

TEST(HeapSnapshotProtoTest, ParseValidatesAndNamesTheFieldLikeJson) {
  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(FullSnapshot(), &proto);
  proto.mutable_stacks(1)->mutable_series(0)->set_live_allocs(-3);
  auto parsed = ParseHeapSnapshotProto(proto, "web-1 snapshot 12");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "web-1 snapshot 12: stacks[1].series[0].live_allocs: must not be negative (got -3)");

  proto.mutable_stacks(1)->mutable_series(0)->set_live_allocs(3);
  proto.set_version(0);
  parsed = ParseHeapSnapshotProto(proto, "p");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "p: version: 0 is not supported (this build reads version 1)");
}

}  // namespace
}  // namespace drip
