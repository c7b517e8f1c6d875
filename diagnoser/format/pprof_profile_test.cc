#include "diagnoser/format/pprof_profile.h"

#include <gtest/gtest.h>

#include <string>

#include "diagnoser/heap_diagnoser.h"
#include "diagnoser/synthetic_heap.h"

namespace drip::diagnoser {
namespace {

using perftools::profiles::Profile;

const std::string& Str(const Profile& p, int64_t index) {
  return p.string_table(static_cast<int>(index));
}

// The name of the function at a sample's leaf, or "" when it has none.
std::string LeafFunction(const Profile& p, const perftools::profiles::Sample& sample) {
  if (sample.location_id_size() == 0) return "";
  const perftools::profiles::Location& leaf =
      p.location(static_cast<int>(sample.location_id(0) - 1));
  if (leaf.line_size() == 0) return "";
  return Str(p, p.function(static_cast<int>(leaf.line(0).function_id() - 1)).name());
}

class PprofProfileTest : public ::testing::Test {
 protected:
  PprofProfileTest() {
    testing::SyntheticHeap heap;
    StackFrame malloc_frame = testing::Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6");
    StackFrame remember =
        testing::Frame("Session::Remember(Request const&)", "/usr/bin/app", "src/session.cc", 88);
    remember.build_id = "5f1e0c2ab8";
    remember.module_offset = 0x1a2b0;
    testing::AllocationSite leak;
    leak.frames = {malloc_frame, remember, testing::Frame("main")};
    leak.rate_per_s = 20;
    leak.size = 4096;
    heap.AddSite(leak);
    testing::AllocationSite churn;
    churn.frames = {malloc_frame, testing::Frame("Parse()"), testing::Frame("main")};
    churn.rate_per_s = 200;
    churn.size = 256;
    churn.lifetime_s = 0.5;
    heap.AddSite(churn);
    snapshot_ = heap.Build();
    diagnosis_ = HeapDiagnoser(DiagnoserConfig{}).Diagnose(snapshot_);
  }

  HeapSnapshot snapshot_;
  Diagnosis diagnosis_;
};

TEST_F(PprofProfileTest, ASnapshotIsAHeapProfileInPprofsConventionsWithDripsVerdicts) {
  absl::StatusOr<std::string> gzipped = HeapSnapshotToPprofGzip(snapshot_, diagnosis_);
  ASSERT_TRUE(gzipped.ok()) << gzipped.status();
  ASSERT_GE(gzipped->size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>((*gzipped)[0]), 0x1f);  // gzip's magic
  EXPECT_EQ(static_cast<unsigned char>((*gzipped)[1]), 0x8b);
  absl::StatusOr<std::string> raw = Gunzip(*gzipped);
  ASSERT_TRUE(raw.ok()) << raw.status();
  Profile p;
  ASSERT_TRUE(p.ParseFromString(*raw));

  ASSERT_EQ(p.sample_type_size(), 4);
  EXPECT_EQ(Str(p, p.sample_type(0).type()), "alloc_objects");
  EXPECT_EQ(Str(p, p.sample_type(1).type()), "alloc_space");
  EXPECT_EQ(Str(p, p.sample_type(2).type()), "inuse_objects");
  EXPECT_EQ(Str(p, p.sample_type(3).type()), "inuse_space");
  EXPECT_EQ(Str(p, p.sample_type(3).unit()), "bytes");
  EXPECT_EQ(Str(p, p.default_sample_type()), "inuse_space");
  EXPECT_EQ(Str(p, p.period_type().type()), "space");
  EXPECT_EQ(Str(p, p.period_type().unit()), "bytes");
  EXPECT_EQ(p.period(), static_cast<int64_t>(snapshot_.sampling_mean_bytes));
  EXPECT_EQ(p.time_nanos(), snapshot_.start_ms * 1'000'000);
  ASSERT_EQ(p.sample_size(), 2);  // one per allocation site, malloc's frame dropped

  ASSERT_FALSE(diagnosis_.stacks.empty());
  const DiagnosedStack& first = diagnosis_.stacks[0];
  ASSERT_EQ(first.verdict, Verdict::kLeak);
  bool found = false;
  for (const perftools::profiles::Sample& s : p.sample()) {
    if (LeafFunction(p, s) != "Session::Remember(Request const&)") continue;
    found = true;
    EXPECT_EQ(s.value(3), first.live_bytes);  // unsampled: the diagnosis's own estimate
    EXPECT_EQ(s.value(2), first.live_allocs);
    EXPECT_GE(s.value(1), s.value(3));  // allocated at least what is live
    ASSERT_EQ(s.label_size(), 2);
    EXPECT_EQ(Str(p, s.label(0).key()), "verdict");
    EXPECT_EQ(Str(p, s.label(0).str()), "leak");
    EXPECT_EQ(Str(p, s.label(1).key()), "rank");
    EXPECT_EQ(s.label(1).num(), 1);
    const perftools::profiles::Location& leaf = p.location(static_cast<int>(s.location_id(0) - 1));
    EXPECT_EQ(leaf.address(), 0x1a2b0u);  // the module offset pprof symbolizes against
    ASSERT_EQ(leaf.line_size(), 1);
    EXPECT_EQ(leaf.line(0).line(), 88);
    const perftools::profiles::Mapping& module = p.mapping(static_cast<int>(leaf.mapping_id() - 1));
    EXPECT_EQ(Str(p, module.filename()), "/usr/bin/app");
    EXPECT_EQ(Str(p, module.build_id()), "5f1e0c2ab8");
    EXPECT_TRUE(module.has_functions());
    EXPECT_TRUE(module.has_line_numbers());
    EXPECT_GT(module.memory_limit(), leaf.address());
  }
  EXPECT_TRUE(found);
}

TEST_F(PprofProfileTest, ABrokenGzipStreamIsRefused) {
  absl::StatusOr<std::string> gzipped = HeapSnapshotToPprofGzip(snapshot_, diagnosis_);
  ASSERT_TRUE(gzipped.ok()) << gzipped.status();
  EXPECT_EQ(Gunzip(gzipped->substr(0, gzipped->size() / 2)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Gunzip("not gzip at all").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace drip::diagnoser
