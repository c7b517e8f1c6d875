#include "bench/fleet_agent_stream.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <utility>
#include <vector>

#include "drip/v1/agent.pb.h"

namespace drip::bench {
namespace {

grpc::ByteBuffer ToByteBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes.data(), bytes.size());
  return grpc::ByteBuffer(&slice, 1);
}

int64_t WallMsAt(FleetClock::time_point t) {
  const auto wall =
      std::chrono::system_clock::now() +
      std::chrono::duration_cast<std::chrono::system_clock::duration>(t - FleetClock::now());
  return std::chrono::duration_cast<std::chrono::milliseconds>(wall.time_since_epoch()).count();
}

double Ms(FleetClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

FleetAgentStream::FleetAgentStream(
    std::shared_ptr<grpc::Channel> channel, const FleetBatchEncoder* encoder, Options options,
    FleetRunStats* stats, std::function<void(FleetAgentStream*, FleetClock::time_point)> on_welcome,
    std::function<void()> on_done)
    : channel_(std::move(channel)),
      encoder_(encoder),
      options_(options),
      stats_(stats),
      on_welcome_(std::move(on_welcome)),
      on_done_(std::move(on_done)),
      wall_start_ms_(WallMsAt(stats->start())),
      // Registered with the channel, as the generated stub does, so that each call skips
      // interning the method name.
      connect_("/drip.v1.AgentService/Connect", grpc::internal::RpcMethod::BIDI_STREAMING,
               channel_) {
  // A real agent waits for the collector instead of failing at the first refused
  // connection; in a thousand-stream storm that is what keeps a full accept queue from
  // turning into errors. A stream still unconnected at the ramp-up limit is an error.
  context_.set_wait_for_ready(true);
}

void FleetAgentStream::Start() {
  grpc::internal::ClientCallbackReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
      channel_.get(), connect_, &context_, this);
  std::lock_guard<std::mutex> lock(mu_);
  started_ = FleetClock::now();
  write_buffer_ = ToByteBuffer(encoder_->Hello().SerializeAsString());
  write_in_flight_ = true;
  StartWrite(&write_buffer_);
  StartRead(&read_buffer_);
  hold_ = true;
  AddHold();
  StartCall();
}

FleetClock::time_point FleetAgentStream::DueTime(uint64_t sequence) const {
  return first_due_ +
         options_.interval * static_cast<int64_t>(sequence - outcome_.welcome_acked - 1);
}

void FleetAgentStream::Due() {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || !outcome_.welcomed) return;
  ++due_through_;
  MaybeWriteLocked();
}

void FleetAgentStream::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  stopping_ = true;
  if (outcome_.welcomed && due_through_ >= next_) outcome_.abandoned = due_through_ - next_ + 1;
  MaybeWritesDoneLocked();
}

bool FleetAgentStream::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

FleetAgentStream::Outcome FleetAgentStream::outcome() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outcome_;
}

void FleetAgentStream::MaybeWriteLocked() {
  if (!outcome_.welcomed || write_in_flight_ || stopping_ || read_closed_) return;
  if (next_ > due_through_ || next_ > outcome_.acked + static_cast<uint64_t>(options_.window)) {
    return;
  }
  thread_local std::string bytes;
  const FleetClock::time_point due = DueTime(next_);
  encoder_->Encode(next_, wall_start_ms_ + static_cast<int64_t>(Ms(due - stats_->start())), &bytes);
  write_buffer_ = ToByteBuffer(bytes);
  const FleetClock::time_point now = FleetClock::now();
  in_flight_.push_back(InFlight{next_, now, due});
  outcome_.last_sent = next_;
  ++outcome_.batches_sent;
  ++next_;
  write_in_flight_ = true;
  StartWrite(&write_buffer_);
  stats_->CountSent(now);
}

void FleetAgentStream::MaybeWritesDoneLocked() {
  if (!stopping_ || write_in_flight_ || writes_done_ || read_closed_) return;
  writes_done_ = true;
  StartWritesDone();
  ReleaseHoldLocked();
}

void FleetAgentStream::ReleaseHoldLocked() {
  if (!hold_) return;
  hold_ = false;
  // Outside a reaction gRPC schedules OnDone elsewhere rather than run it here, under mu_.
  RemoveHold();
}

void FleetAgentStream::OnWriteDone(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  write_in_flight_ = false;
  if (!ok) {
    // The call is broken; the read side sees it too and OnDone carries the status.
    read_closed_ = true;
    if (!stopping_) outcome_.ended_early = true;
    ReleaseHoldLocked();
    return;
  }
  MaybeWriteLocked();
  MaybeWritesDoneLocked();
}

void FleetAgentStream::OnReadDone(bool ok) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!ok) {
    // The collector finished the stream: expected only after our WritesDone.
    read_closed_ = true;
    if (!writes_done_) outcome_.ended_early = true;
    ReleaseHoldLocked();
    return;
  }
  drip::v1::CollectorMessage msg;
  if (!grpc::SerializationTraits<drip::v1::CollectorMessage>::Deserialize(&read_buffer_, &msg)
           .ok()) {
    ++outcome_.protocol_errors;
  } else if (msg.has_ack()) {
    HandleAckLocked(msg.ack().sequence());
  } else if (msg.has_welcome()) {
    if (outcome_.welcomed) {
      ++outcome_.protocol_errors;
    } else {
      const FleetClock::time_point now = FleetClock::now();
      outcome_.welcomed = true;
      outcome_.welcome_seconds = std::chrono::duration<double>(now - started_).count();
      outcome_.welcome_acked = msg.welcome().acked_sequence();
      outcome_.acked = outcome_.welcome_acked;
      due_through_ = outcome_.welcome_acked;
      next_ = outcome_.welcome_acked + 1;
      first_due_ = now + std::chrono::duration_cast<FleetClock::duration>(options_.interval *
                                                                          options_.phase);
      const FleetClock::time_point first_due = first_due_;
      StartRead(&read_buffer_);
      lock.unlock();
      on_welcome_(this, first_due);
      return;
    }
  } else if (msg.has_command()) {
    ++outcome_.commands;  // a real agent would act; the load generator only counts
  } else {
    ++outcome_.protocol_errors;
  }
  StartRead(&read_buffer_);
}

void FleetAgentStream::HandleAckLocked(uint64_t sequence) {
  if (sequence < outcome_.acked || sequence > outcome_.last_sent) {
    ++outcome_.protocol_errors;  // acks never go down and cover only what was sent
    return;
  }
  const FleetClock::time_point now = FleetClock::now();
  const float at = static_cast<float>(stats_->SecondsAt(now));
  AckLatency records[64];
  size_t n = 0;
  uint64_t covered = 0;
  while (!in_flight_.empty() && in_flight_.front().sequence <= sequence) {
    const InFlight& f = in_flight_.front();
    records[n++] = AckLatency{at, static_cast<float>(Ms(now - f.written)),
                              static_cast<float>(Ms(now - f.due))};
    if (n == std::size(records)) {
      stats_->Record(records, n);
      n = 0;
    }
    in_flight_.pop_front();
    ++covered;
  }
  stats_->Record(records, n);
  stats_->CountAcked(now, covered);
  outcome_.acked = sequence;
  MaybeWriteLocked();
}

void FleetAgentStream::OnDone(const grpc::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    outcome_.code = status.error_code();
    outcome_.message = status.error_message();
  }
  // Last: the owner may delete the stream once every on_done has run.
  on_done_();
}

}  // namespace drip::bench
