// Small string helpers on std::string_view. Debian's abseil is built with its own
// absl::string_view, which does not mix with std::string_view, so Drip formats with
// fmt and parses with these instead of absl/strings.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace drip {

std::string_view TrimWhitespace(std::string_view s);
std::vector<std::string> SplitString(std::string_view s, char delimiter);

// Whole-string parses: "12x" and "" fail.
template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace drip
