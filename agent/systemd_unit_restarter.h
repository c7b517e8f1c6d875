// UnitRestarter: how the mitigation executor asks systemd to restart a unit, behind an
// interface so that the executor's tests use a fake (systemd is not PID 1 everywhere the
// tests run). SdBusUnitRestarter is the real one: libsystemd's sd-bus, on the system
// bus, calling org.freedesktop.systemd1.Manager — the same D-Bus API `systemctl` uses,
// so the agent needs no systemctl binary and gets systemd's own error names back.
#pragma once

#include <chrono>
#include <string>

#include "absl/status/statusor.h"

namespace drip::agent {

class UnitRestarter {
 public:
  virtual ~UnitRestarter() = default;

  // Queues a restart of `unit` if it is running (TryRestartUnit, mode "replace": a stopped
  // unit is left stopped, never started) and returns the job's object path, e.g.
  // "/org/freedesktop/systemd1/job/1234". The restart itself runs after this returns.
  // Errors name the unit and carry systemd's error name and message.
  virtual absl::StatusOr<std::string> Restart(const std::string& unit) = 0;

  // The unit's ActiveState ("active", "failed", ...). NotFound when systemd has no such
  // unit loaded.
  virtual absl::StatusOr<std::string> ActiveState(const std::string& unit) = 0;
};

// Opens a new system-bus connection per call: calls are rare (mitigations), and a fresh
// connection survives a restart of dbus or systemd between them. Each call may block up
// to `timeout`, so callers must not make them on a thread that something waits on.
// Thread-safe (no shared connection).
class SdBusUnitRestarter : public UnitRestarter {
 public:
  explicit SdBusUnitRestarter(std::chrono::milliseconds timeout = std::chrono::seconds(30))
      : timeout_(timeout) {}

  absl::StatusOr<std::string> Restart(const std::string& unit) override;
  absl::StatusOr<std::string> ActiveState(const std::string& unit) override;

 private:
  const std::chrono::milliseconds timeout_;
};

}  // namespace drip::agent
