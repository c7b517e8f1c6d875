// PprofOutput: the --pprof FILE of dripctl's commands (diagnose, leaks show). Opened before
// any work, so that a path that cannot be written fails first, in one line; written whole
// or not at all (common/base/atomic_file.h), so that a reader never sees half a profile.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/base/atomic_file.h"

namespace drip::cli {

class PprofOutput {
 public:
  // Nothing to write when `path` is empty. INVALID_ARGUMENT ("--pprof: PATH: ...") when
  // the file cannot be made.
  static absl::StatusOr<PprofOutput> Open(const std::string& path);

  bool wanted() const { return file_.has_value(); }

  // Writes `profile` (a gzipped profile, or the error making it); INVALID_ARGUMENT
  // ("--pprof: ...") when the write fails.
  absl::Status Write(const absl::StatusOr<std::string>& profile);

 private:
  std::optional<AtomicFile> file_;
};

}  // namespace drip::cli
