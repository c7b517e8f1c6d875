#include "common/snapshot/heap_snapshot_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/snapshot/heap_snapshot_test_util.h"
#include "nlohmann/json.hpp"

namespace drip {
namespace {

using drip::testing::ExpectSnapshotsEqual;
using drip::testing::FullSnapshot;

std::string ErrorOf(const std::string& text) {
  auto parsed = ParseHeapSnapshotJson(text, "snap.json");
  if (parsed.ok()) return "OK";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

// The full snapshot as a JSON document, changed by `edit`, as text.
template <typename Edit>
std::string Edited(Edit edit) {
  nlohmann::json j = nlohmann::json::parse(HeapSnapshotToJson(FullSnapshot()));
  edit(j);
  return j.dump();
}

TEST(HeapSnapshotJsonTest, RoundTripKeepsEveryField) {
  const HeapSnapshot original = FullSnapshot();
  const std::string text = HeapSnapshotToJson(original);
  auto parsed = ParseHeapSnapshotJson(text, "snap.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectSnapshotsEqual(original, *parsed);
  EXPECT_EQ(HeapSnapshotToJson(*parsed), text);
}

TEST(HeapSnapshotJsonTest, WritesTheDocumentedLayout) {
  const std::string text = HeapSnapshotToJson(FullSnapshot());
  nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["target"]["pid"], 4242);
  EXPECT_EQ(j["target"]["component"], "svc:leaky.service");
  EXPECT_EQ(j["mode"], "attach");
  EXPECT_EQ(j["window"]["interval_seconds"], 10.5);
  EXPECT_EQ(j["sampling"]["mean_bytes"], 524288);
  EXPECT_EQ(j["stop"]["reason"], "duration");
  EXPECT_EQ(j["events"]["dropped"], 1);
  EXPECT_EQ(j["events"]["lost_while_behind"], 1);
  EXPECT_EQ(j["events"]["unwind_failures"], 2);
  EXPECT_EQ(j["events"]["unsampled_calls"], nlohmann::json({"mallocx", "sdallocx"}));
  EXPECT_EQ(j["rss"][1]["anon_bytes"], 151 << 20);
  EXPECT_EQ(j["stacks"][0]["frames"][1]["line"], 88);
  EXPECT_EQ(j["stacks"][0]["frames"][0]["module_offset"], 0x9a234);
  EXPECT_EQ(j["stacks"][0]["series"][1]["live_allocs"], 2);
  EXPECT_EQ(j["stacks"][1]["sampled_allocs"], 1);
  EXPECT_EQ(j["stacks"][0]["cohorts"][1]["live"], 3);
  EXPECT_FALSE(j["stacks"][1].contains("cohorts"));  // not recorded: left out
  // Pretty-printed with two spaces, keys in the documented order.
  EXPECT_EQ(text.rfind("{\n  \"version\": 1,\n  \"target\": {\n    \"pid\": 4242", 0), 0u);
  EXPECT_EQ(text.back(), '\n');
}

TEST(HeapSnapshotJsonTest, OptionalGroupsMayBeLeftOut) {
  const std::string text = R"({"version": 1, "target": {"pid": 9}, "mode": "preload",
    "window": {"start_ms": 1000, "end_ms": 61000, "interval_seconds": 10},
    "sampling": {"mean_bytes": 0},
    "stacks": [{"id": 1, "frames": [{"function": "main"}], "series": [],
                "sampled_allocs": 0, "sampled_frees": 0, "allocated_bytes": 0,
                "freed_bytes": 0, "first_alloc_ms": 0, "last_alloc_ms": 0}]})";
  auto parsed = ParseHeapSnapshotJson(text, "min.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->mode, "preload");
  EXPECT_EQ(parsed->duty_cycle.on_fraction, 1);
  EXPECT_TRUE(parsed->rss.empty());
  EXPECT_EQ(parsed->stop_reason, "");
  ASSERT_EQ(parsed->stacks.size(), 1u);
  EXPECT_EQ(parsed->stacks[0].frames[0].function, "main");
  EXPECT_EQ(parsed->stacks[0].frames[0].line, 0);
}

TEST(HeapSnapshotJsonTest, UnknownKeysAreIgnored) {
  EXPECT_EQ(ErrorOf(Edited([](nlohmann::json& j) {
              j["future_field"] = {1, 2};
              j["stacks"][0]["frames"][0]["inlined"] = true;
            })),
            "OK");
}

struct BadCase {
  const char* what;
  void (*edit)(nlohmann::json&);
  const char* message;
};

TEST(HeapSnapshotJsonTest, EveryErrorNamesItsField) {
  const std::vector<BadCase> cases = {
      {"string for an integer",
       [](nlohmann::json& j) { j["stacks"][0]["series"][2]["live_bytes"] = "12"; },
       "snap.json: stacks[0].series[2].live_bytes: expected an integer"},
      {"fraction for an integer", [](nlohmann::json& j) { j["rss"][1]["anon_bytes"] = 1.5; },
       "snap.json: rss[1].anon_bytes: expected an integer"},
      {"missing window end", [](nlohmann::json& j) { j["window"].erase("end_ms"); },
       "snap.json: window.end_ms: required field is missing"},
      {"missing pid", [](nlohmann::json& j) { j["target"].erase("pid"); },
       "snap.json: target.pid: required field is missing"},
      {"missing stacks", [](nlohmann::json& j) { j.erase("stacks"); },
       "snap.json: stacks: required field is missing"},
      {"missing stack counter", [](nlohmann::json& j) { j["stacks"][1].erase("freed_bytes"); },
       "snap.json: stacks[1].freed_bytes: required field is missing"},
      {"more survivors than allocations",
       [](nlohmann::json& j) { j["stacks"][0]["cohorts"][1]["live"] = 9; },
       "snap.json: stacks[0].cohorts[1].live: 9 is more than the slice's allocs 4"},
      {"more allocations lost while behind than dropped",
       [](nlohmann::json& j) { j["events"]["lost_while_behind"] = 2; },
       "snap.json: events.lost_while_behind: 2 is more than the 1 dropped events it is part of"},
      {"unsampled call that is not a name",
       [](nlohmann::json& j) { j["events"]["unsampled_calls"][1] = 7; },
       "snap.json: events.unsampled_calls[1]: expected a string"},
      {"empty unsampled call", [](nlohmann::json& j) { j["events"]["unsampled_calls"][0] = ""; },
       "snap.json: events.unsampled_calls[0]: must be a name of 1 to 128 bytes (got 0)"},
      {"cohort without its count",
       [](nlohmann::json& j) { j["stacks"][0]["cohorts"][2].erase("allocs"); },
       "snap.json: stacks[0].cohorts[2].allocs: required field is missing"},
      {"missing point time", [](nlohmann::json& j) { j["stacks"][1]["series"][0].erase("t_ms"); },
       "snap.json: stacks[1].series[0].t_ms: required field is missing"},
      {"version 2", [](nlohmann::json& j) { j["version"] = 2; },
       "snap.json: version: 2 is not supported (this build reads version 1)"},
      {"unknown mode", [](nlohmann::json& j) { j["mode"] = "ptrace"; },
       "snap.json: mode: unknown mode \"ptrace\" (expected attach or preload)"},
      {"negative live bytes",
       [](nlohmann::json& j) { j["stacks"][1]["series"][0]["live_bytes"] = -1; },
       "snap.json: stacks[1].series[0].live_bytes: must not be negative (got -1)"},
      {"negative allocated bytes",
       [](nlohmann::json& j) { j["stacks"][1]["allocated_bytes"] = -5; },
       "snap.json: stacks[1].allocated_bytes: must not be negative (got -5)"},
      {"negative sampling mean", [](nlohmann::json& j) { j["sampling"]["mean_bytes"] = -4096; },
       "snap.json: sampling.mean_bytes: must not be negative (got -4096)"},
      {"negative rss", [](nlohmann::json& j) { j["rss"][0]["rss_bytes"] = -1; },
       "snap.json: rss[0].rss_bytes: must not be negative (got -1)"},
      {"series time going back",
       [](nlohmann::json& j) { j["stacks"][0]["series"][2]["t_ms"] = 1'700'000'105'000; },
       "snap.json: stacks[0].series[2].t_ms: 1700000105000 is not after the previous point's "
       "1700000110500 (times must strictly increase)"},
      {"repeated series time", [](nlohmann::json& j) { j["rss"][1]["t_ms"] = j["rss"][0]["t_ms"]; },
       "snap.json: rss[1].t_ms: 1700000100000 is not after the previous point's 1700000100000 "
       "(times must strictly increase)"},
      {"number for a string",
       [](nlohmann::json& j) { j["stacks"][0]["frames"][1]["function"] = 5; },
       "snap.json: stacks[0].frames[1].function: expected a string"},
      {"object for an array", [](nlohmann::json& j) { j["stacks"] = nlohmann::json::object(); },
       "snap.json: stacks: expected an array"},
      {"array for an object", [](nlohmann::json& j) { j["window"] = nlohmann::json::array(); },
       "snap.json: window: expected an object"},
      {"frame not an object", [](nlohmann::json& j) { j["stacks"][0]["frames"][0] = 17; },
       "snap.json: stacks[0].frames[0]: expected an object"},
      {"string for a number", [](nlohmann::json& j) { j["window"]["interval_seconds"] = "10s"; },
       "snap.json: window.interval_seconds: expected a number"},
      {"zero interval", [](nlohmann::json& j) { j["window"]["interval_seconds"] = 0; },
       "snap.json: window.interval_seconds: must be a positive number of seconds (got 0)"},
      {"window ends before it starts", [](nlohmann::json& j) { j["window"]["end_ms"] = 5; },
       "snap.json: window.end_ms: 5 is before window.start_ms 1700000100000"},
      {"repeated stack id", [](nlohmann::json& j) { j["stacks"][1]["id"] = j["stacks"][0]["id"]; },
       "snap.json: stacks[1].id: 18446744073709551615 repeats stacks[0].id (ids must be unique)"},
      {"pid zero", [](nlohmann::json& j) { j["target"]["pid"] = 0; },
       "snap.json: target.pid: must be a process id above 0 (got 0)"},
      {"pid out of range", [](nlohmann::json& j) { j["target"]["pid"] = 1LL << 40; },
       "snap.json: target.pid: integer out of range"},
      {"int64 out of range",
       [](nlohmann::json& j) { j["stacks"][0]["sampled_allocs"] = 18446744073709551615ULL; },
       "snap.json: stacks[0].sampled_allocs: integer out of range"},
      {"on_fraction above one", [](nlohmann::json& j) { j["duty_cycle"]["on_fraction"] = 1.5; },
       "snap.json: duty_cycle.on_fraction: must be between 0 and 1 (got 1.5)"},
      {"null for a string", [](nlohmann::json& j) { j["stop"]["reason"] = nullptr; },
       "snap.json: stop.reason: expected a string"},
      {"top level array", [](nlohmann::json& j) { j = nlohmann::json::array(); },
       "snap.json: top level: expected an object"},
      // Found by fuzzing: times far apart overflowed the diagnoser's time differences.
      {"negative series time",
       [](nlohmann::json& j) { j["stacks"][0]["series"][0]["t_ms"] = -9'000'000'000'000'000'000; },
       "snap.json: stacks[0].series[0].t_ms: must not be negative (got -9000000000000000000)"},
      {"negative rss time", [](nlohmann::json& j) { j["rss"][0]["t_ms"] = -1; },
       "snap.json: rss[0].t_ms: must not be negative (got -1)"},
  };
  for (const BadCase& c : cases) {
    EXPECT_EQ(ErrorOf(Edited(c.edit)), c.message) << c.what;
  }
}

TEST(HeapSnapshotJsonTest, SyntaxErrorsGiveLineAndColumn) {
  const std::string message = ErrorOf("{\n  \"version\": 1,\n  \"mode\": attach\n}");
  EXPECT_EQ(message.rfind("snap.json: not valid JSON: at line 3, column", 0), 0u) << message;
}

TEST(HeapSnapshotJsonTest, EveryTruncationIsAnErrorNotACrash) {
  const std::string text = HeapSnapshotToJson(FullSnapshot());
  // Every cut short of the closing brace (what follows it is only whitespace).
  const size_t end = text.find_last_not_of(" \n") + 1;
  for (size_t n = 0; n < end; n += 7) {
    auto parsed = ParseHeapSnapshotJson(std::string_view(text).substr(0, n), "cut.json");
    EXPECT_FALSE(parsed.ok()) << n;
  }
  EXPECT_FALSE(ParseHeapSnapshotJson("\xff\xfe{}", "bom.json").ok());
  EXPECT_FALSE(ParseHeapSnapshotJson("", "empty.json").ok());
}

TEST(HeapSnapshotJsonTest, InvalidUtf8InNamesIsReplacedRatherThanThrown) {
  HeapSnapshot s = FullSnapshot();
  s.stacks[0].frames[1].function = "bad\xc3(";
  const std::string text = HeapSnapshotToJson(s);
  auto parsed = ParseHeapSnapshotJson(text, "snap.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->stacks[0].frames[1].function, "bad\xef\xbf\xbd(");
}

}  // namespace
}  // namespace drip
