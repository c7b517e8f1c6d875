#include "cli/terminal_style.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace drip::cli {

TerminalStyle TerminalStyle::ForStdout() {
  if (::isatty(STDOUT_FILENO) != 1) return TerminalStyle(false);
  if (const char* no_color = std::getenv("NO_COLOR"); no_color != nullptr && *no_color != '\0') {
    return TerminalStyle(false);
  }
  if (const char* term = std::getenv("TERM"); term == nullptr || std::strcmp(term, "dumb") == 0) {
    return TerminalStyle(false);
  }
  return TerminalStyle(true);
}

std::string TerminalStyle::Bold(std::string_view text) const {
  if (!enabled_ || text.empty()) return std::string(text);
  return "\033[1m" + std::string(text) + "\033[0m";
}

std::string TerminalStyle::Alert(std::string_view text) const {
  if (!enabled_ || text.empty()) return std::string(text);
  return "\033[1;31m" + std::string(text) + "\033[0m";
}

}  // namespace drip::cli
