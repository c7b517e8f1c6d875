// FinishOnPool: how the collector's unary services (the query API, the member API) run a
// call's work off gRPC's threads. Store reads can be slow (a long series, a compaction
// stall), and gRPC's callback threads must never wait on them: the work runs on a
// WorkerPool and finishes the call's reactor with its status. A pool whose queue is full
// sheds the call at once (RESOURCE_EXHAUSTED, counted in `shed`) rather than queue it
// without bound, since each queued call holds its request and, once read, its answer; a
// pool that is stopping answers UNAVAILABLE.
#pragma once

#include <utility>

#include "collector/worker_pool.h"
#include "fmt/format.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/counter.h"

namespace drip::collector {

// `work()` returns the grpc::Status the call finishes with.
template <typename Work>
void FinishOnPool(WorkerPool& pool, grpc::ServerUnaryReactor* reactor, prometheus::Counter& shed,
                  Work work) {
  if (pool.Submit([reactor, w = std::move(work)] { reactor->Finish(w()); })) return;
  if (pool.stopping()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "collector is shutting down"));
    return;
  }
  shed.Increment();
  reactor->Finish(grpc::Status(
      grpc::StatusCode::RESOURCE_EXHAUSTED,
      fmt::format("the collector has {} calls waiting; retry shortly", pool.max_queued())));
}

}  // namespace drip::collector
