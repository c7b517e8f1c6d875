// Fuzzes what the collector does with a heap snapshot an agent sends up its stream
// (collector/pipeline/snapshot_scheduler.cc, Diagnose): the payload bytes parsed as a
// drip.v1.HeapSnapshot, converted and validated (common/snapshot/heap_snapshot_proto.h), diagnosed
// (diagnoser/heap_diagnoser.h), and the diagnosis converted to the proto the collector
// stores and serves. agent_message_fuzzer reaches the same code through a whole
// collector, but at a few inputs a second; this target runs thousands, and protobuf's
// varints let libFuzzer's integer mutations put any field at the edges of its range,
// which JSON text rarely reaches.
//
// Oracles beyond "no crash, no sanitizer report, no timeout": a snapshot that validates
// converts back to an equal proto (the conversion loses nothing), and its diagnosis is
// well formed (at most max_stacks stacks, leaks first, scores in [0, 1], finite figures).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/base/heap_snapshot.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "diagnoser/heap_diagnoser.h"
#include "drip/v1/snapshot.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "tests/fuzz/diagnosis_invariants.h"
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
  // the struct's defaults: all zero but on_fraction 1; an absent free_on_fraction as 1.
  proto.DiscardUnknownFields();
  if (!proto.has_duty_cycle()) proto.mutable_duty_cycle()->set_on_fraction(1);
  if (!proto.duty_cycle().has_free_on_fraction()) {
    proto.mutable_duty_cycle()->set_free_on_fraction(1);
  }
  FUZZ_CHECK(google::protobuf::util::MessageDifferencer::Equals(proto, back),
             "the snapshot changed through the conversion");

  const diagnoser::DiagnoserConfig config;
  const diagnoser::Diagnosis d = diagnoser::HeapDiagnoser(config).Diagnose(*snapshot);
  fuzz::CheckDiagnosisInvariants(d, config);
  return 0;
}
