#include "collector/pipeline/online_detector.h"

#include <algorithm>
#include <vector>

#include "common/rpc/sample_figures.h"

namespace drip::collector {
namespace {

// An exit carries no level (the next instance will say it restarted), nor does a sample
// without memory figures.
bool CarriesLevel(const drip::v1::Sample& sample) {
  return sample.memory_case() != drip::v1::Sample::kProcessExit &&
         sample.memory_case() != drip::v1::Sample::MEMORY_NOT_SET;
}

bool IsOomVictim(const drip::v1::Sample& sample) {
  return sample.memory_case() == drip::v1::Sample::kProcessExit &&
         sample.process_exit().oom_killed();
}

}  // namespace

OnlineDetector::OnlineDetector(const analyzer::DetectorConfig& config, const Clock* clock)
    : clock_(clock), detector_(config) {}

std::set<std::string> OnlineDetector::ComponentsOverQuota(const std::string& host,
                                                          const drip::v1::SampleBatch& batch,
                                                          size_t max_components) const {
  std::set<std::string> admitted;
  std::set<std::string> over;
  std::lock_guard<std::mutex> lock(mu_);
  size_t known = detector_.SeriesOfHost(host);
  for (const drip::v1::Sample& sample : batch.samples()) {
    const std::string& component = sample.component();
    if (admitted.count(component) || over.count(component) ||
        detector_.HasSeries(host, component)) {
      continue;
    }
    if (known < max_components) {
      admitted.insert(component);
      ++known;
    } else {
      over.insert(component);
    }
  }
  return over;
}

void OnlineDetector::ObserveBatch(const std::string& host, const drip::v1::SampleBatch& batch,
                                  bool streamed) {
  std::vector<const drip::v1::Sample*> samples;
  samples.reserve(static_cast<size_t>(batch.samples_size()));
  const int64_t arrived_ms = clock_->NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  // A host changes sides when its owner changes: the heir's stream counts it from then on.
  detector_.SetHostCounted(host, streamed);
  // Kills first: the exit of the instance a kill ended comes before its successor's
  // first sample, which then starts a new instance that died killed.
  for (const drip::v1::Sample& sample : batch.samples()) {
    if (IsOomVictim(sample)) ObserveVictimLocked(host, sample);
  }
  // What this host's last batch held back of its pass belongs with these samples.
  std::vector<drip::v1::Sample> held;
  if (auto it = pending_.find(host); it != pending_.end()) {
    held = std::move(it->second.samples);
    pending_.erase(it);
  }
  for (const drip::v1::Sample& sample : held) samples.push_back(&sample);
  int64_t newest_ms = INT64_MIN;
  for (const drip::v1::Sample& sample : batch.samples()) {
    if (!CarriesLevel(sample)) continue;
    samples.push_back(&sample);
    newest_ms = std::max(newest_ms, sample.timestamp_ms());
  }
  if (!batch.ends_pass() && newest_ms != INT64_MIN) {
    // The newest pass may go on in the next batch: hold it (copied, the batch is the
    // caller's) until that batch, a newer pass or a quiet spell.
    PendingPass& pending = pending_[host];
    pending.arrived_ms = arrived_ms;
    auto newest = std::stable_partition(samples.begin(), samples.end(), [&](const auto* s) {
      return s->timestamp_ms() != newest_ms;
    });
    for (auto it = newest; it != samples.end(); ++it) {
      pending.samples.push_back(**it);
      // Known from now on: the host's quota of components counts it.
      detector_.Series(host, (*it)->component());
    }
    samples.erase(newest, samples.end());
  }
  ObservePassesLocked(host, &samples, arrived_ms);
}

void OnlineDetector::ObservePassesLocked(const std::string& host,
                                         std::vector<const drip::v1::Sample*>* samples,
                                         int64_t arrived_ms) {
  // One level per component per pass.
  std::stable_sort(samples->begin(), samples->end(), [](const auto* a, const auto* b) {
    if (a->timestamp_ms() != b->timestamp_ms()) return a->timestamp_ms() < b->timestamp_ms();
    return a->component() < b->component();
  });
  size_t begin = 0;
  while (begin < samples->size()) {
    size_t end = begin + 1;
    while (end < samples->size() &&
           (*samples)[end]->component() == (*samples)[begin]->component() &&
           (*samples)[end]->timestamp_ms() == (*samples)[begin]->timestamp_ms()) {
      ++end;
    }
    ObserveLocked(host, &(*samples)[begin], end - begin, arrived_ms);
    begin = end;
  }
}

void OnlineDetector::FlushPendingLocked(const std::string& host) {
  auto it = pending_.find(host);
  if (it == pending_.end()) return;
  PendingPass pending = std::move(it->second);
  pending_.erase(it);
  std::vector<const drip::v1::Sample*> samples;
  for (const drip::v1::Sample& sample : pending.samples) samples.push_back(&sample);
  ObservePassesLocked(host, &samples, pending.arrived_ms);
}

void OnlineDetector::ObserveVictimLocked(const std::string& host, const drip::v1::Sample& exit) {
  detector_.ObserveOomVictim(detector_.Series(host, exit.component()), exit.timestamp_ms() / 1000);
}

void OnlineDetector::ObserveLocked(const std::string& host, const drip::v1::Sample* samples[],
                                   size_t count, int64_t arrived_ms) {
  const drip::v1::Sample* unit = nullptr;
  const drip::v1::Sample* largest = nullptr;
  uint64_t largest_bytes = 0;
  uint64_t sum = 0;
  const drip::v1::Sample* largest_process = nullptr;
  uint64_t largest_process_bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t bytes = UnreclaimableBytes(*samples[i]);
    if (samples[i]->memory_case() == drip::v1::Sample::kCgroup) {
      unit = samples[i];
    } else if (largest_process == nullptr || bytes > largest_process_bytes) {
      largest_process = samples[i];
      largest_process_bytes = bytes;
    }
    sum += bytes;
    if (largest == nullptr || bytes > largest_bytes) {
      largest = samples[i];
      largest_bytes = bytes;
    }
  }
  const drip::v1::Sample& first = *samples[0];
  if (largest_process != nullptr) {
    largest_process_[{host, first.component()}] = largest_process->instance();
  }
  const int64_t timestamp_s = first.timestamp_ms() / 1000;
  const analyzer::LeakDetector::SeriesId id = detector_.Series(host, first.component());
  if (id >= last_arrival_ms_.size()) last_arrival_ms_.resize(id + 1, 0);
  last_arrival_ms_[id] = arrived_ms;
  // The sample that stands for the series carries its limit: the unit's cgroup, else the
  // largest process's.
  const drip::v1::Sample& level = unit != nullptr ? *unit : *largest;
  analyzer::LimitReading limit;
  limit.limit_bytes = LimitBytes(level);
  if (level.has_limit()) limit.oom_kills = level.limit().oom_kills();
  if (unit != nullptr) {
    detector_.Observe(id, timestamp_s, unit->instance(), UnreclaimableBytes(*unit), limit);
  } else {
    detector_.Observe(id, timestamp_s, largest->instance(), sum, limit);
  }
}

void OnlineDetector::SetHostMemory(const std::string& host, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  detector_.SetHostMemory(host, bytes);
}

void OnlineDetector::AdvanceTo(int64_t now_s) {
  const int64_t quiet_before_ms = clock_->NowMs() - kQuietAfterMs;
  std::lock_guard<std::mutex> lock(mu_);
  // A pass held for a last batch that never came (the agent stopped, or an agent that
  // does not mark its passes) is judged as it is once the host went quiet.
  std::vector<std::string> quiet;
  for (const auto& [host, pending] : pending_) {
    if (pending.arrived_ms <= quiet_before_ms) quiet.push_back(host);
  }
  for (const std::string& host : quiet) FlushPendingLocked(host);
  for (analyzer::LeakDetector::SeriesId id = 0; id < last_arrival_ms_.size(); ++id) {
    if (last_arrival_ms_[id] <= quiet_before_ms) detector_.AdvanceSeriesTo(id, now_s);
  }
}

absl::StatusOr<uint64_t> OnlineDetector::Rebuild(SeriesStore* store, int64_t since_ms,
                                                 int64_t now_ms) {
  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store->ListHosts();
  if (!hosts.ok()) return hosts.status();
  std::vector<std::pair<std::string, std::string>> series;  // (host, component)
  for (const drip::v1::HostInfo& host : *hosts) {
    if (host.memory_total_bytes() > 0) SetHostMemory(host.host(), host.memory_total_bytes());
    if (host.samples_stored() == 0 && host.replica_samples_stored() > 0) {
      // Only ever a copy here: another member counts it, until its stream comes here.
      std::lock_guard<std::mutex> lock(mu_);
      detector_.SetHostCounted(host.host(), false);
    }
    absl::StatusOr<std::vector<std::string>> components = store->ListComponents(host.host());
    if (!components.ok()) return components.status();
    for (const std::string& component : *components) series.emplace_back(host.host(), component);
  }
  return Replay(store, series, since_ms, now_ms, nullptr);
}

absl::StatusOr<uint64_t> OnlineDetector::RebuildHost(SeriesStore* store, const std::string& host,
                                                     int64_t since_ms, int64_t now_ms) {
  absl::StatusOr<std::vector<std::string>> components = store->ListComponents(host);
  if (!components.ok()) return components.status();
  std::vector<std::pair<std::string, std::string>> series;
  for (const std::string& component : *components) series.emplace_back(host, component);
  // Held throughout, so that no pass sees the host half judged (a suspect gone for a
  // moment); one host's history takes a fraction of a second.
  std::unique_lock<std::mutex> lock(mu_);
  for (const std::string& component : detector_.ForgetHost(host)) {
    largest_process_.erase({host, component});
  }
  return Replay(store, series, since_ms, now_ms, &lock);
}

absl::StatusOr<uint64_t> OnlineDetector::Replay(
    SeriesStore* store, const std::vector<std::pair<std::string, std::string>>& series,
    int64_t since_ms, int64_t now_ms, std::unique_lock<std::mutex>* held) {
  // In global time order, as the samples first came and as `dripctl analyze` replays a
  // file: a component's hosts are judged together (its shared cycle, the fleet rule), so
  // replaying host after host would judge the first hosts without the others. A window
  // of time is read at a time, sized from the last one to hold about kWindowSamples, so
  // memory stays bounded whatever the fleet and a small fleet is read in a few passes.
  constexpr int64_t kHourMs = 3600 * 1000;
  constexpr size_t kWindowSamples = 1 << 20;
  int64_t window_ms = kHourMs;
  size_t last_window_samples = 0;
  uint64_t replayed = 0;
  for (int64_t from = since_ms;; from += window_ms) {
    if (last_window_samples > 0) {
      // The previous window's density sets this one's length: an hour to a day, growing
      // at most fourfold, so a quiet stretch does not open a window onto a busy one.
      const double per_hour = static_cast<double>(last_window_samples) * kHourMs / window_ms;
      window_ms = std::clamp<int64_t>(static_cast<int64_t>(kWindowSamples / per_hour) * kHourMs,
                                      kHourMs, std::min<int64_t>(24 * kHourMs, 4 * window_ms));
    }
    const bool last = from + window_ms > now_ms;  // and whatever lies beyond now (clock skew)
    std::vector<std::pair<uint32_t, drip::v1::Sample>> window;
    for (uint32_t i = 0; i < series.size(); ++i) {
      const auto& [host, component] = series[i];
      absl::StatusOr<std::vector<drip::v1::Series>> read =
          store->ReadSeries(host, component, from, last ? 0 : from + window_ms, 0);
      if (!read.ok()) return read.status();
      for (const drip::v1::Series& one : *read) {
        for (const drip::v1::Sample& stored : one.samples()) {
          drip::v1::Sample& sample = window.emplace_back(i, stored).second;
          sample.set_component(component);
          sample.set_instance(one.instance());
        }
      }
    }
    std::stable_sort(window.begin(), window.end(), [](const auto& a, const auto& b) {
      if (a.second.timestamp_ms() != b.second.timestamp_ms()) {
        return a.second.timestamp_ms() < b.second.timestamp_ms();
      }
      return a.first < b.first;
    });
    // One level per (host, component) per pass, as ObserveBatch groups a live batch.
    std::vector<const drip::v1::Sample*> pass;
    std::unique_lock<std::mutex> lock;
    if (held == nullptr) lock = std::unique_lock<std::mutex>(mu_);
    for (size_t begin = 0; begin < window.size();) {
      size_t end = begin;
      pass.clear();
      while (end < window.size() && window[end].first == window[begin].first &&
             window[end].second.timestamp_ms() == window[begin].second.timestamp_ms()) {
        if (CarriesLevel(window[end].second)) pass.push_back(&window[end].second);
        if (IsOomVictim(window[end].second)) {
          ObserveVictimLocked(series[window[end].first].first, window[end].second);
        }
        ++end;
      }
      if (!pass.empty()) {
        ObserveLocked(series[window[begin].first].first, pass.data(), pass.size(), 0);
      }
      begin = end;
    }
    replayed += window.size();
    last_window_samples = window.size();
    if (last) break;
  }
  return replayed;
}

size_t OnlineDetector::ForgetSilentBefore(int64_t before_s) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::vector<std::pair<std::string, std::string>> forgotten =
      detector_.ForgetSilentBefore(before_s);
  for (const auto& series : forgotten) largest_process_.erase(series);
  return forgotten.size();
}

FleetSuspects OnlineDetector::Suspects(const std::string& component) const {
  FleetSuspects out;
  std::lock_guard<std::mutex> lock(mu_);
  for (analyzer::Suspect& s : detector_.Suspects()) {
    if (!component.empty() && s.component != component) continue;
    HostSuspect& host = out.hosts.emplace_back();
    auto it = largest_process_.find({s.host, s.component});
    host.process_instance = it == largest_process_.end() ? s.instance : it->second;
    host.suspect = std::move(s);
  }
  for (analyzer::ComponentSuspect& c : detector_.ComponentSuspects()) {
    if (!component.empty() && c.component != component) continue;
    out.components.push_back(std::move(c));
  }
  return out;
}

size_t OnlineDetector::suspect_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return detector_.Suspects().size();
}

size_t OnlineDetector::series_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return detector_.series_count();
}

uint64_t OnlineDetector::oom_kills_counted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return detector_.counters().oom_kills;
}

uint64_t OnlineDetector::samples_observed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return detector_.counters().samples;
}

std::vector<std::pair<std::string, analyzer::ComponentDrift>> OnlineDetector::LocalDrifts() const {
  const int64_t active_since_s = (clock_->NowMs() - kSharedDriftActiveMs) / 1000;
  std::lock_guard<std::mutex> lock(mu_);
  return detector_.LocalDrifts(active_since_s);
}

void OnlineDetector::SetPeerDrifts(const std::map<std::string, analyzer::ComponentDrift>& peers) {
  std::lock_guard<std::mutex> lock(mu_);
  detector_.ClearPeerDrift();
  for (const auto& [component, drift] : peers) detector_.SetPeerDrift(component, drift);
}

}  // namespace drip::collector
