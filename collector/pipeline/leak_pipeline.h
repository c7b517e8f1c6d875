// LeakPipeline: the collector's judgement, from samples to mitigation (docs/design.md,
// "The leak pipeline"). Four stages, each its own class, run in this order on the
// pipeline's own thread every `interval`:
//
//   OnlineDetector ──FleetSuspects──► SnapshotScheduler ──(attempts attached)──►
//   LeakReportBook ──reports──► MitigationCoordinator
//
// The detector is fed by agent sessions as batches become durable (DetectorFeed); the
// scheduler and the coordinator send commands through the command router, which hands each
// answer to its sender; the pass ends overdue commands (CommandRouter::Expire). Snapshots
// are diagnosed on a pool of their own ("drip-diagnose"). The query and member APIs see the
// pipeline as a ReportDesk. Its thread is not storage maintenance's: a slow retention pass
// never delays detection, and a stalled pass of either shows in its own last_run().
//
// Open() rebuilds the detector from the store's recent history and loads the stored
// reports, so suspects and reports survive a restart. Tests and the fuzzer call
// RunOnce() themselves instead of Start().
//
// Thread-safe: sessions and queries call in from any thread; Start/Stop from the owner.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/detector_config.h"
#include "collector/collector_metrics.h"
#include "collector/ingest/command_router.h"
#include "collector/loop_thread.h"
#include "collector/pipeline/command_relay.h"
#include "collector/pipeline/detector_feed.h"
#include "collector/pipeline/fleet_suspects.h"
#include "collector/pipeline/leak_report_book.h"
#include "collector/pipeline/leak_report_metrics.h"
#include "collector/pipeline/mitigation_coordinator.h"
#include "collector/pipeline/mitigation_policy.h"
#include "collector/pipeline/online_detector.h"
#include "collector/pipeline/report_desk.h"
#include "collector/pipeline/snapshot_scheduler.h"
#include "collector/storage/series_store.h"
#include "collector/worker_pool.h"
#include "common/base/clock.h"
#include "diagnoser/diagnoser_config.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

struct LeakPipelineOptions {
  analyzer::DetectorConfig detector;
  // How much stored history Open() replays into the detector.
  std::chrono::milliseconds rebuild_window = std::chrono::hours(72);
  SnapshotPolicy snapshots;
  diagnoser::DiagnoserConfig diagnoser;
  ReportPolicy reports;
  MitigationConfig mitigation;
  // How often the pipeline runs a pass.
  std::chrono::milliseconds interval = std::chrono::seconds(5);
};

class LeakPipeline final : public DetectorFeed, public ReportDesk {
 public:
  // `store`, `commands`, `metrics` and `clock` must outlive the pipeline. The error names
  // what could not be read.
  static absl::StatusOr<std::unique_ptr<LeakPipeline>> Open(const LeakPipelineOptions& options,
                                                            SeriesStore* store,
                                                            CommandRouter* commands,
                                                            CollectorMetrics* metrics,
                                                            const Clock* clock);
  ~LeakPipeline() override;  // Stop(), then the diagnoses still queued

  LeakPipeline(const LeakPipeline&) = delete;
  LeakPipeline& operator=(const LeakPipeline&) = delete;

  // Runs RunOnce() every `interval` on the thread "drip-pipeline" until Stop().
  void Start();
  // Idempotent; a pass in progress completes first.
  void Stop();

  // One pass at the clock's now: the detector judges what ended, snapshots are started
  // and timed out, the reports and then the mitigations follow, and the metrics with
  // them.
  void RunOnce();

  std::chrono::milliseconds interval() const { return options_.interval; }

  // When a pass last completed (Start() counts as one): the collector's watchdog.
  std::chrono::steady_clock::time_point last_run() const { return loop_.last_round(); }

  // ---- DetectorFeed: from agent sessions ----
  std::set<std::string> ComponentsOverQuota(const std::string& host,
                                            const drip::v1::SampleBatch& batch,
                                            size_t max_components) const override;
  void ObserveBatch(const std::string& host, const drip::v1::SampleBatch& batch) override;
  void ObserveReplicaBatch(const std::string& host, const drip::v1::SampleBatch& batch) override;
  void SetHostMemory(const std::string& host, uint64_t bytes) override;
  absl::StatusOr<uint64_t> ReplayHost(const std::string& host) override;

  // ---- ReportDesk: for the query and member APIs ----
  FleetSuspects Suspects(const std::string& component) const override;
  std::vector<drip::v1::LeakReport> ListReports(const std::string& state,
                                                const std::string& component) const override;
  absl::StatusOr<drip::v1::LeakReport> GetReport(const std::string& id) const override;
  absl::StatusOr<drip::v1::LeakReport> KnownReport(const std::string& id) const override;
  absl::StatusOr<std::string> ReportSnapshot(const std::string& id, bool first) const override;
  absl::StatusOr<drip::v1::LeakReport> SetReportState(const std::string& id,
                                                      const std::string& state,
                                                      const std::string& actor,
                                                      const std::string& note,
                                                      int64_t now_ms) override;
  absl::StatusOr<std::vector<drip::v1::AuditEntry>> RequestMitigation(
      const drip::v1::MitigateRequest& request, const std::string& actor, int64_t now_ms) override;
  absl::Status AdmitRelayedMitigation(const std::string& host, const std::string& command_id,
                                      const drip::v1::MitigationCommand& command,
                                      int64_t now_ms) override;
  absl::Status Audit(std::vector<drip::v1::AuditEntry>* entries) override;

  // ---- For the cluster ----
  // The detector's fleet drift over this collector's hosts, and that of the other members
  // of a cluster (OnlineDetector::SetPeerDrifts). The membership thread calls both: they
  // never wait on the detector (whose pass may take seconds, longer than a keep-alive may
  // wait). LocalDrifts is as of the latest pass; SetPeerDrifts applies at the next one.
  std::vector<std::pair<std::string, analyzer::ComponentDrift>> LocalDrifts() const;
  void SetPeerDrifts(std::map<std::string, analyzer::ComponentDrift> peers);
  // In a cluster (ReportOwnership, each round): which components' reports this member
  // owns, the other members' suspects, and the reports as etcd holds them. Applied at the
  // start of the next pass, so that a pass never sees ownership without the cluster's
  // reports of what it owns: a new owner adopts before it could open a second report.
  struct ClusterReportView {
    std::function<bool(const std::string& component)> owns;
    FleetSuspects peer_suspects;
    // One copy, shared with ReportOwnership and KnownReport: read every 5 s, never copied.
    std::shared_ptr<const std::vector<drip::v1::LeakReport>> shared_reports =
        std::make_shared<const std::vector<drip::v1::LeakReport>>();
  };
  void SetClusterReportView(ClusterReportView view);

  LeakReportBook& reports() { return reports_; }
  const InstanceVersionBook& versions() const { return versions_; }

  // In a cluster: how the coordinator reaches hosts streaming to other members; null
  // (before the relay is destroyed) stops it. See MitigationCoordinator::SetRelay.
  void SetCommandRelay(CommandRelay* relay);

 private:
  LeakPipeline(const LeakPipelineOptions& options, SeriesStore* store, CommandRouter* commands,
               CollectorMetrics* metrics, const Clock* clock);
  void Observe(const std::string& host, const drip::v1::SampleBatch& batch, bool streamed);
  // Detector figures and the snapshot counters as of this pass.
  void RefreshMetrics(const FleetSuspects& suspects);

  const LeakPipelineOptions options_;
  SeriesStore* store_;
  CommandRouter* commands_;
  CollectorMetrics* metrics_;
  const Clock* clock_;
  OnlineDetector detector_;
  InstanceVersionBook versions_;  // before reports_, which reads it
  SnapshotScheduler snapshots_;
  LeakReportBook reports_;
  MitigationCoordinator mitigations_;
  // After snapshots_, so that it is stopped (its queued diagnoses run) before the
  // scheduler they finish into goes.
  WorkerPool diagnoses_;
  LeakReportMetrics report_metrics_;
  SnapshotScheduler::Counts snapshot_counts_;  // as of the last pass; pipeline thread only
  int64_t next_forget_ms_ = 0;                 // pipeline thread only
  FleetSuspects peer_suspects_;                // pipeline thread only
  // What the cluster threads hand the pipeline thread and back, guarded by view_mu_.
  mutable std::mutex view_mu_;
  std::optional<ClusterReportView> pending_view_;
  // The last view's, for KnownReport.
  std::shared_ptr<const std::vector<drip::v1::LeakReport>> shared_reports_ =
      std::make_shared<const std::vector<drip::v1::LeakReport>>();
  std::optional<std::map<std::string, analyzer::ComponentDrift>> pending_peer_drifts_;
  std::vector<std::pair<std::string, analyzer::ComponentDrift>> local_drifts_;
  // Set once someone reads LocalDrifts (a clustered collector): only then does each pass
  // compute them.
  mutable std::atomic<bool> sharing_drift_{false};
  LoopThread loop_;
};

}  // namespace drip::collector
