// The protobuf twin of a heap snapshot (common/base/heap_snapshot.h <-> drip.v1.HeapSnapshot in
// proto/drip/v1/snapshot.proto): how an agent sends a snapshot up its stream and how the
// collector stores it. The conversion is field for field and loses nothing.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "common/base/heap_snapshot.h"
#include "drip/v1/snapshot.pb.h"

namespace drip {

// Replaces the contents of `out`.
void HeapSnapshotToProto(const HeapSnapshot& snapshot, drip::v1::HeapSnapshot* out);
// Converts without checking; use ParseHeapSnapshotProto for anything from the network.
HeapSnapshot HeapSnapshotFromProto(const drip::v1::HeapSnapshot& proto);
// Converts and validates (ValidateHeapSnapshot); errors name `source_name` and the field
// by its JSON path, as ParseHeapSnapshotJson does.
absl::StatusOr<HeapSnapshot> ParseHeapSnapshotProto(const drip::v1::HeapSnapshot& proto,
                                                    std::string_view source_name);

// One frame, shared with the diagnosis' proto form.
void StackFrameToProto(const StackFrame& frame, drip::v1::StackFrame* out);
StackFrame StackFrameFromProto(const drip::v1::StackFrame& proto);

}  // namespace drip
