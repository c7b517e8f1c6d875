#include "diagnoser/diagnoser_config.h"

#include <gtest/gtest.h>

namespace drip::diagnoser {
namespace {

absl::Status Read(const std::string& yaml, DiagnoserConfig* config) {
  auto reader = ConfigReader::FromString(yaml, "diagnoser.yaml");
  if (!reader.ok()) return reader.status();
  absl::Status status = ReadDiagnoserConfig(*reader, "", config);
  if (!status.ok()) return status;
  return reader->CheckNoUnknownKeys();
}

TEST(DiagnoserConfigTest, AbsentKeysKeepTheirDefaults) {
  DiagnoserConfig config;
  ASSERT_TRUE(Read("min_sampled_allocs: 20\nmin_rise_bytes: 1MiB\n", &config).ok());
  EXPECT_EQ(config.min_sampled_allocs, 20);
  EXPECT_EQ(config.min_rise_bytes, 1 << 20);
  EXPECT_EQ(config.level_off_ratio, DiagnoserConfig{}.level_off_ratio);
}

TEST(DiagnoserConfigTest, ErrorsNameTheKey) {
  DiagnoserConfig config;
  absl::Status status = Read("level_off_ratio: 2\n", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("level_off_ratio"), std::string::npos) << status;
  status = Read("min_sampled_alocs: 3\n", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("min_sampled_alocs"), std::string::npos) << status;
  status = Read(
      "weight_share: 0\nweight_steadiness: 0\nweight_not_levelling: 0\n"
      "weight_never_freed: 0\n",
      &config);
  EXPECT_EQ(status.message(), "diagnoser.yaml: the score weights must not all be 0");
}

}  // namespace
}  // namespace drip::diagnoser
