// FakeCollector: a small drip.v1.AgentService served over real gRPC on 127.0.0.1, for
// CollectorStream and Agent tests. It behaves like the collector's wire contract
// (docs/collector.md): Welcome with its high-water mark, Ack per batch, duplicates acked
// but not stored, optionally a refusal with "drip-rejected-sequence" or a redirect to the
// host's owner with "drip-owner-address". It records
// everything it receives so tests can wait for and check it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "drip/v1/agent.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace drip::agent::testing {

class FakeCollector final : public drip::v1::AgentService::Service {
 public:
  struct Options {
    uint64_t stored_up_to = 0;  // the high-water mark Welcome starts from
    bool ack = true;            // send Ack{sequence} for each batch
    // Refuse this batch (once) by ending the stream with `refusal_code` and trailing
    // metadata drip-rejected-sequence.
    std::optional<uint64_t> refuse_sequence;
    grpc::StatusCode refusal_code = grpc::StatusCode::INVALID_ARGUMENT;
    // Sent right after every Welcome.
    std::vector<drip::v1::Command> commands;
    // False: read the Hello and never answer, like a hung collector.
    bool send_welcome = true;
    // Answer every Hello by naming this collector as the host's owner (FAILED_PRECONDITION
    // and drip-owner-address), as a collector sharing the fleet does for a host it does
    // not own.
    std::optional<std::string> owner_address;
  };

  // Serves on 127.0.0.1:`port` (0 picks one). Check port() != 0.
  explicit FakeCollector(Options options, int port = 0);
  ~FakeCollector() override;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Ends every open stream (as a collector crash or shutdown would) and stops serving.
  void Shutdown();

  // Waits until `done` holds (checked under the lock whenever something arrives).
  // Returns false after `timeout`, which only guards the test against hanging.
  bool WaitUntil(const std::function<bool()>& done,
                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // Observations (copies, taken under the lock).
  std::vector<drip::v1::Hello> hellos() const;
  std::vector<uint64_t> received_sequences() const;  // every batch, in arrival order
  std::vector<drip::v1::SampleBatch> stored_batches() const;
  std::vector<drip::v1::CommandResult> command_results() const;
  int goodbyes() const;  // streams the agent half-closed

  // The same, for use inside WaitUntil predicates (lock already held).
  size_t received_count_locked() const { return received_sequences_.size(); }
  size_t stored_count_locked() const { return stored_.size(); }
  size_t hello_count_locked() const { return hellos_.size(); }
  size_t command_result_count_locked() const { return command_results_.size(); }
  int goodbyes_locked() const { return goodbyes_; }

  grpc::Status Connect(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<drip::v1::CollectorMessage, drip::v1::AgentMessage>*
                           stream) override;

 private:
  Options options_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t stored_up_to_ = 0;
  bool refused_ = false;
  std::vector<drip::v1::Hello> hellos_;
  std::vector<uint64_t> received_sequences_;
  std::vector<drip::v1::SampleBatch> stored_;
  std::vector<drip::v1::CommandResult> command_results_;
  int goodbyes_ = 0;
};

}  // namespace drip::agent::testing
