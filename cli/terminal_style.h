// TerminalStyle: emphasis for a person at a terminal — bold table headers, alerts (a
// critical leak, a failed mitigation) in bold red — and plain text everywhere else.
// Output that goes to a pipe or a file never carries ANSI escape codes, so scripts and
// grep see the same bytes as the tests do.
#pragma once

#include <string>
#include <string_view>

namespace drip::cli {

class TerminalStyle {
 public:
  // Plain: no escape codes at all.
  TerminalStyle() = default;
  explicit TerminalStyle(bool enabled) : enabled_(enabled) {}

  // Enabled when standard output is a terminal, NO_COLOR (no-color.org) is unset and
  // TERM is not "dumb".
  static TerminalStyle ForStdout();

  bool enabled() const { return enabled_; }
  std::string Bold(std::string_view text) const;
  std::string Alert(std::string_view text) const;

 private:
  bool enabled_ = false;
};

}  // namespace drip::cli
