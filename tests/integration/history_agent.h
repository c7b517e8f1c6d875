// HistoryAgent: an agent's stream driven by a test, on the synchronous client API — hello,
// then batches each waited on until acked — for tests that feed a collector days of
// history in minutes (timestamps of their own choosing), which the real agent cannot.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "drip/v1/agent.grpc.pb.h"

namespace drip::testing {

class HistoryAgent {
 public:
  // Connects and says hello as `host` (64 GiB of memory); see welcomed().
  HistoryAgent(drip::v1::AgentService::Stub* stub, const std::string& host);

  bool welcomed() const { return welcomed_; }

  // Sends the batch and waits for its ack.
  bool SendAcked(drip::v1::SampleBatch batch);

  // Reads on (acks and snapshot commands skipped) until the collector sends a mitigation
  // command, answers it with what `answer` makes of it, and returns it; nullopt when the
  // stream ends first or `timeout` passes (the stream is then cancelled).
  std::optional<drip::v1::Command> AnswerNextCommand(
      const std::function<drip::v1::CommandResult(const drip::v1::Command&)>& answer,
      std::chrono::seconds timeout);

  grpc::Status Close();

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<drip::v1::AgentMessage, drip::v1::CollectorMessage>>
      stream_;
  uint64_t sequence_ = 0;
  bool welcomed_ = false;
};

}  // namespace drip::testing
