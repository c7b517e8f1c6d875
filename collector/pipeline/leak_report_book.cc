#include "collector/pipeline/leak_report_book.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "analyzer/format/rollout_format.h"
#include "common/base/duration.h"
#include "common/base/status_macros.h"
#include "common/daemon/logging.h"
#include "diagnoser/format/diagnosis_proto.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

constexpr std::string_view kReportIdPrefix = "leak-";
constexpr char kCollectorActor[] = "collector";

bool IsResolved(const drip::v1::LeakReport& r) {
  return ReportStateOf(r) == drip::v1::REPORT_STATE_RESOLVED;
}

// Marks a change. The stamp only moves forward, even when this collector's clock is behind
// the one of the member that wrote the report before it: members order a report's
// versions by it (LeakReportBook::Adopt).
void Touch(drip::v1::LeakReport* r, int64_t now_ms) {
  const int64_t next = r->updated_ms() < std::numeric_limits<int64_t>::max()
                           ? r->updated_ms() + 1
                           : r->updated_ms();  // saturates: never wraps to the past
  r->set_updated_ms(std::max(now_ms, next));
}

int SeverityRank(const std::string& severity) {
  if (severity == "critical") return 0;
  if (severity == "warning") return 1;
  return 2;
}

// Shortest ETA first (unknown last), then fastest growth: the order on-call acts in.
bool MoreUrgent(const drip::v1::LeakHost& a, const drip::v1::LeakHost& b) {
  if (a.active() != b.active()) return a.active();
  if (a.has_eta_to_oom_seconds() != b.has_eta_to_oom_seconds()) {
    return a.has_eta_to_oom_seconds();
  }
  if (a.has_eta_to_oom_seconds() && a.eta_to_oom_seconds() != b.eta_to_oom_seconds()) {
    return a.eta_to_oom_seconds() < b.eta_to_oom_seconds();
  }
  return a.growth_bytes_per_hour() > b.growth_bytes_per_hour();
}

// A snapshot watches minutes; the detector has watched the host for hours. Set side by side,
// a leak verdict that explains the long-term growth is confirmed, one that explains a
// fraction of it says there is more to find, and a diagnosis with no leak says the snapshot
// missed what the detector sees.
std::string GrowthExplained(const drip::v1::LeakReport& r, int64_t now_ms) {
  if (r.top_stacks_size() == 0) return "";
  const drip::v1::LeakHost* host = nullptr;
  for (const drip::v1::LeakHost& h : r.hosts()) {
    if (h.host() == r.diagnosed_host()) host = &h;
  }
  if (host == nullptr || host->growth_bytes_per_hour() <= 0) return "";
  double leaking = 0;
  for (const drip::v1::DiagnosedStack& s : r.top_stacks()) {
    if (s.verdict() == "leak") leaking += std::max(0.0, s.growth_bytes_per_hour());
  }
  const double growth = host->growth_bytes_per_hour();
  const int64_t since_s =
      host->growth_since_s() > 0 ? host->growth_since_s() : host->first_flagged_s();
  const std::string measured = fmt::format(
      "the {} the detector measured on {}{}", FormatByteRate(growth), host->host(),
      since_s > 0 && now_ms / 1000 > since_s
          ? fmt::format(" over {}", FormatSpan(static_cast<double>(now_ms / 1000 - since_s)))
          : std::string());
  if (leaking <= 0) {
    return fmt::format("no leaking stack in the snapshot explains {}", measured);
  }
  const double share = leaking / growth;
  if (share >= 0.5) {
    return fmt::format("the leaking stacks grow {}: {:.0f}% of {}", FormatByteRate(leaking),
                       std::min(share, 9.99) * 100, measured);
  }
  return fmt::format(
      "the leaking stacks grow {}: only {:.0f}% of {}; the rest is not in this snapshot",
      FormatByteRate(leaking), share * 100, measured);
}

// What to do about a leak of `component` under `policy`, for on-call to read.
std::pair<std::string, std::string> Recommend(const std::string& id, const std::string& component,
                                              const MitigationPolicy& policy) {
  std::string action = policy.action;
  if (action == mitigation_action::kRecommend) {
    // The policy only recommends: name the action that fits the component.
    action = component.starts_with("svc:") ? std::string(mitigation_action::kRestartUnit)
                                           : std::string(mitigation_action::kSignalProcess);
  }
  std::string how =
      policy.automatic
          ? fmt::format(
                "automatic policy: {}{} on hosts whose ETA to OOM falls below {}, at most "
                "{:.0f}% of the component's hosts per {}",
                policy.action, policy.dry_run ? " (dry-run)" : "",
                FormatDuration(policy.trigger_eta), policy.max_host_fraction * 100,
                FormatDuration(policy.cooldown))
          : std::string("manual policy: nothing happens until on-call acts");
  std::string what =
      action == mitigation_action::kRestartUnit
          ? fmt::format("restart {} on the hosts closest to OOM to reclaim the leaked memory",
                        component.substr(4))
          : fmt::format("restart the leaking process ({}) on the hosts closest to OOM", component);
  return {action, fmt::format("{}: `dripctl mitigate {} --action {} --dry-run` first; {}. The "
                              "leak comes back until the leaking code is fixed.",
                              what, id, action, how)};
}

}  // namespace

uint64_t ReportNumber(const std::string& id) {
  if (!id.starts_with(kReportIdPrefix)) return 0;
  // leak-<n>, or leak-<member>-<n> in a cluster: the number is what follows the last '-'.
  uint64_t n = 0;
  for (size_t i = id.rfind('-') + 1; i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9' || n > UINT64_MAX / 10 - 10) return 0;
    n = n * 10 + static_cast<uint64_t>(id[i] - '0');
  }
  return n;
}

LeakReportBook::LeakReportBook(const ReportPolicy& policy, const MitigationConfig* mitigation,
                               ReportStore* store, const InstanceVersionBook* versions)
    : policy_(policy), mitigation_(mitigation), store_(store), versions_(versions) {}

absl::Status LeakReportBook::Load() {
  absl::StatusOr<std::vector<drip::v1::LeakReport>> stored = store_->LoadReports();
  if (!stored.ok()) return stored.status();
  std::lock_guard<std::mutex> lock(mu_);
  for (drip::v1::LeakReport& r : *stored) {
    next_number_ = std::max(next_number_, ReportNumber(r.id()) + 1);
    std::string id = r.id();
    reports_[id] = std::move(r);
  }
  return absl::OkStatus();
}

drip::v1::LeakReport* LeakReportBook::FindUnresolvedLocked(const std::string& component) {
  for (auto& [id, r] : reports_) {
    if (r.component() == component && !IsResolved(r)) return &r;
  }
  return nullptr;
}

drip::v1::LeakReport* LeakReportBook::OpenLocked(const std::string& component, int64_t now_ms,
                                                 std::vector<drip::v1::AuditEntry>* audit) {
  const std::string id =
      policy_.id_scope.empty()
          ? fmt::format("{}{}", kReportIdPrefix, next_number_++)
          : fmt::format("{}{}-{}", kReportIdPrefix, policy_.id_scope, next_number_++);
  drip::v1::LeakReport& r = reports_[id];
  r.set_id(id);
  r.set_component(component);
  SetReportState(&r, drip::v1::REPORT_STATE_OPEN);
  drip::v1::StateChange* change = r.add_history();
  change->set_time_ms(now_ms);
  change->set_to(r.state());
  change->set_actor(kCollectorActor);
  change->set_note("the detector suspects the component of leaking");
  drip::v1::AuditEntry& entry = audit->emplace_back();
  entry.set_time_ms(now_ms);
  entry.set_actor(kCollectorActor);
  entry.set_report_id(id);
  entry.set_component(component);
  entry.set_action("open");
  entry.set_outcome("done");
  counts_.opened++;
  Logger("collector")->warn("leak report {} opened for {}", id, component);
  return &r;
}

void LeakReportBook::ChangeStateLocked(drip::v1::LeakReport* r, drip::v1::ReportState state,
                                       const std::string& actor, const std::string& note,
                                       int64_t now_ms, std::vector<drip::v1::AuditEntry>* audit) {
  const std::string_view to = ReportStateName(state);
  drip::v1::StateChange* change = r->add_history();
  change->set_time_ms(now_ms);
  change->set_from(r->state());
  change->set_to(std::string(to));
  change->set_actor(actor);
  change->set_note(note);
  drip::v1::AuditEntry& entry = audit->emplace_back();
  entry.set_time_ms(now_ms);
  entry.set_actor(actor);
  entry.set_report_id(r->id());
  entry.set_component(r->component());
  entry.set_action(state == drip::v1::REPORT_STATE_ACKNOWLEDGED ? "ack"
                   : state == drip::v1::REPORT_STATE_RESOLVED
                       ? (actor == kCollectorActor ? "auto-resolve" : "resolve")
                       : std::string(to));
  entry.set_outcome("done");
  entry.set_detail(fmt::format("{} -> {}{}{}", r->state(), to, note.empty() ? "" : ": ", note));
  SetReportState(r, state);
  Touch(r, now_ms);
  if (state == drip::v1::REPORT_STATE_RESOLVED) counts_.resolved++;
  dirty_.insert(r->id());
  Logger("collector")
      ->warn("leak report {} ({}) is {} now ({}{}{})", r->id(), r->component(), to, actor,
             note.empty() ? "" : ": ", note);
}

void LeakReportBook::RefreshDerivedLocked(drip::v1::LeakReport* r, int64_t now_ms) const {
  std::sort(r->mutable_hosts()->begin(), r->mutable_hosts()->end(), MoreUrgent);
  r->set_max_growth_bytes_per_hour(0);
  r->clear_min_eta_to_oom_seconds();
  int64_t first_seen = 0;
  for (const drip::v1::LeakHost& h : r->hosts()) {
    if (first_seen == 0 || h.first_flagged_s() < first_seen) first_seen = h.first_flagged_s();
    if (!h.active()) continue;
    r->set_max_growth_bytes_per_hour(
        std::max(r->max_growth_bytes_per_hour(), h.growth_bytes_per_hour()));
    if (h.has_eta_to_oom_seconds() && (!r->has_min_eta_to_oom_seconds() ||
                                       h.eta_to_oom_seconds() < r->min_eta_to_oom_seconds())) {
      r->set_min_eta_to_oom_seconds(h.eta_to_oom_seconds());
    }
  }
  r->set_first_seen_s(first_seen);
  const double critical = std::chrono::duration<double>(policy_.critical_eta).count();
  const double warning = std::chrono::duration<double>(policy_.warning_eta).count();
  if (r->has_min_eta_to_oom_seconds() && r->min_eta_to_oom_seconds() < critical) {
    r->set_severity("critical");
  } else if (r->has_min_eta_to_oom_seconds() && r->min_eta_to_oom_seconds() < warning) {
    r->set_severity("warning");
  } else {
    r->set_severity("info");
  }
  auto [action, text] = Recommend(r->id(), r->component(), mitigation_->For(r->component()));
  r->set_recommended_action(action);
  r->set_recommendation(text);
  r->set_growth_explained(GrowthExplained(*r, now_ms));
}

void LeakReportBook::CorrelateVersionsLocked(drip::v1::LeakReport* r) const {
  if (versions_ == nullptr) return;
  std::vector<analyzer::LeakingHost> leaking;
  for (const drip::v1::LeakHost& h : r->hosts()) {
    if (!h.active()) continue;
    leaking.push_back(
        {h.host(), h.first_flagged_s(), h.growth_since_s(),
         h.rule() == analyzer::SuspectRuleName(analyzer::SuspectRule::kRestartReset)});
  }
  // A report whose hosts stopped leaking keeps the evidence it had.
  if (leaking.empty()) return;
  const analyzer::RolloutFinding finding =
      analyzer::CorrelateRollout(versions_->Fleet(r->component()), leaking);
  analyzer::RolloutFindingToProto(finding, r->mutable_rollout());
  for (drip::v1::LeakHost& h : *r->mutable_hosts()) {
    for (const analyzer::HostVersionFinding& f : finding.hosts) {
      if (f.host != h.host()) continue;
      h.set_version(f.version);
      h.set_previous_version(f.previous_version);
      h.set_began_at_version_change(f.began_at_change);
    }
  }
}

void LeakReportBook::Update(int64_t now_ms, const FleetSuspects& suspects) {
  std::map<std::string, std::vector<const HostSuspect*>> by_component;
  for (const HostSuspect& s : suspects.hosts) by_component[s.suspect.component].push_back(&s);
  std::map<std::string, int32_t> hosts_seen;
  for (const analyzer::ComponentSuspect& c : suspects.components) {
    hosts_seen[c.component] = c.hosts_seen;
  }

  const int64_t now_s = now_ms / 1000;
  const int64_t quiet_s = policy_.quiet_after.count() / 1000;
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<drip::v1::AuditEntry> audit;
  std::set<std::string> touched;
  // A clustered book judges nothing until it is told what it owns: another member may own
  // the component, and this one has not read the cluster's reports yet.
  const bool judging = policy_.id_scope.empty() || owns_;
  for (const auto& [component, list] : by_component) {
    if (!judging || !OwnsLocked(component)) continue;
    drip::v1::LeakReport* r = FindUnresolvedLocked(component);
    if (r == nullptr) {
      // A new report needs a host still leaking, with evidence newer than the last time a
      // report of the component was resolved: the detector keeps a suspect's last figures
      // after its growth stops, and those must not reopen what was resolved.
      int64_t resolved_at_s = 0;
      for (const auto& [id, old] : reports_) {
        if (old.component() != component || old.history().empty()) continue;
        resolved_at_s =
            std::max(resolved_at_s, old.history(old.history_size() - 1).time_ms() / 1000);
      }
      const bool fresh = std::any_of(list.begin(), list.end(), [&](const HostSuspect* s) {
        return s->suspect.last_updated > resolved_at_s &&
               now_s - s->suspect.last_updated <= quiet_s;
      });
      if (!fresh) continue;
      r = OpenLocked(component, now_ms, &audit);
    }
    const std::string before = r->SerializeAsString();
    touched.insert(r->id());
    for (drip::v1::LeakHost& h : *r->mutable_hosts()) h.set_active(false);
    for (const HostSuspect* hs : list) {
      const analyzer::Suspect& s = hs->suspect;
      drip::v1::LeakHost* h = nullptr;
      for (drip::v1::LeakHost& existing : *r->mutable_hosts()) {
        if (existing.host() == s.host) h = &existing;
      }
      if (h == nullptr) {
        h = r->add_hosts();
        h->set_host(s.host);
        h->set_first_flagged_s(s.first_flagged);
      }
      h->set_instance(hs->target_instance());
      h->set_growth_bytes_per_hour(s.growth_bytes_per_hour);
      if (s.eta_to_oom_seconds) {
        h->set_eta_to_oom_seconds(*s.eta_to_oom_seconds);
      } else {
        h->clear_eta_to_oom_seconds();
      }
      h->set_current_bytes(s.current_bytes);
      h->set_normal_bytes(s.normal_bytes);
      h->set_limited_by(s.limited_by);
      h->set_limit_bytes(s.limit_bytes);
      h->set_headroom_bytes(s.headroom_bytes);
      h->set_oom_kills(s.oom_kills);
      h->set_first_flagged_s(std::min(h->first_flagged_s(), s.first_flagged));
      h->set_last_flagged_s(s.last_updated);
      h->set_growth_since_s(s.growth_since);
      h->set_active(now_s - s.last_updated <= quiet_s);
      h->set_rule(analyzer::SuspectRuleName(s.rule));
      h->set_reason(s.reason);
      const std::optional<SnapshotAttempt>& snapshot = hs->snapshot;
      h->set_snapshot_state(snapshot ? std::string(SnapshotStateName(snapshot->state)) : "");
      h->set_snapshot_error(snapshot ? snapshot->error : "");
      if (snapshot && snapshot->state == SnapshotAttempt::State::kDone &&
          snapshot->finished_ms > r->diagnosed_ms()) {
        drip::v1::Diagnosis d;
        diagnoser::DiagnosisToProto(snapshot->diagnosis, &d);
        r->clear_top_stacks();
        for (int i = 0; i < d.stacks_size() && static_cast<uint64_t>(i) < policy_.max_stacks; ++i) {
          *r->add_top_stacks() = std::move(*d.mutable_stacks(i));
        }
        r->set_diagnosed_host(s.host);
        r->set_diagnosed_ms(snapshot->finished_ms);
        r->set_diagnosis_summary(d.summary());
      }
      if (snapshot && snapshot->state == SnapshotAttempt::State::kDone) {
        KeepSnapshotLocked(r, s.host, *snapshot);
      }
    }
    if (auto it = hosts_seen.find(component); it != hosts_seen.end()) {
      r->set_hosts_seen(std::max(it->second, r->hosts_size()));
    }
    for (const drip::v1::LeakHost& h : r->hosts()) {
      r->set_last_seen_s(std::max(r->last_seen_s(), h.last_flagged_s()));
    }
    CorrelateVersionsLocked(r);
    RefreshDerivedLocked(r, now_ms);
    // Written through when anything changed (evidence moves once per detector epoch).
    if (r->SerializeAsString() != before) {
      Touch(r, now_ms);
      dirty_.insert(r->id());
    }
  }
  // Reports whose hosts have all gone quiet: hosts inactive, then resolved.
  for (auto& [id, r] : reports_) {
    if (IsResolved(r) || !judging || !OwnsLocked(r.component())) continue;
    if (!touched.contains(id)) {
      bool was_active = false;
      for (drip::v1::LeakHost& h : *r.mutable_hosts()) {
        was_active |= h.active();
        h.set_active(false);
      }
      if (was_active) {
        RefreshDerivedLocked(&r, now_ms);
        Touch(&r, now_ms);
        dirty_.insert(id);
      }
    }
    const bool any_active = std::any_of(r.hosts().begin(), r.hosts().end(),
                                        [](const drip::v1::LeakHost& h) { return h.active(); });
    if (!any_active && now_s - r.last_seen_s() >= policy_.resolve_after.count() / 1000) {
      ChangeStateLocked(&r, drip::v1::REPORT_STATE_RESOLVED, kCollectorActor,
                        fmt::format("no host suspected for {}: the growth stopped",
                                    FormatDuration(policy_.resolve_after)),
                        now_ms, &audit);
    }
  }
  if (!dirty_.empty() || !audit.empty() || !pending_audit_.empty()) {
    IgnoreError(FlushLocked(&audit));  // logged, counted and retried next pass
  }
}

void LeakReportBook::KeepSnapshotLocked(drip::v1::LeakReport* r, const std::string& host,
                                        const SnapshotAttempt& attempt) {
  if (attempt.snapshot == nullptr) return;  // long kept, or never sent (an older agent)
  const drip::v1::SnapshotRef& first = r->first_snapshot();
  const drip::v1::SnapshotRef& latest = r->latest_snapshot();
  if (attempt.command_id == first.command_id() || attempt.command_id == latest.command_id() ||
      attempt.finished_ms <= latest.finished_ms()) {
    return;
  }
  drip::v1::SnapshotRef ref;
  ref.set_command_id(attempt.command_id);
  ref.set_host(host);
  ref.set_instance(attempt.instance);
  ref.set_finished_ms(attempt.finished_ms);
  ref.set_size_bytes(attempt.snapshot->size());
  const bool same_process =
      r->has_first_snapshot() && first.host() == host && first.instance() == attempt.instance;
  // The pair stays on one process while the report still follows it on its host: a diff
  // needs two snapshots of one process.
  const bool first_followed =
      r->has_first_snapshot() &&
      std::any_of(r->hosts().begin(), r->hosts().end(), [&](const drip::v1::LeakHost& h) {
        return h.host() == first.host() && h.instance() == first.instance();
      });
  if (same_process) {
    *r->mutable_latest_snapshot() = ref;
    pending_snapshots_[{r->id(), false}] = attempt.snapshot;
  } else if (!first_followed) {
    *r->mutable_first_snapshot() = ref;
    *r->mutable_latest_snapshot() = std::move(ref);
    pending_snapshots_[{r->id(), true}] = attempt.snapshot;
    pending_snapshots_.erase({r->id(), false});
  } else {
    return;
  }
  dirty_.insert(r->id());
}

absl::StatusOr<std::string> LeakReportBook::Snapshot(const std::string& id, bool first) const {
  bool in_first_place = first;
  drip::v1::SnapshotRef ref;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = reports_.find(id);
    if (it == reports_.end() || !OwnsLocked(it->second.component())) {
      return absl::NotFoundError(fmt::format("no leak report {} here", id));
    }
    const drip::v1::LeakReport& r = it->second;
    if (!r.has_first_snapshot()) {
      return absl::NotFoundError(fmt::format(
          "leak report {} has no heap snapshot yet: none of its hosts' snapshots was diagnosed "
          "(dripctl leaks show {} lists each host's snapshot state)",
          id, id));
    }
    // While there is one snapshot it is both, and kept once, as the first.
    in_first_place = first || r.latest_snapshot().command_id() == r.first_snapshot().command_id();
    ref = first ? r.first_snapshot() : r.latest_snapshot();
    if (auto p = pending_snapshots_.find({id, in_first_place}); p != pending_snapshots_.end()) {
      return *p->second;
    }
  }
  // Outside the lock: a snapshot is megabytes read from disk.
  absl::StatusOr<std::string> bytes = store_->ReadSnapshot(id, in_first_place);
  if (bytes.status().code() == absl::StatusCode::kNotFound) {
    // A report adopted from another member of a cluster: its snapshots stay on the disk of
    // the member that owned it when they were taken.
    return absl::NotFoundError(fmt::format(
        "leak report {}'s {} heap snapshot ({} of {}) is not stored on this collector: the "
        "member that owned the report when it was taken keeps it",
        id, first ? "first" : "latest", ref.command_id(), ref.host()));
  }
  return bytes;
}

absl::Status LeakReportBook::FlushLocked(std::vector<drip::v1::AuditEntry>* audit) {
  // Entries of a failed write wait here for the next one: the audit log loses nothing.
  const size_t first_new = pending_audit_.size();
  for (drip::v1::AuditEntry& e : *audit) pending_audit_.push_back(std::move(e));
  std::vector<drip::v1::LeakReport> changed;
  for (const std::string& id : dirty_) changed.push_back(reports_[id]);
  std::vector<ReportSnapshot> snapshots;
  for (const auto& [place, bytes] : pending_snapshots_) {
    snapshots.push_back({place.first, place.second, bytes});
  }
  absl::Status s = store_->Write(changed, snapshots, &pending_audit_);
  if (!s.ok()) {
    audit->assign(pending_audit_.begin() + static_cast<std::ptrdiff_t>(first_new),
                  pending_audit_.end());
    counts_.store_errors++;
    Logger("collector")
        ->error("writing {} leak reports and {} audit entries (kept, retried next pass): {}",
                changed.size(), pending_audit_.size(), std::string(s.message()));
    return s;
  }
  audit->assign(pending_audit_.begin() + static_cast<std::ptrdiff_t>(first_new),
                pending_audit_.end());
  pending_audit_.clear();
  pending_snapshots_.clear();
  dirty_.clear();
  return absl::OkStatus();
}

absl::StatusOr<drip::v1::LeakReport> LeakReportBook::Get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = reports_.find(id);
  if (it == reports_.end() || !OwnsLocked(it->second.component())) {
    return absl::NotFoundError(
        fmt::format("no leak report {} (dripctl leaks list --state all "
                    "shows every report)",
                    id));
  }
  return it->second;
}

std::vector<drip::v1::LeakReport> LeakReportBook::List(const std::string& state,
                                                       const std::string& component) const {
  std::vector<drip::v1::LeakReport> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, r] : reports_) {
      if (!component.empty() && r.component() != component) continue;
      if (!OwnsLocked(r.component())) continue;
      if (state.empty() ? IsResolved(r) : (state != "all" && r.state() != state)) continue;
      out.push_back(r);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (IsResolved(a) != IsResolved(b)) return !IsResolved(a);
    if (SeverityRank(a.severity()) != SeverityRank(b.severity())) {
      return SeverityRank(a.severity()) < SeverityRank(b.severity());
    }
    if (a.last_seen_s() != b.last_seen_s()) return a.last_seen_s() > b.last_seen_s();
    return ReportNumber(a.id()) > ReportNumber(b.id());
  });
  return out;
}

absl::StatusOr<drip::v1::LeakReport> LeakReportBook::SetState(const std::string& id,
                                                              const std::string& state,
                                                              const std::string& actor,
                                                              const std::string& note,
                                                              int64_t now_ms) {
  const drip::v1::ReportState to = ParseReportState(state);
  if (to != drip::v1::REPORT_STATE_ACKNOWLEDGED && to != drip::v1::REPORT_STATE_RESOLVED) {
    return absl::InvalidArgumentError(fmt::format(
        "state: '{}' cannot be set by hand (acknowledged or resolved; the collector sets open "
        "and mitigated)",
        state));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = reports_.find(id);
  if (it == reports_.end() || !OwnsLocked(it->second.component())) {
    return absl::NotFoundError(fmt::format("no leak report {}", id));
  }
  drip::v1::LeakReport& r = it->second;
  if (IsResolved(r)) {
    return absl::FailedPreconditionError(
        fmt::format("leak report {} is resolved already; a new leak opens a new report", id));
  }
  if (ReportStateOf(r) == to) return r;
  if (to == drip::v1::REPORT_STATE_ACKNOWLEDGED &&
      ReportStateOf(r) == drip::v1::REPORT_STATE_MITIGATED) {
    return absl::FailedPreconditionError(
        fmt::format("leak report {} is mitigated already, which implies acknowledged", id));
  }
  std::vector<drip::v1::AuditEntry> audit;
  ChangeStateLocked(&r, to, actor, note, now_ms, &audit);
  if (on_change_between_passes_) on_change_between_passes_();
  if (absl::Status s = FlushLocked(&audit); !s.ok()) {
    return absl::UnavailableError(fmt::format(
        "the state change is applied but not stored yet (retried): {}", std::string(s.message())));
  }
  return r;
}

absl::StatusOr<drip::v1::AuditEntry> LeakReportBook::RecordMitigation(
    const std::string& report_id, const drip::v1::MitigationRecord& record,
    drip::v1::AuditEntry entry, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = reports_.find(report_id);
  if (it == reports_.end()) return absl::NotFoundError(fmt::format("no leak report {}", report_id));
  drip::v1::LeakReport& r = it->second;
  drip::v1::MitigationRecord* slot = nullptr;
  for (drip::v1::MitigationRecord& m : *r.mutable_mitigations()) {
    if (!record.command_id().empty() && m.command_id() == record.command_id()) slot = &m;
  }
  if (slot == nullptr) slot = r.add_mitigations();
  *slot = record;
  Touch(&r, now_ms);
  dirty_.insert(report_id);
  std::vector<drip::v1::AuditEntry> audit = {std::move(entry)};
  if (record.outcome() == "succeeded" && !record.dry_run() &&
      (ReportStateOf(r) == drip::v1::REPORT_STATE_OPEN ||
       ReportStateOf(r) == drip::v1::REPORT_STATE_ACKNOWLEDGED)) {
    ChangeStateLocked(&r, drip::v1::REPORT_STATE_MITIGATED, record.actor(),
                      fmt::format("{} on {}: {}", record.action(), record.host(), record.detail()),
                      now_ms, &audit);
  }
  if (on_change_between_passes_) on_change_between_passes_();
  absl::Status s = FlushLocked(&audit);
  if (!s.ok()) return s;
  return audit.front();
}

absl::Status LeakReportBook::Audit(std::vector<drip::v1::AuditEntry>* entries) {
  std::lock_guard<std::mutex> lock(mu_);
  return FlushLocked(entries);
}

LeakReportBook::Counts LeakReportBook::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void LeakReportBook::SetOwnership(std::function<bool(const std::string& component)> owns) {
  std::lock_guard<std::mutex> lock(mu_);
  owns_ = std::move(owns);
}

void LeakReportBook::SetOnChangeBetweenPasses(std::function<void()> callback) {
  std::lock_guard<std::mutex> lock(mu_);
  on_change_between_passes_ = std::move(callback);
}

void LeakReportBook::Adopt(const std::vector<drip::v1::LeakReport>& shared, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<drip::v1::AuditEntry> audit;
  for (const drip::v1::LeakReport& theirs : shared) {
    if (theirs.id().empty() || !OwnsLocked(theirs.component())) continue;
    auto it = reports_.find(theirs.id());
    if (it != reports_.end()) {
      if (it->second.component() != theirs.component()) {
        Logger("collector")
            ->warn("leak report {} in the cluster is of {}, this collector's of {}: not adopted",
                   theirs.id(), theirs.component(), it->second.component());
        continue;
      }
      if (it->second.updated_ms() >= theirs.updated_ms()) continue;
      // Resolved is final for a report: a newer copy still open is one written before the
      // resolution reached etcd.
      if (IsResolved(it->second) && !IsResolved(theirs)) continue;
    }
    if (!IsResolved(theirs)) {
      drip::v1::LeakReport* mine = FindUnresolvedLocked(theirs.component());
      if (mine != nullptr && mine->id() != theirs.id()) {
        ChangeStateLocked(mine, drip::v1::REPORT_STATE_RESOLVED, kCollectorActor,
                          fmt::format("superseded by {}, the cluster's report of {}", theirs.id(),
                                      theirs.component()),
                          now_ms, &audit);
      }
    }
    const bool had_copy = it != reports_.end();
    reports_[theirs.id()] = theirs;
    dirty_.insert(theirs.id());
    drip::v1::AuditEntry& entry = audit.emplace_back();
    entry.set_time_ms(now_ms);
    entry.set_actor(kCollectorActor);
    entry.set_report_id(theirs.id());
    entry.set_component(theirs.component());
    entry.set_action("take-over");
    entry.set_outcome("done");
    entry.set_detail(had_copy ? "this collector owns the report again; its copy was behind the "
                                "cluster's and is replaced"
                              : "this collector owns the report now (its owner left, or the "
                                "cluster's members changed)");
    Logger("collector")
        ->info("leak report {} ({}, {}) taken over from the cluster", theirs.id(),
               theirs.component(), theirs.state());
  }
  if (!audit.empty()) IgnoreError(FlushLocked(&audit));  // logged, counted and retried next pass
}

bool LeakReportBook::HasResolved(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = reports_.find(id);
  return it != reports_.end() && IsResolved(it->second);
}

std::vector<drip::v1::LeakReport> LeakReportBook::Owned() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, const drip::v1::LeakReport*> newest;  // by component
  for (const auto& [id, r] : reports_) {
    if (!OwnsLocked(r.component())) continue;
    const drip::v1::LeakReport*& slot = newest[r.component()];
    // An unresolved report is the component's current one; otherwise the last resolved.
    if (slot == nullptr || (IsResolved(*slot) && !IsResolved(r)) ||
        (IsResolved(*slot) == IsResolved(r) && r.updated_ms() > slot->updated_ms())) {
      slot = &r;
    }
  }
  std::vector<drip::v1::LeakReport> out;
  for (const auto& [component, r] : newest) out.push_back(*r);
  return out;
}

}  // namespace drip::collector
