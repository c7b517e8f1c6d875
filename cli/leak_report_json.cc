#include "cli/leak_report_json.h"

#include <tuple>

#include "analyzer/format/rollout_format.h"
#include "cli/stack_printer.h"
#include "cli/terminal_safe_text.h"
#include "diagnoser/format/diagnosis_json.h"

namespace drip::cli {
namespace {

nlohmann::ordered_json HostJson(const drip::v1::LeakHost& h) {
  nlohmann::ordered_json j;
  j["host"] = h.host();
  j["instance"] = h.instance();
  j["growth_bytes_per_hour"] = h.growth_bytes_per_hour();
  j["eta_to_oom_seconds"] =
      h.has_eta_to_oom_seconds() ? nlohmann::ordered_json(h.eta_to_oom_seconds()) : nullptr;
  j["current_bytes"] = h.current_bytes();
  j["normal_bytes"] = h.normal_bytes();
  j["limited_by"] = h.limited_by().empty() ? nullptr : nlohmann::ordered_json(h.limited_by());
  j["limit_bytes"] = h.limit_bytes() > 0 ? nlohmann::ordered_json(h.limit_bytes()) : nullptr;
  j["headroom_bytes"] =
      h.limited_by().empty() ? nullptr : nlohmann::ordered_json(h.headroom_bytes());
  j["oom_kills"] = h.oom_kills();
  j["first_flagged_s"] = h.first_flagged_s();
  j["last_flagged_s"] = h.last_flagged_s();
  j["active"] = h.active();
  j["rule"] = h.rule();
  j["reason"] = h.reason();
  j["snapshot_state"] = h.snapshot_state();
  j["snapshot_error"] = h.snapshot_error();
  j["version"] = h.version();
  j["previous_version"] = h.previous_version();
  j["began_at_version_change"] = h.began_at_version_change();
  return j;
}

nlohmann::ordered_json StateChangeJson(const drip::v1::StateChange& c) {
  nlohmann::ordered_json j;
  j["time_ms"] = c.time_ms();
  j["from"] = c.from();
  j["to"] = c.to();
  j["actor"] = c.actor();
  j["note"] = c.note();
  return j;
}

nlohmann::ordered_json MitigationJson(const drip::v1::MitigationRecord& m) {
  nlohmann::ordered_json j;
  j["command_id"] = m.command_id();
  j["requested_ms"] = m.requested_ms();
  j["finished_ms"] = m.finished_ms();
  j["host"] = m.host();
  j["action"] = m.action();
  j["target"] = m.target();
  j["dry_run"] = m.dry_run();
  j["outcome"] = m.outcome();
  j["detail"] = m.detail();
  j["actor"] = m.actor();
  return j;
}

}  // namespace

nlohmann::ordered_json LeakReportToJson(const drip::v1::LeakReport& r) {
  nlohmann::ordered_json j;
  j["id"] = r.id();
  j["component"] = r.component();
  j["state"] = r.state();
  j["severity"] = r.severity();
  j["first_seen_s"] = r.first_seen_s();
  j["last_seen_s"] = r.last_seen_s();
  j["updated_ms"] = r.updated_ms();
  nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
  for (const auto& h : r.hosts()) hosts.push_back(HostJson(h));
  j["hosts"] = std::move(hosts);
  j["hosts_seen"] = r.hosts_seen();
  j["max_growth_bytes_per_hour"] = r.max_growth_bytes_per_hour();
  j["rollout"] = analyzer::RolloutEvidenceToJson(r.rollout());
  j["min_eta_to_oom_seconds"] =
      r.has_min_eta_to_oom_seconds() ? nlohmann::ordered_json(r.min_eta_to_oom_seconds()) : nullptr;
  // Through the diagnoser's own JSON so that a report's stacks and `dripctl diagnose
  // --json`'s cannot drift apart.
  absl::StatusOr<diagnoser::Diagnosis> stacks = StacksFromProto(r.top_stacks());
  if (stacks.ok()) {
    j["top_stacks"] = diagnoser::DiagnosisToJson(*stacks)["stacks"];
  } else {
    j["top_stacks"] = nlohmann::ordered_json::array();
    j["top_stacks_error"] = std::string(stacks.status().message());
  }
  j["diagnosed_host"] = r.diagnosed_host();
  j["diagnosed_ms"] = r.diagnosed_ms();
  j["diagnosis_summary"] = r.diagnosis_summary();
  j["growth_explained"] = r.growth_explained();
  for (const auto& [key, ref, set] :
       {std::tuple("first_snapshot", &r.first_snapshot(), r.has_first_snapshot()),
        std::tuple("latest_snapshot", &r.latest_snapshot(), r.has_latest_snapshot())}) {
    if (!set) {
      j[key] = nullptr;
      continue;
    }
    nlohmann::ordered_json snapshot;
    snapshot["command_id"] = ref->command_id();
    snapshot["host"] = ref->host();
    snapshot["instance"] = ref->instance();
    snapshot["finished_ms"] = ref->finished_ms();
    snapshot["size_bytes"] = ref->size_bytes();
    j[key] = std::move(snapshot);
  }
  j["recommended_action"] = r.recommended_action();
  j["recommendation"] = r.recommendation();
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (const auto& c : r.history()) history.push_back(StateChangeJson(c));
  j["history"] = std::move(history);
  nlohmann::ordered_json mitigations = nlohmann::ordered_json::array();
  for (const auto& m : r.mitigations()) mitigations.push_back(MitigationJson(m));
  j["mitigations"] = std::move(mitigations);
  return j;
}

nlohmann::ordered_json AuditEntryToJson(const drip::v1::AuditEntry& e) {
  nlohmann::ordered_json j;
  j["id"] = e.id();
  j["time_ms"] = e.time_ms();
  j["actor"] = e.actor();
  j["report_id"] = e.report_id();
  j["component"] = e.component();
  j["host"] = e.host();
  j["action"] = e.action();
  j["target"] = e.target();
  j["dry_run"] = e.dry_run();
  j["outcome"] = e.outcome();
  j["detail"] = e.detail();
  j["command_id"] = e.command_id();
  return j;
}

std::string DumpJson(const nlohmann::ordered_json& json) { return DumpJsonForTerminal(json); }

}  // namespace drip::cli
