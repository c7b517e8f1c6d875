#include "collector/fleet_suspects.h"

namespace drip::collector {

std::string_view SnapshotStateName(SnapshotAttempt::State state) {
  switch (state) {
    case SnapshotAttempt::State::kPending:
      return "pending";
    case SnapshotAttempt::State::kDone:
      return "done";
    case SnapshotAttempt::State::kFailed:
      return "failed";
  }
  return "failed";
}

}  // namespace drip::collector
