#include "common/daemon/systemd_notifier.h"

#include <pthread.h>
#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <cstring>

#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip {

SystemdNotifier::SystemdNotifier(std::string log_component)
    : log_component_(std::move(log_component)),
      enabled_(std::getenv("NOTIFY_SOCKET") != nullptr && std::getenv("NOTIFY_SOCKET")[0] != '\0') {
}

SystemdNotifier::~SystemdNotifier() { StopWatchdog(); }

void SystemdNotifier::Notify(const std::string& state) {
  if (!enabled_) return;
  // unset_environment = 0: later calls (and the watchdog thread) need NOTIFY_SOCKET too.
  const int r = sd_notify(0, state.c_str());
  if (r < 0) {
    // Debug only: a full or vanished socket must not flood the journal from the
    // watchdog thread, and systemd itself reports a missed READY or watchdog.
    Logger(log_component_)->debug("sd_notify({}) failed: {}", state, std::strerror(-r));
  }
}

void SystemdNotifier::Ready(const std::string& status) {
  Notify(status.empty() ? "READY=1" : fmt::format("READY=1\nSTATUS={}", status));
}

void SystemdNotifier::Status(const std::string& text) { Notify("STATUS=" + text); }

void SystemdNotifier::Stopping() {
  StopWatchdog();
  Notify("STOPPING=1");
}

std::chrono::microseconds SystemdNotifier::StartWatchdog(Liveness liveness) {
  if (!enabled_) return std::chrono::microseconds(0);
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return std::chrono::microseconds(0);
  if (watchdog_.joinable()) return watchdog_interval_;
  uint64_t usec = 0;
  // 0 = unset_environment off; > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID, if
  // set, is this process (a child must not ping for its parent).
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::chrono::microseconds(0);
  watchdog_interval_ = std::chrono::microseconds(usec);
  // Half the interval, as sd_watchdog_enabled(3) recommends: one late ping is not fatal.
  const std::chrono::microseconds period = watchdog_interval_ / 2;
  Logger(log_component_)
      ->info("systemd watchdog every {} ms; pinging every {} ms while the main loop runs",
             usec / 1000, period.count() / 1000);
  watchdog_ = std::thread(
      [this, period, liveness = std::move(liveness)] { WatchdogLoop(period, liveness); });
  return watchdog_interval_;
}

void SystemdNotifier::WatchdogLoop(std::chrono::microseconds period, Liveness liveness) {
  pthread_setname_np(pthread_self(), "drip-watchdog");
  bool withheld = false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    const bool alive = liveness();
    if (alive) {
      Notify("WATCHDOG=1");
      if (withheld) Logger(log_component_)->info("main loop runs again; watchdog pings resumed");
    } else if (!withheld) {
      // Once per episode: systemd's own log line says when it gives up on us.
      Logger(log_component_)
          ->error(
              "main loop has not made progress; withholding watchdog pings so that "
              "systemd restarts the daemon");
    }
    withheld = !alive;
    lock.lock();
    cv_.wait_for(lock, period, [this] { return stopping_; });
  }
}

void SystemdNotifier::StopWatchdog() {
  std::thread watchdog;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    watchdog = std::move(watchdog_);
  }
  cv_.notify_all();
  if (watchdog.joinable()) watchdog.join();
}

}  // namespace drip
