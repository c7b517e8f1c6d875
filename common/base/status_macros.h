// Status plumbing shared by every component. Errors cross module boundaries as
// absl::Status / absl::StatusOr values, never as exceptions (see docs/errors.md).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define DRIP_CONCAT_INNER_(a, b) a##b
#define DRIP_CONCAT_(a, b) DRIP_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` yields a non-OK absl::Status.
#define RETURN_IF_ERROR(expr)                    \
  do {                                           \
    ::absl::Status drip_status_ = (expr);        \
    if (!drip_status_.ok()) return drip_status_; \
  } while (0)

// ASSIGN_OR_RETURN(auto x, MaybeX()): binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  DRIP_ASSIGN_OR_RETURN_IMPL_(DRIP_CONCAT_(drip_statusor_, __LINE__), lhs, expr)
#define DRIP_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

namespace drip {
// A deliberately ignored status (absl::Status or StatusOr, grpc::Status, rocksdb::Status):
// the one spelling, so that every such place can be found. Say beside it why nothing is
// lost (the callee logged and counted it, a retry follows, it cannot matter here).
template <typename Status>
void IgnoreError(const Status&) {}

// `status` with `context` in front of its message ("context: message"), its code kept:
// how an error gains the where as it crosses a boundary.
inline absl::Status WithContext(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  std::string message(context);
  message += ": ";
  message += std::string(status.message());
  return absl::Status(status.code(), message);
}
}  // namespace drip
