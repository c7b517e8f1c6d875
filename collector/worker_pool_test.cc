#include "collector/worker_pool.h"

#include <atomic>
#include <future>
#include <mutex>
#include <vector>

#include "gtest/gtest.h"

namespace drip::collector {
namespace {

TEST(WorkerPoolTest, RunsEverySubmittedTask) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool("test", 3);
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(pool.Submit([&] { ran.fetch_add(1); }));
    pool.Stop();
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST(WorkerPoolTest, SingleThreadRunsTasksInSubmissionOrder) {
  std::vector<int> order;
  std::mutex mu;
  WorkerPool pool("test", 1);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(pool.Submit([&, i] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
    }));
  }
  pool.Stop();
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
}

TEST(WorkerPoolTest, SubmitAfterStopIsRefusedAndNotRun) {
  WorkerPool pool("test", 2);
  pool.Stop();
  bool ran = false;
  EXPECT_FALSE(pool.Submit([&] { ran = true; }));
  pool.Stop();  // idempotent
  EXPECT_FALSE(ran);
}

TEST(WorkerPoolTest, ABoundedQueueRefusesPastItsBoundWhileNotStopping) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> ran{0};
  WorkerPool pool("test", 1, /*max_queued=*/2);
  std::promise<void> started;
  ASSERT_TRUE(pool.Submit([&] {
    started.set_value();
    released.wait();
  }));
  started.get_future().wait();  // the thread is busy; the queue is empty
  EXPECT_TRUE(pool.Submit([&] { ran.fetch_add(1); }));
  EXPECT_TRUE(pool.Submit([&] { ran.fetch_add(1); }));
  EXPECT_FALSE(pool.Submit([&] { ran.fetch_add(1); }));
  EXPECT_FALSE(pool.stopping());
  release.set_value();
  pool.Stop();
  EXPECT_EQ(ran.load(), 2);
  EXPECT_TRUE(pool.stopping());
}

}  // namespace
}  // namespace drip::collector
