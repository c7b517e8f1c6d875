// ComponentNamer: gives a process the leak entity ("component") it belongs to, the name
// under which its memory is compared across the fleet (docs/design.md):
//   - a process in a systemd service's cgroup is "svc:<unit>.service", so that every
//     host's nginx is one component whatever its PIDs and helper processes;
//   - a process of a user's own manager (user@UID.service) is "user:<uid>:<service>"
//     (or "user:<uid>:<program>" outside a service): a user's unit is never taken for
//     the host's, and no allow-list written for the host's reaches it unnamed;
//   - anything else (sessions, containers, *.scope units, no systemd) is
//     "proc:<program name>": the executable's name from /proc/PID/exe, or the name it
//     was started by when that is a link to it (redis-server -> redis-check-rdb), or
//     comm when exe is unreadable.
// Stateless apart from the proc root; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace drip::agent {

class ComponentNamer {
 public:
  // `proc_root` is where PID directories live ("/proc", or a fake tree in tests).
  explicit ComponentNamer(std::string proc_root);

  // The component of process `pid`, whose cgroup path (as /proc/PID/cgroup gives it;
  // may be empty) and comm are already known. Reads /proc/PID/exe only when the cgroup
  // does not name a service.
  std::string ComponentOf(int pid, std::string_view cgroup_path, std::string_view comm) const;

  // The same naming from names already read (the BPF sampler gets them from the
  // kernel): `exe_name` is the executable's basename, empty when unknown. Reads
  // /proc/PID/exe only when comm is not the start of `exe_name`, to see whether the
  // program was started through a link of that name (ProgramName).
  std::string ComponentOfTask(int pid, std::string_view cgroup_path, std::string_view exe_name,
                              std::string_view comm) const;

  // The same from names alone, with no process to look at (it has exited).
  static std::string ComponentFromNames(std::string_view cgroup_path, std::string_view exe_name,
                                        std::string_view comm);

  // What process `pid` runs as, given its /proc/PID/exe target: the executable's name,
  // or comm when the program was started through another name for the same file (a
  // link or a hard link beside the executable: redis-server -> redis-check-rdb, busybox
  // applets). The kernel sets comm from the name a program is started by; a process may
  // rename itself too, so comm counts only when it names the same file, looked up in the
  // process's own root.
  std::string ProgramName(int pid, std::string_view exe_target, std::string_view comm) const;

  // The system service a cgroup path belongs to ("nginx.service"): the outermost unit on
  // the path when it is a service. "" when that unit is a scope, a user's manager
  // (user@UID.service: its services are the user's, not the host's), or there is none.
  // Units nested in a unit (delegated subtrees, a container's systemd) are that unit's.
  static std::string ServiceUnitOf(std::string_view cgroup_path);

  // A process of a user's own manager (user@UID.service): the uid, and the user's service
  // the process runs in ("" when it is in none, e.g. an app scope). Such a process is the
  // component "user:<uid>:<service>", or "user:<uid>:<program>" outside a service, never
  // svc: or proc:. nullopt for any other cgroup path.
  struct UserUnit {
    std::string uid;
    std::string service;
  };
  static std::optional<UserUnit> UserUnitOf(std::string_view cgroup_path);

  // The executable name for a /proc/PID/exe link target: its basename, without the
  // " (deleted)" suffix the kernel adds once the file was replaced (package upgrades).
  static std::string ExecutableName(std::string_view exe_target);

  // `name` with every byte that is not part of valid UTF-8 replaced by '?'. Executable
  // names and comm are arbitrary bytes, while proto3 strings must be UTF-8: one bad name
  // would make the collector fail to parse every batch that carries it.
  static std::string ToValidUtf8(std::string_view name);

 private:
  // ProgramName of process `pid` from its /proc/PID/exe link; nullopt when unreadable.
  std::optional<std::string> ProgramNameOf(int pid, std::string_view comm) const;

  std::string proc_root_;
};

}  // namespace drip::agent
