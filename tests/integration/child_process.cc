#include "tests/integration/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/daemon/ready_file.h"
#include "fmt/format.h"

namespace drip::testing {
namespace {

std::vector<char*> ArgvPointers(const std::vector<std::string>& argv) {
  std::vector<char*> ptrs;
  for (const auto& a : argv) ptrs.push_back(const_cast<char*>(a.c_str()));
  ptrs.push_back(nullptr);
  return ptrs;
}

// In the forked child: die with the parent, unblock signals the test runner may have
// blocked, and exec.
[[noreturn]] void ExecChild(const std::vector<std::string>& argv, int out_fd, int err_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  auto ptrs = ArgvPointers(argv);
  execv(ptrs[0], ptrs.data());
  std::fprintf(stderr, "exec %s failed: %s\n", ptrs[0], std::strerror(errno));
  _exit(127);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv, const std::string& log_path) {
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(fmt::format("{}: cannot open log", log_path));
  pid_t pid = fork();
  if (pid < 0) {
    close(fd);
    return absl::InternalError("fork failed");
  }
  if (pid == 0) ExecChild(argv, fd, fd);
  close(fd);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, log_path));
}

ChildProcess::~ChildProcess() {
  if (reaped_) return;
  Signal(SIGTERM);
  if (!Wait(std::chrono::seconds(10))) {
    Signal(SIGKILL);
    Wait(std::chrono::seconds(10));
  }
}

std::string ChildProcess::Log() const { return ReadAll(log_path_); }

void ChildProcess::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return status;
    }
    if (r < 0) {
      reaped_ = true;
      return std::nullopt;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool ChildProcess::Running() {
  if (reaped_) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || r < 0) reaped_ = true;
  return !reaped_;
}

CommandOutput RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  TempDir dir;
  std::string out_path = dir.File("stdout");
  std::string err_path = dir.File("stderr");
  int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  CommandOutput result;
  pid_t pid = fork();
  if (pid == 0) ExecChild(argv, out_fd, err_fd);
  close(out_fd);
  close(err_fd);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      // SIGTERM first, so that a command that handles it (a snapshot ends its window and
      // logs where it was) leaves its account in the failure; SIGKILL after 5 s.
      kill(pid, SIGTERM);
      const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (waitpid(pid, &status, WNOHANG) != pid) {
        if (std::chrono::steady_clock::now() >= grace) {
          kill(pid, SIGKILL);
          waitpid(pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      result.err = fmt::format("timed out after {} ms\n", timeout.count());
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadAll(out_path);
  result.err += ReadAll(err_path);
  return result;
}

absl::StatusOr<std::map<std::string, std::string>> WaitForReadyFile(
    const std::string& path, ChildProcess* process, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto fields = ReadReadyFile(path);
    if (fields.ok()) return fields;
    if (process != nullptr && !process->Running()) {
      return absl::FailedPreconditionError(
          fmt::format("process exited before writing {}; its log:\n{}", path, process->Log()));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError(fmt::format("no ready file {} after {} ms; log:\n{}", path,
                                                     timeout.count(),
                                                     process != nullptr ? process->Log() : ""));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/drip-test-XXXXXX", base != nullptr ? base : "/tmp");
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) std::abort();
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

}  // namespace drip::testing
