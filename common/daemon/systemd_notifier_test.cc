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

  // Every datagram already waiting, without waiting for more.
  std::vector<std::string> Drain() {
    std::vector<std::string> out;
    while (auto m = Receive(std::chrono::milliseconds(0))) out.push_back(*m);
    return out;
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

// Judged by the watchdog's own rounds (each asks the liveness callback once, then pings or
// not), never by counting pings in a window of wall-clock time: a slow machine only makes
// the test slower.
TEST(SystemdNotifierTest, WatchdogPingsOnlyWhileTheMainLoopIsAlive) {
  FakeSystemd systemd;
  ASSERT_TRUE(systemd.bound());
  ScopedEnv socket("NOTIFY_SOCKET", systemd.path().c_str());
  ScopedEnv usec("WATCHDOG_USEC", "200000");
  const std::string pid = std::to_string(getpid());
  ScopedEnv watchdog_pid("WATCHDOG_PID", pid.c_str());

  std::atomic<bool> alive{true};
  std::atomic<int> dead_rounds{0};  // rounds that found the loop stuck
  SystemdNotifier notifier("test");
  EXPECT_EQ(notifier.StartWatchdog([&] {
    if (alive.load()) return true;
    ++dead_rounds;
    return false;
  }),
            std::chrono::microseconds(200000));
  // While the loop is alive, pings come, and nothing else.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(systemd.Receive(std::chrono::seconds(10)), std::optional<std::string>("WATCHDOG=1"))
        << "ping " << i;
  }

  // Stuck: once a round has found it so, every ping of the rounds before is in the socket
  // (a round pings after asking, and rounds follow each other); two more rounds send none.
  alive = false;
  auto await_rounds = [&](int rounds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (dead_rounds.load() < rounds && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return dead_rounds.load() >= rounds;
  };
  ASSERT_TRUE(await_rounds(1));
  for (const std::string& m : systemd.Drain()) EXPECT_EQ(m, "WATCHDOG=1");
  ASSERT_TRUE(await_rounds(3));
  EXPECT_EQ(Count(systemd.Drain(), "WATCHDOG=1"), 0);

  alive = true;  // the loop recovered before systemd gave up: pings resume
  EXPECT_EQ(systemd.Receive(std::chrono::seconds(10)), std::optional<std::string>("WATCHDOG=1"));

  // STOPPING=1 stops the watchdog: perhaps a ping sent before it, none after.
  notifier.Stopping();
  std::optional<std::string> m;
  while ((m = systemd.Receive(std::chrono::seconds(10))) && *m == "WATCHDOG=1") {
  }
  EXPECT_EQ(m, std::optional<std::string>("STOPPING=1"));
  EXPECT_TRUE(systemd.Drain().empty());
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
