#include "common/base/duration.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/base/strings.h"
#include "fmt/format.h"

namespace drip {
namespace {

// Splits "12.5ms" into 12.5 and "ms"; fails on an empty or negative number.
absl::StatusOr<std::pair<double, std::string>> SplitNumberUnit(std::string_view text,
                                                               std::string_view what) {
  std::string_view trimmed = TrimWhitespace(text);
  size_t i = 0;
  while (i < trimmed.size() &&
         (std::isdigit(static_cast<unsigned char>(trimmed[i])) || trimmed[i] == '.')) {
    ++i;
  }
  double number = 0;
  if (i == 0 || !ParseNumber(trimmed.substr(0, i), &number) || !std::isfinite(number)) {
    return absl::InvalidArgumentError(fmt::format("'{}' is not a {}", text, what));
  }
  std::string unit(TrimWhitespace(trimmed.substr(i)));
  return std::make_pair(number, unit);
}

}  // namespace

absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto split = SplitNumberUnit(text, "duration (e.g. 500ms, 10s, 5m, 2h, 7d)");
  if (!split.ok()) return split.status();
  auto [number, unit] = *split;
  double ms_per_unit = 0;
  if (unit == "ms") {
    ms_per_unit = 1;
  } else if (unit == "s" || unit.empty()) {
    ms_per_unit = 1000;
  } else if (unit == "m") {
    ms_per_unit = 60'000;
  } else if (unit == "h") {
    ms_per_unit = 3'600'000;
  } else if (unit == "d") {
    ms_per_unit = 86'400'000;
  } else {
    return absl::InvalidArgumentError(
        fmt::format("'{}' has unknown duration unit '{}' (use ms, s, m, h, d)", text, unit));
  }
  double ms = number * ms_per_unit;
  if (ms > static_cast<double>(std::numeric_limits<int64_t>::max() / 2)) {
    return absl::InvalidArgumentError(fmt::format("duration '{}' is too large", text));
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(ms)));
}

absl::StatusOr<uint64_t> ParseByteSize(std::string_view text) {
  auto split = SplitNumberUnit(text, "size (e.g. 4096, 64KiB, 16MiB, 1GB)");
  if (!split.ok()) return split.status();
  auto [number, unit] = *split;
  double multiplier = 0;
  if (unit.empty() || unit == "B") {
    multiplier = 1;
  } else if (unit == "KiB" || unit == "K") {
    multiplier = 1024.0;
  } else if (unit == "MiB" || unit == "M") {
    multiplier = 1024.0 * 1024;
  } else if (unit == "GiB" || unit == "G") {
    multiplier = 1024.0 * 1024 * 1024;
  } else if (unit == "KB") {
    multiplier = 1e3;
  } else if (unit == "MB") {
    multiplier = 1e6;
  } else if (unit == "GB") {
    multiplier = 1e9;
  } else {
    return absl::InvalidArgumentError(
        fmt::format("'{}' has unknown size unit '{}' (use B, KiB, MiB, GiB)", text, unit));
  }
  double bytes = number * multiplier;
  if (bytes >= 1.8e19)
    return absl::InvalidArgumentError(fmt::format("size '{}' is too large", text));
  return static_cast<uint64_t>(std::llround(bytes));
}

absl::StatusOr<double> ParseByteRate(std::string_view text) {
  std::string_view t = TrimWhitespace(text);
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);  // as FormatByteRate writes it
  const size_t slash = t.rfind('/');
  if (slash == std::string_view::npos) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not a growth rate (e.g. 4KiB/s, 3.6MiB/h, 1GiB/d)", text));
  }
  absl::StatusOr<uint64_t> bytes = ParseByteSize(t.substr(0, slash));
  if (!bytes.ok()) return bytes.status();
  const std::string_view per = TrimWhitespace(t.substr(slash + 1));
  double seconds = 0;
  if (per == "s") {
    seconds = 1;
  } else if (per == "m" || per == "min") {
    seconds = 60;
  } else if (per == "h") {
    seconds = 3600;
  } else if (per == "d") {
    seconds = 86400;
  } else {
    return absl::InvalidArgumentError(
        fmt::format("'{}' has unknown time unit '{}' (use /s, /m, /h, /d)", text, per));
  }
  return static_cast<double>(*bytes) * (3600 / seconds);
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms % 86'400'000 == 0 && ms != 0) return fmt::format("{}d", ms / 86'400'000);
  if (ms % 3'600'000 == 0 && ms != 0) return fmt::format("{}h", ms / 3'600'000);
  if (ms % 60'000 == 0 && ms != 0) return fmt::format("{}m", ms / 60'000);
  if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

std::string FormatSpan(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 2 * 3600) return fmt::format("{:.0f} min", seconds / 60);
  if (seconds < 2 * 86400) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} d", seconds / 86400);
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return buf;
}

std::string FormatByteRate(double bytes_per_hour) {
  // Past 2^63 B/h (or not a number) there is nothing a person could read into digits.
  if (!(std::fabs(bytes_per_hour) < 9.2e18)) return "? B/h";
  const uint64_t magnitude = static_cast<uint64_t>(std::llround(std::fabs(bytes_per_hour)));
  const char* sign = magnitude == 0 ? "" : bytes_per_hour > 0 ? "+" : "-";
  return std::string(sign) + FormatBytes(magnitude) + "/h";
}

}  // namespace drip
