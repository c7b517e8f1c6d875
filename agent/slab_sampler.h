// SlabSampler: kernel memory as leak entities. Each slab cache in /proc/slabinfo with
// live objects is a sample of component "kernel:slab:<cache>" (active objects and object
// size; their product is what the cache holds), so a driver or subsystem that leaks
// kmalloc-512 objects shows as a growing series like any process would.
//
// The instance is "boot@<boot time>": kernel memory only resets with a reboot.
// /proc/slabinfo is readable by root only; without it the sampler logs once and the
// agent samples everything else.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "drip/v1/sample.pb.h"

namespace drip::agent {

class SlabSampler {
 public:
  struct Cache {
    std::string name;
    uint64_t active_objects = 0;
    uint64_t object_size_bytes = 0;
  };

  // `slabinfo_path` is "/proc/slabinfo" in production.
  SlabSampler(std::string slabinfo_path, int64_t boot_time_s);

  // Appends one sample per cache with active objects. Fails (and appends nothing) when
  // the file cannot be read or parsed; the caller logs that once.
  absl::Status AppendSamples(int64_t timestamp_ms, std::vector<drip::v1::Sample>* out);

  // Parses slabinfo version 2.x text; `source` names it in errors ("FILE:LINE: what").
  static absl::StatusOr<std::vector<Cache>> Parse(std::string_view text, std::string_view source);

  uint64_t caches_last_pass() const { return caches_last_pass_; }

 private:
  std::string slabinfo_path_;
  std::string instance_;
  std::string buffer_;
  uint64_t caches_last_pass_ = 0;
};

}  // namespace drip::agent
