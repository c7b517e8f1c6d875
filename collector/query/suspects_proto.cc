#include "collector/query/suspects_proto.h"

#include <string>

#include "diagnoser/format/diagnosis_proto.h"
#include "fmt/format.h"

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

absl::StatusOr<SnapshotAttempt> SnapshotFromProto(const drip::v1::SuspectSnapshot& proto) {
  SnapshotAttempt attempt;
  attempt.command_id = proto.command_id();
  bool known = false;
  for (SnapshotAttempt::State state :
       {SnapshotAttempt::State::kPending, SnapshotAttempt::State::kDone,
        SnapshotAttempt::State::kFailed}) {
    if (proto.state() == SnapshotStateName(state)) {
      attempt.state = state;
      known = true;
    }
  }
  if (!known) {
    return absl::InvalidArgumentError(fmt::format("snapshot.state: unknown \"{}\"", proto.state()));
  }
  attempt.error = proto.error();
  attempt.instance = proto.instance();
  attempt.requested_ms = proto.requested_ms();
  attempt.finished_ms = proto.finished_ms();
  if (attempt.state == SnapshotAttempt::State::kDone) {
    absl::StatusOr<diagnoser::Diagnosis> diagnosis =
        diagnoser::DiagnosisFromProto(proto.diagnosis());
    if (!diagnosis.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("snapshot.diagnosis: {}", std::string(diagnosis.status().message())));
    }
    attempt.diagnosis = std::move(*diagnosis);
  }
  return attempt;
}

absl::StatusOr<HostSuspect> SuspectFromProto(const drip::v1::Suspect& proto) {
  HostSuspect host;
  analyzer::Suspect& s = host.suspect;
  s.host = proto.host();
  s.component = proto.component();
  s.instance = proto.instance();
  if (proto.process_instance() != proto.instance()) {
    host.process_instance = proto.process_instance();
  }
  s.first_flagged = proto.first_flagged_s();
  s.last_updated = proto.last_updated_s();
  s.growth_since = proto.growth_since_s();
  s.growth_bytes_per_hour = proto.growth_bytes_per_hour();
  s.score = proto.score();
  s.current_bytes = proto.current_bytes();
  s.normal_bytes = proto.normal_bytes();
  if (proto.has_eta_to_oom_seconds()) s.eta_to_oom_seconds = proto.eta_to_oom_seconds();
  s.limited_by = proto.limited_by();
  s.limit_bytes = proto.limit_bytes();
  s.headroom_bytes = proto.headroom_bytes();
  s.oom_kills = proto.oom_kills();
  std::optional<analyzer::SuspectRule> rule = analyzer::SuspectRuleFromName(proto.rule());
  if (!rule) {
    return absl::InvalidArgumentError(
        fmt::format("suspect of host {}: rule: unknown \"{}\"", proto.host(), proto.rule()));
  }
  s.rule = *rule;
  s.reason = proto.reason();
  if (proto.has_snapshot()) {
    absl::StatusOr<SnapshotAttempt> snapshot = SnapshotFromProto(proto.snapshot());
    if (!snapshot.ok()) {
      return absl::InvalidArgumentError(fmt::format("suspect of host {}: {}", proto.host(),
                                                    std::string(snapshot.status().message())));
    }
    host.snapshot = std::move(*snapshot);
  }
  return host;
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
    suspect->set_growth_since_s(s.growth_since);
    suspect->set_growth_bytes_per_hour(s.growth_bytes_per_hour);
    suspect->set_score(s.score);
    suspect->set_current_bytes(s.current_bytes);
    suspect->set_normal_bytes(s.normal_bytes);
    if (s.eta_to_oom_seconds) suspect->set_eta_to_oom_seconds(*s.eta_to_oom_seconds);
    suspect->set_limited_by(s.limited_by);
    suspect->set_limit_bytes(s.limit_bytes);
    suspect->set_headroom_bytes(s.headroom_bytes);
    suspect->set_oom_kills(s.oom_kills);
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

FleetSuspects FleetSuspectsFromProto(const drip::v1::ListSuspectsResponse& response,
                                     std::vector<std::string>* skipped) {
  FleetSuspects out;
  for (const drip::v1::Suspect& proto : response.suspects()) {
    absl::StatusOr<HostSuspect> read = SuspectFromProto(proto);
    if (read.ok()) {
      out.hosts.push_back(std::move(*read));
    } else if (skipped != nullptr) {
      skipped->push_back(std::string(read.status().message()));
    }
  }
  for (const drip::v1::ComponentSuspect& proto : response.components()) {
    analyzer::ComponentSuspect& c = out.components.emplace_back();
    c.component = proto.component();
    c.first_flagged = proto.first_flagged_s();
    c.hosts = proto.hosts();
    c.hosts_seen = proto.hosts_seen();
    c.max_growth_bytes_per_hour = proto.max_growth_bytes_per_hour();
  }
  return out;
}

}  // namespace drip::collector
