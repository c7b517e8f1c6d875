#include "common/daemon/command_line.h"

#include <cstdio>
#include <string>

#include "common/base/exit_codes.h"
#include "common/version.h"

namespace drip {

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv,
                                    std::string_view program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    std::printf("%s\n", kVersion);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    const std::string name(program);
    std::fprintf(stderr, "%s: %s (see %s --help)\n", name.c_str(), e.what(), name.c_str());
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace drip
