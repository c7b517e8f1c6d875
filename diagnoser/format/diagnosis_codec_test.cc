#include <gtest/gtest.h>

#include <string>

#include "diagnoser/diagnosis.h"
#include "diagnoser/format/diagnosis_json.h"
#include "diagnoser/format/diagnosis_proto.h"
#include "diagnoser/synthetic_heap.h"

namespace drip::diagnoser {
namespace {

Diagnosis Sample() {
  Diagnosis d;
  d.rss_growth_bytes_per_hour = 1.5e6;
  d.summary = "1 leak: Session::Remember";
  DiagnosedStack& s = d.stacks.emplace_back();
  s.frames = {
      testing::Frame("Session::Remember(Request const&)", "/usr/bin/app", "src/session.cc", 88),
      testing::Frame("main")};
  s.frames[0].build_id = "abcdef";
  s.live_bytes = 36 << 20;
  s.live_allocs = 180'000;
  s.growth_bytes_per_hour = 72e6;
  s.score = 0.93;
  s.verdict = Verdict::kLeak;
  s.reason = "grew";
  s.stack_id = 17;
  s.sampled_allocs = 70;
  s.freed_fraction = 0.01;
  s.steadiness = 0.98;
  s.recent_growth_ratio = 1.02;
  DiagnosedStack& c = d.stacks.emplace_back();
  c.verdict = Verdict::kCache;
  return d;
}

TEST(DiagnosisTest, VerdictNamesRoundTrip) {
  for (Verdict v : {Verdict::kLeak, Verdict::kCache, Verdict::kStartup, Verdict::kTransient}) {
    EXPECT_EQ(ParseVerdict(VerdictName(v)), v);
  }
  EXPECT_EQ(ParseVerdict("Leak"), std::nullopt);
}

TEST(DiagnosisTest, FrameLabelPrefersSourceThenModuleOffset) {
  StackFrame f = testing::Frame("Parse()", "/usr/bin/app", "/src/app/parse.cc", 12);
  EXPECT_EQ(FrameLabel(f), "Parse() (parse.cc:12)");
  f.line = 0;
  EXPECT_EQ(FrameLabel(f), "Parse() (parse.cc)");
  f.file.clear();
  EXPECT_EQ(FrameLabel(f), "Parse()");
  f.function.clear();
  f.module_offset = 0x1a2b;
  EXPECT_EQ(FrameLabel(f), "app+0x1a2b");
  f.module.clear();
  f.address = 0x7f00;
  EXPECT_EQ(FrameLabel(f), "0x7f00");
}

TEST(DiagnosisProtoTest, RoundTripKeepsEveryField) {
  const Diagnosis d = Sample();
  drip::v1::Diagnosis proto;
  DiagnosisToProto(d, &proto);
  EXPECT_EQ(proto.stacks(0).verdict(), "leak");
  auto back = DiagnosisFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->summary, d.summary);
  EXPECT_EQ(back->rss_growth_bytes_per_hour, d.rss_growth_bytes_per_hour);
  ASSERT_EQ(back->stacks.size(), 2u);
  const DiagnosedStack& s = back->stacks[0];
  EXPECT_EQ(s.frames.size(), 2u);
  EXPECT_EQ(s.frames[0].function, "Session::Remember(Request const&)");
  EXPECT_EQ(s.frames[0].build_id, "abcdef");
  EXPECT_EQ(s.frames[0].line, 88);
  EXPECT_EQ(s.frames[0].address, d.stacks[0].frames[0].address);
  EXPECT_EQ(s.live_bytes, 36 << 20);
  EXPECT_EQ(s.live_allocs, 180'000);
  EXPECT_EQ(s.growth_bytes_per_hour, 72e6);
  EXPECT_EQ(s.score, 0.93);
  EXPECT_EQ(s.verdict, Verdict::kLeak);
  EXPECT_EQ(s.reason, "grew");
  EXPECT_EQ(s.stack_id, 17u);
  EXPECT_EQ(s.sampled_allocs, 70);
  EXPECT_EQ(s.freed_fraction, 0.01);
  EXPECT_EQ(s.steadiness, 0.98);
  EXPECT_EQ(s.recent_growth_ratio, 1.02);
  EXPECT_EQ(back->stacks[1].verdict, Verdict::kCache);
}

TEST(DiagnosisProtoTest, UnknownVerdictIsAnErrorNamingTheStack) {
  drip::v1::Diagnosis proto;
  DiagnosisToProto(Sample(), &proto);
  proto.mutable_stacks(1)->set_verdict("suspicious");
  auto back = DiagnosisFromProto(proto);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().message(),
            "stacks[1].verdict: unknown verdict \"suspicious\" (expected leak, cache, startup, "
            "transient or inconclusive)");
}

TEST(DiagnosisJsonTest, HasTheContractKeysFirstAndInOrder) {
  const nlohmann::ordered_json j = DiagnosisToJson(Sample());
  const nlohmann::ordered_json& stack = j["stacks"][0];
  std::vector<std::string> keys;
  for (auto it = stack.begin(); it != stack.end(); ++it) keys.push_back(it.key());
  ASSERT_GE(keys.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 6),
            (std::vector<std::string>{"frames", "live_bytes", "live_allocs",
                                      "growth_bytes_per_hour", "score", "verdict"}));
  const nlohmann::ordered_json& frame = stack["frames"][0];
  EXPECT_EQ(frame["function"], "Session::Remember(Request const&)");
  EXPECT_EQ(frame["module"], "/usr/bin/app");
  EXPECT_EQ(frame["file"], "src/session.cc");
  EXPECT_EQ(frame["line"], 88);
  EXPECT_TRUE(frame["line"].is_number_integer());
  EXPECT_TRUE(stack["live_bytes"].is_number_integer());
  EXPECT_TRUE(stack["live_allocs"].is_number_integer());
  EXPECT_TRUE(stack["growth_bytes_per_hour"].is_number());
  EXPECT_EQ(stack["score"], 0.93);
  EXPECT_EQ(stack["verdict"], "leak");
  EXPECT_EQ(j["stacks"][1]["verdict"], "cache");
  EXPECT_EQ(j["summary"], "1 leak: Session::Remember");
  EXPECT_EQ(j.begin().key(), "stacks");
}

}  // namespace
}  // namespace drip::diagnoser
