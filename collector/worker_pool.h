// WorkerPool: a fixed set of threads running tasks in FIFO order. gRPC reactions must
// not block, and store calls do (fsync, compaction stalls), so the ingest and query
// services hand store work to pools of these and complete the RPC from the worker.
//
// The queue may be bounded (`max_queued`): past it Submit refuses, and the caller sheds
// the work (the query API answers RESOURCE_EXHAUSTED). Ingest leaves it unbounded: it
// submits at most one task per open stream, which bounds it. Thread-safe.
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
  // Starts `threads` (>= 1) threads; `name` is for thread names and logs. `max_queued`:
  // tasks waiting for a thread, at most (0: no bound).
  WorkerPool(std::string name, size_t threads, size_t max_queued = 0);
  ~WorkerPool();  // Stop()

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; false (and `task` dropped, not run) once Stop() has begun, or while
  // `max_queued` tasks are waiting (stopping() tells which).
  [[nodiscard]] bool Submit(std::function<void()> task);

  bool stopping() const;

  // Tasks waiting for a thread, at most (0: no bound).
  size_t max_queued() const { return max_queued_; }

  // Refuses new tasks, runs every task already queued, and joins the threads.
  // Idempotent. Must not be called from a worker thread.
  void Stop();

 private:
  void Run();

  std::string name_;
  const size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace drip::collector
