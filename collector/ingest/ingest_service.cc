#include "collector/ingest/ingest_service.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "common/base/check.h"
#include "common/base/duration.h"
#include "common/daemon/logging.h"

namespace drip::collector {

IngestService::IngestService(const IngestOptions& options, const AgentSessionParts& session_parts,
                             ConnectedHosts* hosts, CollectorMetrics* metrics)
    : session_parts_(session_parts),
      writers_("drip-write", options.write_threads),
      rate_limits_(options.max_samples_per_second, options.burst_samples),
      hello_timeout_(options.hello_timeout),
      max_awaiting_hello_(options.max_streams_awaiting_hello),
      hello_sweep_("drip-hello", [this] { return CloseSilentStreams(); }) {
  transport_.writers = &writers_;
  transport_.hosts = hosts;
  transport_.metrics = metrics;
  transport_.max_samples_per_second = options.max_samples_per_second;
  transport_.rate_limits = &rate_limits_;
  transport_.on_destroy = [this](AgentStreamReactor* reactor) { Forget(reactor); };
  if (hello_timeout_.count() > 0) hello_sweep_.Start(hello_timeout_);
}

IngestService::~IngestService() {
  hello_sweep_.Stop();
  // Runs queued tasks, which only finish already-ended calls now.
  writers_.Stop();
  std::unique_lock<std::mutex> lock(mu_);
  // Reactors hold transport_; the server's Shutdown has ended every call by now, but a stream
  // throttled by the ingest rate limit is deleted by its cancelled alarm's callback,
  // which gRPC runs on its own thread a moment later.
  forgotten_.wait_for(lock, std::chrono::seconds(10), [this] { return streams_.empty(); });
  DRIP_CHECK(streams_.empty(), "ingest service destroyed with {} streams still open",
             streams_.size());
}

grpc::ServerBidiReactor<drip::v1::AgentMessage, drip::v1::CollectorMessage>* IngestService::Connect(
    grpc::CallbackServerContext* context) {
  // Counted before this stream joins them: a flood of connections that never authenticate
  // is refused at the door instead of each holding a reactor and its buffers.
  const bool too_many =
      max_awaiting_hello_ > 0 && transport_.metrics->streams_awaiting_hello.Value() >=
                                     static_cast<double>(max_awaiting_hello_);
  auto* reactor = new AgentStreamReactor(context, &session_parts_, &transport_);
  bool refuse = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.insert(reactor);
    refuse = shutting_down_;
  }
  // gRPC runs no reaction before Connect returns, so the reactor is safe to use here.
  if (refuse) {
    reactor->FinishForShutdown();
  } else if (too_many) {
    reactor->RefuseAwaitingHello(max_awaiting_hello_);
  } else {
    reactor->Start();
  }
  return reactor;
}

void IngestService::FinishAllStreams() {
  std::lock_guard<std::mutex> lock(mu_);
  shutting_down_ = true;
  Logger("collector")->info("finishing {} agent streams for shutdown", streams_.size());
  // Under mu_: a reactor removes itself (Forget) before it is deleted, so every
  // pointer here is alive.
  for (AgentStreamReactor* reactor : streams_) reactor->FinishForShutdown();
}

size_t IngestService::open_streams() const {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_.size();
}

LoopThread::Duration IngestService::CloseSilentStreams() {
  const auto cutoff = std::chrono::steady_clock::now() - hello_timeout_;
  size_t closed = 0;
  {
    // Under mu_: a reactor leaves streams_ (Forget) before it is deleted.
    std::lock_guard<std::mutex> lock(mu_);
    for (AgentStreamReactor* reactor : streams_) closed += reactor->CloseIfNoHelloSince(cutoff);
  }
  if (closed > 0) {
    Logger("collector")
        ->warn("closed {} streams that said no hello within ingest.hello_timeout ({})", closed,
               FormatDuration(hello_timeout_));
  }
  // A silent stream lives at most a quarter of the timeout past it.
  return std::max<LoopThread::Duration>(hello_timeout_ / 4, std::chrono::milliseconds(50));
}

void IngestService::Forget(AgentStreamReactor* reactor) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.erase(reactor);
  forgotten_.notify_all();
}

}  // namespace drip::collector
