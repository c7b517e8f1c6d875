#include "collector/pipeline/mitigation_planner.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/base/duration.h"
#include "common/base/mitigation_signal.h"
#include "common/base/process_instance.h"
#include "fmt/format.h"

namespace drip::collector {

MitigationPlan PlanMitigation(const drip::v1::LeakReport& report, const MitigationPolicy& policy,
                              const MitigationRequestSpec& spec, int64_t now_ms,
                              uint64_t fleet_budget) {
  MitigationPlan plan;
  // Hosts acted on within the cool-down: each blocks itself and uses up the fraction.
  std::set<std::string> recent;
  for (const drip::v1::MitigationRecord& m : report.mitigations()) {
    // Recommendations space only recommendations: they change nothing on the host. An
    // automatic dry-run is spaced by earlier dry-runs (or the audit log fills up); real
    // actions and on-call's previews of them by real actions only, so a preview says
    // what a real action would do now.
    const bool recommended = m.outcome() == "recommended";
    const bool counts_dry_runs = spec.automatic && spec.dry_run;
    if (m.dry_run() != counts_dry_runs ||
        recommended != (spec.action == mitigation_action::kRecommend)) {
      continue;
    }
    if (now_ms - m.requested_ms() < policy.cooldown.count()) recent.insert(m.host());
  }
  const int hosts = std::max(report.hosts_seen(), report.hosts_size());
  const uint64_t max_hosts = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::floor(policy.max_host_fraction * hosts + 1e-9)));
  uint64_t room = recent.size() >= max_hosts ? 0 : max_hosts - recent.size();
  const double trigger_s = std::chrono::duration<double>(policy.trigger_eta).count();

  for (const drip::v1::LeakHost& h : report.hosts()) {  // the book keeps them most urgent first
    if (!spec.only_host.empty() && h.host() != spec.only_host) continue;
    auto skip = [&](std::string reason) { plan.skipped.push_back({h.host(), std::move(reason)}); };
    if (!h.active()) {
      if (!spec.only_host.empty()) skip("the host is not suspected of leaking any more");
      continue;
    }
    if (spec.automatic && (!h.has_eta_to_oom_seconds() || h.eta_to_oom_seconds() >= trigger_s)) {
      continue;  // not urgent yet: the automatic policy waits (nothing to audit)
    }
    if (recent.contains(h.host())) {
      skip(fmt::format("mitigated less than {} ago (policy cooldown)",
                       FormatDuration(policy.cooldown)));
      continue;
    }
    if (room == 0) {
      skip(
          fmt::format("at most {} of the component's {} hosts per {} (policy max_host_fraction "
                      "{})",
                      max_hosts, hosts, FormatDuration(policy.cooldown), policy.max_host_fraction));
      continue;
    }
    const bool changes_host = spec.action != mitigation_action::kRecommend;
    if (changes_host && fleet_budget == 0) {
      skip("the fleet-wide limit of mitigation.max_actions_per_hour is used up");
      continue;
    }
    MitigationTarget t;
    t.host = h.host();
    t.instance = h.instance();
    if (spec.action == mitigation_action::kRestartUnit) {
      if (!report.component().starts_with("svc:")) {
        skip(fmt::format("{} is not a systemd service; use signal-process", report.component()));
        continue;
      }
      t.unit = report.component().substr(4);
      t.description = t.unit;
    } else if (spec.action == mitigation_action::kSignalProcess) {
      t.pid = PidOfInstance(h.instance());
      if (t.pid <= 0) {
        skip(fmt::format("instance '{}' does not name a process", h.instance()));
        continue;
      }
      t.description =
          fmt::format("pid {} ({}) {}", t.pid, h.instance(), MitigationSignalName(spec.signal));
    } else {
      t.description = report.component();
    }
    plan.targets.push_back(std::move(t));
    --room;
    if (changes_host) --fleet_budget;
  }
  if (!spec.only_host.empty() && plan.targets.empty() && plan.skipped.empty()) {
    plan.skipped.push_back({spec.only_host, "the host is not one of the report's hosts"});
  }
  return plan;
}

}  // namespace drip::collector
