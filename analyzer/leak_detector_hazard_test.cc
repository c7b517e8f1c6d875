// The hazards that fooled the detector on fleets it had never seen (docs/detector.md,
// "Evaluation"): each healthy one must not be flagged, and a leak hidden under it must be.
// Every test runs the default config.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "analyzer/leak_detector.h"
#include "analyzer/testing/series_feed.h"
#include "fmt/format.h"

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

// From `from` of the level to all of it, with time constant tau.
double WarmUp(double from, int64_t since, double tau) {
  return 1 - (1 - from) * std::exp(-static_cast<double>(since) / tau);
}

// Batch work: from `phase` each day, a ramp of `length` climbing `height`, then released
// within a quarter of an hour.
double BatchRamp(int64_t t, int64_t phase, int64_t length, double height) {
  const int64_t into = ((t - phase) % kDay + kDay) % kDay;
  if (into < length) return 1 + height * static_cast<double>(into) / length;
  if (into < length + 900) return 1 + height * (1 - static_cast<double>(into - length) / 900);
  return 1;
}

// A component of `hosts` hosts fed together, as a collector sees them; its suspects.
std::vector<Suspect> RunFleet(int hosts, double days, const std::function<Shape(int)>& shape_of) {
  LeakDetector detector{DetectorConfig{}};
  for (int h = 0; h < hosts; ++h) {
    Feed(detector, fmt::format("host-{}", h), "svc:x.service", days, shape_of(h),
         static_cast<uint32_t>(h + 1));
  }
  detector.AdvanceTo(kStart + static_cast<int64_t>(days * kDay) + kHour);
  return detector.Suspects();
}

// Per-sample noise of relative size `sd` on top of a shape, as busy real services show
// (Feed's own is ±0.2 %).
Shape Noisy(Shape shape, double sd, uint32_t seed) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  return [shape = std::move(shape), sd, rng](int64_t t) {
    Point p = shape(t);
    p.bytes *= 1 + std::normal_distribution<double>(0, sd)(*rng);
    return p;
  };
}

std::string Reasons(const std::vector<Suspect>& suspects) {
  std::string text;
  for (const Suspect& s : suspects) {
    text += fmt::format("\n  {} at +{:.1f} h: {}", s.host,
                        static_cast<double>(s.first_flagged - kStart) / kHour, s.reason);
  }
  return text;
}

// ---- Healthy hazards.

// A new version reaches every host within two hours; each restarts, warms up for an
// hour and settles 20 % higher, flat.
TEST(LeakDetectorHazardTest, VersionThatSettlesHigherOnEveryHostIsNotFlagged) {
  auto suspects = RunFleet(12, 4, [](int h) -> Shape {
    const int64_t rollout = 2 * kDay + h * 10 * 60;
    return [rollout](int64_t t) {
      if (t < rollout) return Point{"100@1", 600 * kMiB};
      return Point{"200@2", 1.2 * 600 * kMiB * WarmUp(0.3, t - rollout, kHour)};
    };
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

TEST(LeakDetectorHazardTest, BatchRampsOfHoursThatReleaseAreNotFlagged) {
  auto suspects = RunOneSeries(
      [](int64_t t) {
        return Point{"100@1", 800 * kMiB * BatchRamp(t, 3 * kHour, 10 * kHour, 0.5)};
      },
      5);
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// Daily load whose size wanders from day to day (±15 %), with a second harmonic: on some
// days every trough sits higher than the day before, on others lower.
double DailyLoad(int64_t t, double amplitude, int host) {
  const int64_t day = t / kDay;
  const double wander = 1 + 0.15 * std::sin(static_cast<double>(day * 7 + host * 3));
  const double phase = 2 * M_PI * static_cast<double>(t % kDay) / kDay;
  return 1 + amplitude * wander * (std::sin(phase) + 0.2 * std::sin(2 * phase + host));
}

TEST(LeakDetectorHazardTest, StrongDailyLoadIsNotFlagged) {
  auto suspects = RunOneSeries(
      [](int64_t t) {
        return Point{"100@1", 1000 * kMiB * (1 + 0.3 * std::sin(2 * M_PI * t / kDay))};
      },
      5);
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// An index or a kernel cache filling towards its size over a day and more.
TEST(LeakDetectorHazardTest, DailyLoadOfWanderingSizeIsNotFlagged) {
  auto suspects = RunFleet(12, 6, [](int h) -> Shape {
    return [h](int64_t t) { return Point{"100@1", 900 * kMiB * DailyLoad(t, 0.3, h)}; };
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// A reload that steps the level up by 8 % under a daily swing: for a day every hour sits
// higher than the day before, then none does.
TEST(LeakDetectorHazardTest, StepUnderADailySwingIsNotFlagged) {
  auto suspects = RunFleet(12, 6, [](int h) -> Shape {
    return [h](int64_t t) {
      const double step = h == 3 && t > 3 * kDay ? 1.08 : 1;
      return Point{"100@1", 900 * kMiB * step * DailyLoad(t, 0.3, h)};
    };
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

TEST(LeakDetectorHazardTest, GrowthThatLevelsOffOverHalfADayIsNotFlagged) {
  auto suspects = RunOneSeries(
      [](int64_t t) {
        return Point{"100@1", 400 * kMiB * (1 + 0.6 * (1 - std::exp(-t / (12.0 * kHour))))};
      },
      5);
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// The same, but taking a day and a half: for its first day it looks steady, and it is
// learnt as normal on the way up. Its slowing down shows over the whole climb.
TEST(LeakDetectorHazardTest, GrowthThatLevelsOffOverADayAndAHalfIsNotFlagged) {
  for (const double tau_hours : {24.0, 30.0, 36.0}) {
    auto suspects = RunOneSeries(
        [&](int64_t t) {
          return Point{"100@1", 900 * kMiB * (1 + 0.5 * (1 - std::exp(-t / (tau_hours * kHour))))};
        },
        5);
    EXPECT_TRUE(suspects.empty()) << "tau " << tau_hours << " h" << Reasons(suspects);
  }
}

// A component whose hosts all fill a cache towards its size, some within hours, the
// slowest over a day and a half: what the others did before they levelled off is normal
// for the slow ones too.
TEST(LeakDetectorHazardTest, HostsFillingACacheAtDifferentPacesAreNotFlagged) {
  auto suspects = RunFleet(12, 5, [](int h) -> Shape {
    const double tau = 4.0 * kHour * std::pow(9.0, h / 11.0);  // 4 h to 36 h
    return [tau](int64_t t) {
      return Point{"100@1", 500 * kMiB * (1 + 0.8 * (1 - std::exp(-t / tau)))};
    };
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// Caches, indexes and kernel slabs that fill for a day or more on noisy hosts. Over the
// last half day such growth can look steady; over the instance's life it slows down.
TEST(LeakDetectorHazardTest, NoisyCachesFillingOverADayOrMoreAreNotFlagged) {
  for (const double tau_hours : {20.0, 26.0}) {
    auto suspects = RunFleet(12, 5, [tau_hours](int h) -> Shape {
      return Noisy(
          [tau_hours](int64_t t) {
            return Point{"100@1",
                         400 * kMiB * (1 + 0.5 * (1 - std::exp(-t / (tau_hours * kHour))))};
          },
          0.004, static_cast<uint32_t>(1000 + h));
    });
    EXPECT_TRUE(suspects.empty()) << "tau " << tau_hours << " h" << Reasons(suspects);
  }
}

// A new version whose warm-up outlasts the startup grace and the relearning after it:
// three hours' time constant, so it still creeps up by a few percent half a day later.
TEST(LeakDetectorHazardTest, VersionThatTakesHoursToSettleIsNotFlagged) {
  auto suspects = RunFleet(12, 4, [](int h) -> Shape {
    const int64_t rollout = 2 * kDay + h * 10 * 60;
    return [rollout](int64_t t) {
      if (t < rollout) return Point{"100@1", 400 * kMiB};
      return Point{"200@2", 1.2 * 400 * kMiB * WarmUp(0.3, t - rollout, 3 * kHour)};
    };
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// Restarted every two and a half hours, each time before its warm-up has finished: every
// instance dies climbing, but slowing down, as no leak does.
TEST(LeakDetectorHazardTest, ServiceRestartedDuringItsWarmUpIsNotARestartLeak) {
  auto suspects = RunOneSeries(
      [](int64_t t) {
        const int64_t period = 5 * kHour / 2;
        const int64_t instance = t / period;
        return Point{fmt::format("{}@{}", 100 + instance, instance),
                     300 * kMiB * WarmUp(0.3, t - instance * period, 1.5 * kHour)};
      },
      4);
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// The same on thirty hosts with noise of 0.6 %, some filling 15 %, some 80 %. The shape
// tests are read every epoch; near its threshold one passes by chance on some epoch, and
// the flag needs it passed twice within the hour.
TEST(LeakDetectorHazardTest, CachesFillingOnManyVeryNoisyHostsAreNotFlaggedByChance) {
  auto suspects = RunFleet(30, 5, [](int h) -> Shape {
    const double tau = (20.0 + 16.0 * (h % 7) / 6.0) * kHour;  // 20 h to 36 h
    const double size = 0.15 + 0.65 * (h % 5) / 4.0;           // 15 % to 80 %
    return Noisy(
        [tau, size](int64_t t) {
          return Point{"100@1", 300 * kMiB * (1 + size * (1 - std::exp(-t / tau)))};
        },
        0.006, static_cast<uint32_t>(1000 + h));
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// Killed for memory once a day by a burst of load, on noisy hosts: between the kills the
// floor only wanders by its noise, which is no evidence of a leak however often it ends
// a little higher than it started.
TEST(LeakDetectorHazardTest, DailyOutOfMemoryKillsOnNoisyHostsAreNotARestartLeak) {
  auto suspects = RunFleet(30, 5, [](int h) -> Shape {
    // Day d's burst: from 5 h to 20 h into the day, 10 to 40 minutes long.
    auto burst_start = [h](int64_t d) { return d * kDay + (5 + (h * 7 + d * 5) % 15) * kHour; };
    auto burst_length = [h](int64_t d) { return (10 + (h * 3 + d) % 30) * int64_t{60}; };
    return Noisy(
        [=](int64_t t) {
          int64_t kills = 0;
          int64_t since = t;
          double bytes = 1;
          for (int64_t d = 0; d <= t / kDay; ++d) {
            const int64_t from = burst_start(d);
            const int64_t to = from + burst_length(d);
            if (t >= to) {
              ++kills;
              since = t - to;
            } else if (t >= from) {
              bytes += 1.5 * static_cast<double>(t - from) / static_cast<double>(to - from);
            }
          }
          bytes *= 60 * kMiB * (kills > 0 ? WarmUp(0.3, since, 900) : 1);
          return Point{fmt::format("{}@{}", 100 + kills, kills), bytes};
        },
        0.0075, static_cast<uint32_t>(2000 + h));
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// A reload steps the level up by 5–20 % on noisy hosts, then it holds. After the step the
// floor wanders by its noise: a climb that starts again from a dip and merely gets back to
// where the floor already was is no new growth.
TEST(LeakDetectorHazardTest, StepsOnReloadOnNoisyHostsAreNotFlagged) {
  auto suspects = RunFleet(30, 5, [](int h) -> Shape {
    const int64_t reload = 2 * kDay + (h % 5) * 6 * kHour;
    const double step = 1.05 + 0.15 * (h % 4) / 3.0;
    return Noisy(
        [reload, step](int64_t t) {
          return Point{"100@1", 600 * kMiB * (t >= reload ? step : 1.0)};
        },
        0.006, static_cast<uint32_t>(3000 + h));
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

TEST(LeakDetectorHazardTest, SeriesWithSeveralSilencesIsNotFlagged) {
  auto suspects = RunOneSeries(
      [](int64_t t) {
        const bool silent = (t / kHour) % 29 < 3;  // three hours silent every 29
        return Point{"100@1", 700 * kMiB, silent};
      },
      5);
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

TEST(LeakDetectorHazardTest, SlabCacheWarmingUpAfterBootIsNotFlagged) {
  LeakDetector detector{DetectorConfig{}};
  Feed(detector, "host-a", "kernel:slab:dentry", 4, [](int64_t t) {
    return Point{"", 120 * kMiB * WarmUp(0.3, t, 4 * kHour)};
  });
  detector.AdvanceTo(kStart + 4 * kDay + kHour);
  EXPECT_TRUE(detector.Suspects().empty()) << Reasons(detector.Suspects());
}

// ---- Leaks hidden under them.

// A GC sawtooth of 300 MB on a 2 GB heap, over a leak of 20 MB/h.
TEST(LeakDetectorHazardTest, LeakUnderASawtoothOfHundredsOfMegabytesIsFlagged) {
  const int64_t leak_start = 2 * kDay;
  auto suspects = RunOneSeries(
      [&](int64_t t) {
        const double sawtooth = 300 * kMiB * static_cast<double>(t % 600) / 600;
        const double leak = t > leak_start ? 20 * kMiB * (t - leak_start) / kHour : 0;
        return Point{"100@1", 2048 * kMiB + sawtooth + leak};
      },
      4);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_GT(suspects[0].first_flagged - kStart, leak_start);
  EXPECT_LT(suspects[0].first_flagged - kStart - leak_start, 12 * kHour);
}

// Restarted every day, and leaking 3 %/h in every instance.
TEST(LeakDetectorHazardTest, LeakHiddenByDailyRestartsIsFlagged) {
  auto suspects = RunOneSeries(
      [](int64_t t) {
        const int64_t instance = t / kDay;
        const int64_t since = t - instance * kDay;
        return Point{fmt::format("{}@{}", 100 + instance, instance),
                     600 * kMiB * WarmUp(0.5, since, 900) + 18 * kMiB * since / kHour};
      },
      5);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_LT(suspects[0].first_flagged - kStart, 2 * kDay);
}

// The new version settles 15 % higher and leaks 1 %/h from the start.
TEST(LeakDetectorHazardTest, LeakThatArrivesWithANewVersionIsFlagged) {
  const int64_t rollout = 2 * kDay;
  auto suspects = RunOneSeries(
      [&](int64_t t) {
        if (t < rollout) return Point{"100@1", 500 * kMiB};
        const double level = 1.15 * 500 * kMiB * WarmUp(0.3, t - rollout, kHour);
        return Point{"200@2", level + 5 * kMiB * (t - rollout) / kHour};
      },
      4);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_LT(suspects[0].first_flagged - kStart - rollout, 18 * kHour);
}

// A slab cache warms up after boot, and starts leaking a day later: flagged, and not
// before the leak.
TEST(LeakDetectorHazardTest, SlabLeakAfterItsWarmUpIsFlaggedOnlyOnceItLeaks) {
  const int64_t leak_start = 2 * kDay;
  LeakDetector detector{DetectorConfig{}};
  Feed(detector, "host-a", "kernel:slab:kmalloc-256", 4, [&](int64_t t) {
    const double leak = t > leak_start ? 1.5 * kMiB * (t - leak_start) / kHour : 0;
    return Point{"", 150 * kMiB * WarmUp(0.3, t, 4 * kHour) + leak};
  });
  detector.AdvanceTo(kStart + 4 * kDay + kHour);
  auto suspects = detector.Suspects();
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_GT(suspects[0].first_flagged - kStart, leak_start);
  EXPECT_LT(suspects[0].first_flagged - kStart - leak_start, 12 * kHour);
}

// A cache fills for a day and a half; from day 3 a leak of 0.5 %/h grows under its tail:
// flagged once the tail has faded, not on the tail.
TEST(LeakDetectorHazardTest, LeakBehindASlowWarmUpIsFlaggedOnlyOnceItLeaks) {
  const int64_t leak_start = 3 * kDay;
  auto suspects = RunOneSeries(
      [&](int64_t t) {
        const double leak = t > leak_start ? 3 * kMiB * (t - leak_start) / kHour : 0;
        return Point{"100@1", 600 * kMiB * (1 + 0.5 * (1 - std::exp(-t / (10.0 * kHour)))) + leak};
      },
      5);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_GT(suspects[0].first_flagged - kStart, leak_start);
  EXPECT_LT(suspects[0].first_flagged - kStart - leak_start, 24 * kHour);
}

// Batch ramps every day, and under them a leak of 1.5 %/h: the troughs rise.
// The same component, with one host that also leaks: flagged once it is older than the
// longest warm-up the others finished.
TEST(LeakDetectorHazardTest, LeakOnAHostOfAComponentThatWarmsUpIsFlagged) {
  auto suspects = RunFleet(12, 5, [](int h) -> Shape {
    const double tau = 4.0 * kHour * std::pow(9.0, h / 11.0);
    const double leak = h == 3 ? 4 * kMiB : 0;  // per hour
    return [tau, leak](int64_t t) {
      return Point{"100@1", 500 * kMiB * (1 + 0.8 * (1 - std::exp(-t / tau))) +
                                leak * static_cast<double>(t) / kHour};
    };
  });
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_EQ(suspects[0].host, "host-3");
}

// A component swinging ±30 % a day, the swing's size wandering; on one host a leak of
// 0.4 %/h from day 2 (10 % a day, a third of the swing). Its trough rises once a day, a
// staircase; hour by hour against the day before, it grows all day.
TEST(LeakDetectorHazardTest, SlowLeakUnderAStrongDailySwingIsFlagged) {
  constexpr int64_t kLeakStart = 2 * kDay;
  auto suspects = RunFleet(12, 6, [](int h) -> Shape {
    return [h](int64_t t) {
      const double leak = h == 3 && t > kLeakStart ? 3.6 * kMiB * (t - kLeakStart) / kHour : 0;
      return Point{"100@1", 900 * kMiB * DailyLoad(t, 0.3, h) + leak};
    };
  });
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_EQ(suspects[0].host, "host-3");
  EXPECT_GT(suspects[0].first_flagged - kStart, kLeakStart);
}

TEST(LeakDetectorHazardTest, LeakUnderDailyBatchRampsIsFlagged) {
  const int64_t leak_start = 2 * kDay;
  auto suspects = RunOneSeries(
      [&](int64_t t) {
        const double leak = t > leak_start ? 12 * kMiB * (t - leak_start) / kHour : 0;
        return Point{"100@1", 800 * kMiB * BatchRamp(t, 3 * kHour, 8 * kHour, 0.4) + leak};
      },
      5);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_GT(suspects[0].first_flagged - kStart, leak_start);
}

// ---- Danger (issue 30): a detector that knows no limit and asks every series for the
// same evidence is late exactly where it matters, and some classes still fooled it.

// Load that follows the day, on instances restarted every few hours: each is born at
// another point of the swing, and those on its rising half die climbing, several in a row.
TEST(LeakDetectorHazardTest, RestartsEveryFewHoursUnderADailySwingAreNotALeak) {
  auto suspects = RunFleet(12, 5, [](int h) -> Shape {
    const int64_t every = (3 + h % 4) * kHour;
    const int64_t offset = h * 1700;
    return [=](int64_t t) {
      const int64_t instance = (t + offset) / every;
      const int64_t since = (t + offset) % every;
      return Point{fmt::format("{}@{}", 100 + instance, instance),
                   900 * kMiB * DailyLoad(t, 0.3, h) * WarmUp(0.3, since, 900)};
    };
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// A big heap collected every two hours: a sawtooth of 400 MB, longer than any floor
// window, over a leak of 30 MiB/h.
TEST(LeakDetectorHazardTest, LeakUnderALongSawtoothOfHundredsOfMegabytesIsFlaggedWithinHours) {
  const int64_t leak_start = 2 * kDay;
  auto suspects = RunOneSeries(
      [&](int64_t t) {
        const double sawtooth = 400 * kMiB * static_cast<double>(t % (2 * kHour)) / (2 * kHour);
        const double leak = t > leak_start ? 30 * kMiB * (t - leak_start) / kHour : 0;
        return Point{"100@1", 3072 * kMiB + sawtooth + leak};
      },
      4);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_GT(suspects[0].first_flagged - kStart, leak_start);
  EXPECT_LT(suspects[0].first_flagged - kStart - leak_start, 12 * kHour) << Reasons(suspects);
}

// Restarted every day, at a time that wanders by an hour, and leaking 1 %/h in every
// instance behind a cache that refills over a few hours after each start: each instance
// slows down first (the cache) and then climbs until it is restarted (the leak).
TEST(LeakDetectorHazardTest, LeakOnAServiceRestartedDailyBehindACacheRefillIsFlagged) {
  auto suspects = RunOneSeries(
      [](int64_t t) {
        int64_t instance = t / kDay;
        int64_t began = instance * kDay + (instance * 2357) % 3600;
        if (t < began) {
          --instance;
          began = instance * kDay + (instance * 2357) % 3600;
        }
        const int64_t since = t - std::max<int64_t>(began, 0);
        return Point{fmt::format("{}@{}", 100 + instance, began),
                     700 * kMiB * WarmUp(0.3, since, 2 * kHour) + 7 * kMiB * since / kHour};
      },
      5);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_LT(suspects[0].first_flagged - kStart, 3 * kDay) << Reasons(suspects);
}

// A new service leaking 100 MiB/h from its start into a limit of 2 GiB: the kernel would
// kill it about ten hours in. It is flagged with hours to spare, whatever its age.
TEST(LeakDetectorHazardTest, AFastLeakOnANewServiceIsFlaggedHoursBeforeItsLimit) {
  constexpr uint64_t kLimit = 2048 * kMiB;
  auto suspects = RunOneSeries(
      [](int64_t t) {
        Point p{"100@1", 1024 * kMiB + 100 * kMiB * t / kHour};
        p.limit_bytes = kLimit;
        p.oom_kills = 0;
        return p;
      },
      0.5);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  const Suspect& s = suspects[0];
  EXPECT_EQ(s.rule, SuspectRule::kApproachingLimit) << s.reason;
  const int64_t kill_at = 1024 * kHour / 100;  // where the line meets the limit
  EXPECT_LT(s.first_flagged - kStart, kill_at - 2 * kHour) << s.reason;
  EXPECT_EQ(s.limited_by, "cgroup");
  EXPECT_EQ(s.limit_bytes, kLimit);
  ASSERT_TRUE(s.eta_to_oom_seconds.has_value());
  EXPECT_LT(*s.eta_to_oom_seconds, 8 * kHour);
}

// A redis-server under a benchmark writing new keys grows about 17 GiB/h from its start,
// with no cgroup limit: the host's 24 GiB is what runs out, within the hour.
TEST(LeakDetectorHazardTest, ANewServiceFillingItsHostIsFlaggedBeforeItIsFull) {
  LeakDetector detector{DetectorConfig{}};
  detector.SetHostMemory("host-a", 24 * 1024 * kMiB);
  const int64_t full = 24 * kHour / 17;  // 1 h 25 min
  Feed(detector, "host-a", "proc:redis-server", static_cast<double>(full) / kDay, [](int64_t t) {
    return Point{"100@1", 8 * kMiB + 17 * 1024 * kMiB * t / kHour};
  });
  detector.AdvanceTo(kStart + full);
  const std::vector<Suspect> suspects = detector.Suspects();
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_EQ(suspects[0].limited_by, "host");
  EXPECT_LT(suspects[0].first_flagged - kStart, full) << Reasons(suspects);
}

// One new instance a couple of hours after each start, each killed at its limit after
// climbing from its start: a leak that the kills hide, said with its kills.
TEST(LeakDetectorHazardTest, InstancesOomKilledAgainAndAgainAtTheirLimitAreALeak) {
  constexpr uint64_t kLimit = 1536 * kMiB;
  constexpr int64_t kLife = 2 * kHour + 600;  // 512 MiB to the limit at 500 MiB/h
  const int64_t leak_start = kDay + 5 * kHour;
  auto suspects = RunOneSeries(
      [&](int64_t t) {
        Point p{"100@1", 512 * kMiB};
        p.limit_bytes = kLimit;
        p.oom_kills = 0;
        if (t >= leak_start) {
          const int64_t kills = (t - leak_start) / kLife;
          const int64_t since = (t - leak_start) % kLife;
          p.instance = fmt::format("{}@{}", 200 + kills, kills);
          p.bytes = 512 * kMiB + 500 * kMiB * static_cast<double>(since) / kHour;
          p.oom_kills = static_cast<uint64_t>(kills);
        }
        return p;
      },
      2);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_GE(suspects[0].first_flagged - kStart, leak_start);
  EXPECT_LT(suspects[0].first_flagged - kStart, leak_start + 3 * kLife) << Reasons(suspects);
  EXPECT_NE(suspects[0].reason.find("OOM"), std::string::npos) << suspects[0].reason;
}

// Once a day a burst of work balloons the process into its limit in half an hour and the
// kernel kills it; it comes back at its usual size. The kills are real, but no leak.
TEST(LeakDetectorHazardTest, ABurstTheKernelKillsOnceADayIsNotALeak) {
  auto suspects = RunFleet(8, 5, [](int h) -> Shape {
    return [h](int64_t t) {
      const int64_t day = t / kDay;
      const int64_t into = t % kDay - (10 + h) * kHour;  // the burst's start, per host
      Point p{fmt::format("{}@{}", 100 + day, day), 600 * kMiB * WarmUp(0.3, t % kDay, 900)};
      if (into >= 0 && into < 1800) p.bytes += 900 * kMiB * static_cast<double>(into) / 1800;
      p.limit_bytes = 1500 * kMiB;
      p.oom_kills = static_cast<uint64_t>(day);
      return p;
    };
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// A daily batch ramp of 8 h that comes within a quarter of its limit every day: normal
// for this service, however steep and however close.
TEST(LeakDetectorHazardTest, ABatchRampThatNearsItsLimitEveryDayIsNotALeak) {
  auto suspects = RunFleet(8, 5, [](int h) -> Shape {
    return [h](int64_t t) {
      Point p{"100@1", 800 * kMiB * BatchRamp(t, (2 + h) * kHour, 8 * kHour, 0.8)};
      p.limit_bytes = static_cast<uint64_t>(1.3 * 1.8 * 800 * kMiB);
      p.oom_kills = 0;
      return p;
    };
  });
  EXPECT_TRUE(suspects.empty()) << Reasons(suspects);
}

// A version leaking 30 MiB/h rolled out (with restarts) to a cache that warms up over
// nine hours after each start: flagged within hours of its warm-up (some 17 h after the
// rollout), not days.
TEST(LeakDetectorHazardTest, ALeakRolledOutToACacheThatWarmsUpForHoursIsFlaggedWithinHours) {
  constexpr int64_t kRollout = 2 * kDay;
  auto suspects = RunFleet(12, 4, [](int h) -> Shape {
    const int64_t at = kRollout + h * 600;
    return [=](int64_t t) {
      if (t < at) return Point{"100@1", 1024 * kMiB};
      const double leak = h % 3 == 0 ? 30 * kMiB * (t - at) / kHour : 0;
      return Point{"200@2", 1024 * kMiB * WarmUp(0.2, t - at, 3 * kHour) + leak};
    };
  });
  ASSERT_EQ(suspects.size(), 4u) << Reasons(suspects);
  for (const Suspect& s : suspects) {
    const int h = std::stoi(s.host.substr(s.host.find('-') + 1));
    EXPECT_EQ(h % 3, 0) << Reasons(suspects);
    EXPECT_LT(s.first_flagged - kStart - (kRollout + h * 600), 20 * kHour) << Reasons(suspects);
  }
}

// Watching starts on an 8 GiB service already leaking 40 MiB/h (0.5 %/h) under daily
// batch ramps of 10 h: its first day cannot tell the ramp from a leak; hour by hour
// against the day before, it can, within the second.
TEST(LeakDetectorHazardTest, AFastLeakAlreadyRunningUnderDailyBatchRampsIsFlaggedWithinTwoDays) {
  auto suspects = RunOneSeries(
      [](int64_t t) {
        return Point{"100@1", 8192 * kMiB * BatchRamp(t, 3 * kHour, 10 * kHour, 0.3) +
                                  40 * kMiB * (t + 20 * kHour) / kHour};
      },
      5);
  ASSERT_EQ(suspects.size(), 1u) << Reasons(suspects);
  EXPECT_LT(suspects[0].first_flagged - kStart, 36 * kHour) << Reasons(suspects);
}

}  // namespace
}  // namespace drip::analyzer
