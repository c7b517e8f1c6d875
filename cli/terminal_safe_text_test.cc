#include "cli/terminal_safe_text.h"

#include <gtest/gtest.h>

#include "drip/v1/report.pb.h"

namespace drip::cli {
namespace {

TEST(TerminalSafeTextTest, ControlBytesBecomeQuestionMarksAndTheRestIsKept) {
  EXPECT_EQ(TerminalSafe("nginx.service"), "nginx.service");
  EXPECT_EQ(TerminalSafe("caf\xc3\xa9 \xe2\x86\x92 ok"), "caf\xc3\xa9 \xe2\x86\x92 ok");
  EXPECT_EQ(TerminalSafe("proc:\x1b]0;pwned\x07x"), "proc:?]0;pwned?x");
  EXPECT_EQ(TerminalSafe("a\r\nb\tc\x7f"), "a??b?c?");
  // C1 controls (CSI is U+009B) are one '?' each, not two.
  EXPECT_EQ(TerminalSafe("x\xc2\x9b"
                         "31my"),
            "x?31my");
  EXPECT_EQ(TerminalSafe("\xc2"), "\xc2");  // a lone lead byte is not a control
}

// A hostile agent names its process with an escape sequence that would retitle or rewrite
// on-call's terminal; everything dripctl prints from the collector's answer is made safe
// as it arrives, in nested and repeated fields alike.
TEST(TerminalSafeTextTest, EscapeSequencesInACollectorsAnswerNeverReachTheTerminal) {
  drip::v1::LeakReport report;
  report.set_id("leak-1");
  report.set_component("proc:\x1b[2J\x1b]0;owned\x07");
  drip::v1::LeakHost* host = report.add_hosts();
  host->set_host("web-1\r\nweb-2   FAKE ROW");
  host->set_reason("grew\x1b[8m hidden");
  report.add_top_stacks()->add_frames()->set_function(
      "Remember\xc2\x9b"
      "0m");
  MakeTerminalSafe(&report);
  EXPECT_EQ(report.id(), "leak-1");
  EXPECT_EQ(report.component(), "proc:?[2J?]0;owned?");
  EXPECT_EQ(report.hosts(0).host(), "web-1??web-2   FAKE ROW");
  EXPECT_EQ(report.hosts(0).reason(), "grew?[8m hidden");
  EXPECT_EQ(report.top_stacks(0).frames(0).function(), "Remember?0m");
}

}  // namespace
}  // namespace drip::cli
