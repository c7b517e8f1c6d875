// A heap snapshot and its diagnosis as a pprof profile (perftools.profiles.Profile,
// github.com/google/pprof's profile.proto), gzipped as pprof writes it: what
// `dripctl diagnose --pprof` saves, so that engineers open Drip's snapshots in the tools
// they already use (go tool pprof, Grafana Pyroscope, Parca, speedscope). Pure: bytes in
// memory, the caller writes the file.
//
// Following pprof's own conventions for heap profiles (Go's runtime/pprof):
//   - sample types alloc_objects/count, alloc_space/bytes, inuse_objects/count,
//     inuse_space/bytes, with inuse_space the default;
//   - values stored unsampled (the snapshot's estimates of the whole heap), with
//     period_type space/bytes and the sampling period (sampling.mean_bytes) as period;
//   - one sample per allocation site: the snapshot's stacks with the allocator's own frames
//     dropped and the stacks that then agree merged, as the diagnoser judges them
//     (stack_merge.h); its location ids leaf first;
//   - one location per frame (module, build-id, offset, function, file, line), its
//     address the frame's offset in its module, which is what pprof symbolizes against
//     the mapping; one mapping per module, carrying its GNU build-id;
//   - each sample labelled with Drip's verdict ("verdict") and its rank ("rank", 1 is the
//     likeliest leak) from the diagnosis.
// A diff of two snapshots (snapshot_diff.h) has the same layout, so pprof's tools read it
// alike; its values are what each site is estimated to have added (inuse) and allocated
// (alloc) between the two snapshots' ends, and its verdict the latest one.
// alloc_objects is estimated: the snapshot counts bytes allocated, not objects, so the
// objects are the bytes over the site's mean live object size (its sampled allocations
// when nothing is live). Frames carry no inlining: one line per location.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "common/base/heap_snapshot.h"
#include "diagnoser/diagnosis.h"
#include "diagnoser/snapshot_diff.h"
#include "github.com/google/pprof/proto/profile.pb.h"

namespace drip::diagnoser {

// The profile message itself (for tests and for whoever gzips it elsewhere).
perftools::profiles::Profile HeapSnapshotToPprof(const HeapSnapshot& snapshot,
                                                 const Diagnosis& diagnosis);

// The profile serialized and gzipped, ready to be written to a .pb.gz file. INTERNAL
// only if zlib fails.
absl::StatusOr<std::string> HeapSnapshotToPprofGzip(const HeapSnapshot& snapshot,
                                                    const Diagnosis& diagnosis);

// What grew between two snapshots (`now` is the later one, for the profile's names).
perftools::profiles::Profile SnapshotDiffToPprof(const HeapSnapshot& now, const SnapshotDiff& diff);
absl::StatusOr<std::string> SnapshotDiffToPprofGzip(const HeapSnapshot& now,
                                                    const SnapshotDiff& diff);

// The bytes of a gzip stream (RFC 1952) uncompressed; INVALID_ARGUMENT when they are not
// one. For tests and readers of what HeapSnapshotToPprofGzip wrote.
absl::StatusOr<std::string> Gunzip(const std::string& bytes);

}  // namespace drip::diagnoser
