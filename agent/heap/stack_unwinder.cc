#include "agent/heap/stack_unwinder.h"

#include "agent/heap/dwfl_stack_unwinder.h"

namespace drip::agent {

absl::StatusOr<std::unique_ptr<StackUnwinder>> StackUnwinder::ForProcess(
    int pid, const std::string& proc_root) {
  absl::StatusOr<std::unique_ptr<DwflStackUnwinder>> unwinder =
      DwflStackUnwinder::Create(pid, proc_root);
  if (!unwinder.ok()) return unwinder.status();
  return std::unique_ptr<StackUnwinder>(std::move(unwinder).value());
}

}  // namespace drip::agent
