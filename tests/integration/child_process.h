// ChildProcess: a real binary started by an integration test. The child dies with the
// test (PR_SET_PDEATHSIG) even if the test crashes, and the destructor stops it
// (SIGTERM, then SIGKILL after a grace period) and reaps it, so no test leaves a
// process behind. Output goes to a log file the test can print on failure.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace drip::testing {

class ChildProcess {
 public:
  // Starts argv[0] with argv; stdout and stderr go to `log_path`.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                             const std::string& log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  std::string Log() const;

  void Signal(int sig);
  // Waits up to `timeout` for the child to exit; returns its wait status, or nullopt.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  bool Running();

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::string log_path_;
  bool reaped_ = false;
};

struct CommandOutput {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a command to completion (killed after `timeout`) and captures its output.
CommandOutput RunCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Waits until `path` holds a ready file (common/daemon/ready_file.h); fails early, with the
// child's log, if `process` exits first.
absl::StatusOr<std::map<std::string, std::string>> WaitForReadyFile(
    const std::string& path, ChildProcess* process,
    std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A fresh directory under $TMPDIR (or /tmp), removed with its contents by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& text);

}  // namespace drip::testing
