// How dripctl prints diagnosed call stacks, shared by `dripctl diagnose` (stacks of a
// snapshot file) and `dripctl leaks show` (the top stacks of a leak report), so that a
// stack reads the same wherever on-call meets it: a header line with the verdict, live
// bytes, growth and score, the reason, then one frame per line, innermost first.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "diagnoser/diagnosis.h"
#include "drip/v1/snapshot.pb.h"
#include "google/protobuf/repeated_field.h"

namespace drip::cli {

// Bytes for people; negative estimates print as 0 B.
std::string FormatLiveBytes(int64_t bytes);

// `rank` is 1-based. Frames as diagnoser::FrameLabel, plus [module+0xoffset] when the
// function is known (so a frame without source still names its binary).
void PrintDiagnosedStack(int rank, const diagnoser::DiagnosedStack& stack, std::ostream& out);
// Its frames alone, one per line, made terminal-safe.
void PrintFrames(const std::vector<StackFrame>& frames, std::ostream& out);

// The collector's proto stacks (a report's top_stacks) as the diagnoser's; INVALID_ARGUMENT
// when a verdict is not one this dripctl knows (a newer collector).
absl::StatusOr<diagnoser::Diagnosis> StacksFromProto(
    const google::protobuf::RepeatedPtrField<drip::v1::DiagnosedStack>& stacks);

// The innermost frame of a proto stack as FrameLabel prints it; "-" without frames.
std::string TopFrameLabel(const drip::v1::DiagnosedStack& stack);

}  // namespace drip::cli
