#include "agent/systemd_unit_restarter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace drip::agent {
namespace {

// Sets an environment variable for one test and restores the previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(SdBusUnitRestarterTest, NoSystemBusIsAClearErrorNamingTheUnit) {
  ScopedEnv bus("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent");
  SdBusUnitRestarter restarter;
  absl::StatusOr<std::string> job = restarter.Restart("nginx.service");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(std::string(job.status().message()),
            "restart-unit nginx.service: cannot connect to the system bus: No such file or "
            "directory");

  absl::StatusOr<std::string> state = restarter.ActiveState("nginx.service");
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(std::string(state.status().message()),
            "restart-unit nginx.service: cannot connect to the system bus: No such file or "
            "directory");
}

}  // namespace
}  // namespace drip::agent
