#include "agent/systemd_unit_restarter.h"

#include <systemd/sd-bus.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "fmt/format.h"

namespace drip::agent {
namespace {

constexpr const char* kDestination = "org.freedesktop.systemd1";
constexpr const char* kManagerPath = "/org/freedesktop/systemd1";
constexpr const char* kManagerInterface = "org.freedesktop.systemd1.Manager";
constexpr const char* kUnitInterface = "org.freedesktop.systemd1.Unit";

struct BusCloser {
  void operator()(sd_bus* bus) const { sd_bus_flush_close_unref(bus); }
};
using BusPtr = std::unique_ptr<sd_bus, BusCloser>;

struct MessageUnref {
  void operator()(sd_bus_message* m) const { sd_bus_message_unref(m); }
};
using MessagePtr = std::unique_ptr<sd_bus_message, MessageUnref>;

// Frees the error whatever path the call takes.
class BusError {
 public:
  BusError() = default;
  ~BusError() { sd_bus_error_free(&error_); }
  BusError(const BusError&) = delete;
  BusError& operator=(const BusError&) = delete;
  sd_bus_error* get() { return &error_; }
  bool is(const char* name) const { return sd_bus_error_has_name(&error_, name); }

  // "org.freedesktop.systemd1.NoSuchUnit: Unit foo.service not loaded." when systemd
  // answered with an error, else the errno's text.
  std::string Describe(int r) const {
    if (sd_bus_error_is_set(&error_)) {
      return fmt::format("{}: {}", error_.name,
                         error_.message != nullptr ? error_.message : "(no message)");
    }
    return std::strerror(-r);
  }

 private:
  sd_bus_error error_ = SD_BUS_ERROR_NULL;
};

// `what` is the mitigation's view, "restart-unit nginx.service", for every message.
absl::StatusOr<BusPtr> OpenSystemBus(const std::string& what, std::chrono::milliseconds timeout) {
  sd_bus* raw = nullptr;
  const int r = sd_bus_open_system(&raw);
  if (r < 0) {
    return absl::UnavailableError(
        fmt::format("{}: cannot connect to the system bus: {}", what, std::strerror(-r)));
  }
  BusPtr bus(raw);
  sd_bus_set_method_call_timeout(bus.get(), static_cast<uint64_t>(timeout.count()) * 1000);
  return bus;
}

}  // namespace

absl::StatusOr<std::string> SdBusUnitRestarter::Restart(const std::string& unit) {
  const std::string what = "restart-unit " + unit;
  absl::StatusOr<BusPtr> bus = OpenSystemBus(what, timeout_);
  if (!bus.ok()) return bus.status();
  BusError error;
  sd_bus_message* raw_reply = nullptr;
  int r =
      sd_bus_call_method(bus->get(), kDestination, kManagerPath, kManagerInterface,
                         "TryRestartUnit", error.get(), &raw_reply, "ss", unit.c_str(), "replace");
  MessagePtr reply(raw_reply);
  if (r < 0) {
    return absl::UnavailableError(
        fmt::format("{}: systemd refused TryRestartUnit: {}", what, error.Describe(r)));
  }
  const char* job = nullptr;
  r = sd_bus_message_read(reply.get(), "o", &job);
  if (r < 0 || job == nullptr) {
    return absl::InternalError(fmt::format("{}: cannot read TryRestartUnit's reply: {}", what,
                                           std::strerror(r < 0 ? -r : EBADMSG)));
  }
  return std::string(job);
}

absl::StatusOr<std::string> SdBusUnitRestarter::ActiveState(const std::string& unit) {
  const std::string what = "restart-unit " + unit;
  absl::StatusOr<BusPtr> bus = OpenSystemBus(what, timeout_);
  if (!bus.ok()) return bus.status();
  BusError error;
  sd_bus_message* raw_reply = nullptr;
  // GetUnit, unlike LoadUnit, fails for a unit systemd has not loaded: a dry run must not
  // load units as a side effect.
  int r = sd_bus_call_method(bus->get(), kDestination, kManagerPath, kManagerInterface, "GetUnit",
                             error.get(), &raw_reply, "s", unit.c_str());
  MessagePtr reply(raw_reply);
  if (r < 0) {
    const std::string message = fmt::format("{}: GetUnit failed: {}", what, error.Describe(r));
    if (error.is("org.freedesktop.systemd1.NoSuchUnit")) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  const char* path = nullptr;
  r = sd_bus_message_read(reply.get(), "o", &path);
  if (r < 0 || path == nullptr) {
    return absl::InternalError(fmt::format("{}: cannot read GetUnit's reply: {}", what,
                                           std::strerror(r < 0 ? -r : EBADMSG)));
  }
  BusError property_error;
  char* state = nullptr;
  r = sd_bus_get_property_string(bus->get(), kDestination, path, kUnitInterface, "ActiveState",
                                 property_error.get(), &state);
  if (r < 0) {
    return absl::UnavailableError(
        fmt::format("{}: cannot read ActiveState: {}", what, property_error.Describe(r)));
  }
  std::string result(state);
  free(state);
  return result;
}

}  // namespace drip::agent
