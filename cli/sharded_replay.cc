#include "cli/sharded_replay.h"

#include <algorithm>
#include <iterator>
#include <latch>
#include <thread>
#include <tuple>

namespace drip::cli {
namespace {

// Every shard's answer to `ask`, one after another.
template <typename Ask>
auto Gathered(const std::vector<std::unique_ptr<analyzer::LeakDetector>>& detectors, Ask ask) {
  decltype(ask(*detectors.front())) out;
  for (const auto& d : detectors) {
    auto part = ask(*d);
    out.insert(out.end(), std::make_move_iterator(part.begin()),
               std::make_move_iterator(part.end()));
  }
  return out;
}

// A shard's view of a track: whether its rows are the shard's, and what the detector
// needs of them, resolved once so that the loop over tens of millions of rows does no
// string work.
struct ShardTrack {
  bool mine = false;
  analyzer::LeakDetector::SeriesId series = 0;
  analyzer::InstanceName instance{std::string_view()};
  analyzer::LimitReading limit;
};

std::vector<ShardTrack> ShardTracks(const SampleTable& table,
                                    const std::vector<int>& shard_of_series, int shard,
                                    analyzer::LeakDetector& detector) {
  std::vector<analyzer::LeakDetector::SeriesId> series_ids(table.series.size());
  for (uint32_t i = 0; i < table.series.size(); ++i) {
    if (shard_of_series[i] != shard) continue;
    const SampleSeries& s = table.series[i];
    series_ids[i] = detector.Series(table.hosts[s.host], table.components[s.component]);
  }
  std::vector<ShardTrack> tracks;
  tracks.reserve(table.tracks.size());
  for (const SampleTrack& t : table.tracks) {
    tracks.push_back({shard_of_series[t.series] == shard,
                      series_ids[t.series],
                      t.instance,
                      {t.limit_bytes, t.oom_kills}});
  }
  return tracks;
}

// Feeds `rows` (the shard's, in time order) to the detector.
void ReplayRows(const std::vector<SampleRow>& rows, const std::vector<ShardTrack>& tracks,
                analyzer::LeakDetector& detector) {
  // A few rows ahead, the series' state is fetched into the cache while the detector
  // works on this one.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i + kAhead < rows.size()) detector.Prefetch(tracks[rows[i + kAhead].track].series);
    const ShardTrack& track = tracks[rows[i].track];
    detector.Observe(track.series, rows[i].timestamp, track.instance, rows[i].bytes, track.limit);
  }
}

}  // namespace

ShardedReplay::ShardedReplay(const analyzer::DetectorConfig& config, int shards,
                             size_t rows_per_shard)
    : rows_per_shard_(std::max<size_t>(rows_per_shard, 1)) {
  for (int i = 0; i < std::max(shards, 1); ++i) {
    detectors_.push_back(std::make_unique<analyzer::LeakDetector>(config));
  }
}

void ShardedReplay::Replay(SampleTable& table) {
  rows_ = table.rows.size();
  if (table.rows.empty()) return;
  const int shards =
      static_cast<int>(std::clamp<size_t>(rows_ / rows_per_shard_, 1, detectors_.size()));
  // Components to shards, the busiest first, each to the least loaded shard so far.
  std::vector<uint64_t> rows_of_component(table.components.size(), 0);
  for (const SampleRow& row : table.rows) {
    ++rows_of_component[table.series[table.tracks[row.track].series].component];
  }
  std::vector<uint32_t> order(table.components.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(rows_of_component[b], a) < std::tie(rows_of_component[a], b);
  });
  std::vector<uint64_t> load(shards, 0);
  std::vector<int> shard_of_component(table.components.size(), 0);
  for (const uint32_t c : order) {
    const int least = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    shard_of_component[c] = least;
    load[least] += rows_of_component[c];
  }
  std::vector<int> shard_of_series(table.series.size());
  for (uint32_t i = 0; i < table.series.size(); ++i) {
    shard_of_series[i] = shard_of_component[table.series[i].component];
  }
  // Each shard takes a copy of its rows; the table's are let go once all have theirs,
  // before the shards sort theirs (a sort needs a second copy): as much memory at most as
  // one sort of the whole table.
  std::latch taken(shards);
  auto run = [&](int shard) {
    std::vector<ShardTrack> tracks = ShardTracks(table, shard_of_series, shard, *detectors_[shard]);
    std::vector<SampleRow> rows;
    rows.reserve(load[shard]);
    for (const SampleRow& row : table.rows) {
      if (tracks[row.track].mine) rows.push_back(row);
    }
    taken.arrive_and_wait();
    if (shard == 0) std::vector<SampleRow>().swap(table.rows);
    if (!table.sorted) SortRowsByTime(rows, table.min_timestamp, table.max_timestamp);
    ReplayRows(rows, tracks, *detectors_[shard]);
    detectors_[shard]->AdvanceTo(int64_t{table.max_timestamp} +
                                 detectors_[shard]->config().epoch_seconds);
  };
  std::vector<std::thread> threads;
  for (int shard = 1; shard < shards; ++shard) threads.emplace_back(run, shard);
  run(0);
  for (std::thread& t : threads) t.join();
}

std::vector<analyzer::Suspect> ShardedReplay::Suspects() const {
  std::vector<analyzer::Suspect> out =
      Gathered(detectors_, [](const analyzer::LeakDetector& d) { return d.Suspects(); });
  std::sort(out.begin(), out.end(), [](const analyzer::Suspect& a, const analyzer::Suspect& b) {
    return std::tie(b.score, b.growth_bytes_per_hour, a.host, a.component) <
           std::tie(a.score, a.growth_bytes_per_hour, b.host, b.component);
  });
  return out;
}

std::vector<analyzer::ComponentSuspect> ShardedReplay::ComponentSuspects() const {
  std::vector<analyzer::ComponentSuspect> out =
      Gathered(detectors_, [](const analyzer::LeakDetector& d) { return d.ComponentSuspects(); });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first_flagged, a.component) < std::tie(b.first_flagged, b.component);
  });
  return out;
}

analyzer::DetectorCounters ShardedReplay::counters() const {
  analyzer::DetectorCounters sum;
  for (const auto& d : detectors_) {
    const analyzer::DetectorCounters& c = d->counters();
    sum.samples += c.samples;
    sum.late_samples_folded += c.late_samples_folded;
    sum.late_samples_dropped += c.late_samples_dropped;
    sum.restarts += c.restarts;
    sum.gaps += c.gaps;
    sum.epochs_closed += c.epochs_closed;
    sum.oom_kills += c.oom_kills;
  }
  return sum;
}

}  // namespace drip::cli
