// FleetAgentStream: one simulated agent of the fleet load benchmark — its Connect
// stream to the collector on gRPC's callback API (a ClientBidiReactor), behaving as
// docs/collector.md ("Wire behaviour") asks of an agent:
//
//   StartCall ─► Hello ─► Welcome{acked} ─► batches acked+1, acked+2, ... as they fall
//   due, at most `window` unacknowledged ─► Acks (coalesced: Ack{N} covers ≤ N)
//   Stop() ─► no more batches ─► WritesDone once the last write is out ─► the collector
//   sends the acks still due and finishes OK ─► OnDone
//
// Batches fall due on the FleetScheduler's clock (Due()); a batch due while the window
// is full waits, as in a real agent's buffer, and goes out as soon as an ack frees the
// window. Nothing is ever resent: any stream that ends before Stop(), any status other
// than OK, an ack below an earlier one or above what was sent is an error the run reports.
//
// Wire bytes come from a FleetBatchEncoder and go out as raw gRPC byte buffers on the
// AgentService/Connect method, which is what the generated stub sends underneath.
//
// Threading: gRPC reactions, the scheduler (Due) and the main thread (Start, Stop)
// call in concurrently; all state is under mu_ and gRPC operations are started under it
// (the callback API never runs a reaction inline). One hold keeps the call alive for
// writes started outside reactions; it is released with WritesDone or when the stream
// ends early. The owner keeps the object until OnDone has run (done() is true).
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_callback.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "bench/fleet_batch_encoder.h"
#include "bench/fleet_run_stats.h"

namespace drip::bench {

class FleetAgentStream final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  struct Options {
    std::chrono::nanoseconds interval{std::chrono::seconds(1)};
    int window = 8;  // unacknowledged batches in flight at most
    // When batches start after the Welcome, as a fraction of `interval` (0 ≤ phase < 1),
    // so that a thousand agents do not sample in lockstep.
    double phase = 0;
  };

  // What the stream did, for the report; read once done().
  struct Outcome {
    bool welcomed = false;
    double welcome_seconds = 0;  // Start() to Welcome
    uint64_t welcome_acked = 0;  // the collector's durable mark at Hello
    uint64_t batches_sent = 0;
    uint64_t last_sent = 0;  // sequence
    uint64_t acked = 0;      // highest sequence acked
    uint64_t abandoned = 0;  // due but not sent when Stop() came (window full)
    uint64_t commands = 0;   // Command messages received (ignored)
    uint64_t protocol_errors = 0;
    bool ended_early = false;  // the collector ended the stream before Stop()
    grpc::StatusCode code = grpc::StatusCode::OK;
    std::string message;
  };

  // `on_welcome` runs (outside the stream's lock) once the Welcome is in, with the time
  // the first batch is due; `on_done` once gRPC is done with the stream. Both from gRPC
  // threads. `encoder` and `stats` must outlive the stream.
  FleetAgentStream(std::shared_ptr<grpc::Channel> channel, const FleetBatchEncoder* encoder,
                   Options options, FleetRunStats* stats,
                   std::function<void(FleetAgentStream*, FleetClock::time_point)> on_welcome,
                   std::function<void()> on_done);

  // Sends the Hello and starts the call.
  void Start();
  // The next batch is due now (called by the scheduler, once per interval).
  void Due();
  // No further batches: half-close once the write in flight is out.
  void Stop();
  // Cancels the call (a stream that did not finish in time).
  void Cancel() { context_.TryCancel(); }

  bool done() const;
  Outcome outcome() const;
  const std::string& host() const { return encoder_->host(); }

  // gRPC reactions.
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  struct InFlight {
    uint64_t sequence;
    FleetClock::time_point written;
    FleetClock::time_point due;
  };

  FleetClock::time_point DueTime(uint64_t sequence) const;
  void MaybeWriteLocked();
  void MaybeWritesDoneLocked();
  void ReleaseHoldLocked();
  void HandleAckLocked(uint64_t sequence);

  const std::shared_ptr<grpc::Channel> channel_;
  const FleetBatchEncoder* const encoder_;
  const Options options_;
  FleetRunStats* const stats_;
  const std::function<void(FleetAgentStream*, FleetClock::time_point)> on_welcome_;
  const std::function<void()> on_done_;
  // Wall-clock milliseconds at the run's start: a batch's samples carry its due time.
  const int64_t wall_start_ms_;
  const grpc::internal::RpcMethod connect_;

  grpc::ClientContext context_;
  mutable std::mutex mu_;
  grpc::ByteBuffer read_buffer_;   // owned by gRPC while a read is outstanding
  grpc::ByteBuffer write_buffer_;  // owned by gRPC while a write is outstanding
  FleetClock::time_point started_;
  FleetClock::time_point first_due_;
  uint64_t due_through_ = 0;  // highest sequence due so far
  uint64_t next_ = 0;         // next sequence to write
  std::deque<InFlight> in_flight_;
  bool write_in_flight_ = false;
  bool stopping_ = false;
  bool writes_done_ = false;
  bool read_closed_ = false;
  bool hold_ = false;
  bool done_ = false;
  Outcome outcome_;
};

}  // namespace drip::bench
