#include "collector/ingest_service.h"

#include <cstdlib>

#include "common/logging.h"

namespace drip::collector {

IngestService::IngestService(SeriesStore* store, const SampleValidator* validator,
                             CollectorMetrics* metrics, ConnectedHosts* hosts,
                             StorageHealth* health, WorkerPool* writers, const Clock* clock,
                             OnlineDetector* detector, SnapshotScheduler* snapshots,
                             MitigationCoordinator* mitigations) {
  env_.detector = detector;
  env_.snapshots = snapshots;
  env_.mitigations = mitigations;
  env_.store = store;
  env_.validator = validator;
  env_.metrics = metrics;
  env_.hosts = hosts;
  env_.health = health;
  env_.writers = writers;
  env_.clock = clock;
  env_.on_destroy = [this](AgentStreamReactor* reactor) { Forget(reactor); };
}

IngestService::~IngestService() {
  std::lock_guard<std::mutex> lock(mu_);
  // Reactors hold env_; the server's Shutdown must have ended them all by now.
  if (!streams_.empty()) {
    Logger("collector")
        ->critical("ingest service destroyed with {} streams still open", streams_.size());
    std::abort();
  }
}

grpc::ServerBidiReactor<drip::v1::AgentMessage, drip::v1::CollectorMessage>* IngestService::Connect(
    grpc::CallbackServerContext* context) {
  auto* reactor = new AgentStreamReactor(context, &env_);
  bool refuse = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.insert(reactor);
    refuse = shutting_down_;
  }
  // gRPC runs no reaction before Connect returns, so the reactor is safe to use here.
  if (refuse) reactor->FinishForShutdown();
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

void IngestService::Forget(AgentStreamReactor* reactor) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.erase(reactor);
}

}  // namespace drip::collector
