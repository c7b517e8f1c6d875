// ShimSamplingControl: asks a process running libdrip_sampler.so for another sampling
// period T while a preload-mode snapshot runs, and gives it back its own when the
// snapshot ends.
//
// The shim samples at DRIP_SAMPLE_BYTES (512 KiB by default), which keeps it near free
// for the process's whole life but shows a slow leak only a sample or two a minute. The
// snapshotter sizes T from the sampled rate it sees (SamplingRatePlanner) and writes it
// into the shim's exported `drip_sampler_control` (agent/sampler_shim/drip_sampler.h)
// with process_vm_writev. Only that object is ever written, and only after its magic has
// been read back at the address its dynamic symbol gives: a process whose shim is another
// build, or whose mapping does not match the file, is left alone and the snapshot keeps
// the shim's own T.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace drip::agent {

class ShimSamplingControl {
 public:
  // Finds the control object of the shim `pid` has mapped. `shim_path` is the file as the
  // agent opens it (AllocatorProbePlan::shim_path, through /proc/PID/root).
  static absl::StatusOr<ShimSamplingControl> Find(int pid, const std::string& proc_root,
                                                  const std::string& shim_path);

  // Asks for T = mean_bytes from the next countdown each thread draws; 0 gives the
  // process back DRIP_SAMPLE_BYTES. Checks the magic again first.
  absl::Status Request(uint64_t mean_bytes) const;
  // What the process currently has in requested_mean_bytes.
  absl::StatusOr<uint64_t> Requested() const;

 private:
  ShimSamplingControl(int pid, uint64_t address) : pid_(pid), address_(address) {}
  absl::Status CheckMagic() const;

  int pid_;
  uint64_t address_;  // of drip_sampler_control in the target
};

}  // namespace drip::agent
