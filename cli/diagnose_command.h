// `dripctl diagnose`: one-shot diagnosis of a heap snapshot file (docs/design.md,
// "Contracts"), no collector needed. Reads the JSON that `drip-agent snapshot` wrote
// (common/snapshot/heap_snapshot_json.h), runs the diagnoser (diagnoser/heap_diagnoser.h) and
// prints the ranked stacks: a summary and table for people, or the contract JSON; with
// --pprof it also writes the snapshot and its verdicts as a gzipped pprof profile
// (diagnoser/format/pprof_profile.h) for go tool pprof and the tools that read its format.
// With --base OLD it shows what grew between the two snapshots of one process instead
// (diagnoser/snapshot_diff.h), in the same three forms.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/base/heap_snapshot.h"
#include "diagnoser/diagnoser_config.h"
#include "diagnoser/diagnosis.h"
#include "diagnoser/snapshot_diff.h"

namespace drip::cli {

struct DiagnoseOptions {
  std::string input;        // snapshot JSON path, "-" for standard input
  std::string config_path;  // diagnoser YAML; empty: the diagnoser's defaults
  bool json = false;
  int top = 20;            // table rows (0: all); --json always lists every stack kept
  std::string pprof_path;  // also write a gzipped pprof profile here (empty: none)
  std::string base;        // an earlier snapshot of the same process: show the diff
};

// Errors are INVALID_ARGUMENT (exit 2), one line naming the file: unreadable, not JSON,
// or not a valid snapshot (then also the field), a bad config, a --pprof path that
// cannot be written (checked before the snapshot is read), or a --base that is not an
// earlier snapshot of the same process instance.
absl::Status RunDiagnoseCommand(const DiagnoseOptions& options, std::ostream& out);

// The pieces, for tests.

// Reads and parses a snapshot; "-" reads standard input (named "<stdin>" in errors).
absl::StatusOr<HeapSnapshot> ReadSnapshotFile(const std::string& path);
// The diagnoser's defaults when `path` is empty; errors name the file, line and key.
absl::StatusOr<diagnoser::DiagnoserConfig> LoadDiagnoserConfig(const std::string& path);
void RenderDiagnosis(const HeapSnapshot& snapshot, const diagnoser::Diagnosis& diagnosis, bool json,
                     int top, std::ostream& out);
// The diff of `base` and `now`: the two windows, the summary, a table of the sites by
// what they added and the stack of the one that added most; or its JSON with both
// snapshots' "target" and window keys as --json has them.
void RenderSnapshotDiff(const HeapSnapshot& base, const HeapSnapshot& now,
                        const diagnoser::SnapshotDiff& diff, bool json, int top, std::ostream& out);

}  // namespace drip::cli
