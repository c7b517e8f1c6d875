// RocksDbReportStore: ReportStore on the `reports` column family of the collector's
// RocksDB, owned by RocksDbSeriesStore (which opens and closes the database).
//
// Keys: "r/<report id>" -> drip.v1.LeakReport; "a/" be64(sequence) -> drip.v1.AuditEntry;
// "s/<report id>/first" and "s/<report id>/latest" -> a serialized drip.v1.HeapSnapshot.
// Audit sequences continue from the last stored one after a restart.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "collector/storage/report_store.h"
#include "collector/storage/store_db.h"

namespace drip::collector {

class RocksDbReportStore final : public ReportStore {
 public:
  // `db` must outlive this store. Each call holds a lease on it (store_db.h).
  RocksDbReportStore(StoreDb* db, bool sync_writes);

  // Finds the last audit sequence; call before use, and again under the reopen of the
  // database (a write that failed may still have reached the WAL and come back with it).
  absl::Status Init(const StoreHandles& handles);

  absl::Status Write(const std::vector<drip::v1::LeakReport>& reports,
                     const std::vector<ReportSnapshot>& snapshots,
                     std::vector<drip::v1::AuditEntry>* audit) override;
  absl::StatusOr<std::string> ReadSnapshot(const std::string& report_id, bool first) override;
  absl::StatusOr<std::vector<drip::v1::LeakReport>> LoadReports() override;
  absl::StatusOr<std::vector<drip::v1::AuditEntry>> ReadAudit(const std::string& report_id,
                                                              int64_t since_ms,
                                                              size_t limit) override;

 private:
  StoreDb* const db_;
  const std::string path_;
  const bool sync_writes_;
  std::mutex mu_;  // orders audit sequences with their writes
  uint64_t last_audit_sequence_ = 0;
};

}  // namespace drip::collector
