// Fuzzes the diagnoser (diagnoser/heap_diagnoser.h) and the snapshot codecs on snapshots
// built field by field from the input, rather than parsed: the JSON and protobuf fuzzers
// spend their mutations on syntax and varints and seldom put a number at the edge of its
// range, where the diagnoser's arithmetic (time differences, merged sums, slopes) breaks.
// Here every number is one tagged value, so that a one-byte mutation moves it from small
// to raw 64 bits, to just below INT64_MAX, or negative; frames come from a small palette
// (allocator frames included), so that stacks merge.
//
// Input (tests/fuzz/fuzz_input.h; missing bytes read as zero):
//   value      a tag byte, then by tag % 4: 0 a 16-bit number; 1 a raw little-endian
//              int64; 2 INT64_MAX minus a 16-bit number; 3 minus a 16-bit number
//   time       kBaseMs + value (the raw value when that overflows)
//   snapshot   flags (bit 0: preload mode), pid value, start time, end time, interval
//              value (in ms), mean_bytes value, rss count % 8 × (time, rss, anon),
//              stack count % 64 × stack
//   stack      id value, frame count % 5 × palette index, point count % 24 ×
//              (time, live_bytes, live_allocs), then sampled_allocs, sampled_frees,
//              allocated_bytes, freed_bytes, first_alloc time, last_alloc time — each a
//              value, and a first/last of 0 meaning "none" — then cohort count % 9 ×
//              (allocs, live)
// tests/fuzz/make_seed_corpora.cc writes seeds in this format.
//
// What is checked: snapshots that ValidateHeapSnapshot accepts are diagnosed without a
// crash or sanitizer report, the diagnosis is well formed (at most max_stacks stacks,
// leaks first, scores in [0, 1], finite figures), and the snapshot survives both codecs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "common/base/heap_snapshot.h"
#include "common/snapshot/heap_snapshot_json.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "common/snapshot/heap_snapshot_validation.h"
#include "diagnoser/format/diagnosis_json.h"
#include "diagnoser/heap_diagnoser.h"
#include "tests/fuzz/diagnosis_invariants.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input.h"

namespace drip::diagnoser {
namespace {

constexpr int64_t kBaseMs = 1'700'000'000'000;

int64_t Value(fuzz::FuzzInput& in) {
  const uint8_t tag = in.U8();
  switch (tag % 4) {
    case 0:
      return in.U16();
    case 1: {
      uint64_t raw = in.U32();
      raw |= static_cast<uint64_t>(in.U32()) << 32;
      return static_cast<int64_t>(raw);
    }
    case 2:
      return std::numeric_limits<int64_t>::max() - in.U16();
    default:
      return -static_cast<int64_t>(in.U16());
  }
}

int64_t Time(fuzz::FuzzInput& in) {
  const int64_t v = Value(in);
  int64_t t;
  return __builtin_add_overflow(kBaseMs, v, &t) ? v : t;
}

StackFrame PaletteFrame(uint8_t index) {
  static const std::vector<StackFrame> palette = {
      {0x7f0000001000, "malloc", "/lib/libc.so.6", "", 0x1000, "", 0},
      {0x7f0000002000, "operator new(unsigned long)", "/lib/libstdc++.so.6", "", 0x2000, "", 0},
      {0x7f0000003000, "calloc", "/lib/libc.so.6", "", 0x3000, "", 0},
      {0x401000, "Session::Remember(Request const&)", "/usr/bin/app", "ab", 0x1000,
       "src/session.cc", 88},
      {0x402000, "LruCache::Insert(Key const&, Value)", "/usr/bin/app", "ab", 0x2000, "src/lru.cc",
       57},
      {0x403000, "main", "/usr/bin/app", "ab", 0x3000, "src/main.cc", 12},
      {0x404000, "", "/usr/bin/app", "ab", 0x4000, "", 0},
      {0x405000, "", "", "", 0, "", 0},
  };
  return palette[index % palette.size()];
}

HeapSnapshot Build(fuzz::FuzzInput& in) {
  HeapSnapshot s;
  const uint8_t flags = in.U8();
  s.mode = flags & 1 ? "preload" : "attach";
  s.target.pid = static_cast<int>(std::clamp<int64_t>(Value(in), std::numeric_limits<int>::min(),
                                                      std::numeric_limits<int>::max()));
  s.start_ms = Time(in);
  s.end_ms = Time(in);
  s.interval_seconds = static_cast<double>(Value(in)) / 1000;
  s.sampling_mean_bytes = static_cast<uint64_t>(Value(in));
  for (int n = in.U8() % 8; n > 0; --n) {
    RssPoint& p = s.rss.emplace_back();
    p.t_ms = Time(in);
    p.rss_bytes = Value(in);
    p.anon_bytes = Value(in);
  }
  for (int n = in.U8() % 64; n > 0 && !in.empty(); --n) {
    SnapshotStack& stack = s.stacks.emplace_back();
    stack.id = static_cast<uint64_t>(Value(in));
    for (int f = in.U8() % 5; f > 0; --f) stack.frames.push_back(PaletteFrame(in.U8()));
    for (int p = in.U8() % 24; p > 0; --p) {
      LivePoint& point = stack.series.emplace_back();
      point.t_ms = Time(in);
      point.live_bytes = Value(in);
      point.live_allocs = Value(in);
    }
    stack.sampled_allocs = Value(in);
    stack.sampled_frees = Value(in);
    stack.allocated_bytes = Value(in);
    stack.freed_bytes = Value(in);
    const int64_t first = Value(in);
    const int64_t last = Value(in);
    stack.first_alloc_ms = first == 0 ? 0 : Time(in);
    stack.last_alloc_ms = last == 0 ? 0 : Time(in);
    for (int c = in.U8() % 9; c > 0 && !in.empty(); --c) {
      const int64_t allocs = Value(in);
      stack.cohorts.push_back({allocs, Value(in)});
    }
  }
  return s;
}

}  // namespace
}  // namespace drip::diagnoser

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace drip;
  fuzz::FuzzInput in(data, size);
  const HeapSnapshot snapshot = diagnoser::Build(in);
  if (!ValidateHeapSnapshot(snapshot, "<fuzz>").ok()) return 0;

  const diagnoser::DiagnoserConfig config;
  const diagnoser::Diagnosis diagnosis = diagnoser::HeapDiagnoser(config).Diagnose(snapshot);
  fuzz::CheckDiagnosisInvariants(diagnosis, config);
  (void)diagnoser::DiagnosisToJson(diagnosis).dump();

  absl::StatusOr<HeapSnapshot> json = ParseHeapSnapshotJson(HeapSnapshotToJson(snapshot), "<json>");
  FUZZ_CHECK(json.ok(), "written as JSON, the snapshot does not read back: %s",
             json.status().ToString().c_str());
  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(snapshot, &proto);
  absl::StatusOr<HeapSnapshot> back = ParseHeapSnapshotProto(proto, "<proto>");
  FUZZ_CHECK(back.ok(), "converted to proto, the snapshot does not read back: %s",
             back.status().ToString().c_str());
  return 0;
}
