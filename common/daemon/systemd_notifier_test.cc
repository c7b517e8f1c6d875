#include "common/daemon/systemd_notifier.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/base/scoped_env_test_util.h"

namespace drip {
namespace {

using drip::testing::ScopedEnv;

// systemd's end of the protocol: a datagram socket in a temp dir.
class FakeSystemd {
 public:
  FakeSystemd() {
    char dir_template[] = "/tmp/drip-notify-XXXXXX";
    dir_ = mkdtemp(dir_template);
    path_ = dir_ + "/notify";
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~FakeSystemd() {
    close(fd_);
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }

  bool bound() const { return bound_; }
  const std::string& path() const { return path_; }

  // The next datagram, or nullopt after `timeout`.
  std::optional<std::string> Receive(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return std::nullopt;
    char buffer[4096];
    ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n < 0) return std::nullopt;
    return std::string(buffer, static_cast<size_t>(n));
  }

  // Every datagram that arrives within `window`.
  std::vector<std::string> ReceiveFor(std::chrono::milliseconds window) {
    std::vector<std::string> out;
    const auto end = std::chrono::steady_clock::now() + window;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      if (auto m = Receive(left)) out.push_back(*m);
    }
    return out;
  }

 private:
  std::string dir_;
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

int Count(const std::vector<std::string>& messages, const std::string& m) {
  int n = 0;
  for (const std::string& s : messages) n += s == m;
  return n;
}

TEST(SystemdNotifierTest, ReadyStatusAndStoppingReachTheNotifySocket) {
  FakeSystemd systemd;
  ASSERT_TRUE(systemd.bound());
  ScopedEnv socket("NOTIFY_SOCKET", systemd.path().c_str());
  ScopedEnv watchdog("WATCHDOG_USEC", nullptr);
  SystemdNotifier notifier("test");
  EXPECT_TRUE(notifier.enabled());

  notifier.Ready("serving on 127.0.0.1:7070");
  EXPECT_EQ(systemd.Receive(std::chrono::seconds(5)),
            std::optional<std::string>("READY=1\nSTATUS=serving on 127.0.0.1:7070"));
  notifier.Status("3 agents");
  EXPECT_EQ(systemd.Receive(std::chrono::seconds(5)),
            std::optional<std::string>("STATUS=3 agents"));
  notifier.Stopping();
  EXPECT_EQ(systemd.Receive(std::chrono::seconds(5)), std::optional<std::string>("STOPPING=1"));
  // No watchdog asked for: none started.
  EXPECT_EQ(notifier.StartWatchdog([] { return true; }).count(), 0);
}

TEST(SystemdNotifierTest, WatchdogPingsOnlyWhileTheMainLoopIsAlive) {
  FakeSystemd systemd;
  ASSERT_TRUE(systemd.bound());
  ScopedEnv socket("NOTIFY_SOCKET", systemd.path().c_str());
  ScopedEnv usec("WATCHDOG_USEC", "200000");
  const std::string pid = std::to_string(getpid());
  ScopedEnv watchdog_pid("WATCHDOG_PID", pid.c_str());

  std::atomic<bool> alive{true};
  SystemdNotifier notifier("test");
  EXPECT_EQ(notifier.StartWatchdog([&alive] { return alive.load(); }),
            std::chrono::microseconds(200000));
  // Every 100 ms (half the interval): about 6 in 600 ms; at least 3 even on a slow machine.
  std::vector<std::string> pings = systemd.ReceiveFor(std::chrono::milliseconds(600));
  EXPECT_GE(Count(pings, "WATCHDOG=1"), 3) << pings.size();
  EXPECT_EQ(Count(pings, "WATCHDOG=1"), static_cast<int>(pings.size()));

  alive = false;
  systemd.ReceiveFor(std::chrono::milliseconds(150));  // a ping already on its way
  EXPECT_EQ(Count(systemd.ReceiveFor(std::chrono::milliseconds(500)), "WATCHDOG=1"), 0);

  alive = true;  // the loop recovered before systemd gave up: pings resume
  EXPECT_GE(Count(systemd.ReceiveFor(std::chrono::milliseconds(400)), "WATCHDOG=1"), 1);

  notifier.Stopping();
  std::vector<std::string> after = systemd.ReceiveFor(std::chrono::milliseconds(300));
  // STOPPING=1, and perhaps one ping sent before it; none after.
  ASSERT_FALSE(after.empty());
  EXPECT_EQ(after.back(), "STOPPING=1");
}

TEST(SystemdNotifierTest, WatchdogForAnotherPidIsNotOurs) {
  FakeSystemd systemd;
  ASSERT_TRUE(systemd.bound());
  ScopedEnv socket("NOTIFY_SOCKET", systemd.path().c_str());
  ScopedEnv usec("WATCHDOG_USEC", "200000");
  const std::string other = std::to_string(getpid() + 1);
  ScopedEnv watchdog_pid("WATCHDOG_PID", other.c_str());
  SystemdNotifier notifier("test");
  EXPECT_EQ(notifier.StartWatchdog([] { return true; }).count(), 0);
  EXPECT_FALSE(systemd.Receive(std::chrono::milliseconds(300)).has_value());
}

TEST(SystemdNotifierTest, WithoutNotifySocketNothingHappens) {
  FakeSystemd systemd;
  ASSERT_TRUE(systemd.bound());
  ScopedEnv socket("NOTIFY_SOCKET", nullptr);
  ScopedEnv usec("WATCHDOG_USEC", "200000");
  const std::string pid = std::to_string(getpid());
  ScopedEnv watchdog_pid("WATCHDOG_PID", pid.c_str());
  SystemdNotifier notifier("test");
  EXPECT_FALSE(notifier.enabled());
  notifier.Ready("x");
  notifier.Status("y");
  EXPECT_EQ(notifier.StartWatchdog([] { return true; }).count(), 0);
  notifier.Stopping();
  EXPECT_FALSE(systemd.Receive(std::chrono::milliseconds(300)).has_value());
}

}  // namespace
}  // namespace drip
