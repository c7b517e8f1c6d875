#include "collector/agent_stream_reactor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "collector/agent_identity.h"
#include "collector/peer_credentials.h"
#include "common/logging.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  // absl and gRPC share the canonical code numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace

AgentStreamReactor::AgentStreamReactor(grpc::CallbackServerContext* context,
                                       const AgentStreamEnv* env)
    : context_(context),
      env_(env),
      peer_(context->peer()),
      credentials_(CallerCredentialsOf(*context)),
      bucket_(env->max_samples_per_second, env->burst_samples),
      throttle_alarm_(std::make_shared<grpc::Alarm>()) {
  std::lock_guard<std::mutex> lock(mu_);
  StartReadLocked();
}

// ---- Entry points from other streams and the service ----

void AgentStreamReactor::FinishForShutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  CloseLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, "collector is shutting down; reconnect"),
              stream_outcome::kShutdown);
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
  Verdict order = env_->validator->CheckOrder(in_, hello_seen_);
  if (!order.ok()) {
    // The batch itself may be fine; the agent broke the protocol, so nothing to drop.
    RejectLocked(order, std::nullopt);
    return;
  }
  switch (in_.body_case()) {
    case drip::v1::AgentMessage::kHello:
      SubmitLocked([this] { HandleHello(); });
      return;
    case drip::v1::AgentMessage::kBatch: {
      size_t wire_bytes = in_.ByteSizeLong();
      SubmitLocked([this, wire_bytes] { HandleBatch(wire_bytes); });
      return;
    }
    case drip::v1::AgentMessage::kCommandResult:
      // Diagnosing a snapshot takes a while: on a storage worker, not a gRPC thread.
      SubmitLocked([this] { HandleCommandResult(); });
      return;
    case drip::v1::AgentMessage::BODY_NOT_SET:
      break;
  }
  // CheckOrder refuses a message without a body, so getting here is a bug.
  Logger("collector")->critical("host {}: message without a body passed CheckOrder", host_);
  std::abort();
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
  if (!env_->writers->Submit(std::move(task))) {
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

void AgentStreamReactor::HandleHello() {
  const drip::v1::Hello& hello = in_.hello();
  Verdict verdict = env_->validator->ValidateHello(hello);
  if (verdict.ok()) {
    verdict = CheckAgentIdentity(credentials_, hello.host(), env_->tls, env_->access);
  }
  if (!verdict.ok()) {
    EndStorageTask([&] { RejectLocked(verdict, std::nullopt); });
    return;
  }
  const int64_t now_ms = env_->clock->NowMs();
  drip::v1::HostInfo info;
  info.set_host(hello.host());
  *info.mutable_labels() = hello.labels();
  info.set_agent_version(hello.agent_version());
  info.set_memory_total_bytes(hello.memory_total_bytes());
  if (env_->detector != nullptr && hello.memory_total_bytes() > 0) {
    env_->detector->SetHostMemory(hello.host(), hello.memory_total_bytes());
  }
  info.set_sampler(hello.status().sampler());
  info.set_first_seen_ms(now_ms);
  info.set_last_seen_ms(now_ms);

  absl::Status status = env_->store->PutHost(info);
  uint64_t acked = 0;
  if (status.ok()) {
    absl::StatusOr<uint64_t> mark = env_->store->AckedSequence(hello.host());
    if (mark.ok()) {
      acked = *mark;
    } else {
      status = mark.status();
    }
  }
  if (!status.ok()) {
    EndStorageTask([&] { StorageFailedLocked(status, "storing the hello"); });
    return;
  }

  bool still_open = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    host_ = hello.host();
    still_open = !closing_ && !finish_called_;
  }
  // Outside mu_: registering may supersede another stream, which takes that stream's
  // lock under the registry's; holding ours too would order the locks both ways.
  if (still_open) env_->hosts->Register(host_, this);

  Logger("collector")
      ->info("host {}: connected from {} (agent {}, sampler {}); durable up to sequence {}", host_,
             peer_, hello.agent_version().empty() ? "?" : hello.agent_version(),
             hello.status().sampler().empty() ? "?" : hello.status().sampler(), acked);
  EndStorageTask([&] {
    registered_ = still_open;
    hello_seen_ = true;
    outbox_.emplace_back().mutable_welcome()->set_acked_sequence(acked);
    FlushLocked();
    StartReadLocked();
  });
}

void AgentStreamReactor::HandleCommandResult() {
  const drip::v1::CommandResult& result = in_.command_result();
  const int64_t now_ms = env_->clock->NowMs();
  const bool known =
      (env_->snapshots != nullptr && env_->snapshots->OnCommandResult(host_, result, now_ms)) ||
      (env_->mitigations != nullptr && env_->mitigations->OnCommandResult(host_, result, now_ms));
  if (!known) {
    Logger("collector")
        ->info("host {}: result for unknown or expired command '{}' (ok={}); ignored", host_,
               result.command_id(), result.ok());
  }
  EndStorageTask([&] { StartReadLocked(); });
}

void AgentStreamReactor::HandleBatch(size_t wire_bytes) {
  const drip::v1::SampleBatch& batch = in_.batch();
  const uint64_t sequence = batch.sequence();
  Verdict verdict = env_->validator->ValidateBatch(batch, host_, wire_bytes);
  if (!verdict.ok()) {
    EndStorageTask([&] { RejectLocked(verdict, sequence); });
    return;
  }

  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<AppendResult> result = env_->store->AppendBatch(host_, batch);
  env_->metrics->storage_write_seconds.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!result.ok()) {
    EndStorageTask(
        [&] { StorageFailedLocked(result.status(), fmt::format("storing batch {}", sequence)); });
    return;
  }

  // Only what is durable feeds the detector, so a replay after a crash sees the same.
  if (result->stored && env_->detector != nullptr) env_->detector->ObserveBatch(host_, batch);

  CollectorMetrics& m = *env_->metrics;
  if (result->stored) {
    m.agent_last_batch.Add({{"host", host_}}).Set(static_cast<double>(env_->clock->NowMs()) / 1000);
    m.ingest_batches.Increment();
    m.ingest_samples.Increment(static_cast<double>(result->samples_stored));
    m.ingest_bytes.Increment(static_cast<double>(wire_bytes));
  } else {
    m.ingest_duplicate_batches.Increment();
  }
  if (result->missing_batches > 0) {
    m.ingest_gap_batches.Increment(static_cast<double>(result->missing_batches));
    Logger("collector")
        ->info("host {}: {} batches missing before batch {} (the agent dropped them)", host_,
               result->missing_batches, sequence);
  }
  EndStorageTask([&] {
    if (result->stored) ++batches_stored_;
    // A duplicate is acked too: the agent resent it only because it missed the ack.
    pending_ack_ = std::max(pending_ack_.value_or(0), sequence);
    FlushLocked();
    ReadNextLocked(static_cast<size_t>(batch.samples_size()));
  });
}

void AgentStreamReactor::DestroySelf() {
  // No other thread uses this reactor now except through ConnectedHosts, which
  // Unregister waits out.
  if (registered_) env_->hosts->Unregister(host_, this);
  if (env_->on_destroy) env_->on_destroy(this);
  delete this;
}

// ---- State transitions (mu_ held) ----

void AgentStreamReactor::StartReadLocked() {
  if (closing_ || finish_called_) return;
  StartRead(&in_);
}

void AgentStreamReactor::ReadNextLocked(size_t samples) {
  const std::chrono::nanoseconds wait =
      bucket_.Take(static_cast<double>(samples), std::chrono::steady_clock::now());
  if (wait.count() <= 0 || closing_ || finish_called_) {
    StartReadLocked();
    return;
  }
  env_->metrics->ingest_throttled_batches.Increment();
  env_->metrics->ingest_throttled_seconds.Increment(std::chrono::duration<double>(wait).count());
  if (!throttle_logged_) {
    throttle_logged_ = true;
    Logger("collector")
        ->info(
            "host {}: sends faster than ingest.max_samples_per_second_per_host ({:.0f}/s); "
            "reading its stream at that rate (logged once per stream)",
            host_, env_->max_samples_per_second);
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
  env_->metrics->StreamEnded(outcome_).Increment();
  // A pending read or write completes with ok=false; OnDone follows once both have.
  Finish(std::move(status));
}

void AgentStreamReactor::RejectLocked(const Verdict& verdict, std::optional<uint64_t> sequence) {
  // Already ending (shutdown, supersession): the agent will resend the message and it
  // is judged, and counted, then.
  if (closing_ || finish_called_) return;
  env_->metrics->Rejected(verdict.reason).Increment();
  if (sequence) context_->AddTrailingMetadata(kRejectedSequenceKey, std::to_string(*sequence));
  Logger("collector")
      ->warn("host {}: refused {} from {} ({}): {}", host_.empty() ? "(no hello)" : host_,
             sequence ? fmt::format("batch {}", *sequence) : std::string("stream"), peer_,
             verdict.reason, std::string(verdict.status.message()));
  CloseLocked(ToGrpc(verdict.status), stream_outcome::kRejected);
}

void AgentStreamReactor::StorageFailedLocked(const absl::Status& error, std::string_view what) {
  env_->metrics->storage_write_errors.Increment();
  // What the store says, not this one error: a write that failed just before a
  // recovery must not mark the recovered store unhealthy again.
  env_->health->Update(env_->store->WriteState());
  // StorageHealth logs the transition once; per-stream detail only at debug.
  Logger("collector")->debug("host {}: {} failed: {}", host_, what, std::string(error.message()));
  CloseLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                           fmt::format("collector could not store data ({} failed: {}); resend "
                                       "after reconnecting",
                                       what, std::string(error.message()))),
              stream_outcome::kStorageError);
}

void AgentStreamReactor::SetOutcomeLocked(std::string_view outcome) {
  if (outcome_.empty()) outcome_ = outcome;
}

}  // namespace drip::collector
