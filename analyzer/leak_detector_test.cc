#include "analyzer/leak_detector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "analyzer/testing/series_feed.h"
#include "fmt/format.h"
#include "tests/synthetic/fleet_generator.h"
#include "tests/synthetic/fleet_scorer.h"

namespace drip::analyzer {
namespace {

using testing::Feed;
using testing::kDay;
using testing::kHour;
using testing::kMiB;
using testing::kStart;
using testing::Point;
using testing::RunOneSeries;
using testing::Shape;

Point Steady(int64_t) { return {"100@1", 500 * kMiB}; }

// ---- Healthy behaviour that must not be flagged.

TEST(LeakDetectorTest, SteadyUsageWithNoiseIsNotFlagged) {
  EXPECT_TRUE(RunOneSeries(Steady).empty());
}

TEST(LeakDetectorTest, DiurnalLoadIsNotFlagged) {
  auto suspects = RunOneSeries([](int64_t t) {
    return Point{"100@1", 500 * kMiB * (1 + 0.08 * std::sin(2 * M_PI * t / kDay))};
  });
  EXPECT_TRUE(suspects.empty()) << suspects[0].reason;
}

TEST(LeakDetectorTest, GcSawtoothIsNotFlagged) {
  auto suspects = RunOneSeries([](int64_t t) {
    return Point{"100@1", 800 * kMiB * (1 + 0.3 * static_cast<double>(t % 1800) / 1800)};
  });
  EXPECT_TRUE(suspects.empty()) << suspects[0].reason;
}

TEST(LeakDetectorTest, CacheThatWarmsUpAndPlateausIsNotFlagged) {
  auto suspects = RunOneSeries([](int64_t t) {
    return Point{"100@1", 300 * kMiB * (1 + 1.2 * (1 - std::exp(-t / (2.5 * kHour))))};
  });
  EXPECT_TRUE(suspects.empty()) << suspects[0].reason;
}

TEST(LeakDetectorTest, StepChangeOnReloadIsNotFlagged) {
  auto suspects = RunOneSeries([](int64_t t) {
    return Point{"100@1", 500 * kMiB * (t >= 2 * kDay ? 1.2 : 1.0)};
  });
  EXPECT_TRUE(suspects.empty()) << suspects[0].reason;
}

TEST(LeakDetectorTest, SpikesAreNotFlagged) {
  auto suspects = RunOneSeries([](int64_t t) {
    const bool spike = (t / 60) % 97 < 8;  // 8-minute spikes every ~1.6 h
    return Point{"100@1", 500 * kMiB * (spike ? 1.8 : 1.0)};
  });
  EXPECT_TRUE(suspects.empty()) << suspects[0].reason;
}

TEST(LeakDetectorTest, RegularRestartsAreNotFlagged) {
  auto suspects = RunOneSeries([](int64_t t) {
    const int64_t k = t / (6 * kHour);
    const double since = static_cast<double>(t - k * 6 * kHour);
    return Point{fmt::format("{}@{}", 100 + k, k),
                 500 * kMiB * (1 - 0.7 * std::exp(-since / 1200))};
  });
  EXPECT_TRUE(suspects.empty()) << suspects[0].reason;
}

TEST(LeakDetectorTest, OomRestartsAfterBurstsAreNotFlagged) {
  auto suspects = RunOneSeries([](int64_t t) {
    const int64_t day = t / kDay;
    const int64_t in_day = t % kDay;
    const int64_t burst = 10 * kHour;
    double level = 500 * kMiB;
    if (in_day >= burst && in_day < burst + 1800) level *= 1 + 1.5 * (in_day - burst) / 1800.0;
    const int64_t kills = day + (in_day >= burst + 1800 ? 1 : 0);
    return Point{fmt::format("{}@{}", 100 + kills, kills), level};
  });
  EXPECT_TRUE(suspects.empty()) << suspects[0].reason;
}

// ---- Leaks that must be flagged.

TEST(LeakDetectorTest, FastLeakOnASeriesWithANormalLevelIsFlaggedWithinHours) {
  const int64_t leak_start = kDay + kDay / 2;
  auto suspects = RunOneSeries(
      [&](int64_t t) {
        return Point{"100@1",
                     400 * kMiB + (t > leak_start ? 30 * kMiB * (t - leak_start) / kHour : 0)};
      },
      2.5);
  ASSERT_EQ(suspects.size(), 1u);
  EXPECT_LT(suspects[0].first_flagged - kStart - leak_start, 8 * kHour);
  EXPECT_NEAR(suspects[0].growth_bytes_per_hour, 30 * kMiB, 3 * kMiB);
  EXPECT_EQ(suspects[0].instance, "100@1");
  EXPECT_FALSE(suspects[0].reason.empty());
}

// In its first day a series has shown no daily cycle yet, and a daily swing, a batch ramp
// or a cache filling up climbs as fast as a leak: a new series is flagged once it has
// climbed steadily for young_min_climb, past its startup grace, and no earlier.
TEST(LeakDetectorTest, FastLeakOnABrandNewSeriesIsFlaggedAfterItsFirstDay) {
  auto suspects = RunOneSeries(
      [](int64_t t) {
        return Point{"100@1", 400 * kMiB + 30 * kMiB * t / kHour};
      },
      2);
  ASSERT_EQ(suspects.size(), 1u);
  // Without a limit in sight its first day cannot tell it from a daily swing, a batch
  // ramp or a cache; once the day is seen, its climb has long left that day behind.
  const DetectorConfig defaults;
  const int64_t delay = suspects[0].first_flagged - kStart;
  EXPECT_GE(delay, defaults.established_seconds);
  EXPECT_LT(delay, defaults.startup_grace_seconds + defaults.young_min_climb_seconds + 3 * kHour);
}

TEST(LeakDetectorTest, SlowLeakOfOneMiBPerHourOn500MiBIsFlaggedWithinTwelveHours) {
  const int64_t leak_start = kDay + kDay / 2;
  auto suspects = RunOneSeries([&](int64_t t) {
    return Point{"100@1", 500 * kMiB + (t > leak_start ? kMiB * (t - leak_start) / kHour : 0)};
  });
  ASSERT_EQ(suspects.size(), 1u);
  const int64_t delay = suspects[0].first_flagged - kStart - leak_start;
  EXPECT_GT(delay, 0);
  EXPECT_LT(delay, 12 * kHour);
  EXPECT_NEAR(suspects[0].growth_bytes_per_hour, kMiB, 0.5 * kMiB);
  EXPECT_EQ(suspects[0].rule, SuspectRule::kClimbAboveNormal);
}

TEST(LeakDetectorTest, LeakUnderGcSawtoothIsFlagged) {
  auto suspects = RunOneSeries([](int64_t t) {
    const double leak = t > kDay ? 8 * kMiB * (t - kDay) / kHour : 0;
    return Point{"100@1", 800 * kMiB * (1 + 0.3 * static_cast<double>(t % 1800) / 1800) + leak};
  });
  ASSERT_EQ(suspects.size(), 1u);
  EXPECT_GT(suspects[0].first_flagged, kStart + kDay);
}

TEST(LeakDetectorTest, LeakResetByPeriodicRestartsIsStillALeak) {
  auto suspects = RunOneSeries([](int64_t t) {
    const int64_t k = t / (8 * kHour);
    const double since = static_cast<double>(t - k * 8 * kHour);
    return Point{fmt::format("{}@{}", 100 + k, k),
                 500 * kMiB * (1 - 0.5 * std::exp(-since / 1200)) + 15 * kMiB * since / kHour};
  });
  ASSERT_EQ(suspects.size(), 1u);
  EXPECT_EQ(suspects[0].rule, SuspectRule::kRestartReset);
  EXPECT_NEAR(suspects[0].growth_bytes_per_hour, 15 * kMiB, 5 * kMiB);
}

TEST(LeakDetectorTest, KernelSlabLeakIsFlagged) {
  LeakDetector detector{DetectorConfig{}};
  Feed(detector, "host-a", "kernel:slab:kmalloc-512", 3, [](int64_t t) {
    return Point{"", 60 * kMiB + (t > kDay ? 1 * kMiB * (t - kDay) / kHour : 0)};
  });
  detector.AdvanceTo(kStart + 4 * kDay);
  auto suspects = detector.Suspects();
  ASSERT_EQ(suspects.size(), 1u);
  EXPECT_EQ(suspects[0].component, "kernel:slab:kmalloc-512");
  ASSERT_EQ(detector.ComponentSuspects().size(), 1u);
  EXPECT_EQ(detector.ComponentSuspects()[0].hosts, 1);
}

// ---- Fleet view.

// A rollout that leaks slowly on many hosts is flagged sooner than the same leak on one.
TEST(LeakDetectorTest, LeakOnManyHostsIsCaughtEarlierThanOnOne) {
  const int64_t leak_start = 2 * kDay;
  auto shape = [&](int64_t t) {
    return Point{"100@1",
                 500 * kMiB + (t > leak_start ? 1.5 * kMiB * (t - leak_start) / kHour : 0)};
  };
  LeakDetector fleet{DetectorConfig{}};
  for (int h = 0; h < 10; ++h) {
    Feed(fleet, fmt::format("host-{}", h), "svc:x.service", 0, shape);  // register
  }
  // Feed all hosts interleaved in time, as a collector sees them.
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.002);
  for (int64_t t = 0; t < 4 * kDay; t += 60) {
    for (int h = 0; h < 10; ++h) {
      fleet.Observe(fmt::format("host-{}", h), "svc:x.service", kStart + t, "100@1",
                    static_cast<uint64_t>(shape(t).bytes * (1 + noise(rng))));
    }
  }
  LeakDetector single{DetectorConfig{}};
  Feed(single, "host-0", "svc:x.service", 4, shape);
  auto fleet_suspects = fleet.Suspects();
  auto single_suspects = single.Suspects();
  ASSERT_EQ(fleet_suspects.size(), 10u);
  ASSERT_EQ(single_suspects.size(), 1u);
  int64_t earliest = INT64_MAX;
  for (const auto& s : fleet_suspects) earliest = std::min(earliest, s.first_flagged);
  EXPECT_LT(earliest, single_suspects[0].first_flagged);
  EXPECT_TRUE(std::any_of(fleet_suspects.begin(), fleet_suspects.end(),
                          [](const Suspect& s) { return s.rule == SuspectRule::kFleetDrift; }));
}

TEST(LeakDetectorTest, OneNoisyHostDoesNotArmTheFleetRule) {
  LeakDetector detector{DetectorConfig{}};
  for (int h = 0; h < 10; ++h)
    Feed(detector, fmt::format("host-{}", h), "svc:x.service", 3, Steady, h);
  // host-0 wanders up and down by a few percent over hours: noisy, not leaking.
  Feed(detector, "host-noisy", "svc:x.service", 3, [](int64_t t) {
    return Point{"100@1", 500 * kMiB * (1 + 0.03 * std::sin(2 * M_PI * t / (7 * kHour)))};
  });
  EXPECT_EQ(detector.LocalDrift("svc:x.service").hosts_seen, 11);
  EXPECT_LT(detector.LocalDrift("svc:x.service").hosts_climbing, 3);
  EXPECT_TRUE(detector.Suspects().empty());
}

TEST(LeakDetectorTest, ComponentDriftMergesAcrossShards) {
  auto leak = [](int64_t t) {
    return Point{"1@1", 500 * kMiB + (t > 2 * kDay ? 3 * kMiB * (t - 2 * kDay) / kHour : 0)};
  };
  LeakDetector whole{DetectorConfig{}};
  LeakDetector shard_a{DetectorConfig{}};
  LeakDetector shard_b{DetectorConfig{}};
  for (int h = 0; h < 6; ++h) {
    const std::string host = fmt::format("host-{}", h);
    const Shape shape = h % 2 == 0 ? Shape(leak) : Shape(Steady);
    Feed(whole, host, "svc:x.service", 2.2, shape, h);
    Feed(h < 3 ? shard_a : shard_b, host, "svc:x.service", 2.2, shape, h);
  }
  ComponentDrift merged = shard_a.LocalDrift("svc:x.service");
  merged.Merge(shard_b.LocalDrift("svc:x.service"));
  EXPECT_EQ(merged, whole.LocalDrift("svc:x.service"));
  EXPECT_EQ(merged.hosts_seen, 6);
  EXPECT_GE(merged.hosts_climbing, 1);
}

TEST(LeakDetectorTest, AThinLeakOverShardsIsCaughtAsEarlyAsByOneDetectorOnceTheyShareDrift) {
  // Ten hosts leak 1.5 MiB/h from day 2, two on each of five shards (collectors): no
  // shard alone has enough climbing hosts to arm the fleet rule.
  const int64_t leak_start = 2 * kDay;
  auto bytes_at = [&](int64_t t) {
    return 500 * kMiB + (t > leak_start ? 1.5 * kMiB * (t - leak_start) / kHour : 0);
  };
  constexpr int kShards = 5;
  // One host's own climb takes half a day here, so that what the fleet rule shortens
  // shows: this checks the sharing, not how soon one host's climb is believed.
  DetectorConfig config;
  config.min_climb_seconds = 12 * kHour;
  LeakDetector whole{config};
  std::vector<std::unique_ptr<LeakDetector>> alone;
  std::vector<std::unique_ptr<LeakDetector>> sharing;
  for (int i = 0; i < kShards; ++i) {
    alone.push_back(std::make_unique<LeakDetector>(config));
    sharing.push_back(std::make_unique<LeakDetector>(config));
  }
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0, 0.002);
  for (int64_t t = 0; t < 4 * kDay; t += 60) {
    for (int h = 0; h < 2 * kShards; ++h) {
      const std::string host = fmt::format("host-{}", h);
      const auto bytes = static_cast<uint64_t>(bytes_at(t) * (1 + noise(rng)));
      whole.Observe(host, "svc:x.service", kStart + t, "100@1", bytes);
      alone[h % kShards]->Observe(host, "svc:x.service", kStart + t, "100@1", bytes);
      sharing[h % kShards]->Observe(host, "svc:x.service", kStart + t, "100@1", bytes);
    }
    // Every ten minutes each shard learns what the others' hosts do, as collectors do
    // through etcd.
    if (t % 600 == 0) {
      for (int i = 0; i < kShards; ++i) {
        ComponentDrift others;
        for (int j = 0; j < kShards; ++j) {
          if (j == i) continue;
          for (const auto& [component, drift] : sharing[j]->LocalDrifts(kStart + t - 600)) {
            if (component == "svc:x.service") others.Merge(drift);
          }
        }
        sharing[i]->SetPeerDrift("svc:x.service", others);
      }
    }
  }
  auto earliest = [](const std::vector<Suspect>& suspects) {
    int64_t e = INT64_MAX;
    for (const Suspect& s : suspects) e = std::min(e, s.first_flagged);
    return e;
  };
  auto earliest_of = [&](const std::vector<std::unique_ptr<LeakDetector>>& shards) {
    int64_t e = INT64_MAX;
    for (const auto& d : shards) e = std::min(e, earliest(d->Suspects()));
    return e;
  };
  bool fleet_rule = false;
  size_t flagged = 0;
  for (const auto& d : sharing) {
    EXPECT_EQ(d->FleetDrift("svc:x.service").hosts_seen, 2 * kShards);
    for (const Suspect& s : d->Suspects()) {
      ++flagged;
      fleet_rule = fleet_rule || s.rule == SuspectRule::kFleetDrift;
    }
  }
  EXPECT_EQ(flagged, static_cast<size_t>(2 * kShards));
  EXPECT_TRUE(fleet_rule);
  const int64_t whole_first = earliest(whole.Suspects());
  const int64_t sharing_first = earliest_of(sharing);
  const int64_t alone_first = earliest_of(alone);
  // Sharing every ten minutes costs at most an epoch against one detector seeing all.
  EXPECT_LE(sharing_first, whole_first + kHour);
  EXPECT_LT(sharing_first, alone_first);
}

TEST(LeakDetectorTest, AHostThatStoppedReportingHereIsLeftOutOfWhatTheShardShares) {
  // host-b moved to another shard after a day: that shard counts it now, so this one must
  // not share it too (it still judges and counts it locally until it is forgotten).
  LeakDetector detector{DetectorConfig{}};
  for (int64_t t = 0; t < 2 * kDay; t += 60) {
    detector.Observe("host-a", "svc:x.service", kStart + t, "1@1", 500 * kMiB);
    if (t < kDay) detector.Observe("host-b", "svc:x.service", kStart + t, "2@1", 500 * kMiB);
  }
  EXPECT_EQ(detector.LocalDrift("svc:x.service").hosts_seen, 2);
  const auto shared = detector.LocalDrifts(kStart + 2 * kDay - 600);
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_EQ(shared[0].first, "svc:x.service");
  EXPECT_EQ(shared[0].second.hosts_seen, 1);
  EXPECT_EQ(shared[0].second.hosts_by_band[0], 1);
  EXPECT_TRUE(detector.LocalDrifts(kStart + 3 * kDay).empty());
}

// Another shard's share names components; only the ones this shard has hosts of are kept,
// so that names made up by a member (or an attacker who can write to etcd) do not grow it.
TEST(LeakDetectorTest, PeerDriftIsKeptOnlyForComponentsOfThisShard) {
  LeakDetector detector{DetectorConfig{}};
  detector.Observe("host-a", "svc:x.service", kStart, "1@1", 500 * kMiB);
  ComponentDrift peers;
  peers.hosts_seen = 3;
  peers.hosts_by_band[0] = 3;
  EXPECT_TRUE(detector.SetPeerDrift("svc:x.service", peers));
  EXPECT_EQ(detector.FleetDrift("svc:x.service").hosts_seen, 4);
  EXPECT_FALSE(detector.SetPeerDrift("svc:made-up-1.service", peers));
  EXPECT_EQ(detector.FleetDrift("svc:made-up-1.service").hosts_seen, 0);
  EXPECT_TRUE(detector.LocalDrifts(kStart - 600).size() == 1u);
}

TEST(LeakDetectorTest, MergedDriftCountsSaturateInsteadOfWrapping) {
  ComponentDrift a;
  a.hosts_seen = std::numeric_limits<int32_t>::max() - 1;
  a.hosts_by_band[2] = std::numeric_limits<int32_t>::max();
  ComponentDrift b;
  b.hosts_seen = 5;
  b.hosts_by_band[2] = 1;
  a.Merge(b);
  EXPECT_EQ(a.hosts_seen, std::numeric_limits<int32_t>::max());
  EXPECT_EQ(a.hosts_by_band[2], std::numeric_limits<int32_t>::max());
}

// ---- Messy input.

TEST(LeakDetectorTest, OutOfOrderAndDuplicateSamplesGiveTheSameSuspects) {
  auto shape = [](int64_t t) {
    return Point{"100@1", 500 * kMiB + (t > kDay ? 4 * kMiB * (t - kDay) / kHour : 0)};
  };
  LeakDetector ordered{DetectorConfig{}};
  Feed(ordered, "h", "svc:x.service", 3, shape);
  LeakDetector messy{DetectorConfig{}};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 0.002);
  std::vector<std::pair<int64_t, uint64_t>> samples;
  for (int64_t t = 0; t < 3 * kDay; t += 60) {
    samples.emplace_back(t, static_cast<uint64_t>(shape(t).bytes * (1 + noise(rng))));
  }
  // Swap neighbours within 5 minutes and send every tenth sample twice.
  for (size_t i = 0; i + 4 < samples.size(); i += 5) std::swap(samples[i], samples[i + 4]);
  for (size_t i = 0; i < samples.size(); ++i) {
    messy.Observe("h", "svc:x.service", kStart + samples[i].first, "100@1", samples[i].second);
    if (i % 10 == 0)
      messy.Observe("h", "svc:x.service", kStart + samples[i].first, "100@1", samples[i].second);
  }
  ASSERT_EQ(ordered.Suspects().size(), 1u);
  ASSERT_EQ(messy.Suspects().size(), 1u);
  EXPECT_NEAR(messy.Suspects()[0].first_flagged, ordered.Suspects()[0].first_flagged, 3600);
  EXPECT_GT(messy.counters().late_samples_folded, 0u);
}

TEST(LeakDetectorTest, GapsDoNotHideALeakAndAreNamedInTheReason) {
  auto suspects = RunOneSeries([](int64_t t) {
    return Point{"100@1", 500 * kMiB + (t > kDay ? 3 * kMiB * (t - kDay) / kHour : 0)};
  });
  ASSERT_EQ(suspects.size(), 1u);
  LeakDetector detector{DetectorConfig{}};
  std::mt19937_64 rng(7);
  for (int64_t t = 0; t < 4 * kDay; t += 60) {
    if (t > 30 * kHour && t < 34 * kHour) continue;  // agent silent for 4 h
    detector.Observe(
        "h", "svc:x.service", kStart + t, "100@1",
        static_cast<uint64_t>(500 * kMiB + (t > kDay ? 3 * kMiB * (t - kDay) / kHour : 0)));
  }
  ASSERT_EQ(detector.Suspects().size(), 1u);
  EXPECT_NE(detector.Suspects()[0].reason.find("gaps"), std::string::npos);
  EXPECT_EQ(detector.counters().gaps, 1u);
}

TEST(LeakDetectorTest, SeriesThatStartsMidWindowIsJudgedOnItsOwnHistory) {
  LeakDetector detector{DetectorConfig{}};
  // Starts at day 2 and warms a cache: not a leak; another starts at day 2 and leaks fast.
  for (int64_t t = 2 * kDay; t < 4 * kDay; t += 60) {
    const double age = static_cast<double>(t - 2 * kDay);
    detector.Observe("h", "svc:cache.service", kStart + t, "1@1",
                     static_cast<uint64_t>(200 * kMiB * (1 + 0.8 * (1 - std::exp(-age / 3600)))));
    detector.Observe("h", "svc:leak.service", kStart + t, "1@1",
                     static_cast<uint64_t>(200 * kMiB + 20 * kMiB * age / kHour));
  }
  auto suspects = detector.Suspects();
  ASSERT_EQ(suspects.size(), 1u);
  EXPECT_EQ(suspects[0].component, "svc:leak.service");
}

TEST(LeakDetectorTest, EtaToOomComesFromHostMemory) {
  LeakDetector detector{DetectorConfig{}};
  detector.SetHostMemory("h", 4ull << 30);
  const int64_t leak_start = kDay + kDay / 2;
  Feed(detector, "h", "svc:x.service", 2, [&](int64_t t) {
    return Point{"1@1", 1024 * kMiB + (t > leak_start ? 64 * kMiB * (t - leak_start) / kHour : 0)};
  });
  auto suspects = detector.Suspects();
  ASSERT_EQ(suspects.size(), 1u);
  ASSERT_TRUE(suspects[0].eta_to_oom_seconds.has_value());
  // Headroom / growth, both read off the floor: roughly (4 GiB - now) / 64 MiB/h.
  const double expected = (4096.0 * kMiB - suspects[0].current_bytes) / (64 * kMiB) * kHour;
  EXPECT_NEAR(*suspects[0].eta_to_oom_seconds, expected, 0.2 * expected);
}

// Components that come and go (one per job or container) must not grow the detector
// without bound: a series silent past the horizon is forgotten, its slot reused, and its
// component's host counts drop as if it had never been seen; a suspect is kept.
TEST(LeakDetectorTest, SilentSeriesAreForgottenAndTheirSlotsReused) {
  LeakDetector detector{DetectorConfig{}};
  for (int i = 0; i < 100; ++i) {
    detector.Observe("h", "proc:job-" + std::to_string(i), kStart + i * 60, "1@1", 100 * kMiB);
  }
  const int64_t leak_start = kDay + kDay / 2;
  Feed(detector, "h", "svc:x.service", 2, [&](int64_t t) {
    return Point{"1@1", 1024 * kMiB + (t > leak_start ? 64 * kMiB * (t - leak_start) / kHour : 0)};
  });
  ASSERT_EQ(detector.Suspects().size(), 1u);
  EXPECT_EQ(detector.series_count(), 101u);
  EXPECT_EQ(detector.SeriesOfHost("h"), 101u);

  const auto forgotten = detector.ForgetSilentBefore(kStart + kDay);
  EXPECT_EQ(forgotten.size(), 100u);
  EXPECT_EQ(detector.series_count(), 1u);
  EXPECT_EQ(detector.SeriesOfHost("h"), 1u);
  EXPECT_FALSE(detector.HasSeries("h", "proc:job-7"));
  EXPECT_EQ(detector.LocalDrift("proc:job-7").hosts_seen, 0);
  ASSERT_EQ(detector.Suspects().size(), 1u);  // kept, silent or not
  EXPECT_EQ(detector.Suspects()[0].component, "svc:x.service");

  // A new series takes a freed slot and starts afresh.
  detector.Observe("h", "proc:job-7", kStart + 3 * kDay, "2@1", 5 * kMiB);
  EXPECT_TRUE(detector.HasSeries("h", "proc:job-7"));
  EXPECT_EQ(detector.series_count(), 2u);
  EXPECT_EQ(detector.LocalDrift("proc:job-7").hosts_seen, 1);
  EXPECT_EQ(detector.Suspects().size(), 1u);
}

// A member whose copy of a host was repaired judges the host again from its history:
// every series of the host goes, suspects too, and the other hosts' suspects stay whole.
TEST(LeakDetectorTest, ForgettingAHostDropsItsSuspectsAndKeepsTheOthers) {
  LeakDetector detector{DetectorConfig{}};
  const int64_t leak_start = kDay + kDay / 2;
  for (const char* host : {"a", "b", "c"}) {
    Feed(detector, host, "svc:x.service", 2, [&](int64_t t) {
      return Point{"1@1",
                   1024 * kMiB + (t > leak_start ? 64 * kMiB * (t - leak_start) / kHour : 0)};
    });
    detector.Observe(host, "proc:quiet", kStart + 2 * kDay, "2@1", 10 * kMiB);
  }
  ASSERT_EQ(detector.Suspects().size(), 3u);
  const int hosts_seen = detector.LocalDrift("svc:x.service").hosts_seen;

  // "a" holds the first suspect slot: the last one moves into it and goes on.
  const std::vector<std::string> forgotten = detector.ForgetHost("a");
  EXPECT_EQ(std::set<std::string>(forgotten.begin(), forgotten.end()),
            (std::set<std::string>{"svc:x.service", "proc:quiet"}));
  EXPECT_EQ(detector.SeriesOfHost("a"), 0u);
  EXPECT_FALSE(detector.HasSeries("a", "svc:x.service"));
  EXPECT_EQ(detector.LocalDrift("svc:x.service").hosts_seen, hosts_seen - 1);
  std::set<std::string> suspected;
  for (const Suspect& s : detector.Suspects()) suspected.insert(s.host);
  EXPECT_EQ(suspected, (std::set<std::string>{"b", "c"}));
  EXPECT_TRUE(detector.ForgetHost("no-such-host").empty());

  // The moved suspect is still its series': more growth updates it, not a new one.
  const uint64_t before = detector.Suspects().size();
  for (int64_t t = 2 * kDay; t < 2 * kDay + kDay / 2; t += 60) {
    detector.Observe("c", "svc:x.service", kStart + t, "1@1",
                     1024 * kMiB + 64 * kMiB * (t - leak_start) / kHour);
  }
  EXPECT_EQ(detector.Suspects().size(), before);
  detector.ForgetHost("c");
  ASSERT_EQ(detector.Suspects().size(), 1u);
  EXPECT_EQ(detector.Suspects()[0].host, "b");
}

// A cluster member judges the hosts it keeps copies of, but their owner counts them in
// the fleet drift: a copy that counted too would count each such host twice.
TEST(LeakDetectorTest, HostsKeptAsCopiesAreJudgedButNotCountedInTheFleetDrift) {
  LeakDetector detector{DetectorConfig{}};
  const int64_t leak_start = kDay + kDay / 2;
  detector.SetHostCounted("copy", false);
  for (const char* host : {"own", "copy"}) {
    Feed(detector, host, "svc:x.service", 2, [&](int64_t t) {
      return Point{"1@1",
                   1024 * kMiB + (t > leak_start ? 64 * kMiB * (t - leak_start) / kHour : 0)};
    });
  }
  EXPECT_EQ(detector.Suspects().size(), 2u) << "a copy is judged like any host";
  ComponentDrift drift = detector.LocalDrift("svc:x.service");
  EXPECT_EQ(drift.hosts_seen, 1);
  EXPECT_EQ(drift.hosts_climbing, 1);
  auto shared = detector.LocalDrifts(0);
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_EQ(shared[0].second.hosts_seen, 1);

  // Its owner died and its stream came here: it counts from now on, with its state.
  detector.SetHostCounted("copy", true);
  drift = detector.LocalDrift("svc:x.service");
  EXPECT_EQ(drift.hosts_seen, 2);
  EXPECT_EQ(drift.hosts_climbing, 2);
  detector.SetHostCounted("own", false);
  detector.SetHostCounted("own", false);
  EXPECT_EQ(detector.LocalDrift("svc:x.service").hosts_seen, 1);
  // Forgetting an uncounted host takes nothing more away.
  detector.ForgetHost("own");
  EXPECT_EQ(detector.LocalDrift("svc:x.service").hosts_seen, 1);
  EXPECT_EQ(detector.LocalDrift("svc:x.service").hosts_climbing, 1);
}

TEST(LeakDetectorTest, PerSeriesStateStaysSmall) {
  std::printf("detector state per series: %zu bytes\n", LeakDetector::BytesPerSeries());
  // Under a kilobyte: a million series fit a collector's gigabyte.
  EXPECT_LE(LeakDetector::BytesPerSeries(), 1000u);
}

// ---- The fixed seeded suite: every pattern at once, on a small fleet.

TEST(LeakDetectorTest, SeededSyntheticFleetMeetsPrecisionAndRecallTargets) {
  for (uint64_t seed : {1, 2}) {
    synthetic::FleetGenerator fleet(synthetic::FleetGenerator::TestSuite(seed));
    LeakDetector detector{DetectorConfig{}};
    std::vector<LeakDetector::SeriesId> ids;
    for (const auto& s : fleet.series()) ids.push_back(detector.Series(s.host, s.component));
    fleet.ForEachSample([&](size_t i, const synthetic::SyntheticSample& sample) {
      detector.Observe(ids[i], sample.timestamp_s, sample.instance, sample.bytes);
    });
    detector.AdvanceTo(fleet.spec().start_s + fleet.spec().duration_s + kHour);
    std::vector<synthetic::Flag> flags;
    for (const Suspect& s : detector.Suspects())
      flags.push_back({s.host, s.component, s.first_flagged});
    const synthetic::FleetScore score = synthetic::ScoreFleet(fleet.series(), flags);
    std::string mistakes;
    for (const auto& m : score.mistakes) mistakes += "\n  " + m;
    EXPECT_GE(score.per_series.precision(), 0.95) << "seed " << seed << mistakes;
    EXPECT_GE(score.per_series.recall(), 0.95) << "seed " << seed << mistakes;
    EXPECT_GE(score.per_component.precision(), 0.95) << "seed " << seed << mistakes;
    EXPECT_GE(score.per_component.recall(), 0.95) << "seed " << seed << mistakes;
  }
}

}  // namespace
}  // namespace drip::analyzer
