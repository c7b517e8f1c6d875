#include "tests/integration/synthetic_agent.h"

#include <chrono>
#include <utility>

namespace drip::testing {

using std::chrono::milliseconds;

SyntheticAgent::SyntheticAgent(std::string host, std::string address, bool leaking,
                               std::vector<std::string> alternates)
    : host_(std::move(host)),
      leaking_(leaking),
      buffer_(agent::BatchBufferOptions{.max_batches = 1'000'000, .max_bytes = 1ull << 32}) {
  agent::CollectorStreamOptions options;
  options.address = std::move(address);
  options.alternates = std::move(alternates);
  // The tests' collectors all serve on loopback, some joining after the agents started.
  options.redirect_to = {"127.0.0.1:*"};
  options.tls.plaintext = true;
  options.backoff_initial = milliseconds(50);
  options.backoff_max = milliseconds(400);
  drip::v1::Hello hello;
  hello.set_host(host_);
  hello.set_agent_version("synthetic-agent");
  hello.set_memory_total_bytes(16ull << 30);
  stream_ = std::make_unique<agent::CollectorStream>(options, hello, &buffer_, [] {
    drip::v1::AgentStatus status;
    status.set_sampler("synthetic");
    return status;
  });
  stream_->Start();
  feeder_ = std::thread([this] { Feed(); });
}

SyntheticAgent::~SyntheticAgent() { Stop(); }

void SyntheticAgent::StopFeeding() {
  stop_feeding_ = true;
  if (feeder_.joinable()) feeder_.join();
}

void SyntheticAgent::Stop() {
  StopFeeding();
  stream_->Stop();
}

uint64_t SyntheticAgent::AckedSequence() const {
  agent::BatchBuffer::Stats s = buffer_.stats();
  return s.next_sequence - 1 - s.buffered_batches;
}

std::vector<int64_t> SyntheticAgent::TimestampsUpTo(uint64_t sequence) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> out;
  for (const auto& [seq, ts] : timestamps_) {
    if (seq <= sequence) out.push_back(ts);
  }
  return out;
}

void SyntheticAgent::Feed() {
  constexpr auto kPeriod = milliseconds(100);
  uint64_t n = 0;
  while (!stop_feeding_) {
    const int64_t now = std::chrono::duration_cast<milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    drip::v1::SampleBatch batch;
    auto* flat = batch.add_samples();
    flat->set_component("proc:crash-steady");
    flat->set_instance("100@1");
    flat->set_timestamp_ms(now);
    flat->mutable_process()->set_anon_rss_bytes(100ull << 20);
    if (leaking_) {
      auto* leak = batch.add_samples();
      leak->set_component("proc:crash-leaker");
      leak->set_instance("200@1");
      leak->set_timestamp_ms(now);
      leak->mutable_process()->set_anon_rss_bytes((50ull << 20) + n * (400ull << 10));
    }
    {
      // Under the lock so that a batch is never acknowledged before it is recorded.
      std::lock_guard<std::mutex> lock(mu_);
      const uint64_t sequence = buffer_.Push(std::move(batch));
      timestamps_[sequence] = now;
    }
    ++n;
    std::this_thread::sleep_for(kPeriod);
  }
}

}  // namespace drip::testing
