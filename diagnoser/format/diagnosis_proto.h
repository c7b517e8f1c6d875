// The protobuf form of a diagnosis (diagnoser/diagnosis.h <-> drip.v1.Diagnosis in
// proto/drip/v1/snapshot.proto): how the collector stores and serves it.
#pragma once

#include "absl/status/statusor.h"
#include "diagnoser/diagnosis.h"
#include "drip/v1/snapshot.pb.h"

namespace drip::diagnoser {

// Replaces the contents of `out`.
void DiagnosisToProto(const Diagnosis& diagnosis, drip::v1::Diagnosis* out);
// INVALID_ARGUMENT naming the stack when a verdict is not one this build knows.
absl::StatusOr<Diagnosis> DiagnosisFromProto(const drip::v1::Diagnosis& proto);

}  // namespace drip::diagnoser
