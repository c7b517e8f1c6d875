#include "collector/ingest/connected_hosts.h"

namespace drip::collector {

ConnectedHosts::ConnectedHosts(prometheus::Gauge* connected_gauge) : gauge_(connected_gauge) {}

void ConnectedHosts::Register(const std::string& host, Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  Stream*& slot = streams_[host];
  // Called under the lock: the old stream cannot unregister and be destroyed meanwhile.
  if (slot != nullptr && slot != stream) slot->Supersede();
  slot = stream;
  UpdateGaugeLocked();
}

void ConnectedHosts::Unregister(const std::string& host, Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(host);
  if (it != streams_.end() && it->second == stream) streams_.erase(it);
  UpdateGaugeLocked();
}

bool ConnectedHosts::IsConnected(const std::string& host) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(host);
  return it != streams_.end() && it->second->IsOpen();
}

bool ConnectedHosts::SendCommand(const std::string& host, const drip::v1::Command& command) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(host);
  return it != streams_.end() && it->second->SendCommand(command);
}

bool ConnectedHosts::MoveTo(const std::string& host, const std::string& owner_name,
                            const std::string& owner_address) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(host);
  if (it == streams_.end() || !it->second->IsOpen()) return false;
  it->second->MoveTo(owner_name, owner_address);
  return true;
}

std::vector<std::string> ConnectedHosts::Hosts() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> hosts;
  hosts.reserve(streams_.size());
  for (const auto& [host, stream] : streams_) hosts.push_back(host);
  return hosts;
}

size_t ConnectedHosts::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_.size();
}

void ConnectedHosts::UpdateGaugeLocked() {
  if (gauge_ != nullptr) gauge_->Set(static_cast<double>(streams_.size()));
}

}  // namespace drip::collector
