// InstanceVersionReader: what each process instance the samplers report runs — the GNU
// build-id of its executable and the version label its environment declares — read once
// per instance, for the batch that carries the instance's first sample
// (drip.v1.InstanceVersion). The collector correlates leaks with versions from it: a leak
// that arrived with a rollout, or one the old version has too (docs/rollout.md).
//
// A unit's cgroup instance ("cg@id") runs what the unit's largest process in the same
// pass runs. Not thread-safe: the sampling thread owns it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/sample.pb.h"

namespace drip::agent {

class InstanceVersionReader {
 public:
  // `proc_root` is where PID directories live ("/proc", or a fake tree in tests).
  explicit InstanceVersionReader(std::string proc_root);

  // The versions of the instances of one pass that earlier passes did not have, each
  // with the index in `samples` of its sample. Instances whose version cannot be read
  // (the process is gone, its executable has no build-id and no label is set) are left
  // out. Instances absent from a pass are forgotten, so memory follows the host's
  // processes.
  std::vector<std::pair<size_t, drip::v1::InstanceVersion>> NewInstances(
      const std::vector<drip::v1::Sample>& samples);

  // The hex GNU build-id of the ELF file at `path`; empty when it has none. Fails when
  // the file cannot be read or is not ELF.
  static absl::StatusOr<std::string> ReadBuildId(const std::string& path);

  // The version an environment block (NUL-separated NAME=value, as /proc/PID/environ)
  // declares: DRIP_VERSION, else service.version in OTEL_RESOURCE_ATTRIBUTES; "" when
  // neither. At most kMaxLabelBytes, valid UTF-8.
  static std::string VersionLabelFromEnviron(std::string_view environ);

  static constexpr size_t kMaxLabelBytes = 128;

 private:
  // Fills build_id and label for process `pid`; false when neither could be read.
  bool ReadVersion(int pid, drip::v1::InstanceVersion* version);

  struct FileIdentity {
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const FileIdentity& f) {
      return H::combine(std::move(h), f.device, f.inode, f.mtime_ns);
    }
  };

  std::string proc_root_;
  // Instances seen in the last pass, by the hash of (component, instance): a pass checks
  // thousands each time, and building string keys for them cost a quarter of a BPF pass
  // (bench/sampler_bench.cc). A collision only leaves one instance's version unsent.
  absl::flat_hash_set<uint64_t> known_;
  // Build-ids by executable file: a host's many processes share a few executables.
  absl::flat_hash_map<FileIdentity, std::string> build_ids_;
};

}  // namespace drip::agent
