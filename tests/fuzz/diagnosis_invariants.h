// What every diagnosis must satisfy whatever snapshot it came from, checked by each fuzz
// target that runs the diagnoser (the snapshot JSON and proto readers, the diagnoser's
// own): at most max_stacks kept, finite figures, leaks ranked before everything else,
// scores in [0, 1], and a stored (proto) form that reads back.
#pragma once

#include <cmath>
#include <cstddef>

#include "diagnoser/diagnoser_config.h"
#include "diagnoser/format/diagnosis_proto.h"
#include "diagnoser/heap_diagnoser.h"
#include "drip/v1/snapshot.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace drip::fuzz {

inline void CheckDiagnosisInvariants(const diagnoser::Diagnosis& d,
                                     const diagnoser::DiagnoserConfig& config) {
  // max_stacks 0 means no limit (a config may say so).
  FUZZ_CHECK(config.max_stacks == 0 || d.stacks.size() <= static_cast<size_t>(config.max_stacks),
             "%zu stacks kept, max_stacks %d", d.stacks.size(), config.max_stacks);
  FUZZ_CHECK(std::isfinite(d.rss_growth_bytes_per_hour), "rss growth %g",
             d.rss_growth_bytes_per_hour);
  bool leaks_over = false;
  for (const diagnoser::DiagnosedStack& s : d.stacks) {
    const bool leak = s.verdict == diagnoser::Verdict::kLeak;
    FUZZ_CHECK(!(leak && leaks_over), "a leak ranked after a stack that is not a leak");
    leaks_over = !leak;
    FUZZ_CHECK(s.score >= 0 && s.score <= 1, "score %g", s.score);
    FUZZ_CHECK(std::isfinite(s.growth_bytes_per_hour) && std::isfinite(s.freed_fraction) &&
                   std::isfinite(s.steadiness) && std::isfinite(s.recent_growth_ratio),
               "figures of stack %llu: growth %g freed %g steadiness %g recent %g",
               static_cast<unsigned long long>(s.stack_id), s.growth_bytes_per_hour,
               s.freed_fraction, s.steadiness, s.recent_growth_ratio);
  }
  drip::v1::Diagnosis stored;
  diagnoser::DiagnosisToProto(d, &stored);
  const absl::StatusOr<diagnoser::Diagnosis> back = diagnoser::DiagnosisFromProto(stored);
  FUZZ_CHECK(back.ok(), "the stored diagnosis does not read back: %s",
             back.status().ToString().c_str());
  FUZZ_CHECK(back->stacks.size() == d.stacks.size(), "the stored diagnosis lost stacks");
}

}  // namespace drip::fuzz
