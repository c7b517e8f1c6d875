#include "tests/integration/history_agent.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

namespace drip::testing {

using drip::v1::AgentMessage;
using drip::v1::CollectorMessage;

HistoryAgent::HistoryAgent(drip::v1::AgentService::Stub* stub, const std::string& host) {
  context_.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
  stream_ = stub->Connect(&context_);
  AgentMessage hello;
  hello.mutable_hello()->set_host(host);
  hello.mutable_hello()->set_agent_version("history-agent");
  hello.mutable_hello()->set_memory_total_bytes(64ull << 30);
  hello.mutable_hello()->mutable_status()->set_sampler("proc");
  CollectorMessage welcome;
  welcomed_ = stream_->Write(hello) && stream_->Read(&welcome) && welcome.has_welcome();
}

bool HistoryAgent::SendAcked(drip::v1::SampleBatch batch) {
  batch.set_sequence(++sequence_);
  AgentMessage m;
  *m.mutable_batch() = std::move(batch);
  if (!stream_->Write(m)) return false;
  CollectorMessage reply;
  while (stream_->Read(&reply)) {
    if (reply.has_ack() && reply.ack().sequence() >= sequence_) return true;
  }
  return false;
}

std::optional<drip::v1::Command> HistoryAgent::AnswerNextCommand(
    const std::function<drip::v1::CommandResult(const drip::v1::Command&)>& answer,
    std::chrono::seconds timeout) {
  // A blocking Read has no deadline of its own: a watchdog cancels the stream.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, timeout, [&] { return done; })) context_.TryCancel();
  });
  std::optional<drip::v1::Command> got;
  CollectorMessage m;
  while (stream_->Read(&m)) {
    // Snapshot commands go unanswered: the collector times them out.
    if (!m.has_command() || !m.command().has_mitigation()) continue;
    AgentMessage reply;
    *reply.mutable_command_result() = answer(m.command());
    if (stream_->Write(reply)) got = m.command();
    break;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  watchdog.join();
  return got;
}

grpc::Status HistoryAgent::Close() {
  stream_->WritesDone();
  CollectorMessage rest;
  while (stream_->Read(&rest)) {
  }
  return stream_->Finish();
}

}  // namespace drip::testing
