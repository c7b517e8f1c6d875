#include "tests/support/go_pprof.h"

#include <cstdio>
#include <sstream>

namespace drip::testing {

GoPprofTop RunGoPprofTop(const std::string& args) {
  // HOME: go keeps its cache there, and a test's environment may have none.
  const std::string command =
      "HOME=${HOME:-/tmp} go tool pprof -top -unit=B -sample_index=inuse_space " + args + " 2>&1";
  GoPprofTop top;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return top;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) top.text.append(buffer, n);
  top.exit_status = ::pclose(pipe);
  std::istringstream lines(top.text);
  std::string line;
  while (std::getline(lines, line) && line.find("flat%") == std::string::npos) {
  }
  if (!std::getline(lines, top.first_row)) return top;
  // "  1234B 50.00% 50.00%  1234B 50.00%  function"
  const size_t start = top.first_row.find_first_not_of(' ');
  if (start != std::string::npos) {
    try {
      top.first_row_bytes = std::stoll(top.first_row.substr(start));
    } catch (const std::exception&) {
      top.first_row_bytes = -1;
    }
  }
  return top;
}

}  // namespace drip::testing
