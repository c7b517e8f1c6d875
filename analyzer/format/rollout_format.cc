#include "analyzer/format/rollout_format.h"

namespace drip::analyzer {

void RolloutFindingToProto(const RolloutFinding& finding, drip::v1::RolloutEvidence* out) {
  out->Clear();
  out->set_verdict(RolloutVerdictName(finding.verdict));
  out->set_version(finding.version);
  out->set_summary(finding.summary);
  for (const VersionShare& share : finding.versions) {
    drip::v1::VersionShare* v = out->add_versions();
    v->set_version(share.version);
    v->set_leaking_hosts(share.leaking_hosts);
    v->set_healthy_hosts(share.healthy_hosts);
    v->set_began_at_change(share.began_at_change);
  }
}

nlohmann::ordered_json RolloutEvidenceToJson(const drip::v1::RolloutEvidence& r) {
  nlohmann::ordered_json j;
  j["verdict"] = r.verdict().empty() ? "unknown" : r.verdict();
  j["version"] = r.version();
  j["summary"] = r.summary();
  nlohmann::ordered_json versions = nlohmann::ordered_json::array();
  for (const auto& v : r.versions()) {
    nlohmann::ordered_json share;
    share["version"] = v.version();
    share["leaking_hosts"] = v.leaking_hosts();
    share["healthy_hosts"] = v.healthy_hosts();
    share["began_at_change"] = v.began_at_change();
    versions.push_back(std::move(share));
  }
  j["versions"] = std::move(versions);
  return j;
}

}  // namespace drip::analyzer
