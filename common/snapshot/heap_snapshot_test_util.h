// Test helpers for the heap snapshot codecs: a snapshot with every field set to a value
// that a lossy codec would get wrong, and a field-by-field comparison.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "common/base/heap_snapshot.h"

namespace drip::testing {

inline HeapSnapshot FullSnapshot() {
  HeapSnapshot s;
  s.target = {4242,    "leaky_svc",         "/usr/bin/leaky_svc", 1'700'000'000'123,
              "web-1", "svc:leaky.service", "4242@1700000000",    "jemalloc"};
  s.mode = "attach";
  s.start_ms = 1'700'000'100'000;
  s.end_ms = 1'700'000'160'000;
  s.interval_seconds = 10.5;
  s.sampling_mean_bytes = 524288;
  s.duty_cycle = {0.05, 5123.25, 0.1 + 0.2, std::numeric_limits<uint64_t>::max(), 1e-7, 0.625};
  s.stop_reason = "duration";
  s.stop_detail = "ran for 60 s as asked";
  s.sampled_allocs = 17;
  s.matched_frees = 3;
  s.reused_address_frees = 2;
  s.dropped_events = 1;
  s.lost_while_behind = 1;
  s.unwind_failures = 2;
  s.unsampled_calls = {"mallocx", "sdallocx"};
  s.rss = {{1'700'000'100'000, 200 << 20, 150 << 20}, {1'700'000'110'500, 201 << 20, 151 << 20}};
  SnapshotStack a;
  a.id = std::numeric_limits<uint64_t>::max();
  a.frames = {{0x7f0000001234, "malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6",
               "0123456789abcdef0123456789abcdef01234567", 0x9a234, "", 0},
              {0x55550000abcd, "Session::Append(std::string const&) — “quoted”",
               "/usr/bin/leaky_svc", "fedcba", 0xabcd, "src/session.cc", 88}};
  a.series = {{1'700'000'100'000, 0, 0},
              {1'700'000'110'500, 1 << 20, 2},
              {1'700'000'121'000, std::numeric_limits<int64_t>::max(), 4}};
  a.sampled_allocs = 12;
  a.sampled_frees = 1;
  a.allocated_bytes = 3 << 20;
  a.freed_bytes = 1 << 19;
  a.first_alloc_ms = 1'700'000'100'500;
  a.last_alloc_ms = 1'700'000'120'000;
  a.cohorts = {{5, 5}, {4, 3}, {3, 3}, {0, 0}};
  SnapshotStack b;
  b.id = 7;
  b.frames = {{0x1000, "", "[vdso]", "", 0x1000, "", 0}};
  b.series = {{1'700'000'100'000, 4096, 1}};
  b.sampled_allocs = 1;
  s.stacks = {a, b};
  return s;
}

inline void ExpectSnapshotsEqual(const HeapSnapshot& a, const HeapSnapshot& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.target.pid, b.target.pid);
  EXPECT_EQ(a.target.comm, b.target.comm);
  EXPECT_EQ(a.target.exe, b.target.exe);
  EXPECT_EQ(a.target.start_time_ms, b.target.start_time_ms);
  EXPECT_EQ(a.target.host, b.target.host);
  EXPECT_EQ(a.target.component, b.target.component);
  EXPECT_EQ(a.target.instance, b.target.instance);
  EXPECT_EQ(a.target.allocator, b.target.allocator);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.start_ms, b.start_ms);
  EXPECT_EQ(a.end_ms, b.end_ms);
  EXPECT_EQ(a.interval_seconds, b.interval_seconds);
  EXPECT_EQ(a.sampling_mean_bytes, b.sampling_mean_bytes);
  EXPECT_EQ(a.duty_cycle.cpu_budget, b.duty_cycle.cpu_budget);
  EXPECT_EQ(a.duty_cycle.probe_hit_cost_ns, b.duty_cycle.probe_hit_cost_ns);
  EXPECT_EQ(a.duty_cycle.on_fraction, b.duty_cycle.on_fraction);
  EXPECT_EQ(a.duty_cycle.probe_hits, b.duty_cycle.probe_hits);
  EXPECT_EQ(a.duty_cycle.estimated_cpu_fraction, b.duty_cycle.estimated_cpu_fraction);
  EXPECT_EQ(a.duty_cycle.free_on_fraction, b.duty_cycle.free_on_fraction);
  EXPECT_EQ(a.stop_reason, b.stop_reason);
  EXPECT_EQ(a.stop_detail, b.stop_detail);
  EXPECT_EQ(a.sampled_allocs, b.sampled_allocs);
  EXPECT_EQ(a.matched_frees, b.matched_frees);
  EXPECT_EQ(a.reused_address_frees, b.reused_address_frees);
  EXPECT_EQ(a.dropped_events, b.dropped_events);
  EXPECT_EQ(a.lost_while_behind, b.lost_while_behind);
  EXPECT_EQ(a.unwind_failures, b.unwind_failures);
  EXPECT_EQ(a.unsampled_calls, b.unsampled_calls);
  ASSERT_EQ(a.rss.size(), b.rss.size());
  for (size_t i = 0; i < a.rss.size(); ++i) {
    EXPECT_EQ(a.rss[i].t_ms, b.rss[i].t_ms);
    EXPECT_EQ(a.rss[i].rss_bytes, b.rss[i].rss_bytes);
    EXPECT_EQ(a.rss[i].anon_bytes, b.rss[i].anon_bytes);
  }
  ASSERT_EQ(a.stacks.size(), b.stacks.size());
  for (size_t i = 0; i < a.stacks.size(); ++i) {
    const SnapshotStack& x = a.stacks[i];
    const SnapshotStack& y = b.stacks[i];
    EXPECT_EQ(x.id, y.id);
    ASSERT_EQ(x.frames.size(), y.frames.size());
    for (size_t j = 0; j < x.frames.size(); ++j) {
      EXPECT_EQ(x.frames[j].address, y.frames[j].address);
      EXPECT_EQ(x.frames[j].function, y.frames[j].function);
      EXPECT_EQ(x.frames[j].module, y.frames[j].module);
      EXPECT_EQ(x.frames[j].build_id, y.frames[j].build_id);
      EXPECT_EQ(x.frames[j].module_offset, y.frames[j].module_offset);
      EXPECT_EQ(x.frames[j].file, y.frames[j].file);
      EXPECT_EQ(x.frames[j].line, y.frames[j].line);
    }
    ASSERT_EQ(x.series.size(), y.series.size());
    for (size_t j = 0; j < x.series.size(); ++j) {
      EXPECT_EQ(x.series[j].t_ms, y.series[j].t_ms);
      EXPECT_EQ(x.series[j].live_bytes, y.series[j].live_bytes);
      EXPECT_EQ(x.series[j].live_allocs, y.series[j].live_allocs);
    }
    EXPECT_EQ(x.sampled_allocs, y.sampled_allocs);
    EXPECT_EQ(x.sampled_frees, y.sampled_frees);
    EXPECT_EQ(x.allocated_bytes, y.allocated_bytes);
    EXPECT_EQ(x.freed_bytes, y.freed_bytes);
    EXPECT_EQ(x.first_alloc_ms, y.first_alloc_ms);
    EXPECT_EQ(x.last_alloc_ms, y.last_alloc_ms);
    ASSERT_EQ(x.cohorts.size(), y.cohorts.size());
    for (size_t j = 0; j < x.cohorts.size(); ++j) {
      EXPECT_EQ(x.cohorts[j].allocs, y.cohorts[j].allocs);
      EXPECT_EQ(x.cohorts[j].live, y.cohorts[j].live);
    }
  }
}

}  // namespace drip::testing
