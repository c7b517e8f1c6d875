#include "agent/mitigation_executor.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "agent/instance_check.h"
#include "agent/proc_files.h"
#include "common/base/mitigation_action.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

using mitigation_action::kRecommend;
using mitigation_action::kRestartUnit;
using mitigation_action::kSignalProcess;

constexpr const char* kSucceeded = "succeeded";
constexpr const char* kFailed = "failed";
constexpr const char* kRefused = "refused";
constexpr const char* kDryRun = "dry-run";

// The signals a mitigation may send: the ones that ask a process to stop or to react
// (reload, dump state), plus KILL and ABRT (a core dump of the leaking heap) for the
// operator who wants them. Never SIGSTOP (a stopped service holds its memory and its
// clients hang) or a real-time signal with an unknown meaning.
constexpr std::array<std::pair<int, const char*>, 8> kAllowedSignals = {{
    {SIGTERM, "SIGTERM"},
    {SIGINT, "SIGINT"},
    {SIGHUP, "SIGHUP"},
    {SIGQUIT, "SIGQUIT"},
    {SIGUSR1, "SIGUSR1"},
    {SIGUSR2, "SIGUSR2"},
    {SIGKILL, "SIGKILL"},
    {SIGABRT, "SIGABRT"},
}};

std::string AllowedSignalList() {
  std::string out;
  for (const auto& [number, name] : kAllowedSignals) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

bool IsAllowedSignal(int signal) {
  for (const auto& [number, name] : kAllowedSignals) {
    if (number == signal) return true;
  }
  return false;
}

std::string AllowedActionList(const std::set<std::string>& allowed) {
  if (allowed.empty()) return "none";
  std::string out;
  for (const std::string& a : allowed) {
    if (!out.empty()) out += ", ";
    out += a;
  }
  return out;
}

drip::v1::CommandResult Failed(std::string error) {
  drip::v1::CommandResult result;
  result.set_ok(false);
  result.set_error(std::move(error));
  return result;
}

drip::v1::CommandResult Done(std::string detail) {
  drip::v1::CommandResult result;
  result.set_ok(true);
  result.set_detail(std::move(detail));
  return result;
}

constexpr const char* kNotAllowedNote = " (not allowed on this host: would be refused)";

// The process as `proc_root` names it, pinned: a /proc/PID directory is a pidfd to
// pidfd_send_signal(2) (Linux 5.1+). It refers to the process of the proc mount's pid
// namespace, not the agent's: an agent in a container that reads the host's processes
// through /host/proc must not signal whatever its own namespace numbers PID. And if the
// pid is recycled between the instance check and the signal, the signal fails with ESRCH
// instead of hitting the newcomer.
int OpenProcessFd(const std::string& proc_root, int pid) {
  return open(fmt::format("{}/{}", proc_root, pid).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

// Through the process fd; kill(2) only on a kernel without pidfd_send_signal and only
// where the agent's /proc is its own (its pid numbers are then the agent's).
int SendSignal(int process_fd, const std::string& proc_root, int pid, int signal) {
#ifdef SYS_pidfd_send_signal
  const int sent = static_cast<int>(syscall(SYS_pidfd_send_signal, process_fd, signal, nullptr, 0));
  if (sent == 0 || errno != ENOSYS) return sent;
#endif
  if (proc_root != "/proc") {
    errno = ENOSYS;
    return -1;
  }
  return kill(pid, signal);
}

// The agent's own pid as `proc_root` numbers it (its /proc/self), 0 when it is not there.
int SelfPidIn(const std::string& proc_root) {
  char target[32];
  const ssize_t n = readlink(fmt::format("{}/self", proc_root).c_str(), target, sizeof(target) - 1);
  if (n <= 0) return proc_root == "/proc" ? getpid() : 0;
  target[n] = '\0';
  return std::atoi(target);
}

class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

}  // namespace

std::string MitigationSignalName(int signal) {
  for (const auto& [number, name] : kAllowedSignals) {
    if (number == signal) return name;
  }
  return fmt::format("signal {}", signal);
}

bool IsValidServiceName(const std::string& unit) {
  constexpr std::string_view kSuffix = ".service";
  if (unit.size() <= kSuffix.size() || unit.size() > 255) return false;
  if (unit.compare(unit.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) return false;
  for (char c : unit) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == ':' || c == '_' || c == '.' || c == '\\' || c == '@' || c == '-';
    if (!ok) return false;
  }
  return true;
}

MitigationExecutor::MitigationExecutor(MitigationExecutorOptions options)
    : options_(std::move(options)) {}

MitigationExecutor::~MitigationExecutor() {
  size_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    dropped = queue_.size();
    queue_.clear();
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (dropped > 0) {
    Logger("agent")->warn("stopping with {} mitigation commands not executed", dropped);
  }
}

void MitigationExecutor::Submit(drip::v1::Command command, Reply reply) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_ && queue_.size() < options_.max_queued) {
      queue_.emplace_back(std::move(command), std::move(reply));
      if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
      cv_.notify_one();
      return;
    }
  }
  drip::v1::CommandResult result =
      Failed(fmt::format("{} mitigation commands are already waiting on this host; try again later",
                         options_.max_queued));
  result.set_command_id(command.id());
  if (options_.metrics) options_.metrics->RecordMitigation(command.mitigation().action(), kFailed);
  Logger("agent")->warn("mitigation {}: report={} action={} outcome=failed error=\"{}\"",
                        command.id(), command.mitigation().report_id(),
                        command.mitigation().action(), result.error());
  reply(std::move(result));
}

void MitigationExecutor::WorkerLoop() {
  pthread_setname_np(pthread_self(), "drip-mitigate");
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    auto [command, reply] = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    reply(Execute(command));
    lock.lock();
  }
}

drip::v1::CommandResult MitigationExecutor::Execute(const drip::v1::Command& command) {
  std::string target;
  std::string outcome;
  drip::v1::CommandResult result = Dispatch(command, &target, &outcome);
  result.set_command_id(command.id());
  const drip::v1::MitigationCommand& m = command.mitigation();
  if (options_.metrics) options_.metrics->RecordMitigation(m.action(), outcome);
  // Warn whatever the outcome: anything that signals processes or restarts services on a
  // host is worth a line in its journal, and refusals show a policy mismatch.
  Logger("agent")->warn(
      "mitigation {}: report={} component={} action={} target={} dry_run={} outcome={} {}=\"{}\"",
      command.id(), m.report_id(), m.component(), m.action(), target.empty() ? "-" : target,
      m.dry_run(), outcome, result.ok() ? "detail" : "error",
      result.ok() ? result.detail() : result.error());
  return result;
}

drip::v1::CommandResult MitigationExecutor::Dispatch(const drip::v1::Command& command,
                                                     std::string* target, std::string* outcome) {
  *outcome = kFailed;
  if (!command.has_mitigation()) return Failed("not a mitigation command");
  const drip::v1::MitigationCommand& m = command.mitigation();
  const std::string& action = m.action();
  if (action == kRecommend) {
    *outcome = m.dry_run() ? kDryRun : kSucceeded;
    return Done("recommend only: nothing done on the host");
  }
  if (action != kSignalProcess && action != kRestartUnit) {
    return Failed(fmt::format("unknown mitigation action '{}' (this agent knows {}, {} and {})",
                              action, kRestartUnit, kSignalProcess, kRecommend));
  }
  const bool allowed = options_.allowed_actions.count(action) > 0;
  if (!allowed && !m.dry_run()) {
    *target = action == kSignalProcess ? fmt::format("pid {}", m.pid()) : m.unit();
    *outcome = kRefused;
    drip::v1::CommandResult result = Failed(fmt::format(
        "action {} is not allowed by this agent's mitigation.allowed_actions (allowed: {})", action,
        AllowedActionList(options_.allowed_actions)));
    result.set_refused(true);
    return result;
  }
  return action == kSignalProcess ? SignalProcess(m, allowed, target, outcome)
                                  : RestartUnit(m, allowed, target, outcome);
}

drip::v1::CommandResult MitigationExecutor::SignalProcess(const drip::v1::MitigationCommand& m,
                                                          bool allowed, std::string* target,
                                                          std::string* outcome) {
  const int pid = m.pid();
  *target = fmt::format("pid {}", pid);
  if (pid <= 0) return Failed(fmt::format("signal-process: no valid pid (got {})", pid));
  if (pid == 1)
    return Failed("signal-process: pid 1 is the init process; the agent never signals it");
  if (pid == SelfPidIn(options_.proc_root)) {
    return Failed(fmt::format("signal-process: pid {} is this agent itself", pid));
  }
  const int signal = m.signal() == 0 ? SIGTERM : m.signal();
  if (!IsAllowedSignal(signal)) {
    return Failed(fmt::format("signal-process: signal {} is not one the agent sends (allowed: {})",
                              m.signal(), AllowedSignalList()));
  }
  const std::string signal_name = MitigationSignalName(signal);
  *target = fmt::format("pid {} ({})", pid, m.instance().empty() ? "no instance" : m.instance());

  // Pin the process before checking it, so that what is checked is what gets signalled.
  int process_fd = -1;
  if (!m.dry_run()) {
    process_fd = OpenProcessFd(options_.proc_root, pid);
    if (process_fd < 0) {
      return Failed(fmt::format("signal-process: process {} no longer runs ({}/{}: {})", pid,
                                options_.proc_root, pid, std::strerror(errno)));
    }
  }
  FdCloser close_process_fd(process_fd);
  if (std::string why =
          CheckProcessInstance(options_.proc_root, pid, m.instance(), InstanceCheck::kStrict);
      !why.empty()) {
    return Failed("signal-process: " + why);
  }
  std::string comm = "?";
  std::string stat_text;
  if (ReadProcFile(fmt::format("{}/{}/stat", options_.proc_root, pid), &stat_text).ok()) {
    if (auto stat = ParseProcStat(stat_text); stat.ok()) comm = stat->comm;
  }

  if (m.dry_run()) {
    *outcome = kDryRun;
    return Done(fmt::format("would send {} to pid {} ({}){}", signal_name, pid, comm,
                            allowed ? "" : kNotAllowedNote));
  }
  if (SendSignal(process_fd, options_.proc_root, pid, signal) != 0) {
    const int err = errno;
    if (err == ESRCH) {
      return Failed(
          fmt::format("signal-process: process {} ({}) exited before the signal", pid, comm));
    }
    if (err == EINVAL || err == ENOSYS) {
      // EINVAL: the process is in a pid namespace the agent's is not an ancestor of.
      return Failed(fmt::format(
          "signal-process: cannot signal pid {} ({}) as {} numbers it: the agent's pid "
          "namespace does not contain it (run the agent in the host's pid namespace, e.g. "
          "hostPID) or the kernel lacks pidfd_send_signal: {}",
          pid, comm, options_.proc_root, std::strerror(err)));
    }
    return Failed(fmt::format("signal-process: cannot send {} to pid {} ({}): {}", signal_name, pid,
                              comm, std::strerror(err)));
  }
  *outcome = kSucceeded;
  return Done(fmt::format("sent {} to pid {} ({})", signal_name, pid, comm));
}

drip::v1::CommandResult MitigationExecutor::RestartUnit(const drip::v1::MitigationCommand& m,
                                                        bool allowed, std::string* target,
                                                        std::string* outcome) {
  const std::string& unit = m.unit();
  *target = unit;
  if (!IsValidServiceName(unit)) {
    return Failed(
        fmt::format("restart-unit: '{}' is not a systemd service name (NAME.service, NAME of "
                    "A-Z a-z 0-9 : _ . \\ @ -)",
                    unit));
  }
  if (options_.restarter == nullptr) {
    return Failed(fmt::format("restart-unit {}: this agent has no connection to systemd", unit));
  }
  if (m.dry_run()) {
    absl::StatusOr<std::string> state = options_.restarter->ActiveState(unit);
    if (!state.ok()) return Failed(std::string(state.status().message()));
    *outcome = kDryRun;
    return Done(fmt::format("would restart {} (ActiveState={}){}", unit, *state,
                            allowed ? "" : kNotAllowedNote));
  }
  // A leak is mitigated by restarting the service that leaks, which is running: a unit that
  // is not (systemd-poweroff.service, debug-shell.service, a stopped sshd) is refused, and
  // the restart itself is a try-restart, so a unit stopped in between stays stopped.
  absl::StatusOr<std::string> state = options_.restarter->ActiveState(unit);
  if (!state.ok()) return Failed(std::string(state.status().message()));
  if (*state != "active" && *state != "reloading") {
    return Failed(
        fmt::format("restart-unit {}: the unit is {}, not running; restart-unit restarts a running "
                    "service and never starts one",
                    unit, *state));
  }
  absl::StatusOr<std::string> job = options_.restarter->Restart(unit);
  if (!job.ok()) return Failed(std::string(job.status().message()));
  *outcome = kSucceeded;
  return Done(fmt::format("restarting {} (systemd job {})", unit, *job));
}

}  // namespace drip::agent
