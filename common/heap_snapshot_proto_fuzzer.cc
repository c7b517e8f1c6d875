// Fuzzes what the collector does with a heap snapshot an agent sends up its stream
// (collector/snapshot_scheduler.cc, OnCommandResult): the payload bytes parsed as a
// drip.v1.HeapSnapshot, converted and validated (common/heap_snapshot_proto.h), diagnosed
// (diagnoser/heap_diagnoser.h), and the diagnosis converted to the proto the collector
// stores and serves. agent_message_fuzzer reaches the same code through a whole
// collector, but at a few inputs a second; this target runs thousands, and protobuf's
// varints let libFuzzer's integer mutations put any field at the edges of its range,
// which JSON text rarely reaches.
//
// Oracles beyond "no crash, no sanitizer report, no timeout": a snapshot that validates
// converts back to an equal proto (the conversion loses nothing), and its diagnosis is
// well formed (at most max_stacks stacks, leaks first, scores in [0, 1], finite figures).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/heap_snapshot.h"
#include "common/heap_snapshot_proto.h"
#include "diagnoser/diagnosis_proto.h"
#include "diagnoser/heap_diagnoser.h"
#include "drip/v1/snapshot.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace drip;
  drip::v1::HeapSnapshot proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  absl::StatusOr<HeapSnapshot> snapshot = ParseHeapSnapshotProto(proto, "snapshot from fuzz");
  if (!snapshot.ok()) {
    FUZZ_CHECK(snapshot.status().code() == absl::StatusCode::kInvalidArgument, "%s",
               snapshot.status().ToString().c_str());
    return 0;
  }

  drip::v1::HeapSnapshot back;
  HeapSnapshotToProto(*snapshot, &back);
  // Unknown fields are not carried over, and an absent duty_cycle (preload mode) reads as
  // the struct's defaults: all zero but on_fraction 1.
  proto.DiscardUnknownFields();
  if (!proto.has_duty_cycle()) proto.mutable_duty_cycle()->set_on_fraction(1);
  FUZZ_CHECK(google::protobuf::util::MessageDifferencer::Equals(proto, back),
             "the snapshot changed through the conversion");

  const diagnoser::DiagnoserConfig config;
  const diagnoser::Diagnosis d = diagnoser::HeapDiagnoser(config).Diagnose(*snapshot);
  FUZZ_CHECK(d.stacks.size() <= static_cast<size_t>(config.max_stacks), "%zu stacks kept",
             d.stacks.size());
  FUZZ_CHECK(std::isfinite(d.rss_growth_bytes_per_hour), "rss growth %g",
             d.rss_growth_bytes_per_hour);
  bool leaks_over = false;
  for (const diagnoser::DiagnosedStack& s : d.stacks) {
    const bool leak = s.verdict == diagnoser::Verdict::kLeak;
    FUZZ_CHECK(!(leak && leaks_over), "a leak ranked after a stack that is not a leak");
    leaks_over = !leak;
    FUZZ_CHECK(s.score >= 0 && s.score <= 1, "score %g", s.score);
    FUZZ_CHECK(std::isfinite(s.growth_bytes_per_hour) && std::isfinite(s.freed_fraction) &&
                   std::isfinite(s.steadiness) && std::isfinite(s.recent_growth_ratio),
               "figures of stack %llu", static_cast<unsigned long long>(s.stack_id));
  }
  drip::v1::Diagnosis stored;
  diagnoser::DiagnosisToProto(d, &stored);
  FUZZ_CHECK(diagnoser::DiagnosisFromProto(stored).ok(), "the stored diagnosis does not read back");
  return 0;
}
