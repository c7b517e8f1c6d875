#include "tests/integration/history_agent.h"

#include <chrono>
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

grpc::Status HistoryAgent::Close() {
  stream_->WritesDone();
  CollectorMessage rest;
  while (stream_->Read(&rest)) {
  }
  return stream_->Finish();
}

}  // namespace drip::testing
