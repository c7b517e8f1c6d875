#include "collector/collector_metrics.h"

#include <string>

#include "collector/ingest/sample_validator.h"
#include "common/base/mitigation_action.h"

namespace drip::collector {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

prometheus::Counter& Counter(prometheus::Registry& r, const char* name, const char* help) {
  return BuildCounter().Name(name).Help(help).Register(r).Add({});
}

prometheus::Gauge& Gauge(prometheus::Registry& r, const char* name, const char* help) {
  return BuildGauge().Name(name).Help(help).Register(r).Add({});
}

// 100µs (a WAL append without fsync) to 1s (a stalled disk), roughly x2.5 per bucket.
prometheus::Histogram::BucketBoundaries WriteLatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0};
}

// Asking the other members: a few ms on a LAN, up to the fan-out deadline (5 s).
prometheus::Histogram::BucketBoundaries FanOutBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0};
}

// A detector pass over every series: 1 ms (a few hosts) to 10 s (a stalled fleet-wide pass).
prometheus::Histogram::BucketBoundaries DetectorRunBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0};
}

}  // namespace

CollectorMetrics::CollectorMetrics(prometheus::Registry& r)
    : rejected_family(BuildCounter()
                          .Name("drip_ingest_rejected_total")
                          .Help("Agent messages refused by validation, by reason; each ends its "
                                "stream")
                          .Register(r)),
      query_denied_family(BuildCounter()
                              .Name("drip_query_denied_total")
                              .Help("Query API calls refused by the access policy, by method "
                                    "and code (unauthenticated, permission_denied)")
                              .Register(r)),
      streams_family(BuildCounter()
                         .Name("drip_agent_streams_total")
                         .Help("Agent streams that ended, by how they ended")
                         .Register(r)),
      ingest_batches(Counter(r, "drip_ingest_batches_total",
                             "Sample batches stored durably (duplicates excluded)")),
      ingest_samples(Counter(r, "drip_ingest_samples_total", "Samples stored durably")),
      ingest_bytes(
          Counter(r, "drip_ingest_bytes_total", "Serialized bytes of the sample batches stored")),
      ingest_duplicate_batches(
          Counter(r, "drip_ingest_duplicate_batches_total",
                  "Resent batches at or below the host's stored sequence: acked, not stored")),
      ingest_gap_batches(Counter(r, "drip_ingest_gap_batches_total",
                                 "Batches agents dropped before sending (sequence gaps)")),
      ingest_throttled_batches(
          Counter(r, "drip_ingest_throttled_batches_total",
                  "Batches after which a host's stream waited for the per-host rate limit")),
      ingest_over_quota_samples(
          Counter(r, "drip_ingest_over_quota_samples_total",
                  "Samples not stored because their component would take a host past "
                  "ingest.max_components_per_host")),
      ingest_throttled_seconds(
          Counter(r, "drip_ingest_throttled_seconds_total",
                  "Time hosts' streams waited for the per-host rate limit before their next "
                  "read")),
      agents_connected(
          Gauge(r, "drip_agents_connected", "Hosts with an open agent stream that said hello")),
      streams_awaiting_hello(Gauge(r, "drip_agent_streams_awaiting_hello",
                                   "Agent streams open but not yet authenticated by a hello")),
      storage_size_bytes(
          Gauge(r, "drip_storage_size_bytes", "Approximate size of the sample store on disk")),
      storage_corrupt_records(Gauge(r, "drip_storage_corrupt_records",
                                    "Damaged records the store's reads have left out since it "
                                    "opened (each logged once); the rest is served")),
      queries_shed(Counter(r, "drip_queries_shed_total",
                           "Query calls answered RESOURCE_EXHAUSTED because too many were "
                           "already waiting for a reader")),
      storage_write_seconds(BuildHistogram()
                                .Name("drip_storage_write_seconds")
                                .Help("Time to store one batch durably")
                                .Register(r)
                                .Add({}, WriteLatencyBuckets())),
      storage_write_errors(Counter(r, "drip_storage_write_errors_total",
                                   "Store writes of batches and hellos that failed; nothing "
                                   "was acked")),
      retention_deleted_chunks(Counter(r, "drip_storage_retention_deleted_chunks_total",
                                       "Sample chunks deleted for being older than retention")),
      retention_errors(
          Counter(r, "drip_storage_retention_errors_total", "Retention passes that failed")),
      storage_free_bytes(
          Gauge(r, "drip_storage_free_bytes", "Bytes free for the store on its filesystem")),
      storage_recoveries_family(BuildCounter()
                                    .Name("drip_storage_recoveries_total")
                                    .Help("Attempts to make a store whose writes failed take "
                                          "writes again, by outcome")
                                    .Register(r)),
      storage_recoveries_succeeded(storage_recoveries_family.Add({{"outcome", "succeeded"}})),
      storage_recoveries_failed(storage_recoveries_family.Add({{"outcome", "failed"}})),
      healthy(Gauge(r, "drip_collector_healthy",
                    "1 while the store takes writes; 0 from a failed write until the store "
                    "has recovered")),
      cluster_members(Gauge(r, "drip_cluster_members",
                            "Collectors registered in etcd as this one last read them (0 for a "
                            "standalone collector)")),
      cluster_member_records_ignored(
          Gauge(r, "drip_cluster_member_records_ignored",
                "Records under the members prefix in etcd that the last read did not take as "
                "members: no lease, a name unlike their key's, or a bad address or start time")),
      cluster_etcd_up(Gauge(r, "drip_cluster_etcd_up",
                            "1 while etcd answers this collector (0 for a standalone one)")),
      cluster_etcd_errors(Counter(r, "drip_cluster_etcd_errors_total",
                                  "Membership rounds in which etcd did not answer")),
      cluster_redirects(Counter(r, "drip_cluster_redirects_total",
                                "Agent streams ended by naming the collector that owns the host")),
      cluster_drift_members(Gauge(r, "drip_cluster_drift_members",
                                  "Other members of the cluster whose fleet drift the leak "
                                  "detector adds to its own, as last read")),
      cluster_reports_owned(Gauge(r, "drip_cluster_reports_owned",
                                  "Components whose leak report this member owns (their "
                                  "newest report, resolved or not)")),
      cluster_report_writes(Counter(r, "drip_cluster_report_writes_total",
                                    "Owned leak reports written to etcd for the next owner")),
      cluster_report_conflicts(
          Counter(r, "drip_cluster_report_conflicts_total",
                  "Writes of a leak report to etcd that another member's write came first to "
                  "(both thought they owned the component; this member gave way)")),
      cluster_relays_sent(Counter(r, "drip_cluster_relays_sent_total",
                                  "Mitigation commands handed to the member that streams the "
                                  "host, for a leak report this member owns")),
      cluster_relays_failed(Counter(r, "drip_cluster_relays_failed_total",
                                    "Handed-on mitigation commands that brought back no "
                                    "agent's answer (member refused, unreachable, host gone)")),
      cluster_relays_delivered(Counter(r, "drip_cluster_relays_delivered_total",
                                       "Mitigation commands another member had this one send "
                                       "to a host streaming here")),
      cluster_relays_refused(Counter(r, "drip_cluster_relays_refused_total",
                                     "Mitigation commands another member asked this one to "
                                     "deliver and it refused: not from the component's owner, "
                                     "or beyond this member's policy or hourly budget")),
      cluster_replicated_batches(
          Counter(r, "drip_cluster_replicated_batches_total",
                  "Batches of this member's own hosts stored on every replica as well before "
                  "the agent was acknowledged")),
      cluster_under_replicated_batches(
          Counter(r, "drip_cluster_under_replicated_batches_total",
                  "Batches of this member's own hosts acknowledged with a replica missing (it "
                  "refused, failed or did not answer in time)")),
      cluster_replication_seconds(BuildHistogram()
                                      .Name("drip_cluster_replication_seconds")
                                      .Help("Time to store a batch on the host's replicas, "
                                            "which the agent's acknowledgement waits for")
                                      .Register(r)
                                      .Add({}, FanOutBuckets())),
      cluster_replica_batches(Counter(r, "drip_cluster_replica_batches_total",
                                      "Batches other members had this one keep as a replica of "
                                      "their hosts (new ones, not those it had already)")),
      cluster_under_replicated_hosts(
          Gauge(r, "drip_cluster_under_replicated_hosts",
                "Hosts this member owns with fewer live copies than the replication factor, "
                "or with a copy not yet confirmed whole since it last changed")),
      cluster_repair_backlog(
          Gauge(r, "drip_cluster_repair_backlog",
                "Copies of hosts this member holds on other members, (host, member) pairs, "
                "waiting to be compared with this member's and repaired")),
      cluster_replication_lag(
          Gauge(r, "drip_cluster_replication_lag_seconds",
                "How long the oldest copy in the repair backlog has waited (0: none waits)")),
      cluster_repaired_samples(
          Counter(r, "drip_cluster_repaired_samples_total",
                  "Samples another member's copy of a host gave this one that it lacked")),
      query_fanout_seconds(BuildHistogram()
                               .Name("drip_query_fanout_seconds")
                               .Help("Time to ask the other members of the cluster for their "
                                     "part of a fleet-wide query")
                               .Register(r)
                               .Add({}, FanOutBuckets())),
      query_fanout_member_errors(
          Counter(r, "drip_query_fanout_member_errors_total",
                  "Members' parts missing from a fleet-wide answer (no answer in time, or "
                  "an error): the answer said so in `unanswered`")),
      plaintext(Gauge(r, "drip_collector_plaintext",
                      "1 when the collector serves agents and queries without TLS")),
      detector_suspects(Gauge(r, "drip_detector_suspects",
                              "(host, component) series the online leak detector suspects")),
      detector_suspected_components(
          Gauge(r, "drip_detector_suspected_components", "Components with at least one suspect")),
      detector_series(Gauge(r, "drip_detector_series",
                            "(host, component) series the online leak detector follows")),
      detector_samples(Gauge(r, "drip_detector_samples",
                             "Component levels fed to the detector since start (incl. rebuild)")),
      detector_oom_kills(Gauge(r, "drip_detector_oom_kills",
                               "OOM kills of the series the detector watches, since it started "
                               "(each kill once, from cgroup counters or victims seen exiting)")),
      detector_rebuild_seconds(Gauge(r, "drip_detector_rebuild_seconds",
                                     "Time the detector's rebuild from the store took at start")),
      snapshots_requested(Counter(r, "drip_snapshots_requested_total",
                                  "Heap snapshots the collector commanded agents to take")),
      snapshots_succeeded(
          Counter(r, "drip_snapshots_succeeded_total", "Heap snapshots received and diagnosed")),
      snapshots_failed(Counter(r, "drip_snapshots_failed_total",
                               "Heap snapshots that failed or were not answered in time")),
      leaks_open(BuildGauge()
                     .Name("drip_leaks_open")
                     .Help("1 per leak report that is not resolved, by component, severity "
                           "(critical, warning, info) and state (open, acknowledged, mitigated)")
                     .Register(r)),
      leak_host_eta(BuildGauge()
                        .Name("drip_leak_host_eta_to_oom_seconds")
                        .Help("Estimated time until a leaking host runs out of memory, per "
                              "host of an unresolved leak report whose memory size is known")
                        .Register(r)),
      leak_host_growth(BuildGauge()
                           .Name("drip_leak_host_growth_bytes_per_hour")
                           .Help("Growth of the leaking component on each host of an "
                                 "unresolved leak report")
                           .Register(r)),
      leak_host_headroom(BuildGauge()
                             .Name("drip_leak_host_headroom_bytes")
                             .Help("What is left of the memory that runs out first, its cgroup's "
                                   "limit or the host's memory (limited_by), above the leaking "
                                   "component's level, per host of an unresolved leak report")
                             .Register(r)),
      leak_host_limit(BuildGauge()
                          .Name("drip_leak_host_limit_bytes")
                          .Help("The memory that runs out first for the leaking component, its "
                                "cgroup's limit or the host's memory (limited_by)")
                          .Register(r)),
      leak_host_oom_kills(BuildGauge()
                              .Name("drip_leak_host_oom_kills")
                              .Help("OOM kills of the leaking component's instances on each host "
                                    "of an unresolved leak report")
                              .Register(r)),
      leak_reports_opened(
          Counter(r, "drip_leak_reports_opened_total", "Leak reports opened since start")),
      leak_reports_resolved(Counter(r, "drip_leak_reports_resolved_total",
                                    "Leak reports resolved (automatically or by dripctl)")),
      report_store_errors(Counter(r, "drip_report_store_errors_total",
                                  "Failed writes of leak reports or audit entries to the store")),
      mitigations_family(BuildCounter()
                             .Name("drip_mitigations_total")
                             .Help("Mitigations requested by policy or dripctl, by action and "
                                   "outcome (requested, succeeded, dry-run, failed, refused, "
                                   "timed-out, recommended)")
                             .Register(r)),
      detector_run_seconds(BuildHistogram()
                               .Name("drip_detector_run_seconds")
                               .Help("Time of one detector pass: judging due epochs and "
                                     "listing suspects")
                               .Register(r)
                               .Add({}, DetectorRunBuckets())),
      agent_last_batch(BuildGauge()
                           .Name("drip_agent_last_batch_timestamp_seconds")
                           .Help("Unix time at which each host's last sample batch was stored")
                           .Register(r)) {
  // Every label value exists from the start so that rate() and alerts see a 0 rather
  // than a missing series before the first occurrence.
  for (std::string_view reason : reject_reason::All()) Rejected(reason);
  for (std::string_view outcome :
       {stream_outcome::kClosed, stream_outcome::kCancelled, stream_outcome::kRejected,
        stream_outcome::kSuperseded, stream_outcome::kStorageError, stream_outcome::kShutdown,
        stream_outcome::kRedirected}) {
    StreamEnded(outcome);
  }
  for (std::string_view action : mitigation_action::kAll) {
    for (std::string_view outcome :
         {"requested", "succeeded", "failed", "refused", "timed-out", "recommended", "dry-run"}) {
      Mitigation(action, outcome);
    }
  }
  for (std::string_view method : kQueryMethods) {
    QueryDenied(method, absl::StatusCode::kUnauthenticated);
    QueryDenied(method, absl::StatusCode::kPermissionDenied);
  }
  for (std::string_view method : kMemberMethods) {
    const std::string label = std::string(kMemberMethodPrefix) + std::string(method);
    QueryDenied(label, absl::StatusCode::kUnauthenticated);
    QueryDenied(label, absl::StatusCode::kPermissionDenied);
  }
  QueryDenied(kOtherMethod, absl::StatusCode::kUnauthenticated);
  healthy.Set(1);
}

prometheus::Counter& CollectorMetrics::QueryDenied(std::string_view method, absl::StatusCode code) {
  return query_denied_family.Add(
      {{"method", std::string(method)},
       {"code",
        code == absl::StatusCode::kUnauthenticated ? "unauthenticated" : "permission_denied"}});
}

prometheus::Counter& CollectorMetrics::Rejected(std::string_view reason) {
  return rejected_family.Add({{"reason", std::string(reason)}});
}

prometheus::Counter& CollectorMetrics::Mitigation(std::string_view action,
                                                  std::string_view outcome) {
  return mitigations_family.Add(
      {{"action", std::string(action)}, {"outcome", std::string(outcome)}});
}

prometheus::Counter& CollectorMetrics::StreamEnded(std::string_view outcome) {
  return streams_family.Add({{"outcome", std::string(outcome)}});
}

}  // namespace drip::collector
