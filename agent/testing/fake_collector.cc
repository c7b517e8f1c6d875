#include "agent/testing/fake_collector.h"

#include "agent/collector_stream.h"
#include "fmt/format.h"

namespace drip::agent::testing {

FakeCollector::FakeCollector(Options options, int port)
    : options_(std::move(options)), stored_up_to_(options_.stored_up_to) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(fmt::format("127.0.0.1:{}", port), grpc::InsecureServerCredentials(),
                           &port_);
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
}

FakeCollector::~FakeCollector() { Shutdown(); }

void FakeCollector::Shutdown() {
  if (server_ == nullptr) return;
  // Open streams are cancelled at once, as a crashed collector's would be.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  server_.reset();
}

bool FakeCollector::WaitUntil(const std::function<bool()>& done,
                              std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, done);
}

std::vector<drip::v1::Hello> FakeCollector::hellos() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hellos_;
}

std::vector<uint64_t> FakeCollector::received_sequences() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_sequences_;
}

std::vector<drip::v1::SampleBatch> FakeCollector::stored_batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stored_;
}

std::vector<drip::v1::CommandResult> FakeCollector::command_results() const {
  std::lock_guard<std::mutex> lock(mu_);
  return command_results_;
}

int FakeCollector::goodbyes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return goodbyes_;
}

grpc::Status FakeCollector::Connect(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<drip::v1::CollectorMessage, drip::v1::AgentMessage>* stream) {
  drip::v1::AgentMessage in;
  while (stream->Read(&in)) {
    std::vector<drip::v1::CollectorMessage> replies;
    {
      std::lock_guard<std::mutex> lock(mu_);
      switch (in.body_case()) {
        case drip::v1::AgentMessage::kHello: {
          hellos_.push_back(in.hello());
          if (options_.owner_address.has_value()) {
            cv_.notify_all();
            context->AddTrailingMetadata(kOwnerAddressKey, *options_.owner_address);
            return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                fmt::format("host {} belongs to collector at {}", in.hello().host(),
                                            *options_.owner_address));
          }
          if (!options_.send_welcome) break;
          replies.emplace_back().mutable_welcome()->set_acked_sequence(stored_up_to_);
          for (const auto& command : options_.commands) {
            *replies.emplace_back().mutable_command() = command;
          }
          break;
        }
        case drip::v1::AgentMessage::kBatch: {
          const uint64_t sequence = in.batch().sequence();
          received_sequences_.push_back(sequence);
          if (options_.refuse_sequence == sequence && !refused_) {
            refused_ = true;
            cv_.notify_all();
            context->AddTrailingMetadata(kRejectedSequenceKey, std::to_string(sequence));
            return grpc::Status(options_.refusal_code,
                                fmt::format("batch {} sample 0: refused by the test", sequence));
          }
          if (sequence > stored_up_to_) {
            stored_up_to_ = sequence;
            stored_.push_back(in.batch());
          }
          if (options_.ack) replies.emplace_back().mutable_ack()->set_sequence(sequence);
          break;
        }
        case drip::v1::AgentMessage::kCommandResult:
          command_results_.push_back(in.command_result());
          break;
        case drip::v1::AgentMessage::BODY_NOT_SET:
          break;
      }
      cv_.notify_all();
    }
    for (const auto& reply : replies) {
      if (!stream->Write(reply)) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!context->IsCancelled()) ++goodbyes_;
  cv_.notify_all();
  return grpc::Status::OK;
}

}  // namespace drip::agent::testing
