#include "collector/storage/store_error.h"

#include "fmt/format.h"

namespace drip::collector {

absl::Status StoreError(const std::string& path, std::string_view what, const rocksdb::Status& s) {
  std::string message = fmt::format("store at {}: {}: {}", path, what, s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsIOError() || s.IsBusy() || s.IsTimedOut() || s.IsTryAgain() || s.IsAborted() ||
      s.IsIncomplete() || s.IsShutdownInProgress()) {
    return absl::UnavailableError(message);
  }
  if (s.IsInvalidArgument() || s.IsNotSupported()) return absl::FailedPreconditionError(message);
  return absl::InternalError(message);
}

}  // namespace drip::collector
