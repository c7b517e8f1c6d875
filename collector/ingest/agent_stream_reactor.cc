#include "collector/ingest/agent_stream_reactor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "collector/access/peer_credentials.h"
#include "common/daemon/logging.h"
#include "common/rpc/grpc_conversions.h"
#include "fmt/format.h"

namespace drip::collector {

AgentStreamReactor::AgentStreamReactor(grpc::CallbackServerContext* context,
                                       const AgentSessionParts* session_parts,
                                       const AgentStreamTransport* transport)
    : context_(context),
      transport_(transport),
      peer_(context->peer()),
      connected_at_(std::chrono::steady_clock::now()),
      session_(*session_parts, CallerCredentialsOf(*context), context->peer()),
      throttle_alarm_(std::make_shared<grpc::Alarm>()) {
  std::lock_guard<std::mutex> lock(mu_);
  // Every stream starts unauthenticated; IngestService refuses new ones past its limit.
  transport_->metrics->streams_awaiting_hello.Increment();
  awaiting_hello_counted_ = true;
}

bool AgentStreamReactor::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  // Identity first: a caller without an agent's certificate (a token holder, or anyone
  // when the access file lets certificates in) gets no read, so none of what it sends is
  // ever parsed; HTTP/2 flow control holds the rest back.
  if (const Verdict caller = session_.CheckCaller(); !caller.ok()) {
    RejectLocked(caller, std::nullopt);
    return false;
  }
  StartReadLocked();
  return true;
}

// ---- Entry points from other streams and the service ----

void AgentStreamReactor::FinishForShutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  CloseLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, "collector is shutting down; reconnect"),
              stream_outcome::kShutdown);
}

void AgentStreamReactor::RefuseAwaitingHello(int64_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  FinishNowLocked(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                               fmt::format("{} connections have not said hello yet "
                                           "(ingest.max_streams_awaiting_hello); retry later",
                                           limit)),
                  stream_outcome::kTooManyAwaitingHello);
}

bool AgentStreamReactor::CloseIfNoHelloSince(std::chrono::steady_clock::time_point cutoff) {
  std::lock_guard<std::mutex> lock(mu_);
  // A first message being handled may be the hello: its answer decides.
  if (hello_seen_ || storage_busy_ || closing_ || finish_called_ || connected_at_ >= cutoff) {
    return false;
  }
  Logger("collector")->debug("stream from {}: no hello within ingest.hello_timeout; closed", peer_);
  FinishNowLocked(
      grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                   "no hello within ingest.hello_timeout of connecting; an agent says hello first"),
      stream_outcome::kNoHello);
  return true;
}

void AgentStreamReactor::Supersede() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finish_called_) return;
  Logger("collector")->info("host {}: stream from {} superseded by a newer stream", host_, peer_);
  // At once rather than after draining: the old connection is most likely dead, and
  // the new stream's Welcome already tells the agent what is durable.
  FinishNowLocked(
      grpc::Status(grpc::StatusCode::ABORTED, "superseded by a new stream from the same host"),
      stream_outcome::kSuperseded);
}

bool AgentStreamReactor::IsOpen() {
  std::lock_guard<std::mutex> lock(mu_);
  return !finish_called_ && !closing_.has_value();
}

bool AgentStreamReactor::SendCommand(const drip::v1::Command& command) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!hello_seen_ || closing_ || finish_called_) return false;
  *outbox_.emplace_back().mutable_command() = command;
  FlushLocked();
  return true;
}

void AgentStreamReactor::MoveTo(const std::string& owner_name, const std::string& owner_address) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!hello_seen_ || closing_ || finish_called_) return;
  Logger("collector")
      ->info(
          "host {}: collector {} at {} owns it now; acknowledging what is stored and sending "
          "the agent there",
          host_, owner_name, owner_address);
  // A drain, not a cut: the stream finishes once the batch being stored is acked; what
  // the agent sends meanwhile is not read, so it goes to the new owner.
  SendToOwnerLocked(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                 fmt::format("host {} now belongs to collector {} at {}; connect "
                                             "there",
                                             host_, owner_name, owner_address)),
                    owner_address);
}

// ---- gRPC reactions ----

void AgentStreamReactor::OnReadDone(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok) {
    // The agent half-closed (or the call broke): send what is queued, then OK.
    CloseLocked(grpc::Status::OK,
                context_->IsCancelled() ? stream_outcome::kCancelled : stream_outcome::kClosed);
    return;
  }
  if (closing_ || finish_called_) return;
  Verdict order = session_.CheckOrder(in_);
  if (!order.ok()) {
    // The batch itself may be fine; the agent broke the protocol, so nothing to drop.
    RejectLocked(order, std::nullopt);
    return;
  }
  // Storing a batch, or diagnosing a snapshot in a command result, takes a while: on a
  // storage worker, not a gRPC thread.
  const size_t wire_bytes = in_.ByteSizeLong();
  SubmitLocked([this, wire_bytes] { HandleMessage(wire_bytes); });
}

void AgentStreamReactor::OnWriteDone(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  write_in_flight_ = false;
  if (!ok) {
    // The agent is gone; nothing more can be sent, so skip the drain.
    FinishNowLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, "write to agent failed"),
                    stream_outcome::kCancelled);
    return;
  }
  FlushLocked();
}

void AgentStreamReactor::OnCancel() {
  std::lock_guard<std::mutex> lock(mu_);
  FinishNowLocked(grpc::Status::CANCELLED, stream_outcome::kCancelled);
}

void AgentStreamReactor::OnDone() {
  bool destroy = false;
  std::shared_ptr<grpc::Alarm> pending_alarm;
  std::string_view outcome;
  std::string host;
  // Copied under the lock: once it is released, a storage task or the throttle alarm
  // may delete the reactor.
  const std::string peer = peer_;
  uint64_t batches_stored = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    destroy = !storage_busy_ && !throttled_;
    if (throttled_) pending_alarm = throttle_alarm_;
    outcome = outcome_.empty() ? stream_outcome::kCancelled : outcome_;
    host = host_.empty() ? "(no hello)" : host_;
    batches_stored = batches_stored_;
  }
  // While the store fails, every agent's reconnect ends this way: StorageHealth has
  // logged the outage once, so these would only grow with fleet size times retries.
  Logger("collector")
      ->log(outcome == stream_outcome::kStorageError ? spdlog::level::debug : spdlog::level::info,
            "host {}: stream from {} ended ({}); {} batches stored", host, peer, outcome,
            batches_stored);
  // A storage task still running deletes the reactor when it ends (EndStorageTask), a
  // pending throttle alarm when its (now cancelled) callback runs.
  if (pending_alarm) {
    pending_alarm->Cancel();
    return;
  }
  if (destroy) DestroySelf();
}

void AgentStreamReactor::OnThrottleDone(bool fired) {
  bool destroy = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    throttled_ = false;
    if (fired && !done_) StartReadLocked();
    MaybeFinishLocked();
    destroy = done_ && !storage_busy_;
  }
  if (destroy) DestroySelf();
}

// ---- Storage tasks (worker threads) ----

void AgentStreamReactor::SubmitLocked(std::function<void()> task) {
  storage_busy_ = true;
  if (!transport_->writers->Submit(std::move(task))) {
    storage_busy_ = false;
    FinishNowLocked(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, "collector is shutting down; reconnect"),
        stream_outcome::kShutdown);
  }
}

void AgentStreamReactor::EndStorageTask(const std::function<void()>& then) {
  bool destroy = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    storage_busy_ = false;
    then();
    MaybeFinishLocked();
    destroy = done_ && !throttled_;
  }
  if (destroy) DestroySelf();
}

void AgentStreamReactor::HandleMessage(size_t wire_bytes) {
  const SessionReply reply = session_.Handle(in_, wire_bytes);
  switch (reply.kind) {
    case SessionReply::Kind::kWelcome:
      RegisterHost(session_.host());
      EndStorageTask([&] {
        hello_seen_ = true;
        StopAwaitingHelloLocked();
        outbox_.emplace_back().mutable_welcome()->set_acked_sequence(reply.sequence);
        FlushLocked();
        StartReadLocked();
      });
      return;
    case SessionReply::Kind::kAck:
      EndStorageTask([&] {
        if (reply.stored) ++batches_stored_;
        // Acks coalesce: one for the highest sequence covers every batch below it.
        pending_ack_ = std::max(pending_ack_.value_or(0), reply.sequence);
        FlushLocked();
        ReadNextLocked(reply.samples);
      });
      return;
    case SessionReply::Kind::kNone:
      EndStorageTask([&] { StartReadLocked(); });
      return;
    case SessionReply::Kind::kRefused:
      EndStorageTask([&] { RejectLocked(reply.verdict, reply.refused_batch); });
      return;
    case SessionReply::Kind::kStorageFailed:
      EndStorageTask(
          [&] { CloseLocked(ToGrpcStatus(reply.status), stream_outcome::kStorageError); });
      return;
    case SessionReply::Kind::kRedirect:
      EndStorageTask([&] {
        Logger("collector")
            ->debug("stream from {}: {}", peer_, std::string(reply.status.message()));
        SendToOwnerLocked(ToGrpcStatus(reply.status), reply.owner_address);
      });
      return;
  }
}

void AgentStreamReactor::RegisterHost(const std::string& host) {
  bool still_open = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    host_ = host;
    still_open = !closing_ && !finish_called_;
  }
  // Outside mu_: registering may supersede another stream, which takes that stream's
  // lock under the registry's; holding ours too would order the locks both ways.
  if (still_open) transport_->hosts->Register(host, this);
  std::lock_guard<std::mutex> lock(mu_);
  registered_ = still_open;
}

void AgentStreamReactor::DestroySelf() {
  // No other thread uses this reactor now except through ConnectedHosts, which
  // Unregister waits out.
  StopAwaitingHelloLocked();  // no lock needed any more, as above
  if (registered_) transport_->hosts->Unregister(host_, this);
  if (transport_->on_destroy) transport_->on_destroy(this);
  delete this;
}

// ---- State transitions (mu_ held) ----

void AgentStreamReactor::StopAwaitingHelloLocked() {
  if (!awaiting_hello_counted_) return;
  awaiting_hello_counted_ = false;
  transport_->metrics->streams_awaiting_hello.Decrement();
}

void AgentStreamReactor::StartReadLocked() {
  if (closing_ || finish_called_) return;
  StartRead(&in_);
}

void AgentStreamReactor::ReadNextLocked(size_t samples) {
  // The host's bucket, not the stream's: a reconnect must not buy a fresh burst. Before
  // the hello names the host there is nothing to charge.
  const std::chrono::nanoseconds wait =
      host_.empty() || transport_->rate_limits == nullptr
          ? std::chrono::nanoseconds(0)
          : transport_->rate_limits->Take(host_, static_cast<double>(samples),
                                          std::chrono::steady_clock::now());
  if (wait.count() <= 0 || closing_ || finish_called_) {
    StartReadLocked();
    return;
  }
  transport_->metrics->ingest_throttled_batches.Increment();
  transport_->metrics->ingest_throttled_seconds.Increment(
      std::chrono::duration<double>(wait).count());
  if (!throttle_logged_) {
    throttle_logged_ = true;
    Logger("collector")
        ->info(
            "host {}: sends faster than ingest.max_samples_per_second_per_host ({:.0f}/s); "
            "reading its stream at that rate (logged once per stream)",
            host_, transport_->max_samples_per_second);
  }
  throttled_ = true;
  // The callback runs on a gRPC thread, never inline, so mu_ held here is fine.
  throttle_alarm_->Set(std::chrono::system_clock::now() + wait,
                       [this](bool fired) { OnThrottleDone(fired); });
}

void AgentStreamReactor::FlushLocked() {
  if (finish_called_ || write_in_flight_) return;
  if (!outbox_.empty()) {
    out_ = std::move(outbox_.front());
    outbox_.pop_front();
  } else if (pending_ack_) {
    out_.Clear();
    out_.mutable_ack()->set_sequence(*pending_ack_);
    pending_ack_.reset();
  } else {
    MaybeFinishLocked();
    return;
  }
  write_in_flight_ = true;
  StartWrite(&out_);
}

void AgentStreamReactor::CloseLocked(grpc::Status status, std::string_view outcome) {
  if (closing_ || finish_called_) return;
  SetOutcomeLocked(outcome);
  closing_ = std::move(status);
  FlushLocked();
  MaybeFinishLocked();
}

void AgentStreamReactor::MaybeFinishLocked() {
  if (!closing_ || finish_called_ || storage_busy_ || write_in_flight_ || !outbox_.empty() ||
      pending_ack_) {
    return;
  }
  FinishNowLocked(*closing_, outcome_);
}

void AgentStreamReactor::FinishNowLocked(grpc::Status status, std::string_view outcome) {
  if (finish_called_) return;
  SetOutcomeLocked(outcome);
  finish_called_ = true;
  outbox_.clear();
  pending_ack_.reset();
  // Counted here rather than in OnDone so that the count is in place before the agent
  // sees the status.
  transport_->metrics->StreamEnded(outcome_).Increment();
  // A pending read or write completes with ok=false; OnDone follows once both have.
  Finish(std::move(status));
}

void AgentStreamReactor::RejectLocked(const Verdict& verdict, std::optional<uint64_t> sequence) {
  // Already ending (shutdown, supersession): the agent will resend the message and it
  // is judged, and counted, then.
  if (closing_ || finish_called_) return;
  transport_->metrics->Rejected(verdict.reason).Increment();
  if (sequence) context_->AddTrailingMetadata(kRejectedSequenceKey, std::to_string(*sequence));
  Logger("collector")
      ->warn("host {}: refused {} from {} ({}): {}", host_.empty() ? "(no hello)" : host_,
             sequence ? fmt::format("batch {}", *sequence) : std::string("stream"), peer_,
             verdict.reason, std::string(verdict.status.message()));
  CloseLocked(ToGrpcStatus(verdict.status), stream_outcome::kRejected);
}

void AgentStreamReactor::SendToOwnerLocked(grpc::Status status, const std::string& owner_address) {
  if (closing_ || finish_called_) return;
  transport_->metrics->cluster_redirects.Increment();
  context_->AddTrailingMetadata(kOwnerAddressKey, owner_address);
  CloseLocked(std::move(status), stream_outcome::kRedirected);
}

void AgentStreamReactor::SetOutcomeLocked(std::string_view outcome) {
  if (outcome_.empty()) outcome_ = outcome;
}

}  // namespace drip::collector
