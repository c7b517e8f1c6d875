#include "agent/collector_stream.h"

#include <cstdint>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "agent/backoff.h"
#include "agent/command_guard.h"
#include "common/base/duration.h"
#include "common/base/strings.h"
#include "common/daemon/listen_address.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

// How long a stream that broke on a write gets to deliver its final status before it
// is cancelled; the reader normally sees the end at once.
constexpr std::chrono::seconds kReaderGrace(5);
// Stop() gives a welcomed stream this much beyond goodbye_timeout before it cancels a
// writer stuck on flow control (a collector that stopped reading).
constexpr std::chrono::seconds kStopBackstop(1);

constexpr const char* kCommandNotSupported = "not supported by this agent version";

int ToIntMs(std::chrono::milliseconds d) {
  return static_cast<int>(std::min<int64_t>(d.count(), INT32_MAX));
}

std::string CodeName(grpc::StatusCode code) {
  // absl and gRPC share the canonical code numbering.
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

bool IsRefusal(grpc::StatusCode code) {
  return code == grpc::StatusCode::INVALID_ARGUMENT ||
         code == grpc::StatusCode::PERMISSION_DENIED ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED;
}

}  // namespace

CollectorStream::CollectorStream(CollectorStreamOptions options, drip::v1::Hello hello,
                                 BatchBuffer* buffer, StatusProvider status)
    : options_(std::move(options)),
      hello_(std::move(hello)),
      buffer_(buffer),
      status_(std::move(status)) {
  // Runs under the buffer's lock; only takes ours, and nothing here calls the buffer
  // while holding mu_, so the two locks are always taken buffer-then-stream.
  buffer_->SetPushListener([this] {
    std::lock_guard<std::mutex> lock(mu_);
    data_ready_ = true;
    cv_.notify_all();
  });
}

CollectorStream::~CollectorStream() {
  Stop();
  buffer_->SetPushListener(nullptr);
}

void CollectorStream::SendCommandResult(drip::v1::CommandResult result) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Kept across reconnects, so bounded: through a long outage only the newest are kept
    // (the collector has timed the oldest out by then).
    if (outbox_.size() >= kMaxQueuedResults) {
      Logger("agent")->warn("command result {} dropped: {} results already wait for the collector",
                            outbox_.front().command_result().command_id(), outbox_.size());
      outbox_.pop_front();
    }
    *outbox_.emplace_back().mutable_command_result() = std::move(result);
  }
  cv_.notify_all();
}

void CollectorStream::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { Run(); });
}

void CollectorStream::Stop() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  std::shared_ptr<grpc::ClientContext> cancel_now;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_) return;
    stopping_ = true;
    // Only a welcomed stream can say goodbye; anything else is cancelled at once,
    // including a Connect still waiting for the TCP connection.
    if (context_ != nullptr && !welcomed_) cancel_now = context_;
  }
  cv_.notify_all();
  if (cancel_now) cancel_now->TryCancel();
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, options_.goodbye_timeout + kStopBackstop, [&] { return run_done_; }) &&
        context_ != nullptr) {
      context_->TryCancel();
    }
  }
  if (thread_.joinable()) thread_.join();
}

CollectorStream::Stats CollectorStream::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CollectorStream::MakeChannel(
    const std::string& address) const {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, ToIntMs(options_.keepalive_time));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, ToIntMs(options_.keepalive_timeout));
  // Batches may be minutes apart (long intervals); keep pinging regardless.
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // A channel of our own per attempt, with its own subchannel: otherwise gRPC's
  // reconnect backoff (up to 2 minutes by default) would sit under ours, and a
  // collector that came back would be found late.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // Resending is this class's job (from the buffer, after Welcome); gRPC's own retries
  // would only buffer a copy of every message.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // Built per attempt from the files, so that rotated certificates are picked up by the
  // next connection without restarting the agent.
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(options_.tls, &args);
  if (!credentials.ok()) return credentials.status();
  return grpc::CreateCustomChannel(address, *credentials, args);
}

bool CollectorStream::RedirectAllowed(std::string_view address) const {
  if (address == options_.address) return true;
  for (const std::string& listed : options_.alternates) {
    if (address == listed) return true;
  }
  // Only a TCP host:port: never a gRPC target of another kind ("unix:/run/…" would have
  // this root process dial a local socket of the redirecting collector's choosing).
  absl::StatusOr<ListenAddress> parsed = ListenAddress::Parse(address);
  if (!parsed.ok() || parsed->port == 0) return false;
  for (const std::string& pattern : options_.redirect_to) {
    if (MatchesGlob(pattern, address)) return true;
  }
  return false;
}

bool CollectorStream::ChooseNextAddress(const Outcome& outcome) {
  if (outcome.owner_address.has_value() && !outcome.redirect_refused) {
    // Straight there, unless the previous stream ended the same way: two collectors that
    // disagree about the members for a moment must not bounce the agent at full speed.
    const bool bounced = redirected_last_;
    redirected_last_ = true;
    dialled_from_redirect_ = true;
    dialled_ = *outcome.owner_address;
    return bounced;
  }
  redirected_last_ = false;
  if (!outcome.welcomed || outcome.redirect_refused) {
    // Unreachable: the next of the configured list. A redirect target that failed (its
    // owner gone) sends the agent back to the listed collector it came from, which knows
    // the new owner once the old one's lease has expired.
    const size_t count = 1 + options_.alternates.size();
    if (!dialled_from_redirect_) list_index_ = (list_index_ + 1) % count;
    dialled_from_redirect_ = false;
    dialled_ = list_index_ == 0 ? options_.address : options_.alternates[list_index_ - 1];
  }
  return true;
}

void CollectorStream::Run() {
  Backoff backoff(options_.backoff_initial, options_.backoff_max, std::random_device{}());
  dialled_ = options_.address;
  while (!stopping_) {
    Outcome outcome = RunStream();
    if (stopping_) break;
    if (outcome.welcomed && !outcome.deferred()) backoff.Reset();
    HandleEnd(outcome);
    const bool wait = ChooseNextAddress(outcome);
    const std::chrono::milliseconds delay =
        wait ? backoff.NextDelay() : std::chrono::milliseconds(0);
    Logger("agent")->debug("reconnecting to collector at {} in {}", dialled_,
                           FormatDuration(delay));
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, delay, [&] { return stopping_.load(); });
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    run_done_ = true;
    stats_.connected = false;
  }
  cv_.notify_all();
}

CollectorStream::Outcome CollectorStream::RunStream() {
  Outcome outcome;
  auto context = std::make_shared<grpc::ClientContext>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      outcome.status = grpc::Status(grpc::StatusCode::CANCELLED, "agent is stopping");
      return outcome;
    }
    context_ = context;
    welcomed_ = false;
    acked_at_welcome_ = 0;
    reader_done_ = false;
    data_ready_ = true;  // after the Welcome, (re)send whatever is buffered
    // The outbox holds command results, and they outlive a stream: a signal the agent
    // really sent must not be audited as timed out because the stream broke before its
    // result went out. The collector takes a result for a command it still awaits on
    // whichever stream it comes (and ignores one it has given up on).
    ++stats_.streams_started;
    stats_.collector = dialled_;
  }
  auto log = Logger("agent");
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(dialled_);
  if (!channel.ok()) {
    // Unreadable certificate files: an outage like any other, retried with backoff, so
    // that fixing the files (or a renewal landing) needs no restart.
    outcome.status =
        grpc::Status(grpc::StatusCode::UNAVAILABLE,
                     fmt::format("cannot set up TLS: {}", std::string(channel.status().message())));
    std::lock_guard<std::mutex> lock(mu_);
    context_.reset();
    return outcome;
  }
  std::unique_ptr<drip::v1::AgentService::Stub> stub = drip::v1::AgentService::NewStub(*channel);
  // Blocks until the connection is up or has failed (or Stop() cancels it).
  std::unique_ptr<Stream> stream = stub->Connect(context.get());
  // Reading starts at once so that the end of a stream refused at Hello is seen.
  std::thread reader([this, s = stream.get()] { ReadLoop(s); });

  drip::v1::AgentMessage hello;
  *hello.mutable_hello() = hello_;
  *hello.mutable_hello()->mutable_status() = status_();
  bool welcomed = false;
  uint64_t acked = 0;
  // A failed Hello write means the call is already over (e.g. connection refused);
  // its status says why, so it must not be replaced by a cancellation.
  const bool hello_written = stream->Write(hello);
  bool welcome_timed_out = false;
  if (hello_written) {
    std::unique_lock<std::mutex> lock(mu_);
    welcome_timed_out = !cv_.wait_for(lock, options_.welcome_timeout,
                                      [&] { return welcomed_ || reader_done_ || stopping_; });
    welcomed = welcomed_;
    acked = acked_at_welcome_;
  }

  if (welcomed) {
    BatchBuffer::Stats buffered = buffer_->stats();
    if (in_outage_) {
      log->info(
          "connected to collector at {} again after {} failed attempts; it holds sequences up to "
          "{}; sending {} buffered batches",
          dialled_, outage_attempts_, acked, buffered.buffered_batches);
    } else {
      log->info(
          "connected to collector at {}; it holds sequences up to {}; sending {} buffered "
          "batches",
          dialled_, acked, buffered.buffered_batches);
    }
    in_outage_ = false;
    outage_attempts_ = 0;
    WriteLoop(stream.get(), context.get(), acked);
  } else if (hello_written && !reader_done_) {
    // No Welcome in time, or Stop(): end the call so that Finish() returns.
    context->TryCancel();
  }

  {
    // Finish() may only run once every read has ended.
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, kReaderGrace, [&] { return reader_done_.load(); })) {
      context->TryCancel();
    }
  }
  reader.join();
  outcome.status = stream->Finish();
  if (welcome_timed_out) {
    outcome.status =
        grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                     fmt::format("the collector accepted the stream but sent no Welcome within {}",
                                 FormatDuration(options_.welcome_timeout)));
  }
  outcome.welcomed = welcomed;
  if (!outcome.status.ok()) {
    const auto& trailers = context->GetServerTrailingMetadata();
    auto it = trailers.find(kRejectedSequenceKey);
    uint64_t sequence = 0;
    if (it != trailers.end() &&
        ParseNumber(std::string_view(it->second.data(), it->second.size()), &sequence)) {
      outcome.rejected_sequence = sequence;
    }
    auto owner = trailers.find(kOwnerAddressKey);
    if (outcome.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
        owner != trailers.end() && !owner->second.empty()) {
      outcome.owner_address = std::string(owner->second.data(), owner->second.size());
      outcome.redirect_refused = !RedirectAllowed(*outcome.owner_address);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    context_.reset();
    welcomed_ = false;
    stats_.connected = false;
  }
  return outcome;
}

bool CollectorStream::WriteLoop(Stream* stream, grpc::ClientContext* context,
                                uint64_t acked_at_welcome) {
  auto log = Logger("agent");
  uint64_t last_written = acked_at_welcome;
  for (;;) {
    std::deque<drip::v1::AgentMessage> outbox;
    bool scan = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || reader_done_ || !outbox_.empty() || data_ready_; });
      if (reader_done_) return false;
      if (stopping_) break;
      outbox.swap(outbox_);
      scan = data_ready_;
      data_ready_ = false;
    }
    while (!outbox.empty()) {
      if (!stream->Write(outbox.front())) {
        // Back to the front of the outbox, in order, for the next stream (the one that
        // failed may or may not have reached the collector: a result is idempotent there).
        std::lock_guard<std::mutex> lock(mu_);
        outbox_.insert(outbox_.begin(), std::make_move_iterator(outbox.begin()),
                       std::make_move_iterator(outbox.end()));
        return false;
      }
      outbox.pop_front();
    }
    // Sequence order, from the oldest unacknowledged batch: NextAfter skips whatever
    // acks or drops removed meanwhile.
    while (scan && !stopping_ && !reader_done_) {
      std::optional<drip::v1::SampleBatch> batch = buffer_->NextAfter(last_written);
      if (!batch) break;
      last_written = batch->sequence();
      const int samples = batch->samples_size();
      drip::v1::AgentMessage message;
      *message.mutable_batch() = std::move(*batch);
      *message.mutable_batch()->mutable_status() = status_();
      if (!stream->Write(message)) return false;
      log->debug("sent batch {} ({} samples)", last_written, samples);
    }
  }
  // Goodbye: the collector sends the acks still due and finishes with OK.
  stream->WritesDone();
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, options_.goodbye_timeout, [&] { return reader_done_.load(); })) {
    context->TryCancel();
  }
  return true;
}

void CollectorStream::ReadLoop(Stream* stream) {
  auto log = Logger("agent");
  drip::v1::CollectorMessage message;
  while (stream->Read(&message)) {
    switch (message.body_case()) {
      case drip::v1::CollectorMessage::kWelcome: {
        const uint64_t acked = message.welcome().acked_sequence();
        bool duplicate = false;
        {
          std::lock_guard<std::mutex> lock(mu_);
          duplicate = welcomed_;
        }
        if (duplicate) {
          log->warn("collector at {} sent a second Welcome on one stream; ignored", dialled_);
          break;
        }
        // Renumber first: the collector's mark may be from an earlier run of this agent,
        // and batches sampled since must not be taken for resends of those.
        if (acked < UINT64_MAX) buffer_->SetNextSequenceAtLeast(acked + 1);
        buffer_->Ack(acked);
        {
          std::lock_guard<std::mutex> lock(mu_);
          welcomed_ = true;
          acked_at_welcome_ = acked;
          ++stats_.streams_welcomed;
          stats_.connected = true;
        }
        cv_.notify_all();
        break;
      }
      case drip::v1::CollectorMessage::kAck:
        buffer_->Ack(message.ack().sequence());
        log->trace("collector acknowledged batches up to {}", message.ack().sequence());
        break;
      case drip::v1::CollectorMessage::kCommand: {
        const drip::v1::Command& command = message.command();
        if (command_handler_ && (command.has_snapshot() || command.has_mitigation())) {
          command_handler_(command);
          break;
        }
        log->info("collector sent command '{}' ({}); answering '{}'", command.id(),
                  command.has_snapshot()     ? "snapshot"
                  : command.has_mitigation() ? "mitigation"
                                             : "unknown action",
                  kCommandNotSupported);
        drip::v1::CommandResult result;
        result.set_command_id(command.id());
        result.set_ok(false);
        result.set_error(kCommandNotSupported);
        {
          std::lock_guard<std::mutex> lock(mu_);
          ++stats_.commands_refused;
        }
        SendCommandResult(std::move(result));
        break;
      }
      case drip::v1::CollectorMessage::BODY_NOT_SET:
        log->debug("collector sent an empty message; ignored");
        break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    reader_done_ = true;
    stats_.connected = false;
  }
  cv_.notify_all();
}

void CollectorStream::HandleEnd(const Outcome& outcome) {
  auto log = Logger("agent");
  const grpc::Status& status = outcome.status;
  const std::string why =
      fmt::format("{}: {}", CodeName(status.error_code()), status.error_message());
  if (outcome.redirect_refused) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.refused_redirects;
    }
    // Once per address named, not per retry: a collector that keeps naming it would
    // otherwise fill the journal.
    if (*outcome.owner_address != refused_redirect_) {
      refused_redirect_ = *outcome.owner_address;
      log->warn(
          "collector at {} says collector {} owns this host, which is neither in collectors: "
          "nor allowed by redirect_to:; not following it, trying the listed collectors "
          "(docs/cluster.md)",
          dialled_, *outcome.owner_address);
    }
    return;
  }
  if (outcome.owner_address.has_value()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.redirects;
    }
    log->info("collector at {} says collector {} owns this host ({}); moving there", dialled_,
              *outcome.owner_address, status.error_message());
    return;
  }
  if (outcome.rejected_sequence && IsRefusal(status.error_code())) {
    const uint64_t sequence = *outcome.rejected_sequence;
    const bool dropped = buffer_->Reject(sequence);
    if (dropped) {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.rejected_batches;
    }
    log->warn("collector at {} refused batch {} ({}); {} so that it is not resent", dialled_,
              sequence, why, dropped ? "dropped it" : "it is no longer buffered");
    return;
  }
  if (outcome.deferred()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.deferred_batches;
    }
    log->warn("collector at {} cannot take batch {} yet ({}); kept, sent again after a backoff",
              dialled_, *outcome.rejected_sequence, why);
    return;
  }
  if (outcome.welcomed) {
    if (IsRefusal(status.error_code())) {
      // Refused without naming a batch: the stream itself broke the protocol. Nothing
      // to drop; resending after a reconnect is all the agent can do.
      log->error("collector at {} refused this agent's stream ({}); reconnecting", dialled_, why);
    } else {
      log->info("stream to collector at {} ended ({}); reconnecting", dialled_, why);
    }
    return;
  }
  ++outage_attempts_;
  const bool refused = status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
                       status.error_code() == grpc::StatusCode::PERMISSION_DENIED;
  if (!in_outage_ && refused) {
    in_outage_ = true;
    // Not an outage the collector will recover from by itself: its operator or this
    // host's certificate must change. Still retried, so that the fix needs no restart.
    log->error(
        "collector at {} refuses this agent ({}); check the agent's host and tls settings; "
        "buffering samples and retrying with backoff up to {} (logged again once connected)",
        dialled_, why, FormatDuration(options_.backoff_max));
  } else if (!in_outage_) {
    in_outage_ = true;
    log->warn(
        "cannot reach collector at {} ({}); buffering samples and retrying with backoff "
        "up to {} (logged again once connected)",
        dialled_, why, FormatDuration(options_.backoff_max));
  } else {
    log->debug("collector at {} still unreachable ({}), attempt {}", dialled_, why,
               outage_attempts_);
  }
}

}  // namespace drip::agent
