// CollectorMetrics: every Prometheus metric drip-collector exports, declared once.
// Each member is a handle into the registry passed in (the server's, or a test's own),
// so code increments `metrics.ingest_batches.Increment()` without lookups. Names follow
// Prometheus conventions (counters end in _total, base units: bytes, seconds); the
// meaning of each is in docs/collector.md.
//
// Thread-safe: prometheus-cpp handles are atomic, and the labelled lookups below go
// through prometheus-cpp's locked families.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace drip::collector {

// Values of drip_agent_streams_total's "outcome" label: how a stream ended.
namespace stream_outcome {
inline constexpr std::string_view kClosed = "closed";          // the agent half-closed
inline constexpr std::string_view kCancelled = "cancelled";    // connection lost or cancelled
inline constexpr std::string_view kRejected = "rejected";      // a message failed validation
inline constexpr std::string_view kSuperseded = "superseded";  // the host opened a newer stream
inline constexpr std::string_view kStorageError = "storage_error";  // a store write failed
inline constexpr std::string_view kShutdown = "shutdown";           // the collector stopped
// Another collector of the fleet owns the host: the agent was told where (docs/cluster.md).
inline constexpr std::string_view kRedirected = "redirected";
// Never said hello within ingest.hello_timeout: closed before it was authenticated.
inline constexpr std::string_view kNoHello = "no_hello";
// Refused at connect: ingest.max_streams_awaiting_hello streams had not said hello yet.
inline constexpr std::string_view kTooManyAwaitingHello = "too_many_awaiting_hello";
}  // namespace stream_outcome

// The query API's methods, the values of drip_query_denied_total's "method" label; a
// call refused before gRPC dispatched it to a method it does not name is counted as
// kOtherMethod.
inline constexpr std::string_view kQueryMethods[] = {
    "ListHosts",       "GetSeries",       "ListSuspects", "ListLeaks", "GetLeak",
    "GetLeakSnapshot", "UpdateLeakState", "Mitigate",     "ListAudit", "ListMembers"};
// The member API's methods (drip.v1.MemberService, between collectors), counted in the
// same family with the label "member.<method>".
inline constexpr std::string_view kMemberMethods[] = {"ListHosts",    "GetSeries", "ListSuspects",
                                                      "ListLeaks",    "GetLeak",   "ListAudit",
                                                      "RelayCommand", "Replicate"};
inline constexpr std::string_view kMemberMethodPrefix = "member.";
inline constexpr std::string_view kOtherMethod = "other";

struct CollectorMetrics {
  // Registers every family on `registry`, which must outlive this object.
  explicit CollectorMetrics(prometheus::Registry& registry);

  // drip_ingest_rejected_total{reason}; `reason` is one of reject_reason::k*.
  prometheus::Counter& Rejected(std::string_view reason);
  // drip_agent_streams_total{outcome}; `outcome` is one of stream_outcome::k*.
  prometheus::Counter& StreamEnded(std::string_view outcome);

  // drip_mitigations_total{action,outcome}: every mitigation the collector requested and
  // how it ended (outcome as in drip.v1.AuditEntry).
  prometheus::Counter& Mitigation(std::string_view action, std::string_view outcome);

  // drip_query_denied_total{method,code}: query calls refused by the access policy;
  // `code` is "unauthenticated" or "permission_denied".
  prometheus::Counter& QueryDenied(std::string_view method, absl::StatusCode code);

  prometheus::Family<prometheus::Counter>& rejected_family;
  prometheus::Family<prometheus::Counter>& query_denied_family;
  prometheus::Family<prometheus::Counter>& streams_family;

  prometheus::Counter& ingest_batches;            // drip_ingest_batches_total
  prometheus::Counter& ingest_samples;            // drip_ingest_samples_total
  prometheus::Counter& ingest_bytes;              // drip_ingest_bytes_total
  prometheus::Counter& ingest_duplicate_batches;  // drip_ingest_duplicate_batches_total
  prometheus::Counter& ingest_gap_batches;        // drip_ingest_gap_batches_total
  prometheus::Counter& ingest_throttled_batches;  // drip_ingest_throttled_batches_total
  // drip_ingest_over_quota_samples_total: samples of components a host added past
  // ingest.max_components_per_host, not stored.
  prometheus::Counter& ingest_over_quota_samples;
  prometheus::Counter& ingest_throttled_seconds;  // drip_ingest_throttled_seconds_total
  prometheus::Gauge& agents_connected;            // drip_agents_connected
  prometheus::Gauge& streams_awaiting_hello;      // drip_agent_streams_awaiting_hello
  prometheus::Gauge& storage_size_bytes;          // drip_storage_size_bytes
  prometheus::Gauge& storage_corrupt_records;     // drip_storage_corrupt_records
  prometheus::Counter& queries_shed;              // drip_queries_shed_total
  prometheus::Histogram& storage_write_seconds;   // drip_storage_write_seconds
  prometheus::Counter& storage_write_errors;      // drip_storage_write_errors_total
  prometheus::Counter& retention_deleted_chunks;  // drip_storage_retention_deleted_chunks_total
  prometheus::Counter& retention_errors;          // drip_storage_retention_errors_total
  prometheus::Gauge& storage_free_bytes;          // drip_storage_free_bytes
  // drip_storage_recoveries_total{outcome}: attempts to make a failing store take writes
  // again (storage_recovery.h), "succeeded" or "failed".
  prometheus::Family<prometheus::Counter>& storage_recoveries_family;
  prometheus::Counter& storage_recoveries_succeeded;
  prometheus::Counter& storage_recoveries_failed;
  prometheus::Gauge& healthy;  // drip_collector_healthy
  // With etcd (docs/cluster.md): the live members as last read, whether etcd answers,
  // and the calls to it that failed.
  prometheus::Gauge& cluster_members;  // drip_cluster_members
  // Records under <prefix>members/ that were not taken as members in the last read (no
  // lease, a name other than their key's, a bad address or start time): something that
  // can write to etcd is not a collector, or is not behaving as one.
  prometheus::Gauge& cluster_member_records_ignored;  // drip_cluster_member_records_ignored
  prometheus::Gauge& cluster_etcd_up;                 // drip_cluster_etcd_up
  prometheus::Counter& cluster_etcd_errors;           // drip_cluster_etcd_errors_total
  prometheus::Counter& cluster_redirects;             // drip_cluster_redirects_total
  // Fleet-wide queries (docs/cluster.md, "One fleet view"): how long asking the other
  // members took, and the members' parts that were missing from an answer.
  // Other members whose detectors' fleet drift this one's adds to its own.
  prometheus::Gauge& cluster_drift_members;  // drip_cluster_drift_members
  // One owner per leak report (cluster/report_ownership.h): the components whose report
  // this member owns, its writes of them to etcd, and the writes another member's came
  // first to (two members both thought they owned the component; this one gives way).
  prometheus::Gauge& cluster_reports_owned;       // drip_cluster_reports_owned
  prometheus::Counter& cluster_report_writes;     // drip_cluster_report_writes_total
  prometheus::Counter& cluster_report_conflicts;  // drip_cluster_report_conflicts_total
  // Mitigations of hosts streaming to another member (cluster/member_command_relay.h): the
  // commands this member handed on, those that brought no agent's answer back, and those
  // another member had this one deliver.
  prometheus::Counter& cluster_relays_sent;       // drip_cluster_relays_sent_total
  prometheus::Counter& cluster_relays_failed;     // drip_cluster_relays_failed_total
  prometheus::Counter& cluster_relays_delivered;  // drip_cluster_relays_delivered_total
  // Relayed commands this member refused: not from the component's owner, or beyond its
  // own policy or hourly budget.
  prometheus::Counter& cluster_relays_refused;  // drip_cluster_relays_refused_total
  // Replication (cluster/batch_replicator.h): batches this member stored for its own hosts
  // and copied to every replica before acknowledging them; those acknowledged with a
  // replica missing (it failed, or did not answer in time); the time the copies took; and
  // the batches other members had this one keep as a replica.
  prometheus::Counter& cluster_replicated_batches;        // drip_cluster_replicated_batches_total
  prometheus::Counter& cluster_under_replicated_batches;  // ..._under_replicated_batches_total
  prometheus::Histogram& cluster_replication_seconds;     // drip_cluster_replication_seconds
  prometheus::Counter& cluster_replica_batches;           // drip_cluster_replica_batches_total
  // Repair (cluster/replica_repairer.h): this member's hosts with fewer live copies than
  // the replication factor, or with a copy not yet confirmed whole; the (host, member)
  // copies waiting to be compared and repaired; how long the oldest has waited; and the
  // samples other members sent this one that it lacked.
  prometheus::Gauge& cluster_under_replicated_hosts;  // drip_cluster_under_replicated_hosts
  prometheus::Gauge& cluster_repair_backlog;          // drip_cluster_repair_backlog
  prometheus::Gauge& cluster_replication_lag;         // drip_cluster_replication_lag_seconds
  prometheus::Counter& cluster_repaired_samples;      // drip_cluster_repaired_samples_total
  prometheus::Histogram& query_fanout_seconds;        // drip_query_fanout_seconds
  prometheus::Counter& query_fanout_member_errors;    // drip_query_fanout_member_errors_total
  // drip_collector_plaintext: 1 when the collector serves without TLS (tls.plaintext),
  // a degraded mode an alert can find across a fleet.
  prometheus::Gauge& plaintext;
  prometheus::Gauge& detector_suspects;              // drip_detector_suspects
  prometheus::Gauge& detector_suspected_components;  // drip_detector_suspected_components
  prometheus::Gauge& detector_series;                // drip_detector_series
  prometheus::Gauge& detector_samples;               // drip_detector_samples
  prometheus::Gauge& detector_oom_kills;             // drip_detector_oom_kills
  prometheus::Gauge& detector_rebuild_seconds;       // drip_detector_rebuild_seconds
  prometheus::Counter& snapshots_requested;          // drip_snapshots_requested_total
  prometheus::Counter& snapshots_succeeded;          // drip_snapshots_succeeded_total
  prometheus::Counter& snapshots_failed;             // drip_snapshots_failed_total
  // Leak reports, for dashboards and alerts (docs/runbook.md). The labelled gauges hold
  // one series per unresolved report or at-risk host; LeakReportMetrics keeps them
  // current and removes series of resolved reports.
  prometheus::Family<prometheus::Gauge>& leaks_open;  // drip_leaks_open{component,severity,state}
  prometheus::Family<prometheus::Gauge>&
      leak_host_eta;  // drip_leak_host_eta_to_oom_seconds{component,host}
  prometheus::Family<prometheus::Gauge>&
      leak_host_growth;  // drip_leak_host_growth_bytes_per_hour{component,host}
  prometheus::Family<prometheus::Gauge>&
      leak_host_headroom;  // drip_leak_host_headroom_bytes{component,host,limited_by}
  prometheus::Family<prometheus::Gauge>&
      leak_host_limit;  // drip_leak_host_limit_bytes{component,host,limited_by}
  prometheus::Family<prometheus::Gauge>&
      leak_host_oom_kills;                     // drip_leak_host_oom_kills{component,host}
  prometheus::Counter& leak_reports_opened;    // drip_leak_reports_opened_total
  prometheus::Counter& leak_reports_resolved;  // drip_leak_reports_resolved_total
  prometheus::Counter& report_store_errors;    // drip_report_store_errors_total
  prometheus::Family<prometheus::Counter>& mitigations_family;  // drip_mitigations_total
  prometheus::Histogram& detector_run_seconds;                  // drip_detector_run_seconds
  // drip_agent_last_batch_timestamp_seconds{host}: when each host's last batch was stored.
  prometheus::Family<prometheus::Gauge>& agent_last_batch;
};

}  // namespace drip::collector
