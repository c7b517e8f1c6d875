// `dripctl analyze`: offline leak detection over a CSV of memory samples. Reads the
// file (SampleCsvReader), sorts it by time and replays it through the same LeakDetector
// the collector runs, then writes the suspects as JSON (the contract in docs/design.md,
// "Fixed contracts", plus extra fields). Needs no collector.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/detector_config.h"
#include "analyzer/leak_detector.h"
#include "cli/sample_csv_reader.h"
#include "cli/sharded_replay.h"
#include "nlohmann/json.hpp"

namespace drip::cli {

struct AnalyzeOptions {
  std::string input;        // CSV path, "-" for standard input
  std::string config_path;  // detector.yaml; empty: the detector's defaults
  std::string output_path;  // report path; empty: `out`
  bool skip_bad_rows = false;
};

// Errors: INVALID_ARGUMENT for bad input, config or output path (exit 2), INTERNAL for
// an I/O failure part way (exit 1). The skipped-rows note goes to `err`.
absl::Status RunAnalyzeCommand(const AnalyzeOptions& options, std::ostream& out, std::ostream& err);

// The pieces, for tests and benchmarks.

// The detector's defaults when `path` is empty; errors name the file, line and key.
absl::StatusOr<analyzer::DetectorConfig> LoadDetectorConfig(const std::string& path);

// The report of a replay: {"suspects": [...], "components": [...], "summary": {...}}.
nlohmann::ordered_json AnalyzeReport(const ShardedReplay& replay, const SampleTable& table,
                                     const std::string& input);

}  // namespace drip::cli
