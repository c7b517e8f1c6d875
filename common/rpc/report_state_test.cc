#include "common/rpc/report_state.h"

#include "gtest/gtest.h"

namespace drip {
namespace {

TEST(ReportStateTest, EveryStateRoundTripsThroughTheNameStoredReportsCarry) {
  for (int n = drip::v1::ReportState_MIN; n <= drip::v1::ReportState_MAX; ++n) {
    const auto state = static_cast<drip::v1::ReportState>(n);
    if (state == drip::v1::REPORT_STATE_UNSPECIFIED) continue;
    ASSERT_FALSE(ReportStateName(state).empty()) << n;
    EXPECT_EQ(ParseReportState(ReportStateName(state)), state);
  }
  // The spelling stored reports and dripctl's JSON have always had.
  drip::v1::LeakReport report;
  SetReportState(&report, drip::v1::REPORT_STATE_ACKNOWLEDGED);
  EXPECT_EQ(report.state(), "acknowledged");
  report.set_state("resolved");
  EXPECT_EQ(ReportStateOf(report), drip::v1::REPORT_STATE_RESOLVED);
}

TEST(ReportStateTest, AnUnknownNameIsNoState) {
  EXPECT_EQ(ParseReportState("all"), drip::v1::REPORT_STATE_UNSPECIFIED);
  EXPECT_EQ(ParseReportState(""), drip::v1::REPORT_STATE_UNSPECIFIED);
  EXPECT_EQ(ParseReportState("Open"), drip::v1::REPORT_STATE_UNSPECIFIED);
  EXPECT_EQ(ReportStateName(drip::v1::REPORT_STATE_UNSPECIFIED), "");
}

}  // namespace
}  // namespace drip
