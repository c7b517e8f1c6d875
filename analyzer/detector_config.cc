#include "analyzer/detector_config.h"

#include <chrono>

#include "common/base/status_macros.h"

namespace drip::analyzer {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

absl::Status ReadSeconds(ConfigReader& reader, const std::string& key, int64_t* out,
                         int64_t min_seconds) {
  milliseconds value(*out * 1000);
  RETURN_IF_ERROR(reader.ReadDuration(key, &value, seconds(min_seconds)));
  *out = value.count() / 1000;
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadDetectorConfig(ConfigReader& reader, const std::string& prefix,
                                DetectorConfig* config) {
  const auto key = [&](const char* name) { return prefix + name; };
  RETURN_IF_ERROR(ReadSeconds(reader, key("epoch"), &config->epoch_seconds, 10));
  RETURN_IF_ERROR(reader.ReadInt(key("floor_epochs"), &config->floor_epochs, 1, 16));
  // At least 0.15 %: buckets are kept in 16 bits, and a petabyte is 23,000 buckets of it.
  RETURN_IF_ERROR(reader.ReadDouble(key("bucket_width"), &config->bucket_width, 0.0015, 0.5));
  RETURN_IF_ERROR(
      reader.ReadInt(key("climb_tolerance_buckets"), &config->climb_tolerance_buckets, 0, 1000));
  RETURN_IF_ERROR(reader.ReadInt(key("min_rise_buckets"), &config->min_rise_buckets, 1, 10000));
  RETURN_IF_ERROR(reader.ReadInt(key("min_records"), &config->min_records, 1, 10000));
  RETURN_IF_ERROR(ReadSeconds(reader, key("min_climb"), &config->min_climb_seconds, 0));
  RETURN_IF_ERROR(reader.ReadInt(key("normal_high_margin_buckets"),
                                 &config->normal_high_margin_buckets, 0, 10000));
  RETURN_IF_ERROR(ReadSeconds(reader, key("relearn_after"), &config->relearn_seconds, 0));
  RETURN_IF_ERROR(reader.ReadDouble(key("normal_occupancy_fraction"),
                                    &config->normal_occupancy_fraction, 0.0, 0.5));
  RETURN_IF_ERROR(ReadSeconds(reader, key("established_after"), &config->established_seconds, 0));
  RETURN_IF_ERROR(ReadSeconds(reader, key("young_min_climb"), &config->young_min_climb_seconds, 0));
  RETURN_IF_ERROR(
      ReadSeconds(reader, key("young_fast_min_climb"), &config->young_fast_min_climb_seconds, 0));
  RETURN_IF_ERROR(reader.ReadDouble(key("young_fast_rise_fraction"),
                                    &config->young_fast_rise_fraction, 0.0, 100.0));
  RETURN_IF_ERROR(
      reader.ReadDouble(key("min_recent_slope_ratio"), &config->min_recent_slope_ratio, 0.0, 1.0));
  RETURN_IF_ERROR(ReadSeconds(reader, key("level_off"), &config->level_off_seconds, 0));
  RETURN_IF_ERROR(ReadSeconds(reader, key("startup_grace"), &config->startup_grace_seconds, 0));
  RETURN_IF_ERROR(
      reader.ReadInt(key("restart_leak_instances"), &config->restart_leak_instances, 1, 100));
  RETURN_IF_ERROR(
      ReadSeconds(reader, key("restart_min_climb"), &config->restart_min_climb_seconds, 0));
  RETURN_IF_ERROR(reader.ReadDouble(key("restart_min_recent_slope_ratio"),
                                    &config->restart_min_recent_slope_ratio, 0.0, 1.0));
  RETURN_IF_ERROR(reader.ReadInt(key("fleet_min_hosts"), &config->fleet_min_hosts, 1, 1000000));
  RETURN_IF_ERROR(
      reader.ReadDouble(key("fleet_min_fraction"), &config->fleet_min_fraction, 0.0, 1.0));
  RETURN_IF_ERROR(ReadSeconds(reader, key("fleet_min_climb"), &config->fleet_min_climb_seconds, 0));
  RETURN_IF_ERROR(ReadSeconds(reader, key("max_lateness"), &config->max_lateness_seconds, 0));
  RETURN_IF_ERROR(ReadSeconds(reader, key("max_gap"), &config->max_gap_seconds, 0));
  RETURN_IF_ERROR(
      reader.ReadByteSize(key("default_host_memory"), &config->default_host_memory_bytes, 0));
  absl::Status valid = ValidateDetectorConfig(*config);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(reader.source() + ": " + std::string(valid.message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateDetectorConfig(const DetectorConfig& config) {
  if (config.epoch_seconds <= 0) return absl::InvalidArgumentError("epoch must be positive");
  if (config.fleet_min_climb_seconds > config.min_climb_seconds) {
    return absl::InvalidArgumentError(
        "fleet_min_climb must not exceed min_climb: the fleet rule exists to flag earlier");
  }
  if (config.min_climb_seconds > config.young_min_climb_seconds) {
    return absl::InvalidArgumentError(
        "min_climb must not exceed young_min_climb: a young series needs more evidence");
  }
  if (config.max_lateness_seconds > 16 * config.epoch_seconds) {
    return absl::InvalidArgumentError("max_lateness must be at most 16 epochs");
  }
  return absl::OkStatus();
}

}  // namespace drip::analyzer
