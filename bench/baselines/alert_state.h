// AlertState: the per-series flag of a baseline, with a Prometheus-style `for:` clause —
// a condition must hold at every evaluation for `for_s` before the series is flagged,
// the usual way operators keep a noisy alert rule from firing on a blip.
#pragma once

#include <cstdint>

namespace drip::bench {

class AlertState {
 public:
  // Evaluates the rule at `eval_t` (the time of the data point judged); `sample_t` is the
  // sample that triggered the evaluation, the time reported when the series is flagged.
  void Evaluate(bool condition, int64_t eval_t, int64_t sample_t, int64_t for_s) {
    if (flagged()) return;
    if (!condition) {
      pending_since_ = kNever;
      return;
    }
    if (pending_since_ == kNever) pending_since_ = eval_t;
    if (eval_t - pending_since_ >= for_s) first_flagged_ = sample_t;
  }

  bool flagged() const { return first_flagged_ != kNever; }
  int64_t first_flagged() const { return first_flagged_; }

 private:
  static constexpr int64_t kNever = INT64_MIN;
  int64_t pending_since_ = kNever;
  int64_t first_flagged_ = kNever;
};

}  // namespace drip::bench
