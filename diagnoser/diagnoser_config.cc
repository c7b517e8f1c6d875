#include "diagnoser/diagnoser_config.h"

#include <limits>

#include "common/base/status_macros.h"

namespace drip::diagnoser {
namespace {

absl::Status ReadInt64(ConfigReader& reader, const std::string& key, int64_t* out, int64_t max) {
  uint64_t value = static_cast<uint64_t>(*out);
  RETURN_IF_ERROR(reader.ReadUint(key, &value, 0, static_cast<uint64_t>(max)));
  *out = static_cast<int64_t>(value);
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadDiagnoserConfig(ConfigReader& reader, const std::string& prefix,
                                 DiagnoserConfig* c) {
  const auto key = [&](const char* name) { return prefix + name; };
  RETURN_IF_ERROR(ReadInt64(reader, key("min_sampled_allocs"), &c->min_sampled_allocs, 1'000'000));
  RETURN_IF_ERROR(reader.ReadDouble(key("min_rise_samples"), &c->min_rise_samples, 0, 1e6));
  RETURN_IF_ERROR(reader.ReadDouble(key("noise_sigmas"), &c->noise_sigmas, 0, 100));
  uint64_t min_rise_bytes = static_cast<uint64_t>(c->min_rise_bytes);
  RETURN_IF_ERROR(reader.ReadByteSize(key("min_rise_bytes"), &min_rise_bytes));
  if (min_rise_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    min_rise_bytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  }
  c->min_rise_bytes = static_cast<int64_t>(min_rise_bytes);
  RETURN_IF_ERROR(reader.ReadDouble(key("level_off_ratio"), &c->level_off_ratio, 0, 1));
  RETURN_IF_ERROR(reader.ReadDouble(key("min_leak_steadiness"), &c->min_leak_steadiness, 0, 1));
  RETURN_IF_ERROR(
      reader.ReadDouble(key("max_leak_freed_fraction"), &c->max_leak_freed_fraction, 0, 1));
  RETURN_IF_ERROR(
      reader.ReadDouble(key("startup_window_fraction"), &c->startup_window_fraction, 0, 1));
  RETURN_IF_ERROR(reader.ReadDouble(key("transient_max_lifetime_fraction"),
                                    &c->transient_max_lifetime_fraction, 0, 1));
  RETURN_IF_ERROR(reader.ReadDouble(key("weight_share"), &c->weight_share, 0, 100));
  RETURN_IF_ERROR(reader.ReadDouble(key("weight_steadiness"), &c->weight_steadiness, 0, 100));
  RETURN_IF_ERROR(reader.ReadDouble(key("weight_not_levelling"), &c->weight_not_levelling, 0, 100));
  RETURN_IF_ERROR(reader.ReadDouble(key("weight_never_freed"), &c->weight_never_freed, 0, 100));
  RETURN_IF_ERROR(reader.ReadInt(key("max_trend_points"), &c->max_trend_points, 2, 4096));
  RETURN_IF_ERROR(reader.ReadInt(key("max_stacks"), &c->max_stacks, 0, 1'000'000));
  absl::Status valid = ValidateDiagnoserConfig(*c);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(reader.source() + ": " + std::string(valid.message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateDiagnoserConfig(const DiagnoserConfig& c) {
  if (c.weight_share + c.weight_steadiness + c.weight_not_levelling + c.weight_never_freed <= 0) {
    return absl::InvalidArgumentError("the score weights must not all be 0");
  }
  if (c.max_trend_points < 2) {
    return absl::InvalidArgumentError("max_trend_points must be at least 2");
  }
  return absl::OkStatus();
}

}  // namespace drip::diagnoser
