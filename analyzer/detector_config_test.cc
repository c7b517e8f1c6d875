#include "analyzer/detector_config.h"

#include <gtest/gtest.h>

namespace drip::analyzer {
namespace {

absl::Status Load(const std::string& yaml, DetectorConfig* config) {
  auto reader = ConfigReader::FromString(yaml, "detector.yaml");
  if (!reader.ok()) return reader.status();
  absl::Status status = ReadDetectorConfig(*reader, "", config);
  if (!status.ok()) return status;
  return reader->CheckNoUnknownKeys();
}

TEST(DetectorConfigTest, DefaultsAreValid) {
  EXPECT_TRUE(ValidateDetectorConfig(DetectorConfig{}).ok());
}

TEST(DetectorConfigTest, ReadsDurationsAndNumbers) {
  DetectorConfig config;
  ASSERT_TRUE(
      Load("epoch: 5m\nmin_climb: 3h\nbucket_width: 0.005\ndefault_host_memory: 64GiB\n", &config)
          .ok());
  EXPECT_EQ(config.epoch_seconds, 300);
  EXPECT_EQ(config.min_climb_seconds, 3 * 3600);
  EXPECT_DOUBLE_EQ(config.bucket_width, 0.005);
  EXPECT_EQ(config.default_host_memory_bytes, 64ull << 30);
}

TEST(DetectorConfigTest, UnknownKeyIsNamedWithItsLine) {
  DetectorConfig config;
  absl::Status status = Load("epoch: 5m\nmin_clim: 3h\n", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("min_clim"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(":2"), std::string::npos) << status.message();
}

TEST(DetectorConfigTest, OutOfRangeValueIsNamed) {
  DetectorConfig config;
  absl::Status status = Load("bucket_width: 2\n", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("bucket_width"), std::string::npos) << status.message();
}

TEST(DetectorConfigTest, InconsistentClimbDurationsAreRejected) {
  DetectorConfig config;
  absl::Status status = Load("fleet_min_climb: 8h\nmin_climb: 4h\n", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("fleet_min_climb"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace drip::analyzer
