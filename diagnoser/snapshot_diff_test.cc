#include "diagnoser/snapshot_diff.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diagnoser/heap_diagnoser.h"
#include "diagnoser/synthetic_heap.h"

// Two attach-mode windows of one made-up process, six hours apart. Seeded sampling: these
// tests see the same data every run.
namespace drip::diagnoser {
namespace {

using testing::AllocationSite;
using testing::Frame;
using testing::SyntheticHeap;
using testing::SyntheticOptions;

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kFirstStartMs = 1'700'000'000'000;

std::vector<StackFrame> SessionFrames() {
  return {Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
          Frame("Session::Remember(Request const&)", "/usr/bin/app", "src/session.cc", 88),
          Frame("main", "/usr/bin/app", "src/main.cc", 12)};
}

std::vector<StackFrame> LruFrames() {
  return {Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
          Frame("LruCache::Insert(Key const&, Value)", "/usr/bin/app", "src/lru.cc", 57),
          Frame("main", "/usr/bin/app", "src/main.cc", 30)};
}

// 100 objects of 200 bytes a second, never freed: 72 MB an hour.
AllocationSite SteadyLeak() {
  AllocationSite site;
  site.frames = SessionFrames();
  site.rate_per_s = 100;
  site.size = 200;
  return site;
}

// A FIFO cache of 1 KiB entries, 200 a second, that holds 126 000 of them: full 10.5
// minutes after `from_s`, then evicting one entry per insertion.
AllocationSite FifoCache(double from_s) {
  AllocationSite site;
  site.frames = LruFrames();
  site.from_s = from_s;
  site.rate_per_s = 200;
  site.size = 1024;
  site.fifo_capacity = 126'000;
  return site;
}

void AddBuffers(SyntheticHeap& heap) {
  AllocationSite buffers;
  buffers.frames = {Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
                    Frame("Buffer::Buffer(unsigned long)", "/usr/bin/app", "src/buffer.cc", 20)};
  buffers.rate_per_s = 2'000;
  buffers.size = 4096;
  buffers.lifetime_s = 2;
  heap.AddSite(buffers);
}

HeapSnapshot Window(int64_t start_ms, uint32_t seed, const std::vector<AllocationSite>& sites) {
  SyntheticOptions options;
  options.start_ms = start_ms;
  options.duration_s = 1800;
  options.interval_s = 10;
  options.seed = seed;
  SyntheticHeap heap(options);
  for (const AllocationSite& site : sites) heap.AddSite(site);
  AddBuffers(heap);
  HeapSnapshot snapshot = heap.Build();
  snapshot.target.pid = 4242;
  snapshot.target.comm = "app";
  snapshot.target.exe = "/usr/bin/app";
  snapshot.target.host = "web-1";
  snapshot.target.start_time_ms = kFirstStartMs - kHourMs;
  return snapshot;
}

absl::StatusOr<SnapshotDiff> Diff(const HeapSnapshot& base, const HeapSnapshot& now) {
  const HeapDiagnoser diagnoser;
  return DiffSnapshots(base, diagnoser.Diagnose(base), now, diagnoser.Diagnose(now));
}

const SiteChange* FindSite(const SnapshotDiff& diff, const std::string& function) {
  for (const SiteChange& c : diff.sites) {
    for (const StackFrame& f : c.frames) {
      if (f.function == function) return &c;
    }
  }
  return nullptr;
}

TEST(SnapshotDiffTest, TheLeakIsWhatGrewBetweenTwoSnapshotsAndTheFullCacheDidNot) {
  // The first window sees the cache fill and level off; the second, six hours on, sees it
  // at capacity, replacing its entries. The leak runs through both.
  const HeapSnapshot base = Window(kFirstStartMs, 1, {SteadyLeak(), FifoCache(0)});
  const HeapSnapshot now =
      Window(kFirstStartMs + 6 * kHourMs, 2, {SteadyLeak(), FifoCache(-6 * 3600)});
  absl::StatusOr<SnapshotDiff> diff = Diff(base, now);
  ASSERT_TRUE(diff.ok()) << diff.status();

  ASSERT_FALSE(diff->sites.empty());
  const SiteChange& top = diff->sites.front();
  ASSERT_GE(top.frames.size(), 1u);
  EXPECT_EQ(top.frames.front().function, "Session::Remember(Request const&)");
  ASSERT_TRUE(top.base.has_value());
  ASSERT_TRUE(top.now.has_value());
  EXPECT_EQ(top.now->verdict, Verdict::kLeak);
  // 72 MB/h for the 6 h between the windows' ends; each window's trend carries its
  // sampling noise (about 70 samples of 200 bytes each at T = 512 KiB).
  EXPECT_NEAR(top.grew_bytes, 432e6, 0.25 * 432e6);
  EXPECT_NEAR(top.grew_objects, 6 * 3600 * 100, 0.25 * 6 * 3600 * 100);

  const SiteChange* cache = FindSite(*diff, "LruCache::Insert(Key const&, Value)");
  ASSERT_NE(cache, nullptr);
  ASSERT_TRUE(cache->now.has_value());
  EXPECT_NE(cache->now->verdict, Verdict::kLeak);
  EXPECT_EQ(cache->grew_bytes, 0);
  // It allocated all along: 200 KiB/s for six hours.
  EXPECT_NEAR(cache->allocated_bytes, 200 * 1024 * 6 * 3600.0, 0.25 * 200 * 1024 * 6 * 3600.0);

  EXPECT_NE(diff->summary.find("Session::Remember"), std::string::npos) << diff->summary;
  EXPECT_NE(diff->summary.find("anon RSS went from"), std::string::npos) << diff->summary;
}

TEST(SnapshotDiffTest, NothingGrowsBetweenSnapshotsOfAProcessWithoutALeak) {
  const HeapSnapshot base = Window(kFirstStartMs, 3, {FifoCache(-3600)});
  const HeapSnapshot now = Window(kFirstStartMs + 2 * kHourMs, 4, {FifoCache(-3 * 3600)});
  absl::StatusOr<SnapshotDiff> diff = Diff(base, now);
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_EQ(diff->grew_bytes, 0);
  EXPECT_EQ(diff->summary.rfind("Nothing grew", 0), 0u) << diff->summary;
}

TEST(SnapshotDiffTest, SitesAreMatchedByModuleAndOffsetNotBySymbolNames) {
  HeapSnapshot base = Window(kFirstStartMs, 5, {SteadyLeak()});
  // The base was taken where no symbols could be read: only modules and offsets.
  for (SnapshotStack& stack : base.stacks) {
    for (StackFrame& frame : stack.frames) {
      frame.function.clear();
      frame.file.clear();
      frame.line = 0;
    }
  }
  const HeapSnapshot now = Window(kFirstStartMs + kHourMs, 6, {SteadyLeak()});
  absl::StatusOr<SnapshotDiff> diff = Diff(base, now);
  ASSERT_TRUE(diff.ok()) << diff.status();
  const SiteChange* leak = FindSite(*diff, "Session::Remember(Request const&)");
  ASSERT_NE(leak, nullptr);
  EXPECT_TRUE(leak->base.has_value()) << "the unsymbolized base was not matched";
  EXPECT_EQ(leak, &diff->sites.front());
}

TEST(SnapshotDiffTest, ALeakThatBeganBetweenTheSnapshotsIsNewInTheDiff) {
  const HeapSnapshot base = Window(kFirstStartMs, 7, {});
  const HeapSnapshot now = Window(kFirstStartMs + 4 * kHourMs, 8, {SteadyLeak()});
  absl::StatusOr<SnapshotDiff> diff = Diff(base, now);
  ASSERT_TRUE(diff.ok()) << diff.status();
  const SiteChange& top = diff->sites.front();
  EXPECT_EQ(top.frames.front().function, "Session::Remember(Request const&)");
  EXPECT_FALSE(top.base.has_value());
  // Linear between the two rates: half of 72 MB/h over 4 h.
  EXPECT_NEAR(top.grew_bytes, 144e6, 0.3 * 144e6);
}

TEST(SnapshotDiffTest, SnapshotsOfDifferentProcessesAreRefused) {
  const HeapSnapshot base = Window(kFirstStartMs, 9, {SteadyLeak()});
  HeapSnapshot other_pid = Window(kFirstStartMs + kHourMs, 10, {SteadyLeak()});
  other_pid.target.pid = 4243;
  absl::StatusOr<SnapshotDiff> diff = Diff(base, other_pid);
  ASSERT_FALSE(diff.ok());
  EXPECT_EQ(diff.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(diff.status().message().find("pid 4242 (app), the new snapshot of pid 4243 (app)"),
            std::string::npos)
      << diff.status();
  EXPECT_EQ(diff.status().message().find('\n'), std::string::npos);

  HeapSnapshot restarted = Window(kFirstStartMs + kHourMs, 10, {SteadyLeak()});
  restarted.target.start_time_ms = kFirstStartMs + kHourMs / 2;
  diff = Diff(base, restarted);
  ASSERT_FALSE(diff.ok());
  EXPECT_NE(diff.status().message().find("started again between them"), std::string::npos)
      << diff.status();

  HeapSnapshot other_host = Window(kFirstStartMs + kHourMs, 10, {SteadyLeak()});
  other_host.target.host = "web-2";
  diff = Diff(base, other_host);
  ASSERT_FALSE(diff.ok());
  EXPECT_NE(diff.status().message().find("host web-1, the new snapshot of host web-2"),
            std::string::npos)
      << diff.status();
}

TEST(SnapshotDiffTest, ABaseThatEndsAfterTheNewSnapshotIsRefused) {
  const HeapSnapshot early = Window(kFirstStartMs, 11, {SteadyLeak()});
  const HeapSnapshot late = Window(kFirstStartMs + kHourMs, 12, {SteadyLeak()});
  absl::StatusOr<SnapshotDiff> diff = Diff(late, early);
  ASSERT_FALSE(diff.ok());
  EXPECT_NE(diff.status().message().find("give the earlier snapshot as the base"),
            std::string::npos)
      << diff.status();
  diff = Diff(early, early);
  ASSERT_FALSE(diff.ok());
  EXPECT_NE(diff.status().message().find("end at the same time"), std::string::npos);
}

}  // namespace
}  // namespace drip::diagnoser
