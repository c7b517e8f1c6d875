#include "common/base/check.h"

#include "gtest/gtest.h"

namespace drip {
namespace {

TEST(CheckDeathTest, AFailedCheckNamesItsPlaceConditionAndMessageThenAborts) {
  const int streams = 3;
  EXPECT_DEATH(DRIP_CHECK(streams == 0, "{} streams still open", streams),
               "check_test.cc:[0-9]+: check failed: streams == 0: 3 streams still open");
}

TEST(CheckDeathTest, AHeldCheckDoesNothing) {
  int evaluated = 0;
  DRIP_CHECK(++evaluated == 1, "evaluated once");
  EXPECT_EQ(evaluated, 1);
}

TEST(CheckDeathTest, ADebugCheckStopsOnlyWithoutNdebug) {
#ifdef NDEBUG
  DRIP_DCHECK(false, "compiled out in release builds");
#else
  EXPECT_DEATH(DRIP_DCHECK(false, "debug builds stop"), "debug builds stop");
#endif
}

}  // namespace
}  // namespace drip
