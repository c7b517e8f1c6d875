// ReportDesk: what the query API (dripctl) and the member API (the other collectors of a
// cluster) may ask of the leak pipeline, and nothing more: read suspects and reports,
// change a report's state, request a mitigation, and for the member API judge and audit
// a mitigation another member relays here. The services never reach the detector, the
// scheduler or the pipeline's thread. LeakPipeline implements it.
//
// Thread-safe: every method may be called from any query or member thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/pipeline/fleet_suspects.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/query.pb.h"
#include "drip/v1/report.pb.h"

namespace drip::collector {

class ReportDesk {
 public:
  virtual ~ReportDesk() = default;

  // ---- Reading ----
  // The detector's suspects now, with their snapshot attempts; only those of `component`
  // unless it is empty.
  virtual FleetSuspects Suspects(const std::string& component) const = 0;
  // This member's reports (LeakReportBook::List): `state` "" for every unresolved one,
  // "all", or one state.
  virtual std::vector<drip::v1::LeakReport> ListReports(const std::string& state,
                                                        const std::string& component) const = 0;
  // NOT_FOUND for a report this member does not keep.
  virtual absl::StatusOr<drip::v1::LeakReport> GetReport(const std::string& id) const = 0;
  // A heap snapshot report `id` keeps, its first or its latest (LeakReportBook::Snapshot),
  // as the bytes of a drip.v1.HeapSnapshot. NOT_FOUND when there is none here.
  virtual absl::StatusOr<std::string> ReportSnapshot(const std::string& id, bool first) const = 0;
  // The report `id` as this member knows it: its own, or the cluster's copy as last read
  // from etcd (a report another member owns). NOT_FOUND otherwise.
  virtual absl::StatusOr<drip::v1::LeakReport> KnownReport(const std::string& id) const = 0;

  // ---- Acting ----
  // On-call's acknowledge or resolve (LeakReportBook::SetState).
  virtual absl::StatusOr<drip::v1::LeakReport> SetReportState(const std::string& id,
                                                              const std::string& state,
                                                              const std::string& actor,
                                                              const std::string& note,
                                                              int64_t now_ms) = 0;
  // dripctl mitigate (MitigationCoordinator::Request).
  virtual absl::StatusOr<std::vector<drip::v1::AuditEntry>> RequestMitigation(
      const drip::v1::MitigateRequest& request, const std::string& actor, int64_t now_ms) = 0;
  // A mitigation the report's owner relays for a host streaming here, judged on this
  // member's copy of the report (MitigationCoordinator::AdmitRelayed).
  virtual absl::Status AdmitRelayedMitigation(const std::string& host,
                                              const std::string& command_id,
                                              const drip::v1::MitigationCommand& command,
                                              int64_t now_ms) = 0;
  // Appends audit entries that change no report (a delivered relay).
  virtual absl::Status Audit(std::vector<drip::v1::AuditEntry>* entries) = 0;
};

}  // namespace drip::collector
