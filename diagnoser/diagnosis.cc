#include "diagnoser/diagnosis.h"

#include "fmt/format.h"

namespace drip::diagnoser {

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kLeak:
      return "leak";
    case Verdict::kCache:
      return "cache";
    case Verdict::kStartup:
      return "startup";
    case Verdict::kTransient:
      return "transient";
    case Verdict::kInconclusive:
      return "inconclusive";
  }
  return "transient";
}

std::optional<Verdict> ParseVerdict(std::string_view name) {
  for (Verdict v : {Verdict::kLeak, Verdict::kCache, Verdict::kStartup, Verdict::kTransient,
                    Verdict::kInconclusive}) {
    if (VerdictName(v) == name) return v;
  }
  return std::nullopt;
}

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kLeak:
      return "leak";
    case Outcome::kNoLeak:
      return "no_leak";
    case Outcome::kInconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

std::optional<Outcome> ParseOutcome(std::string_view name) {
  for (Outcome o : {Outcome::kLeak, Outcome::kNoLeak, Outcome::kInconclusive}) {
    if (OutcomeName(o) == name) return o;
  }
  return std::nullopt;
}

std::string FrameLabel(const StackFrame& frame) {
  if (!frame.function.empty()) {
    if (frame.file.empty()) return frame.function;
    std::string_view file = frame.file;
    if (auto slash = file.rfind('/'); slash != std::string_view::npos)
      file.remove_prefix(slash + 1);
    if (frame.line > 0) return fmt::format("{} ({}:{})", frame.function, file, frame.line);
    return fmt::format("{} ({})", frame.function, file);
  }
  if (!frame.module.empty()) {
    std::string_view module = frame.module;
    if (auto slash = module.rfind('/'); slash != std::string_view::npos) {
      module.remove_prefix(slash + 1);
    }
    return fmt::format("{}+{:#x}", module, frame.module_offset);
  }
  return fmt::format("{:#x}", frame.address);
}

}  // namespace drip::diagnoser
