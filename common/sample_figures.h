// What Drip calls a sample's "unreclaimable bytes": the memory that a leak grows and
// that the kernel cannot take back under pressure. This one number is what the
// detector, the series display and the metrics look at; the raw figures stay stored.
//   process: anon RSS + swap (file pages and shmem are reclaimable or shared)
//   cgroup:  anon + swap + shmem + unreclaimable slab + socket buffers
//   slab:    active objects x object size
#pragma once

#include <cstdint>
#include <string>

#include "drip/v1/sample.pb.h"

namespace drip {

uint64_t UnreclaimableBytes(const drip::v1::Sample& sample);

// "process", "cgroup", "slab" or "none".
std::string SampleKind(const drip::v1::Sample& sample);

}  // namespace drip
