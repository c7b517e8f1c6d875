#include "collector/pipeline/online_detector.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/detector_config.h"
#include "analyzer/leak_detector.h"
#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/scoped_temp_dir.h"
#include "common/base/clock.h"
#include "fmt/format.h"
#include "tests/synthetic/fleet_generator.h"

namespace drip::collector {
namespace {

using SeriesKey = std::pair<std::string, std::string>;  // (host, component)

constexpr int64_t kEpochSeconds = 15 * 60;  // the detector's default epoch

// A fleet's history as its agents would resend it: epoch after epoch, each host's whole
// epoch in one batch, host after host.
struct History {
  std::vector<std::pair<std::string, drip::v1::SampleBatch>> batches;  // (host, batch)
  int64_t end_s = 0;
};

History FleetHistory(uint64_t seed) {
  synthetic::FleetSpec spec = synthetic::FleetGenerator::HardTestSuite(seed);
  spec.hosts = 8;
  spec.duration_s = 4 * 86400;
  synthetic::FleetGenerator fleet(spec);
  std::map<std::string, std::vector<size_t>> series_of_host;
  for (size_t i = 0; i < fleet.series().size(); ++i) {
    series_of_host[fleet.series()[i].host].push_back(i);
  }
  History history;
  history.end_s = spec.start_s + spec.duration_s;
  synthetic::SyntheticSample sample;
  for (int64_t epoch = spec.start_s - spec.start_s % kEpochSeconds; epoch < history.end_s;
       epoch += kEpochSeconds) {
    for (const auto& [host, indices] : series_of_host) {
      drip::v1::SampleBatch batch;
      for (const size_t i : indices) {
        for (int64_t t = std::max(epoch, spec.start_s); t < epoch + kEpochSeconds;
             t += spec.interval_s) {
          if (!fleet.SampleAt(i, t, &sample)) continue;
          drip::v1::Sample* s = batch.add_samples();
          s->set_component(fleet.series()[i].component);
          s->set_instance(std::string(sample.instance));
          s->set_timestamp_ms(sample.timestamp_s * 1000);
          s->mutable_process()->set_anon_rss_bytes(sample.bytes);
          if (sample.limit_bytes > 0) {
            s->mutable_limit()->set_max_bytes(sample.limit_bytes);
            s->mutable_limit()->set_oom_kills(sample.oom_kills);
          }
        }
      }
      if (batch.samples_size() > 0) history.batches.emplace_back(host, std::move(batch));
    }
  }
  return history;
}

std::set<SeriesKey> Flagged(const FleetSuspects& suspects) {
  std::set<SeriesKey> out;
  for (const HostSuspect& h : suspects.hosts) out.emplace(h.suspect.host, h.suspect.component);
  return out;
}

// The same samples replayed through the analyzer alone, as `dripctl analyze` does.
std::set<SeriesKey> Replayed(const History& history) {
  analyzer::LeakDetector detector{analyzer::DetectorConfig{}};
  for (const auto& [host, batch] : history.batches) {
    for (const drip::v1::Sample& s : batch.samples()) {
      analyzer::LimitReading limit;
      if (s.has_limit()) limit = {s.limit().max_bytes(), s.limit().oom_kills()};
      detector.Observe(host, s.component(), s.timestamp_ms() / 1000, s.instance(),
                       s.process().anon_rss_bytes(), limit);
    }
  }
  detector.AdvanceTo(history.end_s + kEpochSeconds);
  std::set<SeriesKey> out;
  for (const analyzer::Suspect& s : detector.Suspects()) out.emplace(s.host, s.component);
  return out;
}

// Agents back from an outage resend days of buffered samples within seconds, while the
// pipeline advances the detector to the wall clock every few seconds. Closing a series'
// epoch then, before the rest of its samples have come, would judge a few minutes as the
// whole epoch and fold the rest into the next: the judgement would depend on when the
// pipeline happened to run. A series whose samples are still arriving is not quiet.
// Stores host h1's `batches` in a RocksDB store in `dir`, as the collector does, and
// rebuilds `detector` from it, as a restarted collector does.
absl::Status RebuildFromAStoreOf(const std::vector<drip::v1::SampleBatch>& batches,
                                 const ScopedTempDir& dir, int64_t now_ms,
                                 OnlineDetector* detector) {
  RocksDbSeriesStoreOptions options;
  options.path = dir.path();
  options.fold_interval = std::chrono::milliseconds(0);
  absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(options);
  if (!store.ok()) return store.status();
  for (const drip::v1::SampleBatch& batch : batches) {
    if (auto appended = (*store)->AppendBatch("h1", batch); !appended.ok()) {
      return appended.status();
    }
  }
  return detector->Rebuild(store->get(), 0, now_ms).status();
}

TEST(OnlineDetectorTest, HistoryResentAfterAnOutageIsJudgedAsAReplayOfItWouldBe) {
  const History history = FleetHistory(21);
  const std::set<SeriesKey> replayed = Replayed(history);
  ASSERT_GT(replayed.size(), 5u);

  FakeClock clock((history.end_s + 60) * 1000);
  OnlineDetector online(analyzer::DetectorConfig{}, &clock);
  for (const auto& [host, batch] : history.batches) {
    online.ObserveBatch(host, batch);
    online.AdvanceTo(clock.NowMs() / 1000);  // the pipeline runs between any two batches
  }
  clock.Advance(std::chrono::milliseconds(OnlineDetector::kQuietAfterMs + 1000));
  online.AdvanceTo(clock.NowMs() / 1000);
  EXPECT_EQ(Flagged(online.Suspects()), replayed);
}

// A member that came back empty judged its hosts from the few samples it got since; a
// repair then gave its store their history. Rebuilding each host from the store judges
// the fleet about as a replay of the whole history does, without a restart.
TEST(OnlineDetectorTest, AHostRebuiltFromItsRepairedHistoryIsJudgedAsAReplayOfItWouldBe) {
  const History history = FleetHistory(21);
  const std::set<SeriesKey> replayed = Replayed(history);
  ASSERT_GT(replayed.size(), 5u);

  ScopedTempDir dir;
  RocksDbSeriesStoreOptions options;
  options.path = dir.path();
  options.fold_interval = std::chrono::milliseconds(0);
  options.sync_writes = false;
  absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  FakeClock clock((history.end_s + 60) * 1000);
  OnlineDetector online(analyzer::DetectorConfig{}, &clock);
  std::map<std::string, uint64_t> sequence;
  std::set<std::string> hosts;
  for (auto [host, batch] : history.batches) {
    batch.set_sequence(++sequence[host]);
    ASSERT_TRUE((*store)->AppendBatch(host, batch).ok());
    hosts.insert(host);
    // Live, this member saw the last two hours only.
    if (batch.samples(0).timestamp_ms() >= (history.end_s - 2 * 3600) * 1000) {
      online.ObserveBatch(host, batch);
    }
  }
  ASSERT_TRUE((*store)->FoldStaged().ok());
  online.AdvanceTo(clock.NowMs() / 1000);
  EXPECT_LT(Flagged(online.Suspects()).size(), replayed.size());

  for (const std::string& host : hosts) {
    absl::StatusOr<uint64_t> replayed_samples =
        online.RebuildHost(store->get(), host, (history.end_s - 5 * 86400) * 1000, clock.NowMs());
    ASSERT_TRUE(replayed_samples.ok()) << replayed_samples.status();
    EXPECT_GT(*replayed_samples, 0u);
  }
  clock.Advance(std::chrono::milliseconds(OnlineDetector::kQuietAfterMs + 1000));
  online.AdvanceTo(clock.NowMs() / 1000);
  const std::set<SeriesKey> flagged = Flagged(online.Suspects());
  std::vector<SeriesKey> only_here;
  std::vector<SeriesKey> only_replayed;
  std::set_difference(flagged.begin(), flagged.end(), replayed.begin(), replayed.end(),
                      std::back_inserter(only_here));
  std::set_difference(replayed.begin(), replayed.end(), flagged.begin(), flagged.end(),
                      std::back_inserter(only_replayed));
  // One host at a time is not quite the global time order a replay keeps: a component's
  // hosts judged together (its shared batch cycle) may land on another of its hosts. The
  // components flagged are the same, and all but a few of the series.
  auto components = [](const std::set<SeriesKey>& keys) {
    std::set<std::string> out;
    for (const auto& [host, component] : keys) out.insert(component);
    return out;
  };
  EXPECT_EQ(components(flagged), components(replayed));
  EXPECT_LE(only_here.size() + only_replayed.size(), 2u)
      << ::testing::PrintToString(only_here) << " flagged only after the rebuild; "
      << ::testing::PrintToString(only_replayed) << " only by the replay";
}

// One sample of a process growing 1 GiB an hour from 512 MiB at `start_s`, arriving at `t`.
void SendGrowing(OnlineDetector* online, FakeClock* clock, int64_t start_s, int64_t t) {
  drip::v1::SampleBatch batch;
  drip::v1::Sample* s = batch.add_samples();
  s->set_component("proc:leaky");
  s->set_instance("100@1");
  s->set_timestamp_ms(t * 1000);
  s->mutable_process()->set_anon_rss_bytes((512ull << 20) + static_cast<uint64_t>(t - start_s) *
                                                                ((1ull << 30) / 3600));
  batch.set_ends_pass(true);  // one pass a batch, as an agent sends a small host's
  clock->Set(t * 1000);
  online->ObserveBatch("h1", batch);
  online->AdvanceTo(t);
}

// A series that stops sending (its process exited, its host died) still has its last
// epoch judged once it has been quiet for a while.
TEST(OnlineDetectorTest, TheLastEpochOfASeriesThatWentQuietIsJudged) {
  const int64_t start_s = 1'700'000'000 - 1'700'000'000 % kEpochSeconds;
  // Find the sample whose arrival flags the climb: it closes the epoch before it.
  int64_t flagging = start_s;
  {
    FakeClock clock(start_s * 1000);
    OnlineDetector online(analyzer::DetectorConfig{}, &clock);
    for (; online.suspect_count() == 0 && flagging < start_s + 2 * 86400; flagging += 60) {
      SendGrowing(&online, &clock, start_s, flagging);
    }
    ASSERT_EQ(online.suspect_count(), 1u) << "never flagged";
    flagging -= 60;
  }
  // The same series, silent from that sample on: the epoch that would flag it stays open.
  FakeClock clock(start_s * 1000);
  OnlineDetector online(analyzer::DetectorConfig{}, &clock);
  for (int64_t t = start_s; t < flagging; t += 60) SendGrowing(&online, &clock, start_s, t);
  ASSERT_EQ(online.suspect_count(), 0u);
  const int64_t epoch_end_s = flagging - flagging % kEpochSeconds;
  ASSERT_GT(epoch_end_s, flagging - 60) << "the last sample sent is in the epoch before";
  clock.Set(epoch_end_s * 1000 + OnlineDetector::kQuietAfterMs);
  online.AdvanceTo(clock.NowMs() / 1000);
  EXPECT_EQ(online.suspect_count(), 1u);
}

// A host with many processes: the agent splits each pass into batches of at most
// max_samples_per_batch and sends the units' samples last, so a service's processes and
// its unit's cgroup sample arrive in different batches. Live detection must judge the
// pass as the rebuild from the store and an offline replay do: one level, the unit's.
struct SplitPasses {
  std::vector<drip::v1::SampleBatch> batches;             // in the order the agent sends them
  std::vector<std::pair<int64_t, uint64_t>> unit_levels;  // (s, bytes): what a pass says
  int64_t end_s = 0;
};

SplitPasses LeakingUnitInSplitPasses() {
  constexpr int64_t kStart = 1'700'000'000 - 1'700'000'000 % kEpochSeconds;
  constexpr double kMiB = 1024.0 * 1024.0;
  SplitPasses out;
  out.end_s = kStart + 2 * 86400;
  uint64_t sequence = 0;
  for (int64_t t = kStart; t < out.end_s; t += 60) {
    const double leak = t > kStart + 30 * 3600 ? 6 * kMiB * (t - kStart - 30 * 3600) / 3600 : 0;
    drip::v1::SampleBatch processes;
    drip::v1::SampleBatch units;
    // The service's own processes, flat but for a wobble that makes one, then another,
    // the largest: the instance that stands for their sum changes now and then.
    for (int p = 0; p < 3; ++p) {
      drip::v1::Sample* s = processes.add_samples();
      s->set_component("svc:cache.service");
      s->set_instance(std::to_string(100 + p) + "@1");
      s->set_timestamp_ms(t * 1000);
      const double wobble = std::sin(static_cast<double>(t) / 1800 + 2.1 * p);
      s->mutable_process()->set_anon_rss_bytes(static_cast<uint64_t>((90 + wobble) * kMiB));
    }
    for (int c = 0; c < 6; ++c) {
      drip::v1::Sample* s = processes.add_samples();
      s->set_component("proc:other-" + std::to_string(c));
      s->set_instance(std::to_string(200 + c) + "@1");
      s->set_timestamp_ms(t * 1000);
      s->mutable_process()->set_anon_rss_bytes(static_cast<uint64_t>((50 + c) * kMiB));
    }
    // The unit: its kernel memory leaks (sockets, say), which no process shows.
    const auto unit_bytes = static_cast<uint64_t>(400 * kMiB + leak);
    drip::v1::Sample* unit = units.add_samples();
    unit->set_component("svc:cache.service");
    unit->set_instance("cg@4242");
    unit->set_timestamp_ms(t * 1000);
    unit->mutable_cgroup()->set_anon_bytes(unit_bytes);
    out.unit_levels.emplace_back(t, unit_bytes);
    processes.set_sequence(++sequence);
    units.set_sequence(++sequence);
    units.set_ends_pass(true);
    out.batches.push_back(std::move(processes));
    out.batches.push_back(std::move(units));
  }
  return out;
}

TEST(OnlineDetectorTest, APassSplitOverBatchesIsJudgedAsTheRebuildAndAReplayJudgeIt) {
  const SplitPasses passes = LeakingUnitInSplitPasses();

  // Offline: one level per pass, the unit's, as `dripctl analyze` replays a series.
  analyzer::LeakDetector replay{analyzer::DetectorConfig{}};
  for (const auto& [t, bytes] : passes.unit_levels) {
    replay.Observe("h1", "svc:cache.service", t, "cg@4242", bytes);
  }
  replay.AdvanceTo(passes.end_s + kEpochSeconds);
  std::set<SeriesKey> replayed;
  for (const analyzer::Suspect& s : replay.Suspects()) replayed.emplace(s.host, s.component);
  ASSERT_EQ(replayed, (std::set<SeriesKey>{{"h1", "svc:cache.service"}}));

  // Live, from an agent that marks its passes' last batch, and from one that does not
  // (it is judged a batch later, the same way).
  for (const bool marked : {true, false}) {
    FakeClock clock(passes.batches.front().samples(0).timestamp_ms());
    OnlineDetector online(analyzer::DetectorConfig{}, &clock);
    for (drip::v1::SampleBatch batch : passes.batches) {
      if (!marked) batch.set_ends_pass(false);
      clock.Set(batch.samples(0).timestamp_ms() + 2000);
      online.ObserveBatch("h1", batch);
      online.AdvanceTo(clock.NowMs() / 1000);  // the pipeline runs between any two batches
    }
    clock.Advance(std::chrono::milliseconds(OnlineDetector::kQuietAfterMs + 1000));
    online.AdvanceTo(passes.end_s + kEpochSeconds);
    EXPECT_EQ(Flagged(online.Suspects()), replayed) << (marked ? "marked" : "unmarked");
  }

  // Rebuilt from the store the batches went to.
  ScopedTempDir dir;
  FakeClock clock((passes.end_s + 3600) * 1000);
  OnlineDetector rebuilt(analyzer::DetectorConfig{}, &clock);
  ASSERT_TRUE(RebuildFromAStoreOf(passes.batches, dir, clock.NowMs(), &rebuilt).ok());
  rebuilt.AdvanceTo(passes.end_s + kEpochSeconds);
  EXPECT_EQ(Flagged(rebuilt.Suspects()), replayed);
}

// A service leaking into its cgroup's memory limit: a day flat, then 150 MiB/h from 400 MiB
// to its 1 GiB limit, where the kernel kills it (the agent sees the victim exit, and the
// cgroup counts the kill), and again after each restart. One pass a batch.
struct LimitedLeak {
  std::vector<drip::v1::SampleBatch> batches;
  std::vector<int64_t> kills_s;
  int64_t end_s = 0;
};

LimitedLeak LeakIntoLimit() {
  constexpr int64_t kStart = 1'700'000'000 - 1'700'000'000 % kEpochSeconds;
  constexpr uint64_t kMiB = 1 << 20;
  constexpr uint64_t kLimit = 1024 * kMiB;
  LimitedLeak out;
  out.end_s = kStart + 40 * 3600;
  int64_t leak_from = kStart + 26 * 3600;
  int instance = 1;
  uint64_t sequence = 0;
  for (int64_t t = kStart; t < out.end_s; t += 60) {
    drip::v1::SampleBatch batch;
    uint64_t bytes = 400 * kMiB + static_cast<uint64_t>(t % 7) * (kMiB / 4);
    if (t > leak_from) bytes += static_cast<uint64_t>(t - leak_from) * (150 * kMiB) / 3600;
    if (bytes >= kLimit) {
      // The kernel kills it at its limit; a service manager starts it again at once.
      drip::v1::Sample* exit = batch.add_samples();
      exit->set_component("svc:cache.service");
      exit->set_instance(fmt::format("{}@1", instance));
      exit->set_timestamp_ms(t * 1000);
      exit->mutable_process_exit()->set_wait_status(SIGKILL);
      exit->mutable_process_exit()->set_oom_killed(true);
      out.kills_s.push_back(t);
      ++instance;
      leak_from = t;
      bytes = 400 * kMiB;
    }
    drip::v1::Sample* s = batch.add_samples();
    s->set_component("svc:cache.service");
    s->set_instance(fmt::format("{}@1", instance));
    s->set_timestamp_ms(t * 1000);
    s->mutable_process()->set_anon_rss_bytes(bytes);
    s->mutable_limit()->set_max_bytes(kLimit);
    s->mutable_limit()->set_cgroup("/system.slice/cache.service");
    s->mutable_limit()->set_oom_kills(out.kills_s.size());
    batch.set_sequence(++sequence);
    batch.set_ends_pass(true);
    out.batches.push_back(std::move(batch));
  }
  return out;
}

// What runs out first is the cgroup's limit: the suspect says so, with its headroom and
// ETA, before the first kill; the kills are counted once each (the victim's exit and the
// cgroup's counter are the same kill), live and when rebuilt from the store, which keeps
// each sample's limit; a replay of the same levels and limits flags it too.
TEST(OnlineDetectorTest, ALeakIntoItsLimitIsFlaggedBeforeItsFirstKillAndItsKillsAreCounted) {
  const LimitedLeak leak = LeakIntoLimit();
  ASSERT_GE(leak.kills_s.size(), 2u);

  FakeClock clock(leak.batches.front().samples(0).timestamp_ms());
  OnlineDetector online(analyzer::DetectorConfig{}, &clock);
  std::optional<analyzer::Suspect> first;
  for (const drip::v1::SampleBatch& batch : leak.batches) {
    clock.Set(batch.samples(0).timestamp_ms() + 2000);
    online.ObserveBatch("h1", batch);
    online.AdvanceTo(clock.NowMs() / 1000);
    const FleetSuspects now = online.Suspects();
    if (!first && !now.hosts.empty()) first = now.hosts.front().suspect;
  }
  ASSERT_TRUE(first.has_value()) << "never flagged";
  EXPECT_LT(first->first_flagged, leak.kills_s.front());
  EXPECT_EQ(first->limited_by, "cgroup");
  EXPECT_EQ(first->limit_bytes, 1024u << 20);
  EXPECT_GT(first->headroom_bytes, 0u);
  EXPECT_LT(first->headroom_bytes, 600u << 20);
  ASSERT_TRUE(first->eta_to_oom_seconds.has_value());
  EXPECT_NEAR(*first->eta_to_oom_seconds,
              static_cast<double>(first->headroom_bytes) / first->growth_bytes_per_hour * 3600, 60);
  EXPECT_EQ(first->oom_kills, 0u);

  clock.Advance(std::chrono::milliseconds(OnlineDetector::kQuietAfterMs + 1000));
  online.AdvanceTo(leak.end_s + kEpochSeconds);
  EXPECT_EQ(online.oom_kills_counted(), leak.kills_s.size());
  const FleetSuspects live = online.Suspects();
  ASSERT_EQ(live.hosts.size(), 1u);
  EXPECT_EQ(live.hosts[0].suspect.oom_kills, leak.kills_s.size());
  EXPECT_EQ(live.hosts[0].suspect.limited_by, "cgroup");

  ScopedTempDir dir;
  FakeClock later((leak.end_s + 3600) * 1000);
  OnlineDetector rebuilt(analyzer::DetectorConfig{}, &later);
  ASSERT_TRUE(RebuildFromAStoreOf(leak.batches, dir, later.NowMs(), &rebuilt).ok());
  rebuilt.AdvanceTo(leak.end_s + kEpochSeconds);
  const FleetSuspects again = rebuilt.Suspects();
  ASSERT_EQ(again.hosts.size(), 1u);
  EXPECT_EQ(again.hosts[0].suspect.first_flagged, live.hosts[0].suspect.first_flagged);
  EXPECT_EQ(again.hosts[0].suspect.limit_bytes, 1024u << 20);
  EXPECT_EQ(again.hosts[0].suspect.oom_kills, leak.kills_s.size());
  EXPECT_EQ(rebuilt.oom_kills_counted(), leak.kills_s.size());

  analyzer::LeakDetector replay{analyzer::DetectorConfig{}};
  for (const drip::v1::SampleBatch& batch : leak.batches) {
    for (const drip::v1::Sample& s : batch.samples()) {
      if (!s.has_process()) continue;
      replay.Observe("h1", s.component(), s.timestamp_ms() / 1000, s.instance(),
                     s.process().anon_rss_bytes(), {s.limit().max_bytes(), s.limit().oom_kills()});
    }
  }
  replay.AdvanceTo(leak.end_s + kEpochSeconds);
  ASSERT_EQ(replay.Suspects().size(), 1u);
  EXPECT_EQ(replay.Suspects()[0].first_flagged, live.hosts[0].suspect.first_flagged);
  EXPECT_EQ(replay.Suspects()[0].oom_kills, leak.kills_s.size());
}

}  // namespace
}  // namespace drip::collector
