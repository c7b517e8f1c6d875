// What Drip calls a sample's "unreclaimable bytes": the memory that a leak grows and
// that the kernel cannot take back under pressure. This one number is what the
// detector, the series display and the metrics look at; the raw figures stay stored.
//   process: anon RSS + swap (file pages and shmem are reclaimable or shared)
//   cgroup:  anon + swap + shmem + unreclaimable slab + socket buffers
//   slab:    active objects x object size
//   exit:    0 (a process exit: its memory went with it)
#pragma once

#include <cstdint>
#include <string>

#include "drip/v1/sample.pb.h"
#include "nlohmann/json.hpp"

namespace drip {

uint64_t UnreclaimableBytes(const drip::v1::Sample& sample);

// The limit a sample's unreclaimable bytes run into: its cgroup's memory limit plus the
// swap it may use (both count in unreclaimable bytes); 0 when it has no limit of its own
// and the host's memory is what runs out.
uint64_t LimitBytes(const drip::v1::Sample& sample);

// "process", "cgroup", "slab", "exit" or "none".
std::string SampleKind(const drip::v1::Sample& sample);

// The sample as JSON: timestamp_ms, kind, unreclaimable_bytes and every raw figure of
// its kind under the proto's field names; with a limit, limit_bytes (LimitBytes) and
// "limit": {max_bytes, high_bytes, swap_bytes, cgroup, oom_kills}.
nlohmann::json SampleFiguresJson(const drip::v1::Sample& sample);

// The figures that explain the unreclaimable total, in the sample's own terms, on one
// line ("anon 12 MiB file 3 MiB shmem 0 B swap 0 B", and "limit 512 MiB (3 OOM kills)"
// when it has one).
std::string DescribeFigures(const drip::v1::Sample& sample);

}  // namespace drip
