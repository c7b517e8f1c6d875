#include "collector/pipeline/fleet_suspects.h"

#include <algorithm>
#include <map>
#include <utility>

namespace drip::collector {

std::string_view SnapshotStateName(SnapshotAttempt::State state) {
  switch (state) {
    case SnapshotAttempt::State::kPending:
      return "pending";
    case SnapshotAttempt::State::kDone:
      return "done";
    case SnapshotAttempt::State::kFailed:
      return "failed";
  }
  return "failed";
}

void AddPeerSuspects(const FleetSuspects& peer, FleetSuspects* into) {
  std::map<std::pair<std::string, std::string>, size_t> index;  // (host, component)
  for (size_t i = 0; i < into->hosts.size(); ++i) {
    index.emplace(std::make_pair(into->hosts[i].suspect.host, into->hosts[i].suspect.component), i);
  }
  for (const HostSuspect& theirs : peer.hosts) {
    auto [it, inserted] = index.emplace(
        std::make_pair(theirs.suspect.host, theirs.suspect.component), into->hosts.size());
    if (inserted) {
      into->hosts.push_back(theirs);
    } else if (theirs.suspect.last_updated > into->hosts[it->second].suspect.last_updated) {
      into->hosts[it->second] = theirs;
    }
  }
  for (const analyzer::ComponentSuspect& theirs : peer.components) {
    auto same = std::find_if(
        into->components.begin(), into->components.end(),
        [&](const analyzer::ComponentSuspect& c) { return c.component == theirs.component; });
    if (same == into->components.end()) {
      into->components.push_back(theirs);
      continue;
    }
    same->hosts += theirs.hosts;
    same->hosts_seen += theirs.hosts_seen;
    same->max_growth_bytes_per_hour =
        std::max(same->max_growth_bytes_per_hour, theirs.max_growth_bytes_per_hour);
    if (theirs.first_flagged > 0 &&
        (same->first_flagged == 0 || theirs.first_flagged < same->first_flagged)) {
      same->first_flagged = theirs.first_flagged;
    }
  }
}

}  // namespace drip::collector
