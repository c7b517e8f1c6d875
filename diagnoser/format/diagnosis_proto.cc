#include "diagnoser/format/diagnosis_proto.h"

#include <string>

#include "common/snapshot/heap_snapshot_proto.h"
#include "fmt/format.h"

namespace drip::diagnoser {

void DiagnosisToProto(const Diagnosis& d, drip::v1::Diagnosis* out) {
  out->Clear();
  out->set_rss_growth_bytes_per_hour(d.rss_growth_bytes_per_hour);
  out->set_summary(d.summary);
  out->set_outcome(std::string(OutcomeName(d.outcome)));
  out->set_next_step(d.next_step);
  out->mutable_stacks()->Reserve(static_cast<int>(d.stacks.size()));
  for (const DiagnosedStack& s : d.stacks) {
    auto* p = out->add_stacks();
    for (const StackFrame& f : s.frames) StackFrameToProto(f, p->add_frames());
    p->set_live_bytes(s.live_bytes);
    p->set_live_allocs(s.live_allocs);
    p->set_growth_bytes_per_hour(s.growth_bytes_per_hour);
    p->set_score(s.score);
    p->set_verdict(std::string(VerdictName(s.verdict)));
    p->set_reason(s.reason);
    p->set_stack_id(s.stack_id);
    p->set_sampled_allocs(s.sampled_allocs);
    p->set_freed_fraction(s.freed_fraction);
    p->set_steadiness(s.steadiness);
    p->set_recent_growth_ratio(s.recent_growth_ratio);
  }
}

absl::StatusOr<Diagnosis> DiagnosisFromProto(const drip::v1::Diagnosis& proto) {
  Diagnosis d;
  d.rss_growth_bytes_per_hour = proto.rss_growth_bytes_per_hour();
  d.summary = proto.summary();
  d.next_step = proto.next_step();
  d.stacks.reserve(proto.stacks_size());
  for (int i = 0; i < proto.stacks_size(); ++i) {
    const drip::v1::DiagnosedStack& p = proto.stacks(i);
    auto verdict = ParseVerdict(p.verdict());
    if (!verdict) {
      return absl::InvalidArgumentError(
          fmt::format("stacks[{}].verdict: unknown verdict \"{}\" (expected leak, cache, startup, "
                      "transient or inconclusive)",
                      i, p.verdict()));
    }
    DiagnosedStack& s = d.stacks.emplace_back();
    s.frames.reserve(p.frames_size());
    for (const auto& f : p.frames()) s.frames.push_back(StackFrameFromProto(f));
    s.live_bytes = p.live_bytes();
    s.live_allocs = p.live_allocs();
    s.growth_bytes_per_hour = p.growth_bytes_per_hour();
    s.score = p.score();
    s.verdict = *verdict;
    s.reason = p.reason();
    s.stack_id = p.stack_id();
    s.sampled_allocs = p.sampled_allocs();
    s.freed_fraction = p.freed_fraction();
    s.steadiness = p.steadiness();
    s.recent_growth_ratio = p.recent_growth_ratio();
  }
  if (proto.outcome().empty()) {
    const bool leak = !d.stacks.empty() && d.stacks.front().verdict == Verdict::kLeak;
    d.outcome = leak ? Outcome::kLeak : Outcome::kNoLeak;
  } else {
    auto outcome = ParseOutcome(proto.outcome());
    if (!outcome) {
      return absl::InvalidArgumentError(
          fmt::format("outcome: unknown outcome \"{}\" (expected leak, no_leak or inconclusive)",
                      proto.outcome()));
    }
    d.outcome = *outcome;
  }
  return d;
}

}  // namespace drip::diagnoser
