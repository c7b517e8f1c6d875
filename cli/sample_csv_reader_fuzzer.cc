// Fuzzes `dripctl analyze` from its input bytes on (cli/sample_csv_reader.h, then
// cli/analyze_command.h): the CSV reader in strict and --skip-bad-rows modes over the same
// bytes, then, as RunAnalyzeCommand does, the accepted rows sorted by time, replayed into
// the leak detector and rendered as the report JSON. The replay costs little next to the
// parse and is where odd timestamps and byte counts (0, 2^64-1, years apart) end up.
//
// The bytes reach ReadFile through a memfd, so the reader's own read loop is fuzzed too:
// one parse reads in 64 KiB chunks (the whole input at once), the other in chunks of 1 to
// 32 bytes chosen by the input, which puts lines and quoted fields across reads.
//
// Oracles beyond "no crash, no sanitizer report, no timeout":
//   - strict mode accepts exactly the inputs in which skip mode skips nothing, and then
//     both read the same table: a row is good or bad whatever the mode and chunking;
//   - every id in the table points inside it, and the recorded time range covers every row;
//   - SortByTime orders rows by timestamp and keeps rows of equal time in input order.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/leak_detector.h"
#include "cli/analyze_command.h"
#include "cli/sample_csv_reader.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/mem_file.h"

namespace drip::cli {
namespace {

// Small, so that the over-long-line check is reached by inputs libFuzzer can make.
constexpr size_t kMaxLineBytes = 512;

void CheckTable(const SampleTable& t) {
  for (const SampleSeries& s : t.series) {
    FUZZ_CHECK(s.host < t.hosts.size() && s.component < t.components.size(), "series ids");
  }
  for (const SampleTrack& track : t.tracks) FUZZ_CHECK(track.series < t.series.size(), "track");
  for (const SampleRow& row : t.rows) {
    FUZZ_CHECK(row.track < t.tracks.size(), "row track %u of %zu", row.track, t.tracks.size());
    FUZZ_CHECK(row.timestamp >= t.min_timestamp && row.timestamp <= t.max_timestamp,
               "row time %u outside [%u, %u]", row.timestamp, t.min_timestamp, t.max_timestamp);
  }
  for (const std::string& host : t.hosts) FUZZ_CHECK(!host.empty(), "empty host accepted");
  for (const std::string& c : t.components) FUZZ_CHECK(!c.empty(), "empty component accepted");
}

bool SameRows(const SampleTable& a, const SampleTable& b) {
  if (a.rows.size() != b.rows.size() || a.tracks.size() != b.tracks.size()) return false;
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const SampleRow& x = a.rows[i];
    const SampleRow& y = b.rows[i];
    if (x.timestamp != y.timestamp || x.bytes != y.bytes || x.track != y.track) return false;
  }
  for (size_t i = 0; i < a.tracks.size(); ++i) {
    const SampleSeries& sa = a.series[a.tracks[i].series];
    const SampleSeries& sb = b.series[b.tracks[i].series];
    if (a.tracks[i].instance != b.tracks[i].instance || a.hosts[sa.host] != b.hosts[sb.host] ||
        a.components[sa.component] != b.components[sb.component]) {
      return false;
    }
  }
  return true;
}

void CheckSorted(const SampleTable& before, const SampleTable& after) {
  // The reader's radix sort against the standard library's stable sort.
  std::vector<SampleRow> expected = before.rows;
  std::stable_sort(expected.begin(), expected.end(), [](const SampleRow& a, const SampleRow& b) {
    return a.timestamp < b.timestamp;
  });
  FUZZ_CHECK(expected.size() == after.rows.size(), "sort lost rows");
  for (size_t i = 0; i < expected.size(); ++i) {
    const SampleRow& x = expected[i];
    const SampleRow& y = after.rows[i];
    FUZZ_CHECK(x.timestamp == y.timestamp && x.track == y.track && x.bytes == y.bytes,
               "row %zu: sorted (%u, track %u) but expected (%u, track %u)", i, y.timestamp,
               y.track, x.timestamp, x.track);
  }
}

void Analyze(SampleTable table) {
  const SampleTable unsorted = table;
  table.SortByTime();
  CheckSorted(unsorted, table);
  ShardedReplay replay(analyzer::DetectorConfig{}, 1);
  replay.Replay(table);
  const nlohmann::ordered_json report = AnalyzeReport(replay, table, "<fuzz>");
  // As RunAnalyzeCommand writes it: names from the CSV need not be UTF-8.
  (void)report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace
}  // namespace drip::cli

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace drip::cli;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const drip::fuzz::MemFile file(bytes);

  SampleCsvOptions skip;
  skip.skip_bad_rows = true;
  skip.chunk_bytes = 64 << 10;
  skip.max_line_bytes = kMaxLineBytes;
  absl::StatusOr<SampleTable> lenient = SampleCsvReader(skip).ReadFile(file.path());

  SampleCsvOptions strict;
  strict.chunk_bytes = 1 + (size > 0 ? data[size / 2] % 32 : 0);
  strict.max_line_bytes = kMaxLineBytes;
  absl::StatusOr<SampleTable> table = SampleCsvReader(strict).ReadFile(file.path());

  if (lenient.ok()) {
    CheckTable(*lenient);
    FUZZ_CHECK(lenient->rows.size() + lenient->rows_skipped <= lenient->lines,
               "%zu rows and %llu skipped from %llu lines", lenient->rows.size(),
               static_cast<unsigned long long>(lenient->rows_skipped),
               static_cast<unsigned long long>(lenient->lines));
  }
  const bool clean = lenient.ok() && lenient->rows_skipped == 0;
  FUZZ_CHECK(table.ok() == clean, "strict: %s; skip mode: %s, %llu rows skipped",
             table.status().ToString().c_str(), lenient.status().ToString().c_str(),
             lenient.ok() ? static_cast<unsigned long long>(lenient->rows_skipped) : 0ull);
  if (table.ok()) {
    CheckTable(*table);
    FUZZ_CHECK(SameRows(*table, *lenient), "strict and skip mode read different tables");
    FUZZ_CHECK(table->lines == lenient->lines, "line counts differ");
  }
  if (lenient.ok()) Analyze(std::move(*lenient));
  return 0;
}
