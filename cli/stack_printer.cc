#include "cli/stack_printer.h"

#include <algorithm>
#include <cmath>

#include "cli/terminal_safe_text.h"
#include "common/base/duration.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "diagnoser/format/diagnosis_proto.h"
#include "fmt/format.h"

namespace drip::cli {
namespace {

std::string Basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string FormatLiveBytes(int64_t bytes) {
  return FormatBytes(static_cast<uint64_t>(std::max<int64_t>(bytes, 0)));
}

void PrintDiagnosedStack(int rank, const diagnoser::DiagnosedStack& s, std::ostream& out) {
  out << fmt::format("#{} {}, stack {}: {} live in {} objects, {}, score {:.2f}\n", rank,
                     diagnoser::VerdictName(s.verdict), s.stack_id, FormatLiveBytes(s.live_bytes),
                     s.live_allocs, FormatByteRate(s.growth_bytes_per_hour), s.score);
  if (!s.reason.empty()) out << fmt::format("  {}\n", s.reason);
  PrintFrames(s.frames, out);
}

void PrintFrames(const std::vector<StackFrame>& frames, std::ostream& out) {
  if (frames.empty()) out << "  <allocator frames only>\n";
  for (size_t i = 0; i < frames.size(); ++i) {
    const StackFrame& f = frames[i];
    std::string where;
    if (!f.function.empty() && !f.module.empty()) {
      where = fmt::format("  [{}+{:#x}]", TerminalSafe(Basename(f.module)), f.module_offset);
    }
    // Symbol and file names come from the target's binaries (dripctl diagnose reads
    // snapshots straight from files); the collector's answers are made safe as they arrive.
    out << fmt::format("  #{:<2} {}{}\n", i, TerminalSafe(diagnoser::FrameLabel(f)), where);
  }
}

absl::StatusOr<diagnoser::Diagnosis> StacksFromProto(
    const google::protobuf::RepeatedPtrField<drip::v1::DiagnosedStack>& stacks) {
  // Reuse the diagnoser's one proto decoder rather than a second copy of it here.
  drip::v1::Diagnosis proto;
  *proto.mutable_stacks() = stacks;
  return diagnoser::DiagnosisFromProto(proto);
}

std::string TopFrameLabel(const drip::v1::DiagnosedStack& stack) {
  if (stack.frames_size() == 0) return "-";
  return diagnoser::FrameLabel(StackFrameFromProto(stack.frames(0)));
}

}  // namespace drip::cli
