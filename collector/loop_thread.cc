#include "collector/loop_thread.h"

#include <pthread.h>

#include <utility>

namespace drip::collector {

LoopThread::LoopThread(std::string name, std::function<Duration()> round)
    : name_(std::move(name)), round_(std::move(round)) {}

LoopThread::~LoopThread() { Stop(); }

void LoopThread::Start(Duration first_delay) {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  last_round_ = std::chrono::steady_clock::now().time_since_epoch().count();
  thread_ = std::thread([this, first_delay] {
    pthread_setname_np(pthread_self(), name_.c_str());
    Run(first_delay);
  });
}

void LoopThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LoopThread::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = true;
  }
  cv_.notify_all();
}

void LoopThread::Run(Duration first_delay) {
  Duration wait = first_delay;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait_for(lock, wait, [this] { return stop_ || wake_; });
    if (stop_) break;
    wake_ = false;
    lock.unlock();
    // The wait counts from the end of a round: a slow round must not make the next one
    // start at once.
    wait = round_();
    last_round_ = std::chrono::steady_clock::now().time_since_epoch().count();
    lock.lock();
  }
}

}  // namespace drip::collector
