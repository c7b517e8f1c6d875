// SampleCsvReader: reads the `dripctl analyze` input, a CSV of memory samples
// (timestamp,host,component,instance,bytes, rows in any order), into a compact in-memory
// SampleTable that can be sorted by time and replayed into the leak detector. Optional
// columns, found by their header names: `version` (what each instance runs),
// `limit_bytes` (the memory limit the component runs under, its cgroup's; empty for the
// host's) and `oom_kills` (the kernel's cumulative count of OOM kills in that cgroup;
// empty when unknown).
//
// Built for tens of millions of rows: the file is read in large chunks with read(2)
// (not mmap, whose file pages would count against the process's RSS), fields are split
// by hand and parsed with std::from_chars, strings are interned into dense ids, and a
// row is 16 bytes. Every error names the file, the line and the field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/input_file.h"

namespace drip::cli {

// One sample. 16 bytes, so that 29 M rows take 464 MB (and twice that while sorting).
struct SampleRow {
  uint32_t timestamp;  // Unix seconds; 32 bits reach the year 2106
  uint32_t track;      // index into SampleTable::tracks
  uint64_t bytes;
};
static_assert(sizeof(SampleRow) == 16);

// A (host, component) pair: one series of the detector.
struct SampleSeries {
  uint32_t host;       // index into SampleTable::hosts
  uint32_t component;  // index into SampleTable::components
};

// A (series, instance, limit, kills) tuple. Rows point at tracks rather than carrying
// them, which keeps a row at 16 bytes; there are few tracks (series × restarts × the
// rare changes of a limit or a kill count).
struct SampleTrack {
  uint32_t series;  // index into SampleTable::series
  std::string instance;
  // The optional `version` column: what the instance runs (its first non-empty value),
  // kept on the instance's first track.
  std::string version;
  uint32_t first_timestamp = 0;  // the instance's earliest row (on its first track)
  uint64_t limit_bytes = 0;      // `limit_bytes`; 0 when empty: the host's memory
  std::optional<uint64_t> oom_kills = std::nullopt;  // `oom_kills`; nullopt when empty or absent
  // The instance's first track: where its version and first timestamp are kept. Tracks
  // of the same instance differ only in their limit or kill count.
  uint32_t instance_track = 0;
};

struct SampleTable {
  std::vector<std::string> hosts;
  std::vector<std::string> components;
  std::vector<SampleSeries> series;
  std::vector<SampleTrack> tracks;
  std::vector<SampleRow> rows;  // input order until SortByTime()

  uint64_t lines = 0;          // lines in the file, header and empty lines included
  uint64_t rows_skipped = 0;   // malformed rows skipped (only with skip_bad_rows)
  std::string first_skipped;   // "FILE:LINE: what is wrong" of the first skipped row
  uint32_t min_timestamp = 0;  // meaningful only when rows is not empty
  uint32_t max_timestamp = 0;
  bool sorted = true;         // rows are in non-decreasing timestamp order
  bool has_versions = false;  // some row had a non-empty `version`

  // Orders rows by timestamp, rows with equal timestamps kept in input order, so that a
  // replay is the same whatever order the file came in. Needs a second row buffer for
  // the duration of the sort; a no-op when the file was already in time order.
  void SortByTime();
};

// Orders `rows`, whose timestamps lie in [min_timestamp, max_timestamp], by timestamp;
// rows of equal time keep their order (SampleTable::SortByTime, and a replay's shards).
void SortRowsByTime(std::vector<SampleRow>& rows, uint32_t min_timestamp, uint32_t max_timestamp);

struct SampleCsvOptions {
  // Skip and count malformed rows instead of failing on the first one. A bad header, an
  // unreadable file or an over-long line is still an error.
  bool skip_bad_rows = false;
  // Size of one read(2); tests make it tiny to put rows across chunk boundaries.
  size_t chunk_bytes = 8 << 20;
  // A line longer than this is an error (most likely not a CSV file at all).
  size_t max_line_bytes = 1 << 20;
  // A regular file of this size or more is read by `parts` threads (0: one per core, at
  // most four), a part each; tests make it tiny.
  uint64_t parallel_min_bytes = 64 << 20;
  int parts = 0;
};

class SampleCsvReader {
 public:
  explicit SampleCsvReader(SampleCsvOptions options = {}) : options_(options) {}

  // Reads `path` ("-" for standard input). Errors: INVALID_ARGUMENT for a file that
  // cannot be opened or whose content is malformed, INTERNAL for a failing read.
  absl::StatusOr<SampleTable> ReadFile(const std::string& path);

 private:
  // A regular file of some size read by `parts` threads, one part each, their rows then
  // joined in file order: what one reader would make of it. Any error fails it: a later
  // part does not know its lines, and the caller reads the file again in one part.
  absl::StatusOr<SampleTable> ReadInParts(const InputFile& file, int parts) const;

  SampleCsvOptions options_;
};

}  // namespace drip::cli
