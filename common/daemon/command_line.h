// The command line of every Drip binary, parsed one way: --help and --version print to
// stdout and end the run with 0; a bad flag prints one line on stderr naming it (and
// where to read more) and ends the run with 2 (common/base/exit_codes.h).
#pragma once

#include <optional>
#include <string_view>

#include "CLI/CLI.hpp"

namespace drip {

// Parses argv into `app` (whose version flag is common/version.h's). Returns the exit
// code to end with when parsing ended the run; nullopt to go on. `program` names the
// binary in the error line.
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, std::string_view program);

}  // namespace drip
