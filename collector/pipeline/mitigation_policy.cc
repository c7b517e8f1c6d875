#include "collector/pipeline/mitigation_policy.h"

#include <utility>

#include "common/base/mitigation_signal.h"
#include "common/base/status_macros.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

absl::Status ReadPolicy(ConfigReader& r, const std::string& prefix, MitigationPolicy* p) {
  std::string mode = p->automatic ? "automatic" : "manual";
  RETURN_IF_ERROR(r.ReadEnum(prefix + "mode", {"manual", "automatic"}, &mode));
  p->automatic = mode == "automatic";
  RETURN_IF_ERROR(r.ReadEnum(
      prefix + "action",
      {std::string(mitigation_action::kRestartUnit), std::string(mitigation_action::kSignalProcess),
       std::string(mitigation_action::kRecommend)},
      &p->action));
  std::string signal = MitigationSignalName(p->signal);
  RETURN_IF_ERROR(r.ReadString(prefix + "signal", &signal));
  absl::StatusOr<int> number = ParseMitigationSignal(signal);
  if (!number.ok()) return r.Error(prefix + "signal", std::string(number.status().message()));
  p->signal = *number;
  RETURN_IF_ERROR(r.ReadBool(prefix + "dry_run", &p->dry_run));
  RETURN_IF_ERROR(r.ReadDuration(prefix + "trigger_eta", &p->trigger_eta));
  RETURN_IF_ERROR(r.ReadDouble(prefix + "max_host_fraction", &p->max_host_fraction, 0.0, 1.0));
  RETURN_IF_ERROR(r.ReadDuration(prefix + "cooldown", &p->cooldown));
  return absl::OkStatus();
}

}  // namespace

const MitigationPolicy& MitigationConfig::For(const std::string& component) const {
  auto it = components.find(component);
  return it == components.end() ? defaults : it->second;
}

absl::Status ReadMitigationConfig(ConfigReader& r, MitigationConfig* out) {
  RETURN_IF_ERROR(ReadPolicy(r, "mitigation.default.", &out->defaults));
  RETURN_IF_ERROR(
      r.ReadUint("mitigation.max_actions_per_hour", &out->max_actions_per_hour, 0, 100000));
  RETURN_IF_ERROR(
      r.ReadDuration("mitigation.result_timeout", &out->result_timeout, std::chrono::seconds(1)));
  ASSIGN_OR_RETURN(std::vector<ConfigReader> entries, r.ReadMappingList("mitigation.components"));
  for (ConfigReader& entry : entries) {
    std::string component;
    RETURN_IF_ERROR(entry.ReadString("component", &component));
    if (component.empty()) {
      return entry.Error("component",
                         "required (the component this policy is for, e.g. "
                         "svc:nginx.service)");
    }
    MitigationPolicy policy = out->defaults;
    RETURN_IF_ERROR(ReadPolicy(entry, "", &policy));
    RETURN_IF_ERROR(entry.CheckNoUnknownKeys());
    if (!out->components.emplace(component, policy).second) {
      return entry.Error("component", fmt::format("{} has a policy already", component));
    }
  }
  return absl::OkStatus();
}

}  // namespace drip::collector
