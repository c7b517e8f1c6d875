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

Json SiteInWindowJson(const std::optional<SiteInWindow>& w) {
  if (!w) return nullptr;
  Json j;
  j["verdict"] = std::string(VerdictName(w->verdict));
  j["rank"] = w->rank;
  j["live_bytes"] = w->live_bytes;
  j["live_allocs"] = w->live_allocs;
  j["growth_bytes_per_hour"] = w->growth_bytes_per_hour;
  j["sustained_bytes_per_hour"] = w->sustained_bytes_per_hour;
  j["allocated_bytes_per_hour"] = w->allocated_bytes_per_hour;
  return j;
}

}  // namespace

nlohmann::ordered_json SnapshotDiffToJson(const SnapshotDiff& diff) {
  Json sites = Json::array();
  for (const SiteChange& c : diff.sites) {
    Json frames = Json::array();
    for (const StackFrame& f : c.frames) frames.push_back(FrameJson(f));
    Json j;
    j["frames"] = std::move(frames);
    j["grew_bytes"] = c.grew_bytes;
    j["grew_objects"] = c.grew_objects;
    j["allocated_bytes"] = c.allocated_bytes;
    j["allocated_objects"] = c.allocated_objects;
    j["base"] = SiteInWindowJson(c.base);
    j["new"] = SiteInWindowJson(c.now);
    sites.push_back(std::move(j));
  }
  Json j;
  j["summary"] = diff.summary;
  j["base_end_ms"] = diff.base_end_ms;
  j["new_end_ms"] = diff.now_end_ms;
  j["grew_bytes"] = diff.grew_bytes;
  j["base_anon_bytes"] = diff.base_anon_bytes ? Json(*diff.base_anon_bytes) : Json(nullptr);
  j["new_anon_bytes"] = diff.now_anon_bytes ? Json(*diff.now_anon_bytes) : Json(nullptr);
  j["sites"] = std::move(sites);
  return j;
}

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
