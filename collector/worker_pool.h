// WorkerPool: a fixed set of threads running tasks in FIFO order. gRPC reactions must
// not block, and store calls do (fsync, compaction stalls), so the ingest and query
// services hand store work to pools of these and complete the RPC from the worker.
//
// The queue is unbounded, but ingest submits at most one task per open stream, which
// bounds it. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace drip::collector {

class WorkerPool {
 public:
  // Starts `threads` (>= 1) threads; `name` is for thread names and logs.
  WorkerPool(std::string name, size_t threads);
  ~WorkerPool();  // Stop()

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; false (and `task` dropped, not run) once Stop() has begun.
  [[nodiscard]] bool Submit(std::function<void()> task);

  // Refuses new tasks, runs every task already queued, and joins the threads.
  // Idempotent. Must not be called from a worker thread.
  void Stop();

 private:
  void Run();

  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace drip::collector
