#include "common/base/process_instance.h"

#include <charconv>

#include "fmt/format.h"

namespace drip {
namespace {

// The whole of `text` as a decimal integer without sign, or nullopt.
template <typename T>
std::optional<T> ParseDecimal(std::string_view text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  T value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::string FormatProcessInstance(int pid, int64_t start_s) {
  return fmt::format("{}@{}", pid, start_s);
}

std::optional<ProcessInstance> ParseProcessInstance(std::string_view text) {
  const size_t at = text.find('@');
  if (at == std::string_view::npos) return std::nullopt;
  std::optional<int> pid = ParseDecimal<int>(text.substr(0, at));
  std::optional<int64_t> start = ParseDecimal<int64_t>(text.substr(at + 1));
  if (!pid || *pid <= 0 || !start) return std::nullopt;
  return ProcessInstance{*pid, *start};
}

int PidOfInstance(std::string_view text) {
  std::optional<ProcessInstance> instance = ParseProcessInstance(text);
  return instance ? instance->pid : 0;
}

}  // namespace drip
