// ScopedEnv: sets (or, with nullptr, unsets) an environment variable for one test and
// restores what was there before, so tests of code that reads the environment
// (NOTIFY_SOCKET, DBUS_SYSTEM_BUS_ADDRESS, ...) leave the process as they found it.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace drip::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace drip::testing
