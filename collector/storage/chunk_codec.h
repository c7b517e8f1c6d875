// Encoding of the samples in a chunk: the value of one `series` key, holding one
// series' samples in one time window. A chunk is a plain concatenation of points,
// which is what lets appends be RocksDB merges that concatenate (chunk_merge_operator.h)
// and lets compaction fold them without decoding anything.
//
// Point:  varint(timestamp_ms - window_start_ms)  tag  varint(figure)...  [extra]
//   tag: low 4 bits the memory kind (PointKind), high 4 bits the format version.
//   figures, in sample.proto field order:
//     process: anon_rss, file_rss, shmem_rss, swap
//     cgroup:  current, anon, kernel, slab_unreclaimable, sock, shmem, swap
//     slab:    active_objects, object_size
//     exit:    peak_rss, wait_status
//     none:    nothing
//   version 0 has nothing after the figures. Version 1 (a sample with a memory limit or
//   an OOM kill) adds varint(flags): bit 0, the limit follows as varint(max_bytes),
//   varint(high_bytes), varint(swap_bytes), varint(oom_kills) (its cgroup's name is not
//   kept); bit 1, the exit was an OOM kill. A sample with neither is written as version
//   0, so a store of unlimited hosts is as small as before, and points of both versions
//   mix in one chunk.
// A process point is typically 15-25 bytes, against about 40 for the protobuf Sample; a
// limit adds about 8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "drip/v1/sample.pb.h"

namespace drip::collector {

enum class PointKind : uint8_t {
  kNone = 0,
  kProcess = 1,
  kCgroup = 2,
  kSlab = 3,
  kProcessExit = 4
};

// Appends `sample`'s point to `chunk`. The sample's timestamp must lie in
// [window_start_ms, window_start_ms + chunk window); names are not encoded (the key
// says which series this is).
void AppendPoint(const drip::v1::Sample& sample, int64_t window_start_ms, std::string* chunk);

// Bytes taken by the point at the front of `data`, or 0 when it is truncated or has an
// unknown tag. Lets staged points be copied into chunks without decoding them.
size_t PointLength(std::string_view data);

// Appends the chunk's points to *out as Samples with timestamp and memory set, in the
// order they were appended (not necessarily time order). On a truncated or corrupt
// chunk returns DATA_LOSS naming the point and byte offset; the points before it have
// been appended by then. Never reads outside `chunk`.
absl::Status DecodeChunk(std::string_view chunk, int64_t window_start_ms,
                         std::vector<drip::v1::Sample>* out);

}  // namespace drip::collector
