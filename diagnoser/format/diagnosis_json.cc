#include "diagnoser/format/diagnosis_json.h"

namespace drip::diagnoser {
namespace {

using Json = nlohmann::ordered_json;

Json FrameJson(const StackFrame& f) {
  Json j;
  j["function"] = f.function;
  j["module"] = f.module;
  j["file"] = f.file;
  j["line"] = f.line;
  j["build_id"] = f.build_id;
  j["module_offset"] = f.module_offset;
  j["address"] = f.address;
  return j;
}

}  // namespace

nlohmann::ordered_json DiagnosisToJson(const Diagnosis& d) {
  Json stacks = Json::array();
  for (const DiagnosedStack& s : d.stacks) {
    Json frames = Json::array();
    for (const StackFrame& f : s.frames) frames.push_back(FrameJson(f));
    Json j;
    j["frames"] = std::move(frames);
    j["live_bytes"] = s.live_bytes;
    j["live_allocs"] = s.live_allocs;
    j["growth_bytes_per_hour"] = s.growth_bytes_per_hour;
    j["score"] = s.score;
    j["verdict"] = std::string(VerdictName(s.verdict));
    j["reason"] = s.reason;
    j["stack_id"] = s.stack_id;
    j["sampled_allocs"] = s.sampled_allocs;
    j["freed_fraction"] = s.freed_fraction;
    j["steadiness"] = s.steadiness;
    j["recent_growth_ratio"] = s.recent_growth_ratio;
    stacks.push_back(std::move(j));
  }
  Json out;
  out["stacks"] = std::move(stacks);
  out["rss_growth_bytes_per_hour"] = d.rss_growth_bytes_per_hour;
  out["outcome"] = std::string(OutcomeName(d.outcome));
  out["summary"] = d.summary;
  out["next_step"] = d.next_step;
  return out;
}

}  // namespace drip::diagnoser
