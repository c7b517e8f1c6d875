#include "collector/storage/rocksdb_report_store.h"

#include <algorithm>
#include <memory>

#include "collector/storage/store_error.h"
#include "fmt/format.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace drip::collector {
namespace {

constexpr std::string_view kReportPrefix = "r/";
constexpr std::string_view kAuditPrefix = "a/";
constexpr std::string_view kAuditEnd = "a0";  // '0' follows '/': the end of "a/..."
constexpr std::string_view kSnapshotPrefix = "s/";

std::string SnapshotKey(const std::string& report_id, bool first) {
  return fmt::format("{}{}/{}", kSnapshotPrefix, report_id, first ? "first" : "latest");
}

std::string AuditKey(uint64_t sequence) {
  std::string key(kAuditPrefix);
  for (int shift = 56; shift >= 0; shift -= 8) {
    key.push_back(static_cast<char>((sequence >> shift) & 0xff));
  }
  return key;
}

uint64_t SequenceOfAuditKey(std::string_view key) {
  uint64_t sequence = 0;
  for (size_t i = kAuditPrefix.size(); i < key.size(); ++i) {
    sequence = (sequence << 8) | static_cast<unsigned char>(key[i]);
  }
  return sequence;
}

}  // namespace

RocksDbReportStore::RocksDbReportStore(StoreDb* db, bool sync_writes)
    : db_(db), path_(db->path()), sync_writes_(sync_writes) {}

absl::Status RocksDbReportStore::Init(const StoreHandles& handles) {
  std::unique_ptr<rocksdb::Iterator> it(
      handles.db->NewIterator(rocksdb::ReadOptions(), handles.reports));
  it->SeekForPrev(ToSlice(kAuditEnd));
  uint64_t last = 0;
  if (it->Valid() && it->key().starts_with(ToSlice(kAuditPrefix))) {
    last = SequenceOfAuditKey(ToView(it->key()));
  }
  if (!it->status().ok()) return StoreError(path_, "reading the audit log", it->status());
  std::lock_guard<std::mutex> lock(mu_);
  // Never backwards: sequences are ids that audit entries already handed out carry.
  last_audit_sequence_ = std::max(last_audit_sequence_, last);
  return absl::OkStatus();
}

absl::Status RocksDbReportStore::Write(const std::vector<drip::v1::LeakReport>& reports,
                                       const std::vector<ReportSnapshot>& snapshots,
                                       std::vector<drip::v1::AuditEntry>* audit) {
  StoreDb::Lease lease(db_);
  if (!lease.open()) return lease.ClosedError();
  std::lock_guard<std::mutex> lock(mu_);
  rocksdb::WriteBatch batch;
  for (const drip::v1::LeakReport& report : reports) {
    rocksdb::Status s = batch.Put(lease->reports, fmt::format("{}{}", kReportPrefix, report.id()),
                                  report.SerializeAsString());
    if (!s.ok()) return StoreError(path_, "staging a leak report", s);
  }
  for (const ReportSnapshot& snapshot : snapshots) {
    if (snapshot.bytes == nullptr) continue;
    rocksdb::Status s =
        batch.Put(lease->reports, SnapshotKey(snapshot.report_id, snapshot.first), *snapshot.bytes);
    if (!s.ok()) return StoreError(path_, "staging a leak report's heap snapshot", s);
  }
  uint64_t sequence = last_audit_sequence_;
  if (audit != nullptr) {
    for (drip::v1::AuditEntry& entry : *audit) {
      ++sequence;
      entry.set_id(fmt::format("{:012d}", sequence));
      rocksdb::Status s = batch.Put(lease->reports, AuditKey(sequence), entry.SerializeAsString());
      if (!s.ok()) return StoreError(path_, "staging an audit entry", s);
    }
  }
  rocksdb::WriteOptions options;
  options.sync = sync_writes_;
  rocksdb::Status s = lease->db->Write(options, &batch);
  if (!s.ok()) return StoreError(path_, "writing leak reports and audit entries", s);
  last_audit_sequence_ = sequence;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<drip::v1::LeakReport>> RocksDbReportStore::LoadReports() {
  std::vector<drip::v1::LeakReport> reports;
  StoreDb::Lease lease(db_);
  if (!lease.open()) return lease.ClosedError();
  std::unique_ptr<rocksdb::Iterator> it(
      lease->db->NewIterator(rocksdb::ReadOptions(), lease->reports));
  for (it->Seek(ToSlice(kReportPrefix));
       it->Valid() && it->key().starts_with(ToSlice(kReportPrefix)); it->Next()) {
    drip::v1::LeakReport report;
    if (!report.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError(
          fmt::format("store at {}: leak report {} does not parse", path_, it->key().ToString()));
    }
    reports.push_back(std::move(report));
  }
  if (!it->status().ok()) return StoreError(path_, "reading leak reports", it->status());
  return reports;
}

absl::StatusOr<std::string> RocksDbReportStore::ReadSnapshot(const std::string& report_id,
                                                             bool first) {
  StoreDb::Lease lease(db_);
  if (!lease.open()) return lease.ClosedError();
  std::string bytes;
  rocksdb::Status s =
      lease->db->Get(rocksdb::ReadOptions(), lease->reports, SnapshotKey(report_id, first), &bytes);
  if (s.IsNotFound()) {
    return absl::NotFoundError(fmt::format("store at {}: no {} heap snapshot of leak report {}",
                                           path_, first ? "first" : "latest", report_id));
  }
  if (!s.ok()) return StoreError(path_, "reading a leak report's heap snapshot", s);
  return bytes;
}

absl::StatusOr<std::vector<drip::v1::AuditEntry>> RocksDbReportStore::ReadAudit(
    const std::string& report_id, int64_t since_ms, size_t limit) {
  std::vector<drip::v1::AuditEntry> entries;
  StoreDb::Lease lease(db_);
  if (!lease.open()) return lease.ClosedError();
  std::unique_ptr<rocksdb::Iterator> it(
      lease->db->NewIterator(rocksdb::ReadOptions(), lease->reports));
  for (it->SeekForPrev(ToSlice(kAuditEnd));
       it->Valid() && it->key().starts_with(ToSlice(kAuditPrefix)) && entries.size() < limit;
       it->Prev()) {
    drip::v1::AuditEntry entry;
    if (!entry.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError(fmt::format("store at {}: audit entry {} does not parse", path_,
                                             SequenceOfAuditKey(ToView(it->key()))));
    }
    // Entries are appended in time order, so the first older one ends the scan.
    if (entry.time_ms() < since_ms) break;
    if (!report_id.empty() && entry.report_id() != report_id) continue;
    entries.push_back(std::move(entry));
  }
  if (!it->status().ok()) return StoreError(path_, "reading the audit log", it->status());
  return entries;
}

}  // namespace drip::collector
