// CollectorStream against FakeCollector: real gRPC over loopback, no mocks. Waits are
// bounded only to keep a broken build from hanging; nothing here measures time.
#include "agent/collector_stream.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "agent/testing/fake_collector.h"

namespace drip::agent {
namespace {

using std::chrono::milliseconds;
using testing::FakeCollector;

constexpr auto kWaitLimit = std::chrono::seconds(30);

// Polls `done` until it holds; false after kWaitLimit.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

drip::v1::SampleBatch BatchOf(const std::string& instance) {
  drip::v1::SampleBatch batch;
  drip::v1::Sample* s = batch.add_samples();
  s->set_component("proc:test");
  s->set_instance(instance);
  s->set_timestamp_ms(1'700'000'000'000);
  s->mutable_process()->set_anon_rss_bytes(4096);
  return batch;
}

std::vector<uint64_t> Sequences(const std::vector<drip::v1::SampleBatch>& batches) {
  std::vector<uint64_t> out;
  for (const auto& b : batches) out.push_back(b.sequence());
  return out;
}

// A buffer and a stream to `address`, as the agent wires them.
struct Client {
  explicit Client(const std::string& address, BatchBufferOptions buffer_options = {},
                  std::vector<std::string> alternates = {},
                  std::vector<std::string> redirect_to = {})
      : buffer(buffer_options) {
    CollectorStreamOptions options;
    options.address = address;
    options.alternates = std::move(alternates);
    options.redirect_to = std::move(redirect_to);
    options.tls.plaintext = true;
    options.backoff_initial = milliseconds(20);
    options.backoff_max = milliseconds(200);
    drip::v1::Hello hello;
    hello.set_host("test-host");
    (*hello.mutable_labels())["env"] = "test";
    hello.set_agent_version("0.0.0-test");
    stream = std::make_unique<CollectorStream>(options, hello, &buffer, [this] {
      drip::v1::AgentStatus status;
      status.set_sampler("test");
      status.set_buffered_batches(buffer.stats().buffered_batches);
      return status;
    });
  }
  ~Client() { stream->Stop(); }

  BatchBuffer buffer;
  std::unique_ptr<CollectorStream> stream;
};

TEST(CollectorStreamTest, SendsHelloThenEveryBatchInOrder) {
  FakeCollector collector({});
  ASSERT_NE(collector.port(), 0);
  Client client(collector.address());
  client.buffer.Push(BatchOf("1@1"));  // buffered before the stream exists
  client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.received_count_locked() == 2; }));
  client.buffer.Push(BatchOf("1@1"));  // sent as it arrives
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.received_count_locked() == 3; }));

  std::vector<drip::v1::Hello> hellos = collector.hellos();
  ASSERT_EQ(hellos.size(), 1u);
  EXPECT_EQ(hellos[0].host(), "test-host");
  EXPECT_EQ(hellos[0].labels().at("env"), "test");
  EXPECT_EQ(hellos[0].agent_version(), "0.0.0-test");
  EXPECT_EQ(hellos[0].status().sampler(), "test");
  EXPECT_EQ(collector.received_sequences(), (std::vector<uint64_t>{1, 2, 3}));
  for (const auto& batch : collector.stored_batches()) {
    EXPECT_EQ(batch.status().sampler(), "test");
    EXPECT_EQ(batch.samples_size(), 1);
  }
}

TEST(CollectorStreamTest, AcksDropBatchesFromTheBuffer) {
  FakeCollector collector({});
  Client client(collector.address());
  for (int i = 0; i < 5; ++i) client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  EXPECT_TRUE(Eventually([&] { return client.buffer.stats().buffered_batches == 0; }));
  EXPECT_EQ(client.buffer.stats().dropped_batches, 0u);
  EXPECT_TRUE(Eventually([&] { return client.stream->stats().connected; }));
}

TEST(CollectorStreamTest, UnacknowledgedBatchesStayBuffered) {
  FakeCollector collector({.ack = false});
  Client client(collector.address());
  for (int i = 0; i < 3; ++i) client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.received_count_locked() == 3; }));
  EXPECT_EQ(client.buffer.stats().buffered_batches, 3u);
}

TEST(CollectorStreamTest, ReconnectsToARestartedCollectorAndResendsUnacknowledgedInOrder) {
  auto first = std::make_unique<FakeCollector>(FakeCollector::Options{.ack = false});
  const int port = first->port();
  ASSERT_NE(port, 0);
  Client client(first->address());
  client.stream->Start();
  for (int i = 0; i < 3; ++i) client.buffer.Push(BatchOf("1@1"));
  ASSERT_TRUE(first->WaitUntil([&] { return first->received_count_locked() == 3; }));

  // The collector goes away with nothing acknowledged; sampling goes on meanwhile.
  first->Shutdown();
  first.reset();
  client.buffer.Push(BatchOf("1@1"));
  EXPECT_TRUE(Eventually([&] { return client.stream->stats().streams_started >= 2; }));

  FakeCollector second({}, port);
  ASSERT_EQ(second.port(), port);
  ASSERT_TRUE(second.WaitUntil([&] { return second.stored_count_locked() == 4; }));
  EXPECT_EQ(Sequences(second.stored_batches()), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(second.received_sequences(), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(second.hellos().size(), 1u);
  EXPECT_TRUE(Eventually([&] { return client.buffer.stats().buffered_batches == 0; }));
}

TEST(CollectorStreamTest, WelcomeMarkDropsWhatTheCollectorAlreadyHolds) {
  auto first = std::make_unique<FakeCollector>(FakeCollector::Options{.ack = false});
  const int port = first->port();
  Client client(first->address());
  client.stream->Start();
  for (int i = 0; i < 4; ++i) client.buffer.Push(BatchOf("1@1"));
  ASSERT_TRUE(first->WaitUntil([&] { return first->received_count_locked() == 4; }));
  first->Shutdown();
  first.reset();

  // Batches 1 and 2 became durable, but the acks were lost with the connection.
  FakeCollector second({.stored_up_to = 2}, port);
  ASSERT_TRUE(second.WaitUntil([&] { return second.stored_count_locked() == 2; }));
  EXPECT_EQ(second.received_sequences(), (std::vector<uint64_t>{3, 4}));
}

TEST(CollectorStreamTest, RestartedAgentContinuesAboveTheCollectorsMark) {
  // This host's previous agent run left sequences up to 100 at the collector.
  FakeCollector collector({.stored_up_to = 100});
  Client client(collector.address());
  client.buffer.Push(BatchOf("1@1"));
  client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.stored_count_locked() == 2; }));
  client.buffer.Push(BatchOf("1@1"));
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.stored_count_locked() == 3; }));
  EXPECT_EQ(collector.received_sequences(), (std::vector<uint64_t>{101, 102, 103}));
}

class RefusalTest : public ::testing::TestWithParam<grpc::StatusCode> {};

TEST_P(RefusalTest, RefusedBatchNamedInTrailersIsDroppedAndNotResent) {
  FakeCollector collector({.refuse_sequence = 2, .refusal_code = GetParam()});
  Client client(collector.address());
  for (int i = 0; i < 3; ++i) client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.stored_count_locked() == 2; }));
  client.buffer.Push(BatchOf("1@1"));
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.stored_count_locked() == 3; }));

  EXPECT_EQ(Sequences(collector.stored_batches()), (std::vector<uint64_t>{1, 3, 4}));
  std::vector<uint64_t> received = collector.received_sequences();
  EXPECT_EQ(std::count(received.begin(), received.end(), 2u), 1) << "batch 2 was resent";
  EXPECT_EQ(client.buffer.stats().rejected_batches, 1u);
  EXPECT_EQ(client.stream->stats().rejected_batches, 1u);
  EXPECT_EQ(collector.hellos().size(), 2u);  // it reconnected after the refusal
}

INSTANTIATE_TEST_SUITE_P(EveryRefusalCode, RefusalTest,
                         ::testing::Values(grpc::StatusCode::INVALID_ARGUMENT,
                                           grpc::StatusCode::PERMISSION_DENIED,
                                           grpc::StatusCode::RESOURCE_EXHAUSTED));

TEST(CollectorStreamTest, UnavailableIsRetriedEvenIfTrailersNameABatch) {
  // Only refusals drop a batch; a collector that could not store it wants it again.
  FakeCollector collector({.refuse_sequence = 2, .refusal_code = grpc::StatusCode::UNAVAILABLE});
  Client client(collector.address());
  for (int i = 0; i < 3; ++i) client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.stored_count_locked() == 3; }));
  EXPECT_EQ(Sequences(collector.stored_batches()), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(client.buffer.stats().rejected_batches, 0u);
  EXPECT_EQ(client.stream->stats().deferred_batches, 1u);
}

TEST(CollectorStreamTest, CommandsAreAnsweredAsNotSupported) {
  drip::v1::Command command;
  command.set_id("snap-1");
  command.mutable_snapshot()->set_pid(1234);
  FakeCollector collector({.commands = {command}});
  Client client(collector.address());
  client.stream->Start();
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.command_result_count_locked() == 1; }));
  drip::v1::CommandResult result = collector.command_results()[0];
  EXPECT_EQ(result.command_id(), "snap-1");
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.error(), "not supported by this agent version");
  EXPECT_EQ(client.stream->stats().commands_refused, 1u);
}

// A command's result produced while the collector is away (a snapshot or a signal that
// finished during an outage) is sent once a stream is back: before, a reconnect emptied
// the queue and the collector audited a signal really sent as timed out.
TEST(CollectorStreamTest, ACommandResultQueuedWhileTheCollectorIsAwayIsSentAfterTheReconnect) {
  auto first = std::make_unique<FakeCollector>(FakeCollector::Options{});
  const int port = first->port();
  ASSERT_NE(port, 0);
  Client client(first->address());
  client.stream->Start();
  ASSERT_TRUE(Eventually([&] { return client.stream->stats().connected; }));
  first->Shutdown();
  first.reset();
  ASSERT_TRUE(Eventually([&] { return client.stream->stats().streams_started >= 2; }));

  drip::v1::CommandResult result;
  result.set_command_id("signal-7");
  result.set_ok(true);
  result.set_detail("sent SIGTERM to pid 1234 (leaky)");
  client.stream->SendCommandResult(result);
  // More reconnect attempts pass while nothing listens.
  const uint64_t started = client.stream->stats().streams_started;
  ASSERT_TRUE(Eventually([&] { return client.stream->stats().streams_started >= started + 2; }));

  FakeCollector second({}, port);
  ASSERT_EQ(second.port(), port);
  ASSERT_TRUE(second.WaitUntil([&] { return second.command_result_count_locked() == 1; }));
  EXPECT_EQ(second.command_results()[0].command_id(), "signal-7");
  EXPECT_EQ(second.command_results()[0].detail(), "sent SIGTERM to pid 1234 (leaky)");
}

TEST(CollectorStreamTest, CollectorThatSendsNoWelcomeIsLeftAndRetried) {
  FakeCollector collector({.send_welcome = false});
  BatchBuffer buffer({});
  drip::v1::Hello hello;
  hello.set_host("test-host");
  CollectorStream stream({.address = collector.address(),
                          .tls = {.plaintext = true},
                          .backoff_initial = milliseconds(20),
                          .backoff_max = milliseconds(200),
                          .welcome_timeout = milliseconds(100)},
                         hello, &buffer, [] { return drip::v1::AgentStatus(); });
  buffer.Push(BatchOf("1@1"));
  stream.Start();
  ASSERT_TRUE(collector.WaitUntil([&] { return collector.hello_count_locked() >= 2; }));
  stream.Stop();
  // Nothing is sent before a Welcome says where the collector stands.
  EXPECT_TRUE(collector.received_sequences().empty());
  EXPECT_EQ(stream.stats().streams_welcomed, 0u);
  EXPECT_EQ(buffer.stats().buffered_batches, 1u);
}

TEST(CollectorStreamTest, StopSaysGoodbyeToAWelcomedStream) {
  FakeCollector collector({});
  Client client(collector.address());
  client.stream->Start();
  ASSERT_TRUE(Eventually([&] { return client.stream->stats().connected; }));
  client.stream->Stop();
  EXPECT_TRUE(collector.WaitUntil([&] { return collector.goodbyes_locked() == 1; }));
  EXPECT_FALSE(client.stream->stats().connected);
  client.stream->Stop();  // idempotent
}

TEST(CollectorStreamTest, StopReturnsWhileTheCollectorIsUnreachableAndKeepsTheBuffer) {
  int unused_port = 0;
  {
    FakeCollector probe({});
    unused_port = probe.port();
  }
  Client client("127.0.0.1:" + std::to_string(unused_port));
  client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  ASSERT_TRUE(Eventually([&] { return client.stream->stats().streams_started >= 3; }));
  client.stream->Stop();
  EXPECT_EQ(client.stream->stats().streams_welcomed, 0u);
  EXPECT_EQ(client.buffer.stats().buffered_batches, 1u);
}

// Collectors sharing a fleet: the one dialled names the host's owner, and the agent
// moves there at once and sends it everything buffered.
TEST(CollectorStreamTest, AnAgentToldAnotherCollectorOwnsItsHostMovesThereAndSendsItAll) {
  FakeCollector owner({});
  FakeCollector other({.owner_address = owner.address()});
  Client client(other.address(), {}, {}, {"127.0.0.1:*"});
  client.buffer.Push(BatchOf("1@1"));
  client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  ASSERT_TRUE(owner.WaitUntil([&] { return owner.stored_count_locked() == 2; }));
  EXPECT_EQ(Sequences(owner.stored_batches()), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(other.received_sequences().empty());
  EXPECT_EQ(other.hellos().size(), 1u);
  EXPECT_EQ(client.stream->stats().redirects, 1u);
  EXPECT_EQ(client.stream->stats().collector, owner.address());
}

// The first of `collectors:` is down: the agent goes on to the next one, and when the
// owner it was sent to dies it asks the listed collector again.
TEST(CollectorStreamTest, AnUnreachableCollectorIsFollowedByTheNextOfTheList) {
  int unused_port = 0;
  {
    FakeCollector probe({});
    unused_port = probe.port();
  }
  auto owner = std::make_unique<FakeCollector>(FakeCollector::Options{});
  FakeCollector listed({.owner_address = owner->address()});
  Client client("127.0.0.1:" + std::to_string(unused_port), {}, {listed.address()},
                {"127.0.0.1:*"});
  client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  ASSERT_TRUE(owner->WaitUntil([&] { return owner->stored_count_locked() == 1; }));
  EXPECT_EQ(client.stream->stats().redirects, 1u);
  // Acknowledged, so that what the buffer holds below is only what came after.
  ASSERT_TRUE(Eventually([&] { return client.buffer.stats().buffered_batches == 0; }));

  owner->Shutdown();
  owner.reset();
  // Back to the listed collector, which (still) names the dead owner: the agent follows
  // with a backoff between rounds, buffering meanwhile, rather than spinning.
  ASSERT_TRUE(Eventually([&] { return client.stream->stats().redirects >= 3; }));
  EXPECT_GE(listed.hellos().size(), 3u);
  client.buffer.Push(BatchOf("1@1"));
  EXPECT_EQ(client.buffer.stats().buffered_batches, 1u);
}

// Whoever can write a member record can make a collector name any address as the owner:
// the agent follows only to its listed collectors and the addresses redirect_to allows,
// never to another kind of gRPC target, and keeps its batches for the listed ones.
TEST(CollectorStreamTest, ARedirectToAnAddressNeitherListedNorAllowedIsNotFollowed) {
  FakeCollector rogue({});
  for (const std::string& named : {rogue.address(), std::string("unix:/run/drip-rogue.sock")}) {
    FakeCollector listed({.owner_address = named});
    // 127.0.0.2 is not the rogue's 127.0.0.1; "unix:…" matches no host:port pattern.
    Client client(listed.address(), {}, {}, {"127.0.0.2:*", "unix:*"});
    client.buffer.Push(BatchOf("1@1"));
    client.stream->Start();
    ASSERT_TRUE(Eventually([&] { return client.stream->stats().refused_redirects >= 2; })) << named;
    EXPECT_EQ(client.stream->stats().redirects, 0u) << named;
    EXPECT_EQ(client.stream->stats().collector, listed.address()) << named;
    EXPECT_GE(listed.hellos().size(), 2u) << named;
    EXPECT_EQ(client.buffer.stats().buffered_batches, 1u) << named;
    client.stream->Stop();
  }
  EXPECT_TRUE(rogue.hellos().empty());
  EXPECT_TRUE(rogue.stored_batches().empty());
}

// A member that joined after the agent's config was written is reached through a pattern.
TEST(CollectorStreamTest, ARedirectAllowedByAPatternIsFollowed) {
  FakeCollector owner({});
  FakeCollector listed({.owner_address = owner.address()});
  Client client(listed.address(), {}, {}, {"127.0.0.1:" + std::to_string(owner.port())});
  client.buffer.Push(BatchOf("1@1"));
  client.stream->Start();
  ASSERT_TRUE(owner.WaitUntil([&] { return owner.stored_count_locked() == 1; }));
  EXPECT_EQ(client.stream->stats().redirects, 1u);
  EXPECT_EQ(client.stream->stats().refused_redirects, 0u);
}

TEST(CollectorStreamTest, StopWithoutStartDoesNothing) {
  BatchBuffer buffer({});
  CollectorStream stream({.address = "127.0.0.1:1"}, drip::v1::Hello(), &buffer,
                         [] { return drip::v1::AgentStatus(); });
  stream.Stop();
  EXPECT_EQ(stream.stats().streams_started, 0u);
}

}  // namespace
}  // namespace drip::agent
