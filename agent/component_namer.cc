#include "agent/component_namer.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/base/strings.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

constexpr std::string_view kServiceSuffix = ".service";
constexpr std::string_view kScopeSuffix = ".scope";
constexpr std::string_view kDeletedSuffix = " (deleted)";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

ComponentNamer::ComponentNamer(std::string proc_root) : proc_root_(std::move(proc_root)) {}

std::string ComponentNamer::ServiceUnitOf(std::string_view cgroup_path) {
  std::vector<std::string> parts = SplitString(TrimWhitespace(cgroup_path), '/');
  // The outermost unit decides: only the host's system manager names system services.
  // What a unit contains is its own business — delegated sub-cgroups ("nginx.service/
  // worker"), a container's own systemd, a user's manager — and a unit named there (a user
  // service called "sshd.service") must not pass for the host's, whose restart and
  // snapshot allow-lists are written for system services.
  for (const std::string& part : parts) {
    // A scope groups processes systemd did not start (logins, containers, the user
    // manager's own init.scope); its name says nothing stable across hosts.
    if (EndsWith(part, kScopeSuffix)) return "";
    if (EndsWith(part, kServiceSuffix) && part.size() > kServiceSuffix.size()) {
      // user@UID.service is a system unit, but what runs in it is that user's.
      return part.starts_with("user@") ? "" : part;
    }
  }
  return "";
}

std::string ComponentNamer::ExecutableName(std::string_view exe_target) {
  std::string_view path = exe_target;
  if (EndsWith(path, kDeletedSuffix)) path.remove_suffix(kDeletedSuffix.size());
  size_t slash = path.rfind('/');
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  return std::string(path);
}

std::string ComponentNamer::ToValidUtf8(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  size_t i = 0;
  while (i < name.size()) {
    const auto byte = static_cast<unsigned char>(name[i]);
    // Length of the sequence `byte` starts and the smallest code point it may encode
    // (to refuse overlong forms).
    size_t length = 0;
    uint32_t code_point = 0;
    uint32_t minimum = 0;
    if (byte < 0x80) {
      out += static_cast<char>(byte);
      ++i;
      continue;
    } else if ((byte & 0xE0) == 0xC0) {
      length = 2, code_point = byte & 0x1F, minimum = 0x80;
    } else if ((byte & 0xF0) == 0xE0) {
      length = 3, code_point = byte & 0x0F, minimum = 0x800;
    } else if ((byte & 0xF8) == 0xF0) {
      length = 4, code_point = byte & 0x07, minimum = 0x10000;
    }
    bool valid = length > 0 && i + length <= name.size();
    for (size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(name[i + k]);
      valid = (next & 0xC0) == 0x80;
      code_point = (code_point << 6) | (next & 0x3F);
    }
    valid = valid && code_point >= minimum && code_point <= 0x10FFFF &&
            !(code_point >= 0xD800 && code_point <= 0xDFFF);
    if (valid) {
      out.append(name.substr(i, length));
      i += length;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

std::string ComponentNamer::ComponentOf(int pid, std::string_view cgroup_path,
                                        std::string_view comm) const {
  std::string unit = ServiceUnitOf(cgroup_path);
  if (!unit.empty()) return fmt::format("svc:{}", ToValidUtf8(unit));

  // Unreadable for other users' processes when not root, and for some processes in
  // other mount namespaces; comm stands in then.
  const std::string name = ProgramNameOf(pid, comm).value_or("");
  return ComponentFromNames(cgroup_path, name, comm);
}

std::string ComponentNamer::ComponentOfTask(int pid, std::string_view cgroup_path,
                                            std::string_view exe_name,
                                            std::string_view comm) const {
  // comm is the first 15 bytes of the name the program was started by: the start of the
  // executable's name unless that was another name.
  if (exe_name.empty() || comm.empty() || exe_name.starts_with(comm) ||
      !ServiceUnitOf(cgroup_path).empty()) {
    return ComponentFromNames(cgroup_path, exe_name, comm);
  }
  // Unreadable once it has exited: the executable's name then.
  const std::string name = ProgramNameOf(pid, comm).value_or(std::string(exe_name));
  return ComponentFromNames(cgroup_path, name, comm);
}

std::optional<std::string> ComponentNamer::ProgramNameOf(int pid, std::string_view comm) const {
  char target[PATH_MAX];
  const std::string link = fmt::format("{}/{}/exe", proc_root_, pid);
  const ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
  if (n <= 0) return std::nullopt;
  return ProgramName(pid, std::string_view(target, static_cast<size_t>(n)), comm);
}

std::string ComponentNamer::ProgramName(int pid, std::string_view exe_target,
                                        std::string_view comm) const {
  std::string name = ExecutableName(exe_target);
  if (comm.empty() || name.empty() || name.starts_with(comm)) return name;
  if (comm.find('/') != std::string_view::npos || comm == "." || comm == "..") return name;
  std::string_view path = exe_target;
  if (EndsWith(path, kDeletedSuffix)) return name;  // replaced: nothing to compare with
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || path.front() != '/') return name;
  // Both looked up under the process's root, so a container's /usr/bin is its own.
  const std::string root = fmt::format("{}/{}/root", proc_root_, pid);
  const std::string by_comm = fmt::format("{}{}/{}", root, path.substr(0, slash), comm);
  const std::string executable = fmt::format("{}{}", root, path);
  struct stat by_comm_stat {};
  struct stat executable_stat {};
  if (stat(by_comm.c_str(), &by_comm_stat) != 0 ||
      stat(executable.c_str(), &executable_stat) != 0 ||
      by_comm_stat.st_dev != executable_stat.st_dev ||
      by_comm_stat.st_ino != executable_stat.st_ino) {
    return name;
  }
  return std::string(comm);
}

std::string ComponentNamer::ComponentFromNames(std::string_view cgroup_path,
                                               std::string_view exe_name, std::string_view comm) {
  std::string unit = ServiceUnitOf(cgroup_path);
  if (!unit.empty()) return fmt::format("svc:{}", ToValidUtf8(unit));
  // comm is cut at 15 characters and can be changed by the process; the executable's
  // name is what operators know the program by.
  std::string_view name = !exe_name.empty() ? exe_name : !comm.empty() ? comm : "unknown";
  // A user's own processes get their own namespace: no allow-list written for the host's
  // services or programs (svc:*, proc:*) reaches them without naming them.
  if (std::optional<UserUnit> user = UserUnitOf(cgroup_path)) {
    return fmt::format("user:{}:{}", user->uid,
                       ToValidUtf8(user->service.empty() ? name : user->service));
  }
  return fmt::format("proc:{}", ToValidUtf8(name));
}

std::optional<ComponentNamer::UserUnit> ComponentNamer::UserUnitOf(std::string_view cgroup_path) {
  std::vector<std::string> parts = SplitString(TrimWhitespace(cgroup_path), '/');
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (EndsWith(part, kScopeSuffix)) return std::nullopt;  // a login session, a container
    if (!EndsWith(part, kServiceSuffix)) continue;
    // The outermost unit: the user's manager, or a system service (not the user's).
    constexpr std::string_view kUserManager = "user@";
    if (!part.starts_with(kUserManager)) return std::nullopt;
    std::string_view uid(part);
    uid.remove_prefix(kUserManager.size());
    uid.remove_suffix(kServiceSuffix.size());
    if (uid.empty() || uid.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
    UserUnit user{std::string(uid), ""};
    // The user's service inside it, if the process is in one (app.slice/foo.service).
    for (size_t j = i + 1; j < parts.size(); ++j) {
      if (EndsWith(parts[j], kScopeSuffix)) break;
      if (EndsWith(parts[j], kServiceSuffix) && parts[j].size() > kServiceSuffix.size()) {
        user.service = parts[j];
        break;
      }
    }
    return user;
  }
  return std::nullopt;
}

}  // namespace drip::agent
