#include "collector/storage/store_error_listener.h"

namespace drip::collector {

StoreErrorListener::State StoreErrorListener::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

void StoreErrorListener::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  state_.error = rocksdb::Status::OK();
  state_.no_space = false;
}

void StoreErrorListener::ClearIfUnchanged(uint64_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_.count != count) return;
  state_.error = rocksdb::Status::OK();
  state_.no_space = false;
}

void StoreErrorListener::OnBackgroundError(rocksdb::BackgroundErrorReason /*reason*/,
                                           rocksdb::Status* error) {
  if (error == nullptr || error->ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  ++state_.count;
  if (error->IsNoSpace() || error->subcode() == rocksdb::Status::kSpaceLimit) {
    state_.no_space = true;
  }
  // RocksDB keeps the more severe of its current and the new error; so do we.
  if (state_.error.ok() || error->severity() >= state_.error.severity()) {
    state_.error = *error;
  }
}

void StoreErrorListener::OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason /*reason*/,
                                              rocksdb::Status /*error*/, bool* auto_recovery) {
  // The store reopens the database instead (see the header).
  *auto_recovery = false;
}

}  // namespace drip::collector
