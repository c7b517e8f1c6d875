#include "cli/pprof_output.h"

#include <utility>

#include "fmt/format.h"

namespace drip::cli {

absl::StatusOr<PprofOutput> PprofOutput::Open(const std::string& path) {
  PprofOutput output;
  if (path.empty()) return output;
  absl::StatusOr<AtomicFile> file = AtomicFile::Create(path);
  if (!file.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("--pprof: {}", std::string(file.status().message())));
  }
  output.file_ = std::move(*file);
  return output;
}

absl::Status PprofOutput::Write(const absl::StatusOr<std::string>& profile) {
  if (!profile.ok()) return profile.status();
  if (absl::Status written = file_->Commit(*profile); !written.ok()) {
    return absl::InvalidArgumentError(fmt::format("--pprof: {}", std::string(written.message())));
  }
  return absl::OkStatus();
}

}  // namespace drip::cli
