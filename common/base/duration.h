// Human durations, sizes and growth rates: parsed as operators write them in configs and
// flags ("500ms", "10s", "5m", "2h", "14d"; "64MiB", "1GB", "4096"), and formatted the
// one way every binary prints them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace drip {

absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text);
absl::StatusOr<uint64_t> ParseByteSize(std::string_view text);
// A growth rate, "<size>/<s|m|h|d>" ("4KiB/s", "3.6MiB/h", and "+3.6 MiB/h" as
// FormatByteRate writes it), in bytes per hour.
absl::StatusOr<double> ParseByteRate(std::string_view text);
std::string FormatDuration(std::chrono::milliseconds d);
// A span for people, to two significant figures: "45 s", "12 min", "7.5 h", "3.2 d".
std::string FormatSpan(double seconds);
// "0 B", "512 B", "1.5 KiB", "38.0 MiB".
std::string FormatBytes(uint64_t bytes);
// A growth rate with its sign: "+4.0 MiB/h", "-512 B/h", "0 B/h".
std::string FormatByteRate(double bytes_per_hour);

}  // namespace drip
