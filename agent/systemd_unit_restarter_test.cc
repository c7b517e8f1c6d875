#include "agent/systemd_unit_restarter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "common/base/scoped_env_test_util.h"

namespace drip::agent {
namespace {

using drip::testing::ScopedEnv;

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
