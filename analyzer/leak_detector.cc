#include "analyzer/leak_detector.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "analyzer/series_state.h"
#include "common/base/duration.h"
#include "fmt/format.h"

namespace drip::analyzer {
namespace {

std::string Hours(int64_t seconds) { return FormatSpan(static_cast<double>(seconds)); }

std::string Rate(double bytes_per_hour) {
  return FormatBytes(static_cast<uint64_t>(std::max(0.0, bytes_per_hour))) + "/h";
}

}  // namespace

struct LeakDetector::Impl {
  explicit Impl(const DetectorConfig& config) : scale(config.bucket_width) {}

  uint32_t Intern(absl::flat_hash_map<std::string, uint32_t>& ids, std::vector<std::string>& names,
                  std::string_view name) {
    auto it = ids.find(absl::string_view(name.data(), name.size()));
    if (it != ids.end()) return it->second;
    const auto id = static_cast<uint32_t>(names.size());
    names.emplace_back(name);
    ids.emplace(std::string(name), id);
    return id;
  }

  void GrowHosts() {
    if (host_memory.size() < hosts.size()) host_memory.resize(hosts.size(), 0);
    if (host_series.size() < hosts.size()) host_series.resize(hosts.size());
    if (host_counted.size() < hosts.size()) host_counted.resize(hosts.size(), 1);
  }

  // Adds (sign +1) or takes away (-1) the series' share of its component's local drift.
  void CountSeries(SeriesId id, int sign) {
    const SeriesState& s = states[id];
    ComponentDrift& drift = local_drift[series_component[id]];
    drift.hosts_seen += sign;
    drift.hosts_by_band[s.band] += sign;
    if (s.climbing) drift.hosts_climbing += sign;
    if (s.releasing) drift.hosts_releasing += sign;
    if (s.warmed) drift.hosts_warmed += sign;
  }

  // What the fleet rule judges a component by: its hosts here and on the other shards.
  ComponentDrift FleetView(uint32_t component) const {
    ComponentDrift view = local_drift[component];
    if (peer_drift[component]) view.Merge(*peer_drift[component]);
    return view;
  }

  BucketScale scale;
  absl::flat_hash_map<std::string, SeriesId> series_by_key;
  absl::flat_hash_map<std::string, uint32_t> host_ids;
  absl::flat_hash_map<std::string, uint32_t> component_ids;
  std::vector<std::string> hosts;
  std::vector<std::string> components;
  std::vector<uint64_t> host_memory;
  std::vector<std::vector<SeriesId>> host_series;  // by host id
  // By host id: whether its series count in local_drift (SetHostCounted).
  std::vector<uint8_t> host_counted;
  std::vector<uint32_t> series_host;
  std::vector<uint32_t> series_component;
  std::vector<SeriesState> states;
  std::vector<std::string> instances;  // current instance of each series
  std::vector<ComponentDrift> local_drift;
  // The component's hosts on other shards (SetPeerDrift): the fleet view is local + it.
  std::vector<std::optional<ComponentDrift>> peer_drift;
  std::vector<Suspect> suspects;
  std::vector<int64_t> reason_written;  // by suspect: when its reason was last written
  std::vector<SeriesId> free_ids;       // slots of forgotten series, reused by Series()
  std::string key;
};

LeakDetector::LeakDetector(DetectorConfig config)
    : config_(config), impl_(std::make_unique<Impl>(config_)) {}

LeakDetector::~LeakDetector() = default;

LeakDetector::SeriesId LeakDetector::Series(std::string_view host, std::string_view component) {
  Impl& d = *impl_;
  d.key.assign(host);
  d.key.push_back('\0');
  d.key.append(component);
  auto it = d.series_by_key.find(d.key);
  if (it != d.series_by_key.end()) return it->second;

  SeriesId id = 0;
  if (!d.free_ids.empty()) {
    // A forgotten series' slot (ForgetSilentBefore): reset there, reused here.
    id = d.free_ids.back();
    d.free_ids.pop_back();
  } else {
    id = static_cast<SeriesId>(d.states.size());
    d.series_host.emplace_back();
    d.series_component.emplace_back();
    d.states.emplace_back();
    d.instances.emplace_back();
  }
  d.series_by_key.emplace(d.key, id);
  const uint32_t host_id = d.Intern(d.host_ids, d.hosts, host);
  d.GrowHosts();
  d.host_series[host_id].push_back(id);
  const uint32_t component_id = d.Intern(d.component_ids, d.components, component);
  if (d.local_drift.size() < d.components.size()) {
    d.local_drift.resize(d.components.size());
    d.peer_drift.resize(d.components.size());
  }
  d.series_host[id] = host_id;
  d.series_component[id] = component_id;
  if (d.host_counted[host_id]) d.CountSeries(id, +1);
  return id;
}

bool LeakDetector::HasSeries(std::string_view host, std::string_view component) const {
  std::string key(host);
  key.push_back('\0');
  key.append(component);
  return impl_->series_by_key.contains(key);
}

size_t LeakDetector::SeriesOfHost(std::string_view host) const {
  const Impl& d = *impl_;
  auto it = d.host_ids.find(absl::string_view(host.data(), host.size()));
  return it == d.host_ids.end() || it->second >= d.host_series.size()
             ? 0
             : d.host_series[it->second].size();
}

void LeakDetector::SetHostMemory(std::string_view host, uint64_t bytes) {
  Impl& d = *impl_;
  const uint32_t host_id = d.Intern(d.host_ids, d.hosts, host);
  d.GrowHosts();
  d.host_memory[host_id] = bytes;
}

void LeakDetector::SetHostCounted(std::string_view host, bool counted) {
  Impl& d = *impl_;
  const uint32_t host_id = d.Intern(d.host_ids, d.hosts, host);
  d.GrowHosts();
  if ((d.host_counted[host_id] != 0) == counted) return;
  d.host_counted[host_id] = counted ? 1 : 0;
  for (const SeriesId id : d.host_series[host_id]) d.CountSeries(id, counted ? +1 : -1);
}

namespace {

// The component's hosts climbing together: enough of them, and a large enough share.
bool FleetArmed(const DetectorConfig& config, const ComponentDrift& drift) {
  const int needed =
      std::max(config.fleet_min_hosts,
               static_cast<int>(std::ceil(config.fleet_min_fraction * drift.hosts_seen)));
  return drift.hosts_climbing >= needed;
}

}  // namespace

void LeakDetector::Prefetch(SeriesId series) const {
  const char* state = reinterpret_cast<const char*>(&impl_->states[series]);
  // What Observe reads of it: the small fields and the epoch's, at its start.
  __builtin_prefetch(state);
  __builtin_prefetch(state + 64);
  __builtin_prefetch(state + 128);
}

InstanceName::InstanceName(std::string_view instance)
    : name(instance), hash(std::hash<std::string_view>{}(instance)) {}

void LeakDetector::Observe(SeriesId series, int64_t timestamp_s, const InstanceName& instance_name,
                           uint64_t bytes, const LimitReading& limit) {
  const std::string_view instance = instance_name.name;
  Impl& d = *impl_;
  SeriesState& s = d.states[series];
  ++counters_.samples;
  const int64_t epoch = config_.epoch_seconds;
  const auto align = [epoch](int64_t t) { return t - ((t % epoch) + epoch) % epoch; };
  const uint64_t instance_hash = instance_name.hash;

  if (!s.started()) {
    s.Begin(align(timestamp_s), timestamp_s, instance_hash, bytes);
    ReadLimit(s, limit);
    d.instances[series].assign(instance);
    return;
  }
  if (timestamp_s < s.epoch_start()) {
    // Late (out of order, or a skewed clock): an epoch keeps only its minimum, so a
    // sample a little late changes nothing by being folded into the open epoch.
    if (instance_hash == s.instance_hash() &&
        timestamp_s >= s.epoch_start() - config_.max_lateness_seconds) {
      s.Fold(timestamp_s, bytes);
      ++counters_.late_samples_folded;
    } else {
      ++counters_.late_samples_dropped;
    }
    return;
  }
  if (instance_hash != s.instance_hash()) {
    if (instance_hash == s.previous_instance_hash() || timestamp_s < s.instance_start()) {
      ++counters_.late_samples_dropped;  // a straggler of the instance that ended
      return;
    }
    // Read before the restart is judged: the kill that ended the instance shows in the
    // new instance's first sample.
    ReadLimit(s, limit);
    ++counters_.restarts;
    CloseEpoch(series);
    const EpochVerdict verdict =
        s.Restart(config_, d.scale, timestamp_s, instance_hash, HostMemory(series));
    d.instances[series].assign(instance);
    s.OpenEpoch(align(timestamp_s), timestamp_s, bytes);
    Judge(series, verdict, timestamp_s);
    return;
  }
  ReadLimit(s, limit);
  if (timestamp_s >= s.epoch_start() + epoch) {
    if (timestamp_s - s.last_sample() > config_.max_gap_seconds) {
      ++counters_.gaps;
      s.spans_gap = true;
      s.ForgetInstanceClimb();
    }
    CloseEpoch(series);
    s.OpenEpoch(align(timestamp_s), timestamp_s, bytes);
    return;
  }
  s.Fold(timestamp_s, bytes);
}

uint64_t LeakDetector::HostMemory(SeriesId series) const {
  const uint64_t memory = impl_->host_memory[impl_->series_host[series]];
  return memory > 0 ? memory : config_.default_host_memory_bytes;
}

void LeakDetector::ReadLimit(SeriesState& s, const LimitReading& limit) {
  const uint32_t before = s.oom_kills();
  s.ReadLimit(limit);
  counters_.oom_kills += s.oom_kills() - before;
}

void LeakDetector::ObserveOomVictim(SeriesId series, int64_t timestamp_s) {
  SeriesState& s = impl_->states[series];
  if (!s.started() || timestamp_s < s.epoch_start() - config_.max_lateness_seconds) return;
  const uint32_t before = s.oom_kills();
  s.CountOomVictim();
  counters_.oom_kills += s.oom_kills() - before;
}

void LeakDetector::CloseEpoch(SeriesId series) {
  Impl& d = *impl_;
  SeriesState& s = d.states[series];
  if (!s.has_open_epoch()) return;
  const uint32_t component = d.series_component[series];
  const ComponentDrift view = d.FleetView(component);
  EpochContext context;
  context.fleet_armed = FleetArmed(config_, view);
  context.component_released_rise_s = view.SharedCycleSeconds();
  context.component_warmup_s = view.SharedWarmupSeconds();
  context.host_memory_bytes = HostMemory(series);
  const EpochVerdict verdict = s.CloseEpoch(config_, d.scale, context);
  ++counters_.epochs_closed;

  ComponentDrift& drift = d.local_drift[component];
  // The component's longest cycles are known from any host; the counts, from counted ones.
  drift.longest_released_rise_s =
      std::max(drift.longest_released_rise_s, verdict.longest_released_rise_s);
  drift.longest_warmup_s = std::max(drift.longest_warmup_s, verdict.longest_warmup_s);
  const bool counted = d.host_counted[d.series_host[series]] != 0;
  if (counted) d.CountSeries(series, -1);
  if (verdict.longest_released_rise_s > 0) s.releasing = true;
  if (verdict.longest_warmup_s > 0) s.warmed = true;
  s.band = static_cast<uint8_t>(verdict.band);
  s.climbing = verdict.climbing;
  if (counted) d.CountSeries(series, +1);
  Judge(series, verdict, s.last_sample());
}

void LeakDetector::Judge(SeriesId series, const EpochVerdict& verdict, int64_t now) {
  Impl& d = *impl_;
  SeriesState& s = d.states[series];
  if (verdict.rule && s.suspect_index < 0) {
    s.suspect_index = static_cast<int32_t>(d.suspects.size());
    Suspect& suspect = d.suspects.emplace_back();
    suspect.host = d.hosts[d.series_host[series]];
    suspect.component = d.components[d.series_component[series]];
    suspect.first_flagged = now;
    suspect.rule = *verdict.rule;
  }
  if (s.suspect_index < 0) return;
  Suspect& suspect = d.suspects[s.suspect_index];
  suspect.oom_kills = s.oom_kills();  // a fact, whatever the evidence does
  // Only a rule firing, or the flagged climb going on, updates the evidence; once the
  // growth stops the suspect keeps its last figures (reports resolve it elsewhere).
  ClimbEvidence evidence = s.Evidence(config_, suspect.rule, d.scale);
  // When the evidence it was flagged on went with its instance (a line to its limit, then
  // an OOM kill), the rule that fired now tells it.
  const bool gone = evidence.climb == nullptr && !evidence.line && !evidence.daily &&
                    suspect.rule != SuspectRule::kRestartReset &&
                    suspect.rule != SuspectRule::kOomKilled;
  bool rule_changed = false;
  if (verdict.rule && *verdict.rule != suspect.rule && gone) {
    suspect.rule = *verdict.rule;
    evidence = s.Evidence(config_, suspect.rule, d.scale);
    rule_changed = true;
  }
  if (!verdict.rule && evidence.climb == nullptr) return;
  suspect.instance = d.instances[series];
  suspect.last_updated = now;
  suspect.growth_since = evidence.climb != nullptr ? evidence.climb->start_time()
                         : evidence.daily          ? evidence.daily->since
                                                   : s.instance_start();
  suspect.growth_bytes_per_hour = evidence.growth_bytes_per_hour;
  suspect.current_bytes = s.CurrentBytes(d.scale);
  suspect.normal_bytes = s.NormalBytes(d.scale);
  // What runs out first, the series' cgroup limit or the host's memory, and when.
  const EffectiveLimit limit = s.Limit(HostMemory(series));
  suspect.limited_by = limit.bytes == 0 ? "" : limit.cgroup ? "cgroup" : "host";
  suspect.limit_bytes = limit.bytes;
  suspect.headroom_bytes =
      limit.bytes > suspect.current_bytes ? limit.bytes - suspect.current_bytes : 0;
  suspect.oom_kills = s.oom_kills();
  suspect.eta_to_oom_seconds.reset();
  if (limit.bytes > 0 && suspect.growth_bytes_per_hour > 0) {
    suspect.eta_to_oom_seconds =
        static_cast<double>(suspect.headroom_bytes) / suspect.growth_bytes_per_hour * 3600.0;
  }

  const Climb* climb = evidence.climb;
  double score = 0.5;
  if (climb != nullptr) {
    score += 0.2 * std::min(1.0, climb->rise() / (4.0 * config_.min_rise_buckets)) +
             0.15 * std::min(1.0, climb->Steadiness(d.scale)) +
             0.15 * std::min(1.0, static_cast<double>(climb->duration()) / (24 * 3600));
  } else if (evidence.daily) {
    // The share of the day's hours that sat higher, and how long the stairs are.
    score += 0.3 * evidence.daily->higher / std::max(1, evidence.daily->hours) + 0.15;
  } else if (evidence.line) {
    // Urgent by nature; the longer the steady line, the surer.
    score += 0.3 + 0.2 * std::min(1.0, evidence.line_hours / 4);
  } else if (suspect.rule == SuspectRule::kOomKilled) {
    score += 0.3 + 0.05 * std::min(4, s.instances_killed_growing());
  } else {
    score += 0.1 * std::min(4, s.instances_died_climbing()) + 0.05;
  }
  suspect.score = std::min(1.0, score);

  // The reason is words for people: written when the suspect is flagged or its rule
  // changes, and then at most every few epochs while its evidence goes on (formatting it
  // every epoch of every suspect was a tenth of a replay's time).
  if (d.reason_written.size() <= static_cast<size_t>(s.suspect_index)) {
    d.reason_written.resize(s.suspect_index + 1, INT64_MIN);
  }
  int64_t& written = d.reason_written[s.suspect_index];
  const bool is_new = written == INT64_MIN;
  if (!is_new && !rule_changed && now - written < kReasonEpochs * config_.epoch_seconds) return;
  written = now;
  switch (suspect.rule) {
    case SuspectRule::kClimbAboveNormal:
      suspect.reason = fmt::format(
          "floor rose steadily from {} to {} over {} above its normal high of {} ({} new "
          "highs, steadiness {:.2f}) without levelling off; growing {}",
          FormatBytes(evidence.from_bytes), FormatBytes(evidence.to_bytes),
          Hours(climb ? climb->duration() : 0), FormatBytes(evidence.normal_high_bytes),
          climb ? climb->records() : 0, climb ? climb->Steadiness(d.scale) : 0.0,
          Rate(suspect.growth_bytes_per_hour));
      break;
    case SuspectRule::kFleetDrift: {
      const uint32_t component = d.series_component[series];
      const ComponentDrift view = d.FleetView(component);
      suspect.reason = fmt::format(
          "{} of {} hosts of this component climb above their normal range together; here "
          "the floor rose steadily from {} to {} over {} above its normal high of {}; growing {}",
          view.hosts_climbing, view.hosts_seen, FormatBytes(evidence.from_bytes),
          FormatBytes(evidence.to_bytes), Hours(climb ? climb->duration() : 0),
          FormatBytes(evidence.normal_high_bytes), Rate(suspect.growth_bytes_per_hour));
      break;
    }
    case SuspectRule::kYoungClimb:
      suspect.reason = fmt::format(
          "no normal level established yet (seen for {}); the floor climbed steadily from {} "
          "to {} over {} ({} new highs) without levelling off; growing {}",
          Hours(s.last_sample() - s.first_seen()), FormatBytes(evidence.from_bytes),
          FormatBytes(evidence.to_bytes), Hours(climb ? climb->duration() : 0),
          climb ? climb->records() : 0, Rate(suspect.growth_bytes_per_hour));
      break;
    case SuspectRule::kDailyClimb: {
      const DayOverDay daily = evidence.daily.value_or(DayOverDay{});
      suspect.reason = fmt::format(
          "each hour of its daily cycle sat higher than the same hour a day earlier, two days "
          "running ({} of {}), by {} and then {} a day; its daily trough rose from {} to {}: "
          "it grows under its daily swing; growing {}",
          daily.higher, daily.hours,
          FormatBytes(static_cast<uint64_t>(std::max(0.0, daily.older_bytes_per_day))),
          FormatBytes(static_cast<uint64_t>(std::max(0.0, daily.newer_bytes_per_day))),
          FormatBytes(daily.from_bytes), FormatBytes(daily.to_bytes),
          Rate(suspect.growth_bytes_per_hour));
      break;
    }
    case SuspectRule::kApproachingLimit:
      suspect.reason = fmt::format(
          "grew steadily from {} to {} over {}, {}: at that pace it reaches its {} of {} in "
          "{}, sooner than more evidence would take",
          FormatBytes(evidence.from_bytes), FormatBytes(evidence.to_bytes),
          Hours(static_cast<int64_t>(evidence.line_hours * 3600)),
          Rate(suspect.growth_bytes_per_hour), limit.cgroup ? "memory limit" : "host's memory",
          FormatBytes(limit.bytes),
          suspect.eta_to_oom_seconds ? Hours(static_cast<int64_t>(*suspect.eta_to_oom_seconds))
                                     : std::string("no time"));
      break;
    case SuspectRule::kOomKilled:
      suspect.reason = fmt::format(
          "its last {} instances grew steadily until the kernel OOM-killed them at its {} of {} "
          "({} OOM kills seen; the last instance grew {}): a leak that the kills and restarts "
          "hide",
          s.instances_killed_growing(), limit.cgroup ? "memory limit" : "host's memory",
          FormatBytes(limit.bytes), s.oom_kills(), Rate(s.last_instance_growth_bytes_per_hour()));
      break;
    case SuspectRule::kRestartReset:
      suspect.reason = fmt::format(
          "grew in each of its last {} instances until they were restarted (the last rose {} "
          "buckets over {}, {}): a leak that restarts hide",
          s.instances_died_climbing(), s.last_instance_rise(),
          Hours(s.last_instance_climb_seconds()), Rate(s.last_instance_growth_bytes_per_hour()));
      break;
  }
  if (s.spans_gap) {
    suspect.reason +=
        fmt::format(" (the series has gaps longer than {})", Hours(config_.max_gap_seconds));
  }
}

void LeakDetector::AdvanceTo(int64_t now_s) {
  for (SeriesId id = 0; id < impl_->states.size(); ++id) AdvanceSeriesTo(id, now_s);
}

void LeakDetector::AdvanceSeriesTo(SeriesId series, int64_t now_s) {
  const SeriesState& s = impl_->states[series];
  if (s.has_open_epoch() && s.epoch_start() + config_.epoch_seconds <= now_s) CloseEpoch(series);
}

std::vector<Suspect> LeakDetector::Suspects() const {
  std::vector<Suspect> out = impl_->suspects;
  std::stable_sort(out.begin(), out.end(), [](const Suspect& a, const Suspect& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.growth_bytes_per_hour > b.growth_bytes_per_hour;
  });
  return out;
}

std::vector<ComponentSuspect> LeakDetector::ComponentSuspects() const {
  const Impl& d = *impl_;
  std::vector<std::optional<ComponentSuspect>> by_component(d.components.size());
  for (const Suspect& suspect : d.suspects) {
    const uint32_t id = d.component_ids.find(suspect.component)->second;
    auto& entry = by_component[id];
    if (!entry) {
      entry = ComponentSuspect{suspect.component, suspect.first_flagged, 0,
                               d.local_drift[id].hosts_seen, 0};
    }
    entry->first_flagged = std::min(entry->first_flagged, suspect.first_flagged);
    ++entry->hosts;
    entry->max_growth_bytes_per_hour =
        std::max(entry->max_growth_bytes_per_hour, suspect.growth_bytes_per_hour);
  }
  std::vector<ComponentSuspect> out;
  for (auto& entry : by_component) {
    if (entry) out.push_back(std::move(*entry));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first_flagged < b.first_flagged; });
  return out;
}

ComponentDrift LeakDetector::LocalDrift(std::string_view component) const {
  auto it = impl_->component_ids.find(absl::string_view(component.data(), component.size()));
  return it == impl_->component_ids.end() ? ComponentDrift{} : impl_->local_drift[it->second];
}

std::vector<std::pair<std::string, ComponentDrift>> LeakDetector::LocalDrifts(
    int64_t active_since_s) const {
  const Impl& d = *impl_;
  // Counted afresh from the series still reporting; the maxima (released rises, warm-ups)
  // are the component's, whichever host showed them.
  std::vector<std::optional<ComponentDrift>> counts(d.local_drift.size());
  for (SeriesId id = 0; id < d.states.size(); ++id) {
    const SeriesState& s = d.states[id];
    if (!s.started() || s.last_sample() < active_since_s) continue;
    if (!d.host_counted[d.series_host[id]]) continue;
    const uint32_t component = d.series_component[id];
    std::optional<ComponentDrift>& c = counts[component];
    if (!c) {
      c.emplace();
      c->longest_released_rise_s = d.local_drift[component].longest_released_rise_s;
      c->longest_warmup_s = d.local_drift[component].longest_warmup_s;
    }
    ++c->hosts_seen;
    ++c->hosts_by_band[s.band];
    if (s.climbing) ++c->hosts_climbing;
    if (s.releasing) ++c->hosts_releasing;
    if (s.warmed) ++c->hosts_warmed;
  }
  std::vector<std::pair<std::string, ComponentDrift>> out;
  for (uint32_t id = 0; id < counts.size(); ++id) {
    if (counts[id]) out.emplace_back(d.components[id], *counts[id]);
  }
  return out;
}

bool LeakDetector::SetPeerDrift(std::string_view component, const ComponentDrift& peers) {
  Impl& d = *impl_;
  auto it = d.component_ids.find(absl::string_view(component.data(), component.size()));
  if (it == d.component_ids.end()) return false;
  const uint32_t id = it->second;
  if (d.local_drift.size() < d.components.size()) {
    d.local_drift.resize(d.components.size());
    d.peer_drift.resize(d.components.size());
  }
  d.peer_drift[id] = peers;
  return true;
}

void LeakDetector::ClearPeerDrift() {
  for (auto& p : impl_->peer_drift) p.reset();
}

ComponentDrift LeakDetector::FleetDrift(std::string_view component) const {
  auto it = impl_->component_ids.find(absl::string_view(component.data(), component.size()));
  return it == impl_->component_ids.end() ? ComponentDrift{} : impl_->FleetView(it->second);
}

size_t LeakDetector::series_count() const { return impl_->states.size() - impl_->free_ids.size(); }

std::vector<std::pair<std::string, std::string>> LeakDetector::ForgetSilentBefore(
    int64_t before_s) {
  Impl& d = *impl_;
  std::vector<std::pair<std::string, std::string>> forgotten;
  for (SeriesId id = 0; id < d.states.size(); ++id) {
    const SeriesState& s = d.states[id];
    // Suspects stay: their reports are resolved elsewhere, and they are few.
    if (!s.started() || s.last_sample() >= before_s || s.suspect_index >= 0) continue;
    forgotten.push_back(Forget(id));
  }
  return forgotten;
}

std::vector<std::string> LeakDetector::ForgetHost(std::string_view host) {
  Impl& d = *impl_;
  std::vector<std::string> forgotten;
  auto host_id = d.host_ids.find(absl::string_view(host.data(), host.size()));
  if (host_id == d.host_ids.end()) return forgotten;
  for (SeriesId id = 0; id < d.states.size(); ++id) {
    const SeriesState& s = d.states[id];
    if (!s.started() || d.series_host[id] != host_id->second) continue;
    forgotten.push_back(Forget(id).second);
  }
  return forgotten;
}

std::pair<std::string, std::string> LeakDetector::Forget(SeriesId id) {
  Impl& d = *impl_;
  SeriesState& s = d.states[id];
  const uint32_t host = d.series_host[id];
  const uint32_t component = d.series_component[id];
  if (d.host_counted[host]) d.CountSeries(id, -1);
  std::vector<SeriesId>& of_host = d.host_series[host];
  of_host.erase(std::find(of_host.begin(), of_host.end(), id));
  if (s.suspect_index >= 0) {
    // The last suspect takes its place.
    const auto index = static_cast<size_t>(s.suspect_index);
    const size_t last = d.suspects.size() - 1;
    if (index != last) {
      d.suspects[index] = std::move(d.suspects[last]);
      if (last < d.reason_written.size()) d.reason_written[index] = d.reason_written[last];
      d.key.assign(d.suspects[index].host);
      d.key.push_back('\0');
      d.key.append(d.suspects[index].component);
      d.states[d.series_by_key.at(d.key)].suspect_index = static_cast<int32_t>(index);
    }
    d.suspects.pop_back();
    if (d.reason_written.size() > last) d.reason_written.resize(last);
  }
  d.key.assign(d.hosts[host]);
  d.key.push_back('\0');
  d.key.append(d.components[component]);
  d.series_by_key.erase(d.key);
  s = SeriesState();
  d.instances[id].clear();
  d.free_ids.push_back(id);
  return {d.hosts[host], d.components[component]};
}

size_t LeakDetector::BytesPerSeries() {
  // The state itself, its slot in the id map, host/component ids and an instance name.
  return sizeof(SeriesState) + sizeof(std::string) + 2 * sizeof(uint32_t) +
         sizeof(std::pair<std::string, SeriesId>) + 1;
}

}  // namespace drip::analyzer
