#include "analyzer/rollout_correlation.h"

#include <algorithm>
#include <map>
#include <set>

#include "fmt/format.h"

namespace drip::analyzer {
namespace {

// The detector does not read a new instance's first hours (its start-up, then a warm-up
// that fades: docs/detector.md), so growth that came with a version is first read hours
// after the change: up to half a day, or half the time from the change to the first flag
// when that is longer (a slow leak leaves the normal range late). Growth first read later
// than both began after the change. Measured on the development seeds: the climbs of
// rollout leaks are first read 8-9 h after the change.
constexpr int64_t kSinceAfterChangeS = 12 * 3600;
// Restarts and clock skew between the agent's version report and the samples.
constexpr int64_t kSinceBeforeChangeS = 600;

// The run of `runs` that ran at `at_s`: the latest that started by then, else the first
// (versions known only since after that time).
size_t RunAt(const std::vector<VersionRun>& runs, int64_t at_s) {
  for (size_t i = runs.size(); i-- > 0;) {
    if (runs[i].since_s <= at_s) return i;
  }
  return 0;
}

HostVersionFinding FindingFor(const HostVersions& host, const LeakingHost& leak) {
  HostVersionFinding f;
  f.host = leak.host;
  // The version the host ran when its growth began: a leak that was already growing
  // before an upgrade belongs to the version before, whichever instance was flagged.
  const int64_t began =
      leak.grows_every_instance ? leak.first_flagged_s : leak.growth_since_s + kSinceBeforeChangeS;
  const size_t k = RunAt(host.runs, began);
  f.version = host.runs[k].version;
  // The version's era on this host: back over the instances that ran it too.
  size_t first = k;
  while (first > 0 && host.runs[first - 1].version == f.version) --first;
  f.changed_s = host.runs[first].since_s;
  if (first == 0) return f;  // no change seen: it ran this version all along
  f.previous_version = host.runs[first - 1].version;
  const int64_t after = std::max(kSinceAfterChangeS, (leak.first_flagged_s - f.changed_s) / 2);
  f.began_at_change =
      leak.first_flagged_s >= f.changed_s &&
      (leak.grows_every_instance || (leak.growth_since_s >= f.changed_s - kSinceBeforeChangeS &&
                                     leak.growth_since_s <= f.changed_s + after));
  return f;
}

std::string HostCount(int n) { return fmt::format("{} host{}", n, n == 1 ? "" : "s"); }

// "2.4.0 (30), 2.3.9 (2)": versions with a count, most first.
std::string CountList(const std::vector<VersionShare>& shares, bool leaking,
                      const std::string& skip) {
  std::string out;
  for (const VersionShare& s : shares) {
    const int n = leaking ? s.leaking_hosts : s.healthy_hosts;
    if (n == 0 || s.version == skip) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} ({})", s.version, n);
  }
  return out;
}

}  // namespace

const char* RolloutVerdictName(RolloutVerdict verdict) {
  switch (verdict) {
    case RolloutVerdict::kUnknown:
      return "unknown";
    case RolloutVerdict::kArrivedWithVersion:
      return "arrived-with-version";
    case RolloutVerdict::kAcrossVersions:
      return "across-versions";
    case RolloutVerdict::kOneVersionEverywhere:
      return "one-version";
  }
  return "unknown";
}

LeakingHost LeakingHostOf(const Suspect& suspect) {
  return {suspect.host, suspect.first_flagged, suspect.growth_since,
          suspect.rule == SuspectRule::kRestartReset};
}

bool AddVersionRun(std::vector<VersionRun>* runs, VersionRun run) {
  if (!runs->empty()) {
    VersionRun& latest = runs->back();
    if (run.since_s < latest.since_s) return false;
    if (latest.version == run.version) {
      latest.instance = std::move(run.instance);  // the era goes on with a newer instance
      return false;
    }
  }
  runs->push_back(std::move(run));
  return true;
}

RolloutFinding CorrelateRollout(const std::vector<HostVersions>& fleet,
                                const std::vector<LeakingHost>& leaking) {
  RolloutFinding out;
  std::map<std::string, const HostVersions*> by_host;
  for (const HostVersions& h : fleet) {
    if (!h.runs.empty()) by_host[h.host] = &h;
  }
  std::map<std::string, VersionShare> shares;
  std::set<std::string> leaking_hosts;
  for (const LeakingHost& leak : leaking) {
    leaking_hosts.insert(leak.host);
    auto it = by_host.find(leak.host);
    if (it == by_host.end()) continue;
    HostVersionFinding f = FindingFor(*it->second, leak);
    VersionShare& share = shares[f.version];
    share.version = f.version;
    ++share.leaking_hosts;
    if (f.began_at_change) ++share.began_at_change;
    out.hosts.push_back(std::move(f));
  }
  for (const auto& [host, versions] : by_host) {
    if (leaking_hosts.contains(host)) continue;
    VersionShare& share = shares[versions->runs.back().version];
    share.version = versions->runs.back().version;
    ++share.healthy_hosts;
  }
  for (auto& [version, share] : shares) out.versions.push_back(std::move(share));
  std::sort(out.versions.begin(), out.versions.end(),
            [](const VersionShare& a, const VersionShare& b) {
              if (a.leaking_hosts != b.leaking_hosts) return a.leaking_hosts > b.leaking_hosts;
              if (a.healthy_hosts != b.healthy_hosts) return a.healthy_hosts > b.healthy_hosts;
              return a.version < b.version;
            });

  const int known = static_cast<int>(out.hosts.size());
  if (known == 0) {
    out.summary =
        "no version is known for the leaking hosts (their agents report none: "
        "the executable has no build-id and DRIP_VERSION is not set)";
    return out;
  }
  const VersionShare& top = out.versions.front();
  int healthy_elsewhere = 0;
  for (const VersionShare& s : out.versions) {
    if (s.version != top.version) healthy_elsewhere += s.healthy_hosts;
  }
  // One stray host on another version (a false alarm, a host mid-rollback) does not make
  // the leak version-independent; a real share of leaking hosts on another version does.
  const bool one_version = top.leaking_hosts * 10 >= known * 9;
  if (!one_version) {
    out.verdict = RolloutVerdict::kAcrossVersions;
    out.summary = fmt::format("not tied to a version: the leaking hosts run {}",
                              CountList(out.versions, true, ""));
    if (const std::string healthy = CountList(out.versions, false, ""); !healthy.empty()) {
      out.summary += fmt::format("; hosts that do not leak run {}", healthy);
    }
    return out;
  }
  if (top.began_at_change == 0 && healthy_elsewhere == 0) {
    out.verdict = RolloutVerdict::kOneVersionEverywhere;
    out.summary = fmt::format(
        "every host runs {} and no leaking host's growth began at a version change: the "
        "versions do not say whether the leak came with it",
        top.version);
    return out;
  }
  out.verdict = RolloutVerdict::kArrivedWithVersion;
  out.version = top.version;
  out.summary = fmt::format("arrived with version {}: {} of {} leaking hosts run it", top.version,
                            top.leaking_hosts, known);
  if (top.began_at_change > 0) {
    out.summary += fmt::format(", {} began growing when it replaced the version before",
                               HostCount(top.began_at_change));
  }
  if (healthy_elsewhere > 0) {
    out.summary +=
        fmt::format("; {} on other versions do not leak ({})", HostCount(healthy_elsewhere),
                    CountList(out.versions, false, top.version));
  }
  if (top.healthy_hosts > 0) {
    out.summary +=
        fmt::format("; {} on {} do not leak yet", HostCount(top.healthy_hosts), top.version);
  }
  return out;
}

}  // namespace drip::analyzer
