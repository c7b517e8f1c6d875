// LeakReportBook: the collector's leak reports, the leak pipeline's third stage
// (leak_pipeline.h). After every detector pass the book folds the suspects, grouped by
// component, into one report per component leak: hosts affected with their growth and ETA to OOM,
// the latest diagnosis of a heap snapshot, and what the component's mitigation policy recommends. A
// report keeps its id while it lives; it is resolved automatically once no host has been suspected
// for `resolve_after` (the leak stopped, e.g. a fixed version rolled out), or by on-call. The same
// component leaking again after resolution (fresh evidence from the detector, later than the
// resolution) opens a new report.
//
// Every change is written through to the ReportStore with the audit entries that explain
// it, in one atomic write; at start the book is loaded from the store, so reports and
// their states survive restarts. A write that fails is logged and counted, and retried
// with the next pass (the in-memory report stays marked dirty).
//
// In a cluster each component's report has one owner, the member that rendezvous placement
// over the live members gives the component (docs/cluster.md, "One owner per leak report").
// The owner folds in the other members' suspects of it and writes the report to etcd; a
// member that becomes the owner (the old one died, or one joined) adopts that copy, so the
// report keeps its id, state and history across owners. The book itself does no I/O: it is
// told what it owns (SetOwnership) and what the cluster holds (Adopt).
//
// Thread-safe: one mutex; Update runs on the pipeline's thread, the rest on query threads
// and storage workers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/pipeline/fleet_suspects.h"
#include "collector/pipeline/instance_version_book.h"
#include "collector/pipeline/mitigation_policy.h"
#include "collector/storage/report_store.h"
#include "common/rpc/report_state.h"
#include "drip/v1/query.pb.h"
#include "drip/v1/report.pb.h"

namespace drip::collector {

struct ReportPolicy {
  // The detector keeps a suspect's last figures once its growth stops; a host whose
  // suspect has had no fresh evidence for this long is no longer counted as leaking
  // (several detector epochs: evidence is refreshed once per epoch while it climbs).
  std::chrono::milliseconds quiet_after = std::chrono::hours(1);
  // A report whose hosts have all stopped being suspected this long is resolved.
  std::chrono::milliseconds resolve_after = std::chrono::hours(6);
  // Severity from the shortest ETA to OOM among the report's active hosts.
  std::chrono::milliseconds critical_eta = std::chrono::hours(6);
  std::chrono::milliseconds warning_eta = std::chrono::hours(72);
  uint64_t max_stacks = 5;  // diagnosed stacks kept in a report
  // A clustered collector's member name: its reports are leak-<member>-<n>, so that ids
  // stay unique in the fleet-wide view every member answers with (docs/cluster.md).
  // Empty (standalone): leak-<n>. A clustered book (id_scope set) opens and resolves no
  // report until it is told which components it owns (LeakReportBook::SetOwnership).
  std::string id_scope;
};

class LeakReportBook {
 public:
  // `mitigation` (for recommendations), `store` and `versions` (for the rollout evidence;
  // may be null: reports then carry none) must outlive the book.
  LeakReportBook(const ReportPolicy& policy, const MitigationConfig* mitigation, ReportStore* store,
                 const InstanceVersionBook* versions = nullptr);

  // Reads every stored report; call once before use.
  absl::Status Load();

  // One detector pass, with each suspect's snapshot attempt attached.
  void Update(int64_t now_ms, const FleetSuspects& suspects);

  absl::StatusOr<drip::v1::LeakReport> Get(const std::string& id) const;
  // `state`: "" for every unresolved report, "all", or one state. Most severe first,
  // then the most recently seen.
  std::vector<drip::v1::LeakReport> List(const std::string& state,
                                         const std::string& component) const;

  // On-call's ack (to "acknowledged") or resolve (to "resolved"). NOT_FOUND for an
  // unknown id; FAILED_PRECONDITION for a resolved report or acknowledging a mitigated
  // one; INVALID_ARGUMENT for another state. Acknowledging twice is not an error.
  absl::StatusOr<drip::v1::LeakReport> SetState(const std::string& id, const std::string& state,
                                                const std::string& actor, const std::string& note,
                                                int64_t now_ms);

  // Records a mitigation request or outcome (upserted by command id) with its audit
  // entry. A real (not dry-run) action that succeeded moves an open or acknowledged
  // report to mitigated. Returns the audit entry as stored (with its id).
  absl::StatusOr<drip::v1::AuditEntry> RecordMitigation(const std::string& report_id,
                                                        const drip::v1::MitigationRecord& record,
                                                        drip::v1::AuditEntry entry, int64_t now_ms);

  // Appends audit entries that change no report (e.g. refused requests).
  absl::Status Audit(std::vector<drip::v1::AuditEntry>* entries);

  // ---- In a cluster ----
  // Which components' reports this member keeps. Update opens, updates and resolves only
  // those, and Get, List, SetState and mitigations see only those: a copy kept from before
  // a component moved is another member's business now, and the fleet view asks that one.
  // Unset (standalone): every component.
  void SetOwnership(std::function<bool(const std::string& component)> owns);
  // The reports as their owners last wrote them to etcd. One of an owned component that is
  // newer than this book's copy (or that the book lacks) replaces it, under the same id; an
  // unresolved report the book opened for the same component meanwhile (two members both
  // thought they owned it) is resolved as superseded by the cluster's. Audited and stored.
  void Adopt(const std::vector<drip::v1::LeakReport>& shared, int64_t now_ms);
  // Called (under the book's lock: it must not block or call back) after a change made
  // between passes, by on-call or a mitigation, so that the owner writes it to etcd now
  // rather than at its next round.
  void SetOnChangeBetweenPasses(std::function<void()> callback);
  // The newest report of each owned component, resolved or not: what the owner writes to
  // etcd for the next owner.
  std::vector<drip::v1::LeakReport> Owned() const;
  // The bytes of a heap snapshot report `id` keeps (a serialized drip.v1.HeapSnapshot):
  // its first, else its latest. NOT_FOUND for a report this book does not own, or one
  // without a snapshot yet (the message says which).
  absl::StatusOr<std::string> Snapshot(const std::string& id, bool first) const;
  // Whether the book holds report `id`, resolved (owned or not).
  bool HasResolved(const std::string& id) const;

  struct Counts {
    uint64_t opened = 0;
    uint64_t resolved = 0;
    uint64_t store_errors = 0;
  };
  Counts counts() const;

 private:
  bool OwnsLocked(const std::string& component) const { return !owns_ || owns_(component); }
  drip::v1::LeakReport* FindUnresolvedLocked(const std::string& component);
  drip::v1::LeakReport* OpenLocked(const std::string& component, int64_t now_ms,
                                   std::vector<drip::v1::AuditEntry>* audit);
  void RefreshDerivedLocked(drip::v1::LeakReport* report, int64_t now_ms) const;
  // The report's rollout evidence and its hosts' versions, from its active hosts.
  void CorrelateVersionsLocked(drip::v1::LeakReport* report) const;
  void ChangeStateLocked(drip::v1::LeakReport* report, drip::v1::ReportState to,
                         const std::string& actor, const std::string& note, int64_t now_ms,
                         std::vector<drip::v1::AuditEntry>* audit);
  // Keeps `attempt`'s snapshot of `host` as the report's first or latest, as
  // LeakReport.first_snapshot says; written with the report.
  void KeepSnapshotLocked(drip::v1::LeakReport* report, const std::string& host,
                          const SnapshotAttempt& attempt);
  // Writes the dirty reports and `audit`; on failure keeps them dirty for the next try.
  absl::Status FlushLocked(std::vector<drip::v1::AuditEntry>* audit);

  const ReportPolicy policy_;
  const MitigationConfig* mitigation_;
  ReportStore* store_;
  const InstanceVersionBook* versions_;
  mutable std::mutex mu_;
  std::map<std::string, drip::v1::LeakReport> reports_;  // by id
  std::set<std::string> dirty_;                          // ids not yet written
  std::function<bool(const std::string&)> owns_;         // null: every component
  std::function<void()> on_change_between_passes_;
  std::vector<drip::v1::AuditEntry> pending_audit_;  // not yet written
  // Snapshots not yet written, by report id and place (true: first).
  std::map<std::pair<std::string, bool>, std::shared_ptr<const std::string>> pending_snapshots_;
  uint64_t next_number_ = 1;
  Counts counts_;
};

// "leak-12" -> 12; 0 when `id` is not a report id.
uint64_t ReportNumber(const std::string& id);

}  // namespace drip::collector
