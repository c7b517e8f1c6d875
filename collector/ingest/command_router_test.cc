#include "collector/ingest/command_router.h"

#include <optional>

#include "collector/ingest/recording_stream_test_util.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

drip::v1::Command Mitigation(const std::string& id) {
  drip::v1::Command c;
  c.set_id(id);
  c.mutable_mitigation()->set_action("signal-process");
  c.mutable_mitigation()->set_pid(4242);
  return c;
}

drip::v1::CommandResult Answer(const std::string& id) {
  drip::v1::CommandResult r;
  r.set_command_id(id);
  r.set_ok(true);
  r.set_detail("sent SIGTERM to pid 4242");
  return r;
}

class CommandRouterTest : public ::testing::Test {
 protected:
  void SetUp() override { hosts_.Register("web-1", &stream_); }
  void TearDown() override { hosts_.Unregister("web-1", &stream_); }

  // Sends `id` to web-1; what its `done` was given lands in `got`.
  absl::StatusOr<uint64_t> Send(const std::string& id, int64_t deadline_ms,
                                std::optional<absl::StatusOr<drip::v1::CommandResult>>* got) {
    return router_.Send("web-1", Mitigation(id), deadline_ms,
                        [got](absl::StatusOr<drip::v1::CommandResult> r) { *got = std::move(r); });
  }

  ConnectedHosts hosts_;
  RecordingStream stream_;
  CommandRouter router_{&hosts_};
};

TEST_F(CommandRouterTest, TheAgentsAnswerGoesToItsSenderOnceAndOnlyFromItsHost) {
  std::optional<absl::StatusOr<drip::v1::CommandResult>> got;
  ASSERT_TRUE(Send("mitigate-1", 1000, &got).ok());
  ASSERT_EQ(stream_.sent.size(), 1u);
  EXPECT_EQ(stream_.sent[0].id(), "mitigate-1");
  // Another host's answer with the same id is not this command's.
  EXPECT_FALSE(router_.Deliver("web-2", Answer("mitigate-1")));
  EXPECT_TRUE(router_.Deliver("web-1", Answer("mitigate-1")));
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->ok());
  EXPECT_EQ((*got)->detail(), "sent SIGTERM to pid 4242");
  EXPECT_FALSE(router_.Deliver("web-1", Answer("mitigate-1")));
  EXPECT_EQ(router_.size(), 0u);
}

TEST_F(CommandRouterTest, AHostNotStreamingHereOrABusyIdIsRefusedWithoutAnAnswer) {
  std::optional<absl::StatusOr<drip::v1::CommandResult>> got;
  absl::Status elsewhere = router_
                               .Send("web-9", Mitigation("mitigate-1"), 1000,
                                     [&](absl::StatusOr<drip::v1::CommandResult> r) { got = r; })
                               .status();
  EXPECT_EQ(elsewhere.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(elsewhere.message().find("web-9 does not stream here"), std::string::npos);
  ASSERT_TRUE(Send("mitigate-2", 1000, &got).ok());
  EXPECT_EQ(Send("mitigate-2", 1000, &got).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_FALSE(got.has_value());
  EXPECT_EQ(router_.size(), 1u);
}

TEST_F(CommandRouterTest, ACancelledCallHearsNothingAndAnUnansweredOneExpires) {
  std::optional<absl::StatusOr<drip::v1::CommandResult>> cancelled;
  std::optional<absl::StatusOr<drip::v1::CommandResult>> expired;
  absl::StatusOr<uint64_t> ticket = Send("mitigate-1", 1000, &cancelled);
  ASSERT_TRUE(ticket.ok()) << ticket.status();
  ASSERT_TRUE(Send("mitigate-2", 5000, &expired).ok());
  // Only the sender's ticket takes a command back, not its id alone.
  EXPECT_FALSE(router_.Cancel("mitigate-1", *ticket + 1));
  EXPECT_TRUE(router_.Cancel("mitigate-1", *ticket));
  EXPECT_FALSE(router_.Cancel("mitigate-1", *ticket));
  EXPECT_FALSE(router_.Deliver("web-1", Answer("mitigate-1")));
  EXPECT_FALSE(cancelled.has_value());
  router_.Expire(4999);
  EXPECT_FALSE(expired.has_value());
  router_.Expire(5000);
  ASSERT_TRUE(expired.has_value());
  EXPECT_EQ(expired->status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(router_.size(), 0u);
}

TEST_F(CommandRouterTest, ACommandSentBeforeARestartIsAwaitedWithoutBeingSentAgain) {
  std::optional<absl::StatusOr<drip::v1::CommandResult>> got;
  ASSERT_TRUE(router_
                  .Await("web-1", "mitigate-7", 1000,
                         [&](absl::StatusOr<drip::v1::CommandResult> r) { got = std::move(r); })
                  .ok());
  EXPECT_TRUE(stream_.sent.empty());
  EXPECT_EQ(Send("mitigate-7", 1000, &got).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(router_.Deliver("web-1", Answer("mitigate-7")));
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_EQ((*got)->command_id(), "mitigate-7");
}

}  // namespace
}  // namespace drip::collector
