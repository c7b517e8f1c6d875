// CollectorStream: the agent's one long-lived drip.v1.AgentService/Connect stream to the
// collector (protocol at the top of proto/drip/v1/agent.proto; what the collector does
// is in docs/collector.md "Wire behaviour"). It moves batches from the BatchBuffer to
// the collector and applies what comes back:
//
//   connect ─► Hello ─► Welcome{acked} ─► renumber unsent / drop acked ─► send every
//   buffered batch in order, then each new one ─► Acks drop batches from the buffer
//
// On any stream end it reconnects with exponential backoff and full jitter (reset once a
// stream got a Welcome) and resends what is still unacknowledged. Given several
// collectors, it dials the next one when one cannot be reached; a collector that says
// another owns this host (kOwnerAddressKey) is left for that one at once, and a second
// such answer in a row waits out the backoff, so two collectors that disagree for a
// moment cannot bounce the agent between them. Only to a listed collector or an address
// redirect_to allows, though: a redirect anywhere else is refused and the agent goes on
// to the next listed collector. A stream the collector
// ends with INVALID_ARGUMENT, PERMISSION_DENIED or RESOURCE_EXHAUSTED and trailing
// metadata "drip-rejected-sequence" drops the batch it names, so a batch the collector
// will never take is not resent forever. Commands go to the command handler when one is
// set (heap snapshots, mitigations), else they are answered "not supported".
//
// Threads: Start() runs a connection thread (connect, Hello, then the only writer) and
// per stream a reader thread (Welcome, Acks, Commands). The sync gRPC API keeps this
// simple for one stream; writes never happen on two threads at once. The collector
// being away is logged once per outage, not per retry (docs/logging.md).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/batch_buffer.h"
#include "common/rpc/agent_stream_metadata.h"
#include "common/rpc/tls_settings.h"
#include "drip/v1/agent.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace drip::agent {

struct CollectorStreamOptions {
  std::string address;  // HOST:PORT or any gRPC target ("dns:///collector:7070")
  // The rest of the agent's `collectors:`. A collector that cannot be reached (no
  // Welcome) is followed by the next in [address, alternates...] after the backoff.
  std::vector<std::string> alternates;
  // Glob patterns ('*', '?') of `host:port` addresses beyond [address, alternates...] that a
  // collector's redirect may send this host to (`redirect_to:` in agent.yaml). A redirect
  // anywhere else is refused: whoever can write a member record must not be able to move
  // the fleet's hosts (docs/security.md, "The cluster's trust model").
  std::vector<std::string> redirect_to;
  TlsSettings tls;  // read per connection attempt; plaintext only when it says so
  std::chrono::milliseconds backoff_initial = std::chrono::milliseconds(500);
  std::chrono::milliseconds backoff_max = std::chrono::seconds(30);
  // HTTP/2 pings on the connection so that a collector that vanished without closing
  // it (power loss, network partition) is noticed within time + timeout. The collector
  // accepts pings no more often than every 10 s.
  std::chrono::milliseconds keepalive_time = std::chrono::seconds(30);
  std::chrono::milliseconds keepalive_timeout = std::chrono::seconds(10);
  // A collector that accepted the stream but sends no Welcome is treated as down.
  std::chrono::milliseconds welcome_timeout = std::chrono::seconds(60);
  // On Stop(), how long to wait for the collector to finish the stream after the
  // agent's half-close before cancelling it.
  std::chrono::milliseconds goodbye_timeout = std::chrono::seconds(1);
};

class CollectorStream {
 public:
  // Fresh agent status (sampler, own cost, buffer counters) for Hello and each batch.
  using StatusProvider = std::function<drip::v1::AgentStatus()>;

  struct Stats {
    uint64_t streams_started = 0;   // connection attempts
    uint64_t streams_welcomed = 0;  // attempts that got a Welcome
    uint64_t rejected_batches = 0;  // dropped because the collector refused them
    // Times the collector could not take a batch yet (UNAVAILABLE naming it, e.g. its
    // clock behind this host's): kept and sent again after a backoff.
    uint64_t deferred_batches = 0;
    uint64_t commands_refused = 0;
    uint64_t redirects = 0;  // streams a collector ended by naming this host's owner
    // Redirects not followed: the address named was neither listed nor allowed by
    // redirect_to.
    uint64_t refused_redirects = 0;
    bool connected = false;  // a stream is welcomed and open right now
    std::string collector;   // the address dialled last
  };

  // `hello` is sent at the start of every stream with its status filled from `status`.
  // `buffer` must outlive this object.
  CollectorStream(CollectorStreamOptions options, drip::v1::Hello hello, BatchBuffer* buffer,
                  StatusProvider status);
  ~CollectorStream();  // Stop()s
  CollectorStream(const CollectorStream&) = delete;
  CollectorStream& operator=(const CollectorStream&) = delete;

  // Receives each command from the collector on the reader thread; it must not block
  // (start the work elsewhere) and answers later with SendCommandResult. Set before Start.
  using CommandHandler = std::function<void(const drip::v1::Command&)>;
  void SetCommandHandler(CommandHandler handler) { command_handler_ = std::move(handler); }

  // Queues a command's result for the current (or next) stream. Thread-safe.
  void SendCommandResult(drip::v1::CommandResult result);

  // Starts connecting in the background. Call at most once.
  void Start();

  // Ends the stream and joins the threads. A welcomed stream says goodbye (half-close,
  // so the collector logs a clean end) and is cancelled after goodbye_timeout; any
  // other state (connecting, backing off, a write stuck on flow control) is cancelled
  // with ClientContext::TryCancel at once. Unacknowledged batches stay in the buffer.
  // Idempotent; thread-safe.
  void Stop();

  Stats stats() const;

 private:
  using Stream = grpc::ClientReaderWriter<drip::v1::AgentMessage, drip::v1::CollectorMessage>;

  // What became of one stream.
  struct Outcome {
    bool welcomed = false;
    grpc::Status status;
    std::optional<uint64_t> rejected_sequence;
    std::optional<std::string> owner_address;  // the collector said this host is its
    // The owner named is not one this agent may be sent to (redirect_to); set with
    // owner_address.
    bool redirect_refused = false;
    // The collector named a batch it cannot take yet: kept, resent after a backoff that
    // a Welcome does not reset (the stream will end the same way until it can).
    bool deferred() const {
      return rejected_sequence.has_value() && status.error_code() == grpc::StatusCode::UNAVAILABLE;
    }
  };

  void Run();
  // True if a collector may send this host to `address`: one of the listed collectors, or
  // a TCP host:port matching a redirect_to pattern.
  bool RedirectAllowed(std::string_view address) const;
  Outcome RunStream();
  // Sends queued command results and buffered batches until the stream ends or Stop().
  // Returns true when it stopped because Stop() was called.
  bool WriteLoop(Stream* stream, grpc::ClientContext* context, uint64_t acked_at_welcome);
  void ReadLoop(Stream* stream);
  void HandleEnd(const Outcome& outcome);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address) const;
  // Where to dial after `outcome`; whether to wait out the backoff first.
  bool ChooseNextAddress(const Outcome& outcome);

  const CollectorStreamOptions options_;
  const drip::v1::Hello hello_;
  BatchBuffer* const buffer_;
  const StatusProvider status_;
  CommandHandler command_handler_;

  std::mutex stop_mu_;  // serializes Stop() calls
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool started_ = false;
  bool run_done_ = false;
  std::atomic<bool> stopping_{false};
  // The current stream, so that Stop() can cancel it; null between streams.
  std::shared_ptr<grpc::ClientContext> context_;
  // Per-stream state, reset by RunStream.
  bool welcomed_ = false;
  uint64_t acked_at_welcome_ = 0;
  std::atomic<bool> reader_done_{false};
  bool data_ready_ = false;  // the buffer got a batch since the writer last looked
  // Command results, written by the writer; kept across reconnects, at most this many.
  static constexpr size_t kMaxQueuedResults = 64;
  std::deque<drip::v1::AgentMessage> outbox_;
  // The address dialled by the current (or next) stream: set by the connection thread
  // between streams only, so the reader thread may read it during one.
  std::string dialled_;
  size_t list_index_ = 0;               // into [address, alternates...]
  bool dialled_from_redirect_ = false;  // dialled_ came from a collector, not the list
  std::string refused_redirect_;        // the last owner address not followed, logged once
  bool redirected_last_ = false;        // the last stream ended in a redirect
  // Outage bookkeeping, for logging once per outage.
  bool in_outage_ = false;
  uint64_t outage_attempts_ = 0;
  Stats stats_;
};

}  // namespace drip::agent
