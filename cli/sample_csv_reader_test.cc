// Tests of the `dripctl analyze` input reader (SampleCsvReader, SampleTable::SortByTime)
// and of the command end to end on a small generated fleet.
#include "cli/sample_csv_reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/analyze_command.h"
#include "cli/exit_codes.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

// A fresh directory per test, removed with everything in it afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "drip-csv-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string Write(const std::string& name, const std::string& content) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  absl::StatusOr<SampleTable> Read(const std::string& content, SampleCsvOptions options = {}) {
    path_ = Write("samples.csv", content);
    return SampleCsvReader(options).ReadFile(path_);
  }

  std::filesystem::path dir_;
  std::string path_;  // the file Read() wrote
};

using SampleCsvReaderTest = TempDirTest;

struct FlatRow {
  uint32_t timestamp;
  std::string host, component, instance;
  uint64_t bytes;
  bool operator==(const FlatRow&) const = default;
};

std::ostream& operator<<(std::ostream& os, const FlatRow& r) {
  return os << r.timestamp << "," << r.host << "," << r.component << "," << r.instance << ","
            << r.bytes;
}

std::vector<FlatRow> Flatten(const SampleTable& table) {
  std::vector<FlatRow> rows;
  for (const SampleRow& row : table.rows) {
    const SampleTrack& track = table.tracks[row.track];
    const SampleSeries& series = table.series[track.series];
    rows.push_back({row.timestamp, table.hosts[series.host], table.components[series.component],
                    track.instance, row.bytes});
  }
  return rows;
}

constexpr char kHeader[] = "timestamp,host,component,instance,bytes\n";

TEST_F(SampleCsvReaderTest, ReadsRowsAndInternsHostsComponentsAndInstances) {
  auto table = Read(std::string(kHeader) +
                    "100,web-1,svc:a.service,1@1,1000\n"
                    "100,web-1,svc:b.service,2@1,2000\n"
                    "160,web-1,svc:a.service,1@1,1100\n"
                    "160,web-2,svc:a.service,7@1,900\n"
                    "220,web-1,svc:a.service,3@200,500\n");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->rows.size(), 5u);
  EXPECT_EQ(table->hosts.size(), 2u);
  EXPECT_EQ(table->components.size(), 2u);
  EXPECT_EQ(table->series.size(), 3u);
  EXPECT_EQ(table->tracks.size(), 4u);  // web-1/svc:a restarted: two instances, one series
  EXPECT_EQ(table->tracks[table->rows[0].track].series, table->tracks[table->rows[4].track].series);
  EXPECT_EQ(table->min_timestamp, 100u);
  EXPECT_EQ(table->max_timestamp, 220u);
  EXPECT_TRUE(table->sorted);
  EXPECT_EQ(table->lines, 6u);
  EXPECT_EQ(Flatten(*table)[3], (FlatRow{160, "web-2", "svc:a.service", "7@1", 900}));
}

TEST_F(SampleCsvReaderTest, RejectsMissingHeaderColumnNamingIt) {
  auto table = Read("timestamp,host,component,bytes\n100,h,c,5\n");
  ASSERT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(table.status().message());
  EXPECT_NE(message.find(path_ + ":1: header"), std::string::npos) << message;
  EXPECT_NE(message.find("lacks column 'instance'"), std::string::npos) << message;
}

TEST_F(SampleCsvReaderTest, NamesEveryMissingHeaderColumnWhenTheFileHasNoHeader) {
  auto table = Read("100,h,c,i,5\n");
  ASSERT_FALSE(table.ok());
  std::string message(table.status().message());
  EXPECT_NE(message.find("lacks columns 'timestamp', 'host', 'component', 'instance', 'bytes'"),
            std::string::npos)
      << message;
}

TEST_F(SampleCsvReaderTest, NamesLineOfMalformedBytes) {
  auto table = Read(std::string(kHeader) + "100,h,c,i,5\n110,h,c,i,12x\n");
  ASSERT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(table.status().message()),
            path_ + ":3: field 'bytes': \"12x\" is not a non-negative integer");
}

TEST_F(SampleCsvReaderTest, SkipsBadRowsWhenAskedAndCountsThem) {
  SampleCsvOptions options;
  options.skip_bad_rows = true;
  auto table = Read(std::string(kHeader) +
                        "100,h,c,i,5\n"
                        "110,h,c,i,12x\n"
                        "120,,c,i,5\n"
                        "130,h,c,i,7\n"
                        "oops\n",
                    options);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows_skipped, 3u);
  EXPECT_EQ(table->first_skipped,
            path_ + ":3: field 'bytes': \"12x\" is not a non-negative integer");
}

TEST_F(SampleCsvReaderTest, AcceptsRowsInAnyOrder) {
  // Bytes mark the rows: 21 and 22 share a timestamp, as do 1 and 12.
  auto table = Read(std::string(kHeader) +
                    "300,h,c,i,3\n"
                    "100,h,c,i,1\n"
                    "200,h,c,i,21\n"
                    "200,h,c,i,22\n"
                    "100,g,c,i,12\n");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_FALSE(table->sorted);
  table->SortByTime();
  EXPECT_TRUE(table->sorted);
  std::vector<uint64_t> bytes;
  for (const SampleRow& row : table->rows) bytes.push_back(row.bytes);
  // By time; equal timestamps keep their input order.
  EXPECT_EQ(bytes, (std::vector<uint64_t>{1, 12, 21, 22, 3}));
}

TEST(SampleTableTest, SortByTimeMatchesAStableSortOverAWideRange) {
  // Timestamps spread over ~30 years: three radix passes, with many ties.
  std::mt19937 rng(7);
  SampleTable table;
  table.tracks.push_back({0, "", "", 0});
  table.min_timestamp = UINT32_MAX;
  for (uint64_t i = 0; i < 200'000; ++i) {
    uint32_t ts = 1'000'000'000u + static_cast<uint32_t>(rng() % 1'000'000'000u) / 1000 * 1000;
    table.rows.push_back({ts, 0, i});
    table.min_timestamp = std::min(table.min_timestamp, ts);
    table.max_timestamp = std::max(table.max_timestamp, ts);
  }
  table.sorted = false;
  std::vector<SampleRow> expected = table.rows;
  std::stable_sort(expected.begin(), expected.end(), [](const SampleRow& a, const SampleRow& b) {
    return a.timestamp < b.timestamp;
  });
  table.SortByTime();
  ASSERT_EQ(table.rows.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(table.rows[i].timestamp, expected[i].timestamp) << i;
    ASSERT_EQ(table.rows[i].bytes, expected[i].bytes) << i;
  }
}

TEST_F(SampleCsvReaderTest, IgnoresExtraColumnsAndTakesColumnsInAnyOrder) {
  auto table = Read(
      "bytes,region,instance,component,note,host,timestamp\n"
      "4096,eu,77@5,svc:x.service,\"free, text\",db-3,1700000000\n");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 1u);
  EXPECT_EQ(Flatten(*table)[0], (FlatRow{1700000000, "db-3", "svc:x.service", "77@5", 4096}));
}

TEST_F(SampleCsvReaderTest, OptionalVersionColumnNamesWhatEachInstanceRunsFromItsFirstValue) {
  auto table = Read(
      "timestamp,host,component,instance,bytes,version\n"
      "160,web-1,svc:a.service,1@1,1100,\n"
      "100,web-1,svc:a.service,1@1,1000,\n"
      "220,web-1,svc:a.service,1@1,1200,2.4.0\n"
      "280,web-1,svc:a.service,1@1,1200,2.4.9\n"
      "300,web-1,svc:a.service,2@300,500,2.4.1\n");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->has_versions);
  ASSERT_EQ(table->tracks.size(), 2u);
  EXPECT_EQ(table->tracks[0].version, "2.4.0");  // empty values skipped, later ones ignored
  EXPECT_EQ(table->tracks[0].first_timestamp, 100u);
  EXPECT_EQ(table->tracks[1].version, "2.4.1");
  EXPECT_EQ(table->tracks[1].first_timestamp, 300u);

  auto without = Read(std::string(kHeader) + "100,web-1,svc:a.service,1@1,1000\n");
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_FALSE(without->has_versions);
}

TEST_F(SampleCsvReaderTest, OptionalLimitAndOomKillColumnsAreReadPerRowAndMayBeEmpty) {
  auto table = Read(
      "timestamp,host,component,instance,bytes,limit_bytes,oom_kills\n"
      "100,web-1,svc:a.service,1@1,1000,4096,0\n"
      "160,web-1,svc:a.service,1@1,1100,4096,0\n"
      "220,web-1,svc:a.service,1@1,1200,8192,1\n"
      "280,web-1,svc:b.service,2@1,500,,\n");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 4u);
  // A limit or a kill count that changes is a new track of the same instance.
  ASSERT_EQ(table->tracks.size(), 3u);
  EXPECT_EQ(table->tracks[0].limit_bytes, 4096u);
  EXPECT_EQ(table->tracks[0].oom_kills, 0u);
  EXPECT_EQ(table->tracks[1].limit_bytes, 8192u);
  EXPECT_EQ(table->tracks[1].oom_kills, 1u);
  EXPECT_EQ(table->tracks[1].instance, "1@1");
  EXPECT_EQ(table->tracks[1].instance_track, 0u);
  EXPECT_EQ(table->tracks[0].first_timestamp, 100u);  // the instance's, on its first track
  // Empty: the host's memory, and no count reported.
  EXPECT_EQ(table->tracks[2].limit_bytes, 0u);
  EXPECT_FALSE(table->tracks[2].oom_kills.has_value());
  EXPECT_EQ(table->tracks[2].instance_track, 2u);

  auto bad = Read(
      "timestamp,host,component,instance,bytes,oom_kills\n"
      "100,web-1,svc:a.service,1@1,1000,3\n"
      "160,web-1,svc:a.service,1@1,1100,-1\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find(":3: field 'oom_kills': \"-1\""),
            std::string::npos)
      << bad.status();
}

// A big file is read by several threads, a part each: the table is the one a single
// reader makes, rows in file order, each instance's version and first row from the whole
// file, and an error in a later part names its line in the file.
TEST_F(SampleCsvReaderTest, ReadingInPartsMakesTheTableOneReaderMakes) {
  std::mt19937_64 rng(11);
  std::string csv = "timestamp,host,component,instance,bytes,version,limit_bytes,oom_kills\n";
  for (int i = 0; i < 20000; ++i) {
    const int series = static_cast<int>(rng() % 40);
    const int instance = static_cast<int>(rng() % 3);
    const bool versioned = rng() % 5 == 0;
    csv += fmt::format("{},web-{},svc:c{}.service,{}@1,{},{},{},{}\n", 1700000000 + rng() % 90000,
                       series % 7, series, instance, rng() % 100000,
                       versioned ? fmt::format("1.{}", i % 4) : "", (rng() % 3) << 20,
                       rng() % 4 == 0 ? std::to_string(rng() % 2) : "");
  }
  const std::string path = Write("parts.csv", csv);
  auto one = SampleCsvReader().ReadFile(path);
  ASSERT_TRUE(one.ok()) << one.status();
  for (int parts : {2, 3, 4}) {
    SampleCsvOptions options;
    options.parallel_min_bytes = 0;
    options.parts = parts;
    options.chunk_bytes = 4096;
    auto split = SampleCsvReader(options).ReadFile(path);
    ASSERT_TRUE(split.ok()) << split.status();
    EXPECT_EQ(Flatten(*split), Flatten(*one)) << parts << " parts";
    EXPECT_EQ(split->lines, one->lines);
    EXPECT_EQ(split->min_timestamp, one->min_timestamp);
    EXPECT_EQ(split->max_timestamp, one->max_timestamp);
    EXPECT_EQ(split->sorted, one->sorted);
    EXPECT_EQ(split->has_versions, one->has_versions);
    // Track by track (numbered by first sight in either), the same limits and versions.
    std::map<std::tuple<std::string, std::string, uint64_t, uint64_t>, std::string> versions[2];
    for (int k = 0; k < 2; ++k) {
      const SampleTable& t = k == 0 ? *one : *split;
      for (const SampleTrack& track : t.tracks) {
        const SampleSeries& s = t.series[track.series];
        const SampleTrack& first = t.tracks[track.instance_track];
        versions[k][{t.components[s.component], track.instance, track.limit_bytes,
                     track.oom_kills.value_or(99)}] =
            first.version + "@" + std::to_string(first.first_timestamp);
      }
    }
    EXPECT_EQ(versions[1], versions[0]) << parts << " parts";
  }

  // A bad row in the last part: its line in the whole file.
  csv += "1700000000,web-1,svc:c1.service,1@1,12x,,,\n";
  const std::string bad = Write("bad.csv", csv);
  SampleCsvOptions options;
  options.parallel_min_bytes = 0;
  options.parts = 4;
  auto failed = SampleCsvReader(options).ReadFile(bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(std::string(failed.status().message()).find(":20002: field 'bytes'"), std::string::npos)
      << failed.status();
}

TEST_F(SampleCsvReaderTest, HandlesQuotedFieldsWithCommas) {
  auto table = Read(std::string(kHeader) +
                    "100,\"web,1\",\"svc:\"\"odd\"\".service\",\"\",5\n"
                    "\"110\",\"web,1\",\"svc:\"\"odd\"\".service\",,\"6\"\n");
  ASSERT_TRUE(table.ok()) << table.status();
  auto rows = Flatten(*table);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (FlatRow{100, "web,1", "svc:\"odd\".service", "", 5}));
  EXPECT_EQ(rows[1], (FlatRow{110, "web,1", "svc:\"odd\".service", "", 6}));
  EXPECT_EQ(table->series.size(), 1u);
}

TEST_F(SampleCsvReaderTest, RejectsUnterminatedQuote) {
  auto table = Read(std::string(kHeader) + "100,\"web-1,c,i,5\n");
  ASSERT_FALSE(table.ok());
  std::string message(table.status().message());
  EXPECT_NE(message.find(path_ + ":2: field 'host': unterminated quoted field"), std::string::npos)
      << message;
}

TEST_F(SampleCsvReaderTest, HandlesCrlfAndNoTrailingNewline) {
  auto table = Read(
      "timestamp,host,component,instance,bytes\r\n"
      "100,h,c,i,5\r\n"
      "\r\n"
      "110,h,c,i,6");
  ASSERT_TRUE(table.ok()) << table.status();
  auto rows = Flatten(*table);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (FlatRow{100, "h", "c", "i", 5}));
  EXPECT_EQ(rows[1], (FlatRow{110, "h", "c", "i", 6}));
}

TEST_F(SampleCsvReaderTest, EmptyLinesAreSkippedButCounted) {
  auto table = Read(std::string("\n") + kHeader + "100,h,c,i,5\n\n\n110,h,c,i,x\n");
  ASSERT_FALSE(table.ok());
  EXPECT_NE(std::string(table.status().message()).find(path_ + ":6: field 'bytes'"),
            std::string::npos)
      << table.status();
}

TEST_F(SampleCsvReaderTest, EmptyInstanceIsAllowed) {
  auto table = Read(std::string(kHeader) + "100,kernel,kernel:slab:kmalloc-512,,5000\n");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 1u);
  EXPECT_EQ(Flatten(*table)[0], (FlatRow{100, "kernel", "kernel:slab:kmalloc-512", "", 5000}));
}

TEST_F(SampleCsvReaderTest, RejectsEmptyHost) {
  auto table = Read(std::string(kHeader) + "100,,c,i,5\n");
  ASSERT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(table.status().message()), path_ + ":2: field 'host' is empty");
}

TEST_F(SampleCsvReaderTest, RejectsEmptyComponent) {
  auto table = Read(std::string(kHeader) + "100,h,,i,5\n");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(std::string(table.status().message()), path_ + ":2: field 'component' is empty");
}

TEST_F(SampleCsvReaderTest, RejectsNegativeBytes) {
  auto table = Read(std::string(kHeader) + "100,h,c,i,-5\n");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(std::string(table.status().message()),
            path_ + ":2: field 'bytes': \"-5\" is not a non-negative integer");
}

TEST_F(SampleCsvReaderTest, RejectsMillisecondTimestampsWithAHint) {
  auto table = Read(std::string(kHeader) + "1700000000000,h,c,i,5\n");
  ASSERT_FALSE(table.ok());
  std::string message(table.status().message());
  EXPECT_NE(message.find(":2: field 'timestamp': \"1700000000000\" is not Unix seconds"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("milliseconds?"), std::string::npos) << message;
}

TEST_F(SampleCsvReaderTest, RejectsFractionalTimestamp) {
  auto table = Read(std::string(kHeader) + "100.5,h,c,i,5\n");
  ASSERT_FALSE(table.ok());
  EXPECT_NE(std::string(table.status().message()).find("field 'timestamp': \"100.5\""),
            std::string::npos)
      << table.status();
}

// Names become report fields and terminal text: invalid UTF-8 and NUL bytes are refused,
// and the error shows their bytes escaped. Valid UTF-8 names are kept.
TEST_F(SampleCsvReaderTest, RejectsNamesThatAreNotUtf8TextAndKeepsThoseThatAre) {
  const std::pair<std::string, std::string> bad[] = {
      {"100,web\xff,c,i,5\n", ":2: field 'host': \"web\\xff\" is not UTF-8 text"},
      {"100,h,svc:\xc2\x9b[2J,i,5\n", ""},  // U+009B is valid UTF-8: kept, shown escaped
      {std::string("100,h,c,i\0x,5\n", 14), ":2: field 'instance': \"i\\x00x\" is not UTF-8"},
      {"100,h,c,\xed\xa0\x80,5\n", ":2: field 'instance'"},  // a surrogate
      {"100,h,c\xe2\x82,i,5\n", ":2: field 'component'"},    // cut short
      {"100,h,c,\xc0\xaf,5\n", ":2: field 'instance'"},      // overlong '/'
  };
  for (const auto& [row, want] : bad) {
    auto table = Read(std::string(kHeader) + row);
    if (want.empty()) {
      EXPECT_TRUE(table.ok()) << table.status();
      continue;
    }
    ASSERT_FALSE(table.ok()) << row;
    EXPECT_NE(std::string(table.status().message()).find(path_ + want), std::string::npos)
        << table.status();
  }
  auto utf8 = Read(std::string(kHeader) + "100,h\xc3\xa9te,svc:caf\xc3\xa9,i,5\n");
  ASSERT_TRUE(utf8.ok()) << utf8.status();
}

TEST_F(SampleCsvReaderTest, RejectsRowWithTooFewFields) {
  auto table = Read(std::string(kHeader) + "100,h,c\n");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(std::string(table.status().message()),
            path_ + ":2: row has 3 fields, but column 'bytes' is field 5 of the header");
}

TEST_F(SampleCsvReaderTest, MissingFileErrorNamesThePath) {
  std::string path = (dir_ / "nope.csv").string();
  auto table = SampleCsvReader().ReadFile(path);
  ASSERT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(table.status().message());
  EXPECT_NE(message.find(path + ": cannot open"), std::string::npos) << message;
}

TEST_F(SampleCsvReaderTest, EmptyFileIsAnError) {
  auto table = Read("");
  ASSERT_FALSE(table.ok());
  EXPECT_NE(std::string(table.status().message()).find("no header row"), std::string::npos);
}

TEST_F(SampleCsvReaderTest, HeaderOnlyIsAnEmptyTable) {
  auto table = Read(kHeader);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->rows.empty());
}

TEST_F(SampleCsvReaderTest, RowsAcrossReadChunksAreParsedWhole) {
  std::string content = kHeader;
  std::vector<FlatRow> expected;
  for (uint32_t i = 0; i < 500; ++i) {
    FlatRow row{1000 + i, fmt::format("host-{}", i % 7), fmt::format("\"svc:{}\"", i % 3),
                fmt::format("{}@1", i % 5), uint64_t{i} * 4096};
    content += fmt::format("{},{},{},{},{}\n", row.timestamp, row.host, row.component, row.instance,
                           row.bytes);
    row.component = fmt::format("svc:{}", i % 3);
    expected.push_back(row);
  }
  SampleCsvOptions options;
  options.chunk_bytes = 7;  // smaller than a line: every line spans reads
  auto table = Read(content, options);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(Flatten(*table), expected);
}

TEST_F(SampleCsvReaderTest, RejectsOverlongLine) {
  SampleCsvOptions options;
  options.chunk_bytes = 64;
  options.max_line_bytes = 100;
  auto table = Read(std::string(kHeader) + std::string(300, 'x'), options);
  ASSERT_FALSE(table.ok());
  EXPECT_NE(std::string(table.status().message()).find(":2: line longer than 100 bytes"),
            std::string::npos)
      << table.status();
}

// Found by fuzzing (tests/fuzz/regressions/sample_csv_reader_fuzzer/): only a line still
// unfinished at the end of a read was measured, so a long line that happened to fit in
// one read was accepted.
TEST_F(SampleCsvReaderTest, RejectsOverlongLineWhereverReadsEnd) {
  const std::string content = std::string(kHeader) + "1,h,c," + std::string(300, 'i') + ",5\n";
  for (size_t chunk : {size_t{7}, size_t{64}, size_t{1} << 16}) {
    SampleCsvOptions options;
    options.chunk_bytes = chunk;
    options.max_line_bytes = 100;
    for (bool skip : {false, true}) {
      options.skip_bad_rows = skip;
      auto table = Read(content, options);
      ASSERT_FALSE(table.ok()) << "chunk " << chunk << ", skip " << skip;
      EXPECT_NE(std::string(table.status().message()).find(":2: line longer than 100 bytes"),
                std::string::npos)
          << table.status();
    }
  }
}

// ---- dripctl analyze end to end ----

using AnalyzeCommandTest = TempDirTest;

constexpr int64_t kStart = 1'700'000'000;
constexpr int64_t kStep = 60;
constexpr int64_t kDay = 86'400;

// One host, three days at 60 s: a service at 200 MB that starts leaking 20 MB/h after
// the first day, and a steady one with a little noise. Written newest first, so the
// command has to sort.
std::string LeakyAndSteadyCsv() {
  std::vector<std::string> lines;
  for (int64_t t = kStart; t < kStart + 3 * kDay; t += kStep) {
    const double hours_leaking = t < kStart + kDay ? 0.0 : (t - kStart - kDay) / 3600.0;
    const auto leaky = static_cast<uint64_t>(200e6 + 20e6 * hours_leaking);
    const auto steady = static_cast<uint64_t>(300e6 + ((t / kStep) % 7) * 100e3);
    lines.push_back(fmt::format("{},web-1,svc:leaky.service,4242@{},{}\n", t, kStart, leaky));
    lines.push_back(fmt::format("{},web-1,svc:steady.service,17@{},{}\n", t, kStart, steady));
  }
  std::string csv = "timestamp,host,component,instance,bytes\n";
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) csv += *it;
  return csv;
}

TEST_F(AnalyzeCommandTest, FlagsTheLeakingSeriesAndNotTheSteadyOne) {
  AnalyzeOptions options;
  options.input = Write("samples.csv", LeakyAndSteadyCsv());
  options.output_path = (dir_ / "report.json").string();
  std::ostringstream out, err;
  absl::Status status = RunAnalyzeCommand(options, out, err);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(out.str(), "");  // the report went to the file
  EXPECT_EQ(err.str(), "");

  std::ifstream in(options.output_path);
  ASSERT_TRUE(in) << "no report at " << options.output_path;
  nlohmann::json report = nlohmann::json::parse(in);
  bool leaky_flagged = false;
  for (const auto& s : report.at("suspects")) {
    // Every field of the contract is there.
    for (const char* key : {"host", "component", "instance", "first_flagged",
                            "growth_bytes_per_hour", "score", "reason"}) {
      EXPECT_TRUE(s.contains(key)) << key << " missing in " << s.dump();
    }
    EXPECT_NE(s.at("component"), "svc:steady.service") << s.dump();
    if (s.at("host") == "web-1" && s.at("component") == "svc:leaky.service") {
      leaky_flagged = true;
      EXPECT_EQ(s.at("instance"), fmt::format("4242@{}", kStart));
      EXPECT_GT(s.at("first_flagged").get<int64_t>(), kStart + kDay);
      EXPECT_LE(s.at("first_flagged").get<int64_t>(), kStart + 3 * kDay);
      EXPECT_GT(s.at("growth_bytes_per_hour").get<double>(), 10e6);
      EXPECT_LT(s.at("growth_bytes_per_hour").get<double>(), 30e6);
    }
  }
  EXPECT_TRUE(leaky_flagged) << report.dump(2);
  bool component_listed = false;
  for (const auto& c : report.at("components")) {
    for (const char* key : {"component", "first_flagged", "hosts"}) {
      EXPECT_TRUE(c.contains(key)) << key << " missing in " << c.dump();
    }
    EXPECT_NE(c.at("component"), "svc:steady.service");
    if (c.at("component") == "svc:leaky.service") {
      component_listed = true;
      EXPECT_EQ(c.at("hosts"), 1);
    }
  }
  EXPECT_TRUE(component_listed) << report.dump(2);
  EXPECT_EQ(report.at("summary").at("rows"), 2 * 3 * kDay / kStep);
  EXPECT_EQ(report.at("summary").at("series"), 2);
  EXPECT_EQ(report.at("summary").at("rows_skipped"), 0);

  // No temporary file is left next to the report.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 2);
}

TEST_F(AnalyzeCommandTest, WritesToStdoutWithoutOutputAndKeepsContractKeysFirst) {
  AnalyzeOptions options;
  options.input = Write("samples.csv", std::string(kHeader) + "100,h,c,i,5\n");
  std::ostringstream out, err;
  ASSERT_TRUE(RunAnalyzeCommand(options, out, err).ok());
  auto report = nlohmann::ordered_json::parse(out.str());
  auto it = report.begin();
  EXPECT_EQ(it.key(), "suspects");
  EXPECT_EQ((++it).key(), "components");
  EXPECT_TRUE(report.at("suspects").empty());
  EXPECT_EQ(report.at("summary").at("rows"), 1);
}

TEST_F(AnalyzeCommandTest, MalformedRowIsAUsageErrorNamingTheLine) {
  AnalyzeOptions options;
  options.input = Write("samples.csv", std::string(kHeader) + "100,h,c,i,5\n100,h,c,i,12x\n");
  std::ostringstream out, err;
  absl::Status status = RunAnalyzeCommand(options, out, err);
  EXPECT_EQ(ExitCodeFor(status), kExitUsage);
  EXPECT_EQ(std::string(status.message()),
            options.input + ":3: field 'bytes': \"12x\" is not a non-negative integer");
  EXPECT_EQ(out.str(), "");
}

TEST_F(AnalyzeCommandTest, SkipBadRowsReportsTheCountOnStderrAndInTheSummary) {
  AnalyzeOptions options;
  options.input =
      Write("samples.csv", std::string(kHeader) + "100,h,c,i,5\n100,h,c,i,12x\n110,,c,i,6\n");
  options.skip_bad_rows = true;
  std::ostringstream out, err;
  ASSERT_TRUE(RunAnalyzeCommand(options, out, err).ok());
  EXPECT_EQ(err.str(), "dripctl: skipped 2 bad rows (first: " + options.input +
                           ":3: field 'bytes': \"12x\" is not a non-negative integer)\n");
  auto report = nlohmann::json::parse(out.str());
  EXPECT_EQ(report.at("summary").at("rows_skipped"), 2);
  EXPECT_EQ(report.at("summary").at("rows"), 1);
}

TEST_F(AnalyzeCommandTest, UnwritableOutputFailsNamingThePath) {
  AnalyzeOptions options;
  options.input = Write("samples.csv", std::string(kHeader) + "100,h,c,i,5\n");
  options.output_path = (dir_ / "no-such-dir" / "report.json").string();
  std::ostringstream out, err;
  absl::Status status = RunAnalyzeCommand(options, out, err);
  EXPECT_EQ(ExitCodeFor(status), kExitUsage);
  EXPECT_NE(std::string(status.message()).find(options.output_path), std::string::npos) << status;
}

TEST_F(AnalyzeCommandTest, UnknownDetectorConfigKeyIsAUsageError) {
  AnalyzeOptions options;
  options.input = Write("samples.csv", std::string(kHeader) + "100,h,c,i,5\n");
  options.config_path = Write("detector.yaml", "epoch: 10m\nepoch_secnds: 60\n");
  std::ostringstream out, err;
  absl::Status status = RunAnalyzeCommand(options, out, err);
  EXPECT_EQ(ExitCodeFor(status), kExitUsage);
  EXPECT_NE(std::string(status.message()).find("epoch_secnds"), std::string::npos) << status;
}

}  // namespace
}  // namespace drip::cli
