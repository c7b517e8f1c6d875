#include "agent/heap/snapshot_command_runner.h"

#include <algorithm>
#include <cmath>

#include "agent/heap/heap_snapshotter.h"
#include "agent/instance_check.h"
#include "common/daemon/logging.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "drip/v1/snapshot.pb.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

// Keeps the stacks that matter: the most live bytes at the end, then the most allocated.
void TrimStacks(HeapSnapshot* snapshot, size_t max_stacks) {
  if (snapshot->stacks.size() <= max_stacks) return;
  auto final_live = [](const SnapshotStack& s) {
    return s.series.empty() ? 0 : s.series.back().live_bytes;
  };
  std::sort(snapshot->stacks.begin(), snapshot->stacks.end(),
            [&](const SnapshotStack& a, const SnapshotStack& b) {
              if (final_live(a) != final_live(b)) return final_live(a) > final_live(b);
              return a.allocated_bytes > b.allocated_bytes;
            });
  snapshot->stacks.resize(max_stacks);
}

}  // namespace

SnapshotCommandRunner::SnapshotCommandRunner(SnapshotCommandOptions options, Reply reply)
    : options_(std::move(options)), reply_(std::move(reply)) {}

SnapshotCommandRunner::~SnapshotCommandRunner() {
  stop_ = true;
  std::thread worker;
  {
    std::lock_guard<std::mutex> lock(mu_);
    worker = std::move(worker_);
  }
  if (worker.joinable()) worker.join();
}

void SnapshotCommandRunner::Fail(const std::string& id, const std::string& error) {
  drip::v1::CommandResult result;
  result.set_command_id(id);
  result.set_ok(false);
  result.set_error(error);
  reply_(std::move(result));
}

void SnapshotCommandRunner::Submit(const drip::v1::Command& command) {
  auto log = Logger("agent");
  if (!command.has_snapshot()) return Fail(command.id(), "not a snapshot command");
  if (!options_.enabled) {
    return Fail(command.id(),
                "heap snapshots are disabled in this agent's config (snapshots.enabled)");
  }
  const drip::v1::SnapshotCommand& snap = command.snapshot();
  if (snap.pid() <= 0) return Fail(command.id(), "snapshot command without a pid");
  if (snap.duration_seconds() == 0 || snap.duration_seconds() > options_.max_duration_seconds) {
    return Fail(command.id(),
                fmt::format("duration {} s is outside (0, {}] s (snapshots.max_duration)",
                            snap.duration_seconds(), options_.max_duration_seconds));
  }
  if (!std::isfinite(snap.expected_growth_bytes_per_hour()) ||
      snap.expected_growth_bytes_per_hour() < 0) {
    return Fail(command.id(), fmt::format("expected growth {} bytes/h is not a rate a snapshot "
                                          "can be sized for (a finite number, 0 or more)",
                                          snap.expected_growth_bytes_per_hour()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (busy_) return Fail(command.id(), "another snapshot is running on this host");
  if (worker_.joinable()) worker_.join();  // the previous one has finished
  busy_ = true;
  log->info("collector asked for a heap snapshot ({}): pid {} ({}) for {} s", command.id(),
            snap.pid(), snap.component(), snap.duration_seconds());
  worker_ = std::thread([this, command] { Run(command); });
}

void SnapshotCommandRunner::Run(drip::v1::Command command) {
  const drip::v1::SnapshotCommand& snap = command.snapshot();
  // Best effort, as always for snapshots: a snapshot changes nothing in the target.
  std::string error = CheckProcessInstance(options_.proc_root, snap.pid(), snap.instance(),
                                           InstanceCheck::kBestEffort);
  drip::v1::CommandResult result;
  result.set_command_id(command.id());
  if (error.empty()) {
    SnapshotOptions options;
    options.pid = snap.pid();
    options.proc_root = options_.proc_root;
    options.duration_seconds = snap.duration_seconds();
    options.mode = snap.mode();
    options.extend_up_to_seconds =
        std::min<double>(snap.extend_up_to_seconds(), options_.max_duration_seconds);
    options.cpu_budget = options_.cpu_budget;
    options.sampling_mean_bytes = options_.sampling_mean_bytes;
    options.host = options_.host;
    options.component = snap.component();
    options.instance = snap.instance();
    options.expected_growth_bytes_per_hour = snap.expected_growth_bytes_per_hour();
    absl::StatusOr<HeapSnapshot> snapshot = TakeHeapSnapshot(options, &stop_);
    if (snapshot.ok()) {
      TrimStacks(&*snapshot, options_.max_stacks_sent);
      drip::v1::HeapSnapshot proto;
      HeapSnapshotToProto(*snapshot, &proto);
      result.set_ok(true);
      result.set_payload(proto.SerializeAsString());
    } else {
      error = std::string(snapshot.status().message());
    }
  }
  if (!error.empty()) {
    result.set_ok(false);
    result.set_error(error);
    Logger("agent")->warn("heap snapshot {} failed: {}", command.id(), error);
  }
  reply_(std::move(result));
  std::lock_guard<std::mutex> lock(mu_);
  busy_ = false;
}

}  // namespace drip::agent
