#include "collector/pipeline/instance_version_book.h"

namespace drip::collector {
namespace {

constexpr size_t kBuildIdDigitsShown = 12;

}  // namespace

std::string InstanceVersionBook::VersionName(const drip::v1::InstanceVersion& version) {
  if (!version.label().empty()) return version.label();
  if (version.build_id().empty()) return "";
  return "build " + version.build_id().substr(0, kBuildIdDigitsShown);
}

absl::Status InstanceVersionBook::Load(SeriesStore* store) {
  absl::StatusOr<std::vector<drip::v1::InstanceVersion>> versions = store->ReadInstanceVersions();
  if (!versions.ok()) return versions.status();
  // The store's order is (host, component, first seen): each host's eras in time order.
  for (const drip::v1::InstanceVersion& v : *versions) Add(v);
  return absl::OkStatus();
}

void InstanceVersionBook::Add(const drip::v1::InstanceVersion& version) {
  const std::string name = VersionName(version);
  if (name.empty() || version.host().empty()) return;
  const int64_t since_s = version.first_seen_ms() / 1000;
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<analyzer::VersionRun>& eras = eras_[version.component()][version.host()];
  if (!analyzer::AddVersionRun(&eras, {version.instance(), name, since_s})) return;
  ++size_;
  if (eras.size() > kErasPerComponent) {
    eras.erase(eras.begin());
    --size_;
  }
}

std::vector<analyzer::HostVersions> InstanceVersionBook::Fleet(const std::string& component) const {
  std::vector<analyzer::HostVersions> fleet;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = eras_.find(component);
  if (it == eras_.end()) return fleet;
  fleet.reserve(it->second.size());
  for (const auto& [host, eras] : it->second) fleet.push_back({host, eras});
  return fleet;
}

size_t InstanceVersionBook::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return size_;
}

}  // namespace drip::collector
