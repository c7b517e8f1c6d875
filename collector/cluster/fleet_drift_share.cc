#include "collector/cluster/fleet_drift_share.h"

#include <climits>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::collector {
namespace {

constexpr int kFormat = 1;
constexpr size_t kFields = analyzer::ComponentDrift::kBands + 6;

}  // namespace

std::string EncodeFleetDrift(
    const std::vector<std::pair<std::string, analyzer::ComponentDrift>>& drifts) {
  nlohmann::json components = nlohmann::json::object();
  for (const auto& [name, d] : drifts) {
    nlohmann::json fields = nlohmann::json::array();
    for (int32_t hosts : d.hosts_by_band) fields.push_back(hosts);
    fields.push_back(d.hosts_climbing);
    fields.push_back(d.hosts_seen);
    fields.push_back(d.longest_released_rise_s);
    fields.push_back(d.hosts_releasing);
    fields.push_back(d.longest_warmup_s);
    fields.push_back(d.hosts_warmed);
    components[name] = std::move(fields);
  }
  return nlohmann::json{{"v", kFormat}, {"components", std::move(components)}}.dump();
}

absl::StatusOr<std::map<std::string, analyzer::ComponentDrift>> DecodeFleetDrift(
    const std::string& encoded) {
  const nlohmann::json j = nlohmann::json::parse(encoded, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("not a JSON object");
  if (!j.contains("v") || !j["v"].is_number_integer() || j["v"].get<int>() != kFormat) {
    return absl::InvalidArgumentError(
        fmt::format("v: format {} is not {} (a member of another version)",
                    j.contains("v") ? j["v"].dump() : "missing", kFormat));
  }
  if (!j.contains("components") || !j["components"].is_object()) {
    return absl::InvalidArgumentError("components: missing or not an object");
  }
  std::map<std::string, analyzer::ComponentDrift> out;
  for (const auto& [name, fields] : j["components"].items()) {
    if (!fields.is_array() || fields.size() != kFields) {
      return absl::InvalidArgumentError(
          fmt::format("components.{}: not an array of {} numbers", name, kFields));
    }
    for (const auto& f : fields) {
      // Host counts and seconds alike fit 31 bits; anything else is not a count.
      if (!f.is_number_integer() || f.get<int64_t>() < 0 || f.get<int64_t>() > INT32_MAX) {
        return absl::InvalidArgumentError(
            fmt::format("components.{}: {} is not a count", name, f.dump()));
      }
    }
    analyzer::ComponentDrift d;
    size_t i = 0;
    for (int32_t& hosts : d.hosts_by_band) hosts = fields[i++].get<int32_t>();
    d.hosts_climbing = fields[i++].get<int32_t>();
    d.hosts_seen = fields[i++].get<int32_t>();
    d.longest_released_rise_s = fields[i++].get<int64_t>();
    d.hosts_releasing = fields[i++].get<int32_t>();
    d.longest_warmup_s = fields[i++].get<int64_t>();
    d.hosts_warmed = fields[i++].get<int32_t>();
    out.emplace(name, d);
  }
  return out;
}

std::map<std::string, analyzer::ComponentDrift> SumPeerDrift(
    const std::map<std::string, std::string>& shares, std::vector<std::string>* unreadable) {
  std::map<std::string, analyzer::ComponentDrift> sum;
  for (const auto& [member, encoded] : shares) {
    absl::StatusOr<std::map<std::string, analyzer::ComponentDrift>> drifts =
        DecodeFleetDrift(encoded);
    if (!drifts.ok()) {
      if (unreadable != nullptr) {
        unreadable->push_back(
            fmt::format("{} ({})", member, std::string(drifts.status().message())));
      }
      continue;
    }
    for (const auto& [component, d] : *drifts) sum[component].Merge(d);
  }
  return sum;
}

}  // namespace drip::collector
