#include "common/base/config_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace drip {
namespace {

using std::chrono::milliseconds;

TEST(ConfigReaderTest, ReadsNestedKeysAndKeepsDefaultsForAbsentOnes) {
  auto reader = ConfigReader::FromString(
      "grpc:\n  listen_address: 127.0.0.1:7070\nstorage:\n  retention: 7d\n", "test.yaml");
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::string listen = "default";
  std::string path = "/var/lib/drip";
  milliseconds retention(0);
  ASSERT_TRUE(reader->ReadString("grpc.listen_address", &listen).ok());
  ASSERT_TRUE(reader->ReadString("storage.path", &path).ok());
  ASSERT_TRUE(reader->ReadDuration("storage.retention", &retention).ok());
  EXPECT_EQ(listen, "127.0.0.1:7070");
  EXPECT_EQ(path, "/var/lib/drip");
  EXPECT_EQ(retention, milliseconds(7LL * 86'400'000));
  EXPECT_TRUE(reader->CheckNoUnknownKeys().ok());
}

TEST(ConfigReaderTest, UnknownKeyIsAnErrorNamingFileLineAndKey) {
  auto reader = ConfigReader::FromString("grpc:\n  listen_adress: x\n", "collector.yaml");
  ASSERT_TRUE(reader.ok());
  std::string listen;
  ASSERT_TRUE(reader->ReadString("grpc.listen_address", &listen).ok());
  absl::Status status = reader->CheckNoUnknownKeys();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(std::string(status.message()), "collector.yaml:2: unknown key 'grpc.listen_adress'");
}

// Found by fuzzing (tests/fuzz/regressions/*_config_fuzzer/): an alias inside its own
// anchor made a cyclic document whose walk overflowed the stack.
TEST(ConfigReaderTest, AliasThatContainsItselfIsAnErrorNotACrash) {
  for (const char* yaml : {"a: &a {b: *a}\n", "a: &a [*a]\n", "x:\n  y: &y\n    - z: *y\n"}) {
    auto reader = ConfigReader::FromString(yaml, "loop.yaml");
    ASSERT_FALSE(reader.ok()) << yaml;
    EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(reader.status().message(), "loop.yaml:"));
    EXPECT_NE(reader.status().message().find("levels deep (an alias that contains itself?)"),
              std::string::npos)
        << reader.status();
  }
}

TEST(ConfigReaderTest, AliasesThatExpandToMillionsOfValuesAreAnError) {
  // Each level holds ten of the one before: 10^7 values from eight short lines.
  std::string yaml = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 7; ++i) {
    yaml += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) yaml += (j ? ", *l" : "*l") + std::to_string(i - 1);
    yaml += "]\n";
  }
  auto reader = ConfigReader::FromString(yaml, "laughs.yaml");
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("more than 100000 values once aliases are expanded"),
            std::string::npos)
      << reader.status();
}

TEST(ConfigReaderTest, AliasesWithinTheLimitsAreRead) {
  auto reader = ConfigReader::FromString("a: &v 5s\nb: *v\n", "ok.yaml");
  ASSERT_TRUE(reader.ok()) << reader.status();
  milliseconds b(0);
  ASSERT_TRUE(reader->ReadDuration("b", &b).ok());
  EXPECT_EQ(b, milliseconds(5000));
}

TEST(ConfigReaderTest, KeySetTwiceIsAnErrorNamingBothLines) {
  auto reader = ConfigReader::FromString("a: 1\nb:\n  c: 2\n  c: 3\n", "x.yaml");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(), "x.yaml:4: b.c: set twice (first at line 3)");
}

TEST(ConfigReaderTest, BadValueIsAnErrorNamingFileLineAndKey) {
  auto reader = ConfigReader::FromString("interval: soon\nmax: -3\n", "agent.yaml");
  ASSERT_TRUE(reader.ok());
  milliseconds interval(0);
  absl::Status status = reader->ReadDuration("interval", &interval);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("agent.yaml:1: interval:"), std::string::npos) << status;
  uint64_t max = 0;
  status = reader->ReadUint("max", &max);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("agent.yaml:2: max:"), std::string::npos) << status;
}

TEST(ConfigReaderTest, OutOfRangeAndEnumErrorsSayWhatIsAllowed) {
  auto reader = ConfigReader::FromString("n: 0\nmode: fast\n", "x.yaml");
  ASSERT_TRUE(reader.ok());
  uint64_t n = 5;
  EXPECT_FALSE(reader->ReadUint("n", &n, 1, 10).ok());
  EXPECT_EQ(n, 5u);
  std::string mode = "auto";
  absl::Status status = reader->ReadEnum("mode", {"auto", "bpf", "proc"}, &mode);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("auto, bpf, proc"), std::string::npos);
}

TEST(ConfigReaderTest, MapsAreReadWholeAndTheirKeysAreNotUnknown) {
  auto reader = ConfigReader::FromString("labels:\n  env: prod\n  rack: r7\n", "x.yaml");
  ASSERT_TRUE(reader.ok());
  std::map<std::string, std::string> labels;
  ASSERT_TRUE(reader->ReadStringMap("labels", &labels).ok());
  EXPECT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels["rack"], "r7");
  EXPECT_TRUE(reader->CheckNoUnknownKeys().ok());
}

TEST(ConfigReaderTest, InvalidYamlNamesTheLine) {
  auto reader = ConfigReader::FromString("a: 1\nb: [unclosed\n", "bad.yaml");
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("bad.yaml:"), std::string::npos);
}

TEST(ConfigReaderTest, MissingFileIsNotFound) {
  auto reader = ConfigReader::FromFile("/nonexistent/drip.yaml");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace drip
