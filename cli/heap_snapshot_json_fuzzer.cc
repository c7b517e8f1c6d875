// Fuzzes `dripctl diagnose` from its input bytes on: the snapshot JSON reader and its
// validation (common/snapshot/heap_snapshot_json.h, heap_snapshot_validation.h), then, for every
// snapshot that parses, the diagnoser (diagnoser/heap_diagnoser.h) and both renderings
// dripctl prints (cli/diagnose_command.h: the table and --json). The snapshot's numbers
// are where hostile input bites: times and byte counts near the int64 limits, series of
// one point, windows of zero length, thousands of equal stacks.
//
// Oracles beyond "no crash, no sanitizer report, no timeout":
//   - the codecs lose nothing: a snapshot that parses, written back as JSON, parses to
//     the same snapshot; converted to its protobuf twin (what an agent sends the
//     collector) and back, it validates and is the same again;
//   - the diagnosis is well formed: at most max_stacks stacks, leaks first, scores in
//     [0, 1] and finite figures; its protobuf form converts back.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "cli/diagnose_command.h"
#include "common/base/heap_snapshot.h"
#include "common/snapshot/heap_snapshot_json.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "diagnoser/heap_diagnoser.h"
#include "tests/fuzz/diagnosis_invariants.h"
#include "tests/fuzz/fuzz_check.h"

namespace drip {
namespace {

bool SameFrame(const StackFrame& a, const StackFrame& b) {
  return a.address == b.address && a.function == b.function && a.module == b.module &&
         a.build_id == b.build_id && a.module_offset == b.module_offset && a.file == b.file &&
         a.line == b.line;
}

bool SameStack(const SnapshotStack& a, const SnapshotStack& b) {
  if (a.id != b.id || a.frames.size() != b.frames.size() || a.series.size() != b.series.size() ||
      a.sampled_allocs != b.sampled_allocs || a.sampled_frees != b.sampled_frees ||
      a.allocated_bytes != b.allocated_bytes || a.freed_bytes != b.freed_bytes ||
      a.first_alloc_ms != b.first_alloc_ms || a.last_alloc_ms != b.last_alloc_ms ||
      a.cohorts.size() != b.cohorts.size()) {
    return false;
  }
  for (size_t i = 0; i < a.cohorts.size(); ++i) {
    if (a.cohorts[i].allocs != b.cohorts[i].allocs || a.cohorts[i].live != b.cohorts[i].live) {
      return false;
    }
  }
  for (size_t i = 0; i < a.frames.size(); ++i) {
    if (!SameFrame(a.frames[i], b.frames[i])) return false;
  }
  for (size_t i = 0; i < a.series.size(); ++i) {
    const LivePoint& p = a.series[i];
    const LivePoint& q = b.series[i];
    if (p.t_ms != q.t_ms || p.live_bytes != q.live_bytes || p.live_allocs != q.live_allocs) {
      return false;
    }
  }
  return true;
}

bool SameSnapshot(const HeapSnapshot& a, const HeapSnapshot& b) {
  const SnapshotTarget& x = a.target;
  const SnapshotTarget& y = b.target;
  if (a.version != b.version || x.pid != y.pid || x.comm != y.comm || x.exe != y.exe ||
      x.start_time_ms != y.start_time_ms || x.host != y.host || x.component != y.component ||
      x.instance != y.instance || x.allocator != y.allocator ||
      x.expected_growth_bytes_per_hour != y.expected_growth_bytes_per_hour || a.mode != b.mode ||
      a.start_ms != b.start_ms || a.end_ms != b.end_ms ||
      a.interval_seconds != b.interval_seconds || a.sampling_mean_bytes != b.sampling_mean_bytes ||
      a.duty_cycle.cpu_budget != b.duty_cycle.cpu_budget ||
      a.duty_cycle.probe_hit_cost_ns != b.duty_cycle.probe_hit_cost_ns ||
      a.duty_cycle.on_fraction != b.duty_cycle.on_fraction ||
      a.duty_cycle.probe_hits != b.duty_cycle.probe_hits ||
      a.duty_cycle.estimated_cpu_fraction != b.duty_cycle.estimated_cpu_fraction ||
      a.stop_reason != b.stop_reason || a.stop_detail != b.stop_detail ||
      a.sampled_allocs != b.sampled_allocs || a.matched_frees != b.matched_frees ||
      a.dropped_events != b.dropped_events || a.lost_while_behind != b.lost_while_behind ||
      a.unwind_failures != b.unwind_failures || a.unsampled_calls != b.unsampled_calls ||
      a.rss.size() != b.rss.size() || a.stacks.size() != b.stacks.size()) {
    return false;
  }
  for (size_t i = 0; i < a.rss.size(); ++i) {
    const RssPoint& p = a.rss[i];
    const RssPoint& q = b.rss[i];
    if (p.t_ms != q.t_ms || p.rss_bytes != q.rss_bytes || p.anon_bytes != q.anon_bytes) {
      return false;
    }
  }
  for (size_t i = 0; i < a.stacks.size(); ++i) {
    if (!SameStack(a.stacks[i], b.stacks[i])) return false;
  }
  return true;
}

}  // namespace
}  // namespace drip

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace drip;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<HeapSnapshot> snapshot = ParseHeapSnapshotJson(text, "<fuzz>");
  if (!snapshot.ok()) {
    FUZZ_CHECK(snapshot.status().code() == absl::StatusCode::kInvalidArgument, "%s",
               snapshot.status().ToString().c_str());
    return 0;
  }

  const std::string json = HeapSnapshotToJson(*snapshot);
  absl::StatusOr<HeapSnapshot> again = ParseHeapSnapshotJson(json, "<rewritten>");
  FUZZ_CHECK(again.ok(), "the rewritten snapshot does not parse: %s",
             again.status().ToString().c_str());
  FUZZ_CHECK(SameSnapshot(*snapshot, *again), "JSON round trip changed the snapshot");

  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(*snapshot, &proto);
  drip::v1::HeapSnapshot wire;
  FUZZ_CHECK(wire.ParseFromString(proto.SerializeAsString()), "proto does not reparse");
  absl::StatusOr<HeapSnapshot> from_proto = ParseHeapSnapshotProto(wire, "<proto>");
  FUZZ_CHECK(from_proto.ok(), "the proto twin does not validate: %s",
             from_proto.status().ToString().c_str());
  FUZZ_CHECK(SameSnapshot(*snapshot, *from_proto), "proto round trip changed the snapshot");

  const diagnoser::DiagnoserConfig config;
  const diagnoser::Diagnosis diagnosis = diagnoser::HeapDiagnoser(config).Diagnose(*snapshot);
  fuzz::CheckDiagnosisInvariants(diagnosis, config);
  std::ostringstream out;
  cli::RenderDiagnosis(*snapshot, diagnosis, /*json=*/true, 0, out);
  cli::RenderDiagnosis(*snapshot, diagnosis, /*json=*/false, 20, out);
  return 0;
}
