// FormatDuration: durations in the baselines' parameter strings ("5m", "6h", "0s"), so
// the benchmark's report reads like the alert rules it imitates.
#pragma once

#include <cstdint>
#include <string>

#include "fmt/format.h"

namespace drip::bench {

inline std::string FormatDuration(int64_t s) {
  if (s != 0 && s % 3600 == 0) return fmt::format("{}h", s / 3600);
  if (s != 0 && s % 60 == 0) return fmt::format("{}m", s / 60);
  return fmt::format("{}s", s);
}

}  // namespace drip::bench
