// MitigationExecutor: the agent's side of mitigation. The collector's policy decides what
// to do about a leak and sends drip.v1.MitigationCommand down the stream; the executor
// checks it against this host's own config (mitigation.allowed_actions) and the process
// or unit as it is now, does it — or, for a dry run, only says what it would do — and
// answers with a CommandResult whose `detail` says what happened. The host has the last
// word: a collector can never make an agent do an action its operator did not allow.
//
//   action          what it does                        checks
//   signal-process  kill(pid, signal) via a pidfd       pid > 1, not the agent, still the
//                                                       instance (pid@start), signal in
//                                                       an allow-list (0 = SIGTERM)
//   restart-unit    systemd RestartUnit(unit, replace)  a valid *.service name; dry run:
//                                                       the unit is loaded
//   recommend       nothing                             none
//
// Dry runs of a known action are always carried out (they change nothing), with a note
// when the real action would be refused; only real executions of an action missing from
// allowed_actions are refused (refused = true). Every command is logged at warn and
// counted in drip_agent_mitigations_total{action,outcome}. docs/agent.md "Mitigation".
//
// Thread-safety: Execute() may block on systemd (sd-bus timeout) and is meant for one
// thread at a time; Submit() is callable from any thread (the stream's reader) and runs
// commands one by one on the executor's own worker thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "agent/agent_metrics.h"
#include "agent/systemd_unit_restarter.h"
#include "drip/v1/agent.pb.h"

namespace drip::agent {

struct MitigationExecutorOptions {
  // Of "restart-unit" and "signal-process" (AgentConfig::Mitigation); empty: dry runs and
  // recommendations only.
  std::set<std::string> allowed_actions;
  std::string proc_root = "/proc";
  // Not owned; must outlive the executor. Null: restart-unit fails saying so.
  UnitRestarter* restarter = nullptr;
  // Not owned; may be null (tests, metrics off).
  AgentMetrics* metrics = nullptr;
  // Commands waiting for the worker beyond this are answered "busy" at once: a collector
  // gone wrong must not queue unbounded work on a host.
  size_t max_queued = 16;
};

class MitigationExecutor {
 public:
  using Reply = std::function<void(drip::v1::CommandResult)>;

  explicit MitigationExecutor(MitigationExecutorOptions options);
  // Finishes the command in progress; queued ones are dropped unanswered (the stream is
  // going away with the agent) and logged.
  ~MitigationExecutor();
  MitigationExecutor(const MitigationExecutor&) = delete;
  MitigationExecutor& operator=(const MitigationExecutor&) = delete;

  // Checks and carries out `command` (which must have `mitigation` set) on the calling
  // thread, and returns the answer for the collector.
  drip::v1::CommandResult Execute(const drip::v1::Command& command);

  // Queues `command` for the worker thread, which calls `reply` with Execute's result.
  // Returns at once; when the queue is full, `reply` is called here with the failure.
  void Submit(drip::v1::Command command, Reply reply);

  const MitigationExecutorOptions& options() const { return options_; }

 private:
  drip::v1::CommandResult Dispatch(const drip::v1::Command& command, std::string* target,
                                   std::string* outcome);
  drip::v1::CommandResult SignalProcess(const drip::v1::MitigationCommand& m, bool allowed,
                                        std::string* target, std::string* outcome);
  drip::v1::CommandResult RestartUnit(const drip::v1::MitigationCommand& m, bool allowed,
                                      std::string* target, std::string* outcome);
  void WorkerLoop();

  const MitigationExecutorOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<drip::v1::Command, Reply>> queue_;
  bool stop_ = false;
  std::thread worker_;  // started by the first Submit()
};

// "SIGTERM" for SIGTERM; "signal N" for one the executor does not send.
std::string MitigationSignalName(int signal);

// Whether `unit` is a name systemd would take for a service: "NAME.service", NAME of
// [A-Za-z0-9:_.\\@-], at most 255 bytes in all. Not a glob, not a path, no other unit type.
bool IsValidServiceName(const std::string& unit);

}  // namespace drip::agent
