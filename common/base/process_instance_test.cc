#include "common/base/process_instance.h"

#include <gtest/gtest.h>

namespace drip {
namespace {

TEST(ProcessInstanceTest, FormatAndParseRoundTrip) {
  EXPECT_EQ(FormatProcessInstance(1234, 1700000000), "1234@1700000000");
  std::optional<ProcessInstance> parsed = ParseProcessInstance("1234@1700000000");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->pid, 1234);
  EXPECT_EQ(parsed->start_s, 1700000000);
}

TEST(ProcessInstanceTest, NamesThatAreNotAProcessInstanceParseToNothing) {
  for (const char* text :
       {"", "1234", "@1700000000", "1234@", "cg@42", "0@1700000000", "-5@1700000000",
        "12a@1700000000", "1234@17e9", "1234@+17", "99999999999@1"}) {
    EXPECT_FALSE(ParseProcessInstance(text).has_value()) << text;
    EXPECT_EQ(PidOfInstance(text), 0) << text;
  }
  EXPECT_EQ(PidOfInstance("77@1700000000"), 77);
}

}  // namespace
}  // namespace drip
