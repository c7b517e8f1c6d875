// ShardedReplay: `dripctl analyze`'s replay of a time-sorted SampleTable through the leak
// detector, on several threads. The detector's series meet only within a component (its
// fleet drift, its shared cycles and warm-ups), so the components are split over several
// detectors, each replaying the rows of its own components in time order: every series
// is judged exactly as by one detector fed every row, and the suspects are merged.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "analyzer/detector_config.h"
#include "analyzer/leak_detector.h"
#include "cli/sample_csv_reader.h"

namespace drip::cli {

class ShardedReplay {
 public:
  // Below this many rows per shard a second thread costs more than it saves.
  static constexpr size_t kDefaultRowsPerShard = 1 << 20;

  // `shards` detectors at most (1: the calling thread alone), each given at least
  // `rows_per_shard` rows (tests make it small).
  ShardedReplay(const analyzer::DetectorConfig& config, int shards,
                size_t rows_per_shard = kDefaultRowsPerShard);

  // Feeds every row of `table` in time order (each shard sorts its own, when the table is
  // not sorted), then advances past the last sample so that the final epoch is judged
  // too. Once. Takes the table's rows: `table.rows` is empty afterwards (the tracks and
  // names stay, for the report).
  void Replay(SampleTable& table);
  // How many rows the replay took.
  uint64_t rows() const { return rows_; }

  // Merged over the shards: suspects most urgent first (score, then growth, then host
  // and component), components earliest first.
  std::vector<analyzer::Suspect> Suspects() const;
  std::vector<analyzer::ComponentSuspect> ComponentSuspects() const;
  analyzer::DetectorCounters counters() const;
  int shards() const { return static_cast<int>(detectors_.size()); }

 private:
  std::vector<std::unique_ptr<analyzer::LeakDetector>> detectors_;
  size_t rows_per_shard_;
  uint64_t rows_ = 0;
};

}  // namespace drip::cli
