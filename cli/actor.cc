#include "cli/actor.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "fmt/format.h"

namespace drip::cli {
namespace {

std::string UserName() {
  if (const char* user = std::getenv("USER"); user != nullptr && *user != '\0') return user;
  const uid_t uid = ::geteuid();
  long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd pw{};
  passwd* result = nullptr;
  if (::getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &result) == 0 && result != nullptr &&
      result->pw_name != nullptr && *result->pw_name != '\0') {
    return result->pw_name;
  }
  return fmt::format("uid{}", uid);
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "unknown-host";
  return name;
}

}  // namespace

std::string CurrentActor() { return UserName() + "@" + HostName(); }

}  // namespace drip::cli
