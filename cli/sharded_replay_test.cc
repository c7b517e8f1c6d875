// Tests of `dripctl analyze`'s replay on several threads (ShardedReplay): a table split
// over shards by component is judged exactly as one detector fed every row judges it.
#include "cli/sharded_replay.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fmt/format.h"

namespace drip::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Six components on eight hosts for five days at 300 s: two leak on two hosts each, one
// leaks on every host, one restarts daily and refills a cache; rows written in time order or
// shuffled.
std::string FleetCsv(bool shuffled) {
  std::mt19937_64 rng(29);
  std::normal_distribution<double> noise(0, 0.003);
  std::vector<std::string> lines;
  for (int64_t t = 0; t < 5 * 86400; t += 300) {
    for (int c = 0; c < 6; ++c) {
      for (int h = 0; h < 8; ++h) {
        const double hours = static_cast<double>(t) / 3600;
        double bytes = (200 + 10 * c + h) * kMiB;
        std::string instance = "1@1";
        if ((c == 1 && h < 2) || (c == 4 && h >= 6)) bytes += 6 * kMiB * hours;
        if (c == 5) bytes += 0.8 * kMiB * hours;
        if (c == 3) {
          instance = fmt::format("{}@{}", t / 86400 + 1, t / 86400 * 86400);
          // A cache refilled in the first two hours after each restart, then flat.
          bytes += 24 * kMiB * std::min(1.0, std::fmod(hours, 24.0) / 2);
        }
        bytes *= 1 + noise(rng);
        lines.push_back(fmt::format("{},web-{},svc:c{}.service,{},{},,{},\n", 1700000000 + t, h, c,
                                    instance, static_cast<uint64_t>(bytes),
                                    c == 4 ? uint64_t{2} << 30 : 0));
      }
    }
  }
  if (shuffled) std::shuffle(lines.begin(), lines.end(), rng);
  std::string csv = "timestamp,host,component,instance,bytes,version,limit_bytes,oom_kills\n";
  for (const std::string& line : lines) csv += line;
  return csv;
}

class ShardedReplayTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "drip-shard-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = (dir_ / "samples.csv").string();
    std::ofstream(path_, std::ios::binary) << FleetCsv(GetParam());
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // The replay of the file over `shards` shards of at least 1000 rows.
  ShardedReplay Replay(int shards) {
    absl::StatusOr<SampleTable> table = SampleCsvReader().ReadFile(path_);
    EXPECT_TRUE(table.ok()) << table.status();
    ShardedReplay replay(analyzer::DetectorConfig{}, shards, 1000);
    replay.Replay(*table);
    EXPECT_TRUE(table->rows.empty());
    return replay;
  }

  std::filesystem::path dir_;
  std::string path_;
};

auto Key(const analyzer::Suspect& s) {
  return std::make_tuple(s.host, s.component, s.instance, s.first_flagged, s.last_updated,
                         s.growth_since, s.growth_bytes_per_hour, s.score, s.current_bytes,
                         s.normal_bytes, s.limited_by, s.limit_bytes, s.headroom_bytes,
                         s.eta_to_oom_seconds, s.oom_kills, s.rule, s.reason);
}

TEST_P(ShardedReplayTest, ShardsJudgeEverySeriesAsOneDetectorFedEveryRow) {
  const ShardedReplay one = Replay(1);
  const ShardedReplay three = Replay(3);
  EXPECT_EQ(one.rows(), 6u * 8 * 1440);
  EXPECT_EQ(three.rows(), one.rows());

  const std::vector<analyzer::Suspect> expected = one.Suspects();
  const std::vector<analyzer::Suspect> got = three.Suspects();
  // The leaks are found (so the comparison means something), the cache refills not.
  std::vector<std::string> flagged;
  for (const analyzer::Suspect& s : expected) flagged.push_back(s.component + "/" + s.host);
  std::sort(flagged.begin(), flagged.end());
  const std::vector<std::string> leaks = {"svc:c1.service/web-0", "svc:c1.service/web-1"};
  EXPECT_TRUE(std::includes(flagged.begin(), flagged.end(), leaks.begin(), leaks.end()))
      << fmt::format("{}", fmt::join(flagged, " "));
  EXPECT_EQ(std::count_if(flagged.begin(), flagged.end(),
                          [](const std::string& f) { return f.starts_with("svc:c3."); }),
            0);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(Key(got[i]), Key(expected[i])) << got[i].component << " " << got[i].host;
  }

  const std::vector<analyzer::ComponentSuspect> components = three.ComponentSuspects();
  const std::vector<analyzer::ComponentSuspect> components_one = one.ComponentSuspects();
  ASSERT_EQ(components.size(), components_one.size());
  for (size_t i = 0; i < components.size(); ++i) {
    EXPECT_EQ(std::tie(components[i].component, components[i].first_flagged, components[i].hosts,
                       components[i].hosts_seen),
              std::tie(components_one[i].component, components_one[i].first_flagged,
                       components_one[i].hosts, components_one[i].hosts_seen));
  }

  const analyzer::DetectorCounters a = one.counters();
  const analyzer::DetectorCounters b = three.counters();
  EXPECT_EQ(std::tie(a.samples, a.late_samples_folded, a.late_samples_dropped, a.restarts, a.gaps,
                     a.epochs_closed, a.oom_kills),
            std::tie(b.samples, b.late_samples_folded, b.late_samples_dropped, b.restarts, b.gaps,
                     b.epochs_closed, b.oom_kills));
  EXPECT_EQ(b.samples, one.rows());
  EXPECT_GT(b.restarts, 0u);
}

INSTANTIATE_TEST_SUITE_P(RowOrder, ShardedReplayTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Shuffled" : "InTimeOrder"; });

}  // namespace
}  // namespace drip::cli
