#include "common/sample_figures.h"

namespace drip {

uint64_t UnreclaimableBytes(const drip::v1::Sample& sample) {
  switch (sample.memory_case()) {
    case drip::v1::Sample::kProcess:
      return sample.process().anon_rss_bytes() + sample.process().swap_bytes();
    case drip::v1::Sample::kCgroup: {
      const auto& c = sample.cgroup();
      return c.anon_bytes() + c.swap_bytes() + c.shmem_bytes() + c.slab_unreclaimable_bytes() +
             c.sock_bytes();
    }
    case drip::v1::Sample::kSlab:
      return sample.slab().active_objects() * sample.slab().object_size_bytes();
    case drip::v1::Sample::MEMORY_NOT_SET:
      break;
  }
  return 0;
}

std::string SampleKind(const drip::v1::Sample& sample) {
  switch (sample.memory_case()) {
    case drip::v1::Sample::kProcess:
      return "process";
    case drip::v1::Sample::kCgroup:
      return "cgroup";
    case drip::v1::Sample::kSlab:
      return "slab";
    case drip::v1::Sample::MEMORY_NOT_SET:
      break;
  }
  return "none";
}

}  // namespace drip
