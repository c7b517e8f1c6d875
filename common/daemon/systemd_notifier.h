// SystemdNotifier: a daemon's side of systemd's Type=notify protocol (sd_notify(3)), for
// drip-agent and drip-collector. READY=1 tells systemd (and units ordered after ours)
// that the daemon really serves, not merely that the process exists; STATUS= shows in
// `systemctl status`; STOPPING=1 marks a clean shutdown in progress.
//
// Watchdog: when the unit sets WatchdogSec=, systemd passes WATCHDOG_USEC and expects
// WATCHDOG=1 at least that often, or it kills and restarts the service. The notifier
// pings from its own thread every interval/2, but only while the daemon's `liveness`
// callback says its main loop is making progress — a ping from a healthy side thread of
// a hung daemon would hide exactly the failure the watchdog is for.
//
// Everything is a no-op when NOTIFY_SOCKET is unset (not started by systemd, or a
// Type= that does not listen). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace drip {

class SystemdNotifier {
 public:
  // True while the daemon's main loop makes progress. Called on the watchdog thread;
  // must be cheap and thread-safe.
  using Liveness = std::function<bool()>;

  // Reads NOTIFY_SOCKET now. `log_component` names the logger ("agent", "collector").
  explicit SystemdNotifier(std::string log_component);
  ~SystemdNotifier();  // stops the watchdog thread
  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;

  // Whether systemd listens (NOTIFY_SOCKET was set at construction).
  bool enabled() const { return enabled_; }

  // READY=1, with STATUS=`status` when it is not empty.
  void Ready(const std::string& status);
  // STATUS=`text`.
  void Status(const std::string& text);
  // STOPPING=1; also stops the watchdog (systemd's stop timeout applies from now on).
  void Stopping();

  // Starts pinging when systemd asked for a watchdog for this process (WATCHDOG_USEC,
  // and WATCHDOG_PID if set names this process) and returns the interval systemd
  // expects; zero, doing nothing, otherwise or after Stopping(). At most one watchdog:
  // a second call returns the interval and keeps the first liveness.
  std::chrono::microseconds StartWatchdog(Liveness liveness);

 private:
  void Notify(const std::string& state);
  void WatchdogLoop(std::chrono::microseconds period, Liveness liveness);
  void StopWatchdog();

  const std::string log_component_;
  const bool enabled_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::chrono::microseconds watchdog_interval_{0};
  std::thread watchdog_;
};

}  // namespace drip
