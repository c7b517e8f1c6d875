#include "collector/online_detector.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/detector_config.h"
#include "analyzer/leak_detector.h"
#include "common/base/clock.h"
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
      detector.Observe(host, s.component(), s.timestamp_ms() / 1000, s.instance(),
                       s.process().anon_rss_bytes());
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

// One sample of a process growing 1 GiB an hour from 512 MiB at `start_s`, arriving at `t`.
void SendGrowing(OnlineDetector* online, FakeClock* clock, int64_t start_s, int64_t t) {
  drip::v1::SampleBatch batch;
  drip::v1::Sample* s = batch.add_samples();
  s->set_component("proc:leaky");
  s->set_instance("100@1");
  s->set_timestamp_ms(t * 1000);
  s->mutable_process()->set_anon_rss_bytes((512ull << 20) + static_cast<uint64_t>(t - start_s) *
                                                                ((1ull << 30) / 3600));
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

}  // namespace
}  // namespace drip::collector
