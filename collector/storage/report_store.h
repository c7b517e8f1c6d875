// ReportStore: the collector's durable home for leak reports and the audit log, next to
// the samples in the same RocksDB (column family `reports`, docs/storage.md).
//
// Reports are few (one per component leak) and small, so the collector keeps them all in
// memory and writes every change through; the store is read whole at start. The audit
// log is append-only. A report change and the audit entries that explain it are written
// in one atomic batch, so the log never misses a change the reports show, even across a
// crash. The heap snapshots a report keeps (its first and latest, LeakReport's
// first_snapshot and latest_snapshot) are written in the same batch as the report that
// names them, and read one at a time: they are large, and stay on disk. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "drip/v1/report.pb.h"

namespace drip::collector {

// One heap snapshot a report keeps, in one of its two places.
struct ReportSnapshot {
  std::string report_id;
  bool first = false;                        // the report's first snapshot; else its latest
  std::shared_ptr<const std::string> bytes;  // a serialized drip.v1.HeapSnapshot
};

class ReportStore {
 public:
  virtual ~ReportStore() = default;

  // Upserts `reports` (by id) and `snapshots` (by report and place), and appends `audit`,
  // in one atomic write, fsynced when the store syncs. Assigns each audit entry its id (a
  // sortable, zero-padded sequence).
  virtual absl::Status Write(const std::vector<drip::v1::LeakReport>& reports,
                             const std::vector<ReportSnapshot>& snapshots,
                             std::vector<drip::v1::AuditEntry>* audit) = 0;

  // The bytes of a snapshot `Write` stored; NOT_FOUND when there is none.
  virtual absl::StatusOr<std::string> ReadSnapshot(const std::string& report_id, bool first) = 0;

  // Every stored report, in id order.
  virtual absl::StatusOr<std::vector<drip::v1::LeakReport>> LoadReports() = 0;

  // Audit entries, newest first: only `report_id`'s when not empty, only those at or
  // after `since_ms`, at most `limit`.
  virtual absl::StatusOr<std::vector<drip::v1::AuditEntry>> ReadAudit(const std::string& report_id,
                                                                      int64_t since_ms,
                                                                      size_t limit) = 0;
};

}  // namespace drip::collector
