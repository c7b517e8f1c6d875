#include "collector/worker_pool.h"

#include <pthread.h>

#include <utility>

namespace drip::collector {

WorkerPool::WorkerPool(std::string name, size_t threads, size_t max_queued)
    : name_(std::move(name)), max_queued_(max_queued) {
  if (threads == 0) threads = 1;
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this, i] {
      // Named so that `top -H` and a core dump show whose thread is stuck; the kernel
      // limits names to 15 characters.
      std::string thread_name = (name_ + "-" + std::to_string(i)).substr(0, 15);
      pthread_setname_np(pthread_self(), thread_name.c_str());
      Run();
    });
  }
}

WorkerPool::~WorkerPool() { Stop(); }

bool WorkerPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || (max_queued_ != 0 && queue_.size() >= max_queued_)) return false;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

bool WorkerPool::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void WorkerPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Drain before exiting: queued tasks complete RPCs that gRPC's shutdown waits for.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace drip::collector
