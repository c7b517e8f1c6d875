#include "collector/suspects_proto.h"

#include <string>

#include "diagnoser/format/diagnosis_proto.h"

namespace drip::collector {
namespace {

void SnapshotToProto(const SnapshotAttempt& attempt, drip::v1::SuspectSnapshot* out) {
  out->set_command_id(attempt.command_id);
  out->set_state(std::string(SnapshotStateName(attempt.state)));
  out->set_error(attempt.error);
  out->set_instance(attempt.instance);
  out->set_requested_ms(attempt.requested_ms);
  out->set_finished_ms(attempt.finished_ms);
  if (attempt.state == SnapshotAttempt::State::kDone) {
    diagnoser::DiagnosisToProto(attempt.diagnosis, out->mutable_diagnosis());
  }
}

}  // namespace

void FleetSuspectsToProto(const FleetSuspects& suspects, drip::v1::ListSuspectsResponse* out) {
  for (const HostSuspect& host : suspects.hosts) {
    const analyzer::Suspect& s = host.suspect;
    drip::v1::Suspect* suspect = out->add_suspects();
    suspect->set_host(s.host);
    suspect->set_component(s.component);
    suspect->set_instance(s.instance);
    suspect->set_process_instance(host.target_instance());
    suspect->set_first_flagged_s(s.first_flagged);
    suspect->set_last_updated_s(s.last_updated);
    suspect->set_growth_bytes_per_hour(s.growth_bytes_per_hour);
    suspect->set_score(s.score);
    suspect->set_current_bytes(s.current_bytes);
    suspect->set_normal_bytes(s.normal_bytes);
    if (s.eta_to_oom_seconds) suspect->set_eta_to_oom_seconds(*s.eta_to_oom_seconds);
    suspect->set_rule(analyzer::SuspectRuleName(s.rule));
    suspect->set_reason(s.reason);
    if (host.snapshot) SnapshotToProto(*host.snapshot, suspect->mutable_snapshot());
  }
  for (const analyzer::ComponentSuspect& c : suspects.components) {
    drip::v1::ComponentSuspect* component = out->add_components();
    component->set_component(c.component);
    component->set_first_flagged_s(c.first_flagged);
    component->set_hosts(c.hosts);
    component->set_hosts_seen(c.hosts_seen);
    component->set_max_growth_bytes_per_hour(c.max_growth_bytes_per_hour);
  }
}

}  // namespace drip::collector
