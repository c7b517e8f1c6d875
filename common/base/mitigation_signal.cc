#include "common/base/mitigation_signal.h"

#include <array>
#include <cctype>

#include "fmt/format.h"

namespace drip {
namespace {

struct NamedSignal {
  std::string_view name;
  int number;
};

constexpr std::array<NamedSignal, 8> kSignals = {{{"SIGHUP", 1},
                                                  {"SIGINT", 2},
                                                  {"SIGQUIT", 3},
                                                  {"SIGABRT", 6},
                                                  {"SIGKILL", 9},
                                                  {"SIGUSR1", 10},
                                                  {"SIGUSR2", 12},
                                                  {"SIGTERM", 15}}};

}  // namespace

absl::StatusOr<int> ParseMitigationSignal(std::string_view text) {
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const NamedSignal& s : kSignals) {
    if (upper == s.name || upper == s.name.substr(3) || upper == std::to_string(s.number)) {
      return s.number;
    }
  }
  return absl::InvalidArgumentError(fmt::format(
      "'{}' is not a signal a mitigation may send (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, "
      "SIGKILL, SIGUSR1, SIGUSR2, by name or number)",
      text));
}

std::string MitigationSignalName(int signal) {
  for (const NamedSignal& s : kSignals) {
    if (s.number == signal) return std::string(s.name);
  }
  return std::to_string(signal);
}

}  // namespace drip
