#include "collector/ingest/connected_hosts.h"

#include "gtest/gtest.h"
#include "prometheus/registry.h"

namespace drip::collector {
namespace {

class FakeStream : public ConnectedHosts::Stream {
 public:
  void Supersede() override {
    ++superseded;
    open = false;
  }
  bool IsOpen() override { return open; }
  bool SendCommand(const drip::v1::Command& command) override {
    last_command = command.id();
    return open;
  }
  void MoveTo(const std::string& /*owner_name*/, const std::string& owner_address) override {
    moved_to = owner_address;
    open = false;
  }

  int superseded = 0;
  std::string moved_to;
  bool open = true;
  std::string last_command;
};

TEST(ConnectedHostsTest, RegisteredHostIsConnectedUntilUnregistered) {
  ConnectedHosts hosts;
  FakeStream s;
  EXPECT_FALSE(hosts.IsConnected("web-1"));
  hosts.Register("web-1", &s);
  EXPECT_TRUE(hosts.IsConnected("web-1"));
  hosts.Unregister("web-1", &s);
  EXPECT_FALSE(hosts.IsConnected("web-1"));
}

TEST(ConnectedHostsTest, FinishedStreamIsNotConnectedEvenBeforeItUnregisters) {
  ConnectedHosts hosts;
  FakeStream s;
  hosts.Register("web-1", &s);
  s.open = false;
  EXPECT_FALSE(hosts.IsConnected("web-1"));
}

TEST(ConnectedHostsTest, SecondStreamForTheSameHostSupersedesTheFirst) {
  ConnectedHosts hosts;
  FakeStream old_stream, new_stream;
  hosts.Register("web-1", &old_stream);
  hosts.Register("web-1", &new_stream);
  EXPECT_EQ(old_stream.superseded, 1);
  EXPECT_EQ(new_stream.superseded, 0);
  EXPECT_TRUE(hosts.IsConnected("web-1"));
  // The superseded stream ending later must not disconnect its successor.
  hosts.Unregister("web-1", &old_stream);
  EXPECT_TRUE(hosts.IsConnected("web-1"));
  EXPECT_EQ(hosts.size(), 1u);
}

TEST(ConnectedHostsTest, StreamsOfDifferentHostsDoNotInterfere) {
  ConnectedHosts hosts;
  FakeStream a, b;
  hosts.Register("web-1", &a);
  hosts.Register("web-2", &b);
  EXPECT_EQ(a.superseded + b.superseded, 0);
  EXPECT_EQ(hosts.size(), 2u);
}

TEST(ConnectedHostsTest, CommandsGoToTheHostsCurrentStream) {
  ConnectedHosts hosts;
  FakeStream s;
  drip::v1::Command command;
  command.set_id("snap-1");
  EXPECT_FALSE(hosts.SendCommand("web-1", command));
  hosts.Register("web-1", &s);
  EXPECT_TRUE(hosts.SendCommand("web-1", command));
  EXPECT_EQ(s.last_command, "snap-1");
}

TEST(ConnectedHostsTest, GaugeCountsRegisteredHosts) {
  prometheus::Registry registry;
  auto& gauge = prometheus::BuildGauge().Name("g").Register(registry).Add({});
  ConnectedHosts hosts(&gauge);
  FakeStream a, b, c;
  hosts.Register("web-1", &a);
  hosts.Register("web-2", &b);
  hosts.Register("web-2", &c);
  EXPECT_EQ(gauge.Value(), 2);
  hosts.Unregister("web-1", &a);
  EXPECT_EQ(gauge.Value(), 1);
}

TEST(ConnectedHostsTest, AHostPlacedElsewhereIsSentToItsOwnerAndOthersStay) {
  ConnectedHosts hosts;
  FakeStream a, b;
  hosts.Register("web-2", &b);
  hosts.Register("web-1", &a);
  EXPECT_EQ(hosts.Hosts(), (std::vector<std::string>{"web-1", "web-2"}));
  EXPECT_TRUE(hosts.MoveTo("web-1", "c3", "10.0.0.3:7070"));
  EXPECT_EQ(a.moved_to, "10.0.0.3:7070");
  EXPECT_TRUE(b.moved_to.empty());
  // Finished already, or never connected: nothing to send on.
  EXPECT_FALSE(hosts.MoveTo("web-1", "c3", "10.0.0.3:7070"));
  EXPECT_FALSE(hosts.MoveTo("web-9", "c3", "10.0.0.3:7070"));
}

}  // namespace
}  // namespace drip::collector
