// drip-agent: samples this host's memory per process and streams it to the collector.
// This file only parses flags, loads the config and wires the Agent (agent/agent.h);
// docs/agent.md describes every flag and option.
//
//   drip-agent --config FILE [--collector HOST:PORT] [--host NAME] [--interval DUR]
//              [--sampler auto|bpf|proc] [--ready-file PATH]   the daemon, until SIGTERM/SIGINT
//   drip-agent sample --once [--json] [--sampler S] [--config FILE]   one pass, printed
//   drip-agent snapshot --pid PID --duration SECONDS --output FILE [--mode attach|preload]
//              a live heap snapshot of one process (docs/snapshot.md)
//
// Exit codes: 0 success or clean shutdown, 1 runtime failure, 2 bad flags or config.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "agent/agent.h"
#include "agent/agent_config.h"
#include "agent/heap/heap_snapshotter.h"
#include "agent/sample_report.h"
#include "agent/sampler_factory.h"
#include "common/base/atomic_file.h"
#include "common/base/clock.h"
#include "common/base/duration.h"
#include "common/base/exit_codes.h"
#include "common/base/status_macros.h"
#include "common/daemon/command_line.h"
#include "common/daemon/logging.h"
#include "common/daemon/ready_file.h"
#include "common/daemon/shutdown_signal.h"
#include "common/daemon/systemd_notifier.h"
#include "common/rpc/grpc_logging.h"
#include "common/snapshot/heap_snapshot_json.h"
#include "common/version.h"
#include "fmt/format.h"

namespace {

using drip::kExitFailure;
using drip::kExitOk;
using drip::kExitUsage;

// Bad flags or config: one line on stderr.
int Usage(const std::string& message) {
  std::fprintf(stderr, "drip-agent: %s\n", message.c_str());
  return kExitUsage;
}

int RuntimeFailure(const std::string& message) {
  std::fprintf(stderr, "drip-agent: %s\n", message.c_str());
  return kExitFailure;
}

absl::StatusOr<drip::agent::AgentConfig> LoadConfig(const std::string& path) {
  if (path.empty()) return drip::agent::AgentConfig::Defaults();
  return drip::agent::AgentConfig::FromFile(path);
}

int RunSampleOnce(const std::string& config_path, const std::optional<std::string>& sampler_flag,
                  bool json) {
  // Only problems on stderr: stdout is the result, and scripts parse it. The fallback
  // warning is not needed there: the output's first line (or "fallback_reason") says it.
  drip::IgnoreError(drip::InitLogging("error"));
  absl::StatusOr<drip::agent::AgentConfig> config = LoadConfig(config_path);
  if (!config.ok()) return Usage(std::string(config.status().message()));
  if (sampler_flag) config->sampler = *sampler_flag;
  auto sampler = drip::agent::CreateSampler(*config, drip::SystemClock::Get());
  if (!sampler.ok()) return RuntimeFailure(std::string(sampler.status().message()));
  auto samples = (*sampler)->SampleOnce();
  if (!samples.ok()) {
    return RuntimeFailure("sample: " + std::string(samples.status().message()));
  }
  drip::agent::SortByUnreclaimable(&*samples);
  const std::string name = (*sampler)->name();
  const std::string fallback = (*sampler)->fallback_reason();
  std::string out = json ? drip::agent::RenderSampleJson(name, fallback, *samples)
                         : drip::agent::RenderSampleTable(name, fallback, *samples);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

int RunSnapshot(const drip::agent::SnapshotOptions& options, const std::string& output,
                const std::string& log_level) {
  if (absl::Status s = drip::InitLogging(log_level); !s.ok()) {
    return Usage(std::string(s.message()));
  }
  if (output.empty()) return Usage("snapshot: --output is required");
  // The file first: a bad --output fails before the target is probed, not after.
  std::optional<drip::AtomicFile> file;
  if (output != "-") {
    absl::StatusOr<drip::AtomicFile> created = drip::AtomicFile::Create(output);
    if (!created.ok()) return Usage("--output: " + std::string(created.status().message()));
    file = std::move(*created);
  }
  // SIGTERM / SIGINT end the snapshot early but cleanly: the probes are detached and what
  // was gathered is still written.
  std::atomic<bool> stop{false};
  std::thread waiter([&stop] {
    drip::WaitForShutdownSignal();
    stop = true;
  });
  waiter.detach();
  absl::StatusOr<drip::HeapSnapshot> snapshot = drip::agent::TakeHeapSnapshot(options, &stop);
  if (!snapshot.ok()) {
    return snapshot.status().code() == absl::StatusCode::kInvalidArgument
               ? Usage(std::string(snapshot.status().message()))
               : RuntimeFailure(std::string(snapshot.status().message()));
  }
  const std::string json = drip::HeapSnapshotToJson(*snapshot);
  if (file) {
    if (absl::Status written = file->Commit(json); !written.ok()) {
      return RuntimeFailure(std::string(written.message()));
    }
  } else if (std::fwrite(json.data(), 1, json.size(), stdout) != json.size() ||
             std::fflush(stdout) != 0) {
    return RuntimeFailure("stdout: write failed");
  }
  std::fprintf(stderr,
               "drip-agent: snapshot of pid %d (%s), %s mode, allocator %s, %.1f s: %zu stacks, "
               "%llu sampled allocations, %llu frees matched; stopped: %s (%s)\n",
               snapshot->target.pid, snapshot->target.comm.c_str(), snapshot->mode.c_str(),
               snapshot->target.allocator.empty() ? "unknown" : snapshot->target.allocator.c_str(),
               (snapshot->end_ms - snapshot->start_ms) / 1000.0, snapshot->stacks.size(),
               static_cast<unsigned long long>(snapshot->sampled_allocs),
               static_cast<unsigned long long>(snapshot->matched_frees),
               snapshot->stop_reason.c_str(), snapshot->stop_detail.c_str());
  if (!snapshot->unsampled_calls.empty()) {
    std::fprintf(stderr, "drip-agent: not sampled: the program's calls to %s%s\n",
                 fmt::format("{}", fmt::join(snapshot->unsampled_calls, ", ")).c_str(),
                 snapshot->mode == "preload" ? " (attach mode, --mode attach, probes them)" : "");
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists, so that every thread inherits the mask and the signal
  // reaches only WaitForShutdownSignal.
  drip::BlockShutdownSignals();
  // libdw fetches missing debug files from debuginfod servers when this is set: the agent
  // symbolizes with what is on the host and never reaches out to the network.
  unsetenv("DEBUGINFOD_URLS");

  CLI::App app{
      "drip-agent: samples this host's memory per process and streams it to the "
      "Drip collector (docs/agent.md)"};
  app.set_version_flag("--version", drip::kVersion);
  std::string config_path;
  std::optional<std::string> collector;
  std::optional<std::string> host;
  std::optional<std::string> interval_text;
  std::string ready_file;
  std::optional<std::string> sampler_flag;
  const auto samplers = CLI::IsMember({"auto", "bpf", "proc"});
  app.add_option("--config", config_path, "agent YAML config (required for the daemon)");
  app.add_option("--sampler", sampler_flag,
                 "process sampler: auto, bpf or proc (overrides 'sampler')")
      ->check(samplers);
  app.add_option("--collector", collector, "collector HOST:PORT (overrides 'collector')");
  app.add_option("--host", host, "host name samples are filed under (overrides 'host')");
  app.add_option("--interval", interval_text, "sampling interval, e.g. 10s (overrides 'interval')");
  app.add_option("--ready-file", ready_file,
                 "once running, write {\"host\", \"sampler\", \"metrics\"} there (atomically)");

  bool once = false;
  bool json = false;
  std::string sample_config_path;
  CLI::App* sample =
      app.add_subcommand("sample", "print what one sampling pass sees (no collector needed)");
  sample->add_flag("--once", once, "sample once and exit (required)");
  sample->add_flag("--json", json, "print JSON instead of a table");
  sample->add_option("--sampler", sampler_flag, "process sampler: auto, bpf or proc")
      ->check(samplers);
  sample->add_option("--config", sample_config_path,
                     "agent YAML config (sampler, proc_root); defaults without it");

  drip::agent::SnapshotOptions snapshot_options;
  std::string snapshot_output;
  std::string snapshot_log_level = "warn";
  CLI::App* snapshot_cmd = app.add_subcommand(
      "snapshot", "take a live heap snapshot of one process and write it as JSON");
  snapshot_cmd->add_option("--pid", snapshot_options.pid, "the process to snapshot")->required();
  snapshot_cmd
      ->add_option("--duration", snapshot_options.duration_seconds,
                   "seconds to watch it (at most 3600)")
      ->required();
  snapshot_cmd->add_option("--output", snapshot_output, "where to write the snapshot ('-': stdout)")
      ->required();
  snapshot_cmd
      ->add_option("--mode", snapshot_options.mode,
                   "attach (uprobes, any process) or preload (libdrip_sampler.so); default: "
                   "preload when the shim is loaded")
      ->check(CLI::IsMember({"attach", "preload"}));
  snapshot_cmd->add_option("--cpu-budget", snapshot_options.cpu_budget,
                           "attach mode: share of one core the probes may cost (default 0.05)");
  snapshot_cmd->add_option("--sample-bytes", snapshot_options.sampling_mean_bytes,
                           "attach mode: mean bytes between samples (default: sized from the "
                           "allocation rate, 256 B to 64 MiB; preload mode asks the shim for it)");
  std::optional<double> extend_up_to;
  snapshot_cmd->add_option("--extend-up-to", extend_up_to,
                           "while the evidence is too short to decide, keep going up to this "
                           "many seconds in all (default 4x --duration, at most 600; 0: never)");
  std::optional<std::string> expect_growth;
  snapshot_cmd->add_option("--expect-growth", expect_growth,
                           "the growth already measured on the process (e.g. 4KiB/s, "
                           "3.6MiB/h; what the collector passes): sample and extend the window "
                           "until a leak that fast would show");
  snapshot_cmd->add_option("--interval", snapshot_options.interval_seconds,
                           "seconds between read-outs (default duration/60, 0.25-10)");
  snapshot_cmd->add_option("--max-events-per-second", snapshot_options.max_events_per_second,
                           "hard limit on sampled events per CPU (default 5000)");
  snapshot_cmd->add_option("--log-level", snapshot_log_level, "log level on stderr (default warn)");

  if (std::optional<int> ended = drip::ParseCommandLine(app, argc, argv, "drip-agent"))
    return *ended;

  if (snapshot_cmd->parsed()) {
    snapshot_options.extend_up_to_seconds =
        extend_up_to.value_or(std::min(4 * snapshot_options.duration_seconds, 600.0));
    if (expect_growth) {
      absl::StatusOr<double> rate = drip::ParseByteRate(*expect_growth);
      if (!rate.ok())
        return Usage("snapshot: --expect-growth: " + std::string(rate.status().message()));
      snapshot_options.expected_growth_bytes_per_hour = *rate;
    }
    return RunSnapshot(snapshot_options, snapshot_output, snapshot_log_level);
  }

  if (sample->parsed()) {
    if (!once) return Usage("sample: --once is required (continuous sampling is the daemon)");
    return RunSampleOnce(sample_config_path.empty() ? config_path : sample_config_path,
                         sampler_flag, json);
  }

  if (config_path.empty()) return Usage("--config is required (see drip-agent --help)");
  absl::StatusOr<drip::agent::AgentConfig> config = drip::agent::AgentConfig::FromFile(config_path);
  if (!config.ok()) return Usage(std::string(config.status().message()));
  if (collector) {
    config->collector = *collector;
    config->collectors.clear();
  }
  if (host) config->host = *host;
  if (sampler_flag) config->sampler = *sampler_flag;
  if (interval_text) {
    absl::StatusOr<std::chrono::milliseconds> interval = drip::ParseDuration(*interval_text);
    if (!interval.ok()) return Usage("--interval: " + std::string(interval.status().message()));
    config->interval = *interval;
  }
  if (absl::Status valid = config->Validate(); !valid.ok()) {
    return Usage(std::string(valid.message()));
  }
  if (absl::Status logging = drip::InitLogging(config->log.level); !logging.ok()) {
    return Usage("log.level: " + std::string(logging.message()));
  }
  drip::RouteGrpcLogs();
  auto log = drip::Logger("agent");
  absl::StatusOr<std::unique_ptr<drip::agent::Agent>> agent = drip::agent::Agent::Create(*config);
  if (!agent.ok()) {
    log->error("cannot start: {}", std::string(agent.status().message()));
    return kExitFailure;
  }
  log->info(
      "drip-agent {} starting: host '{}', collector {}, interval {}, buffer {} batches / {}, "
      "backoff {}..{}, max {} samples per batch, sampler {}, proc root {}",
      drip::kVersion, config->host, config->collector, drip::FormatDuration(config->interval),
      config->buffer.max_batches, drip::FormatBytes(config->buffer.max_bytes),
      drip::FormatDuration(config->backoff.initial), drip::FormatDuration(config->backoff.max),
      config->max_samples_per_batch, config->sampler, config->proc_root);

  (*agent)->Start();
  if (!ready_file.empty()) {
    std::map<std::string, std::string> fields = {{"host", config->host},
                                                 {"sampler", (*agent)->sampler().name()}};
    if (drip::agent::AgentMetrics* metrics = (*agent)->metrics(); metrics && metrics->port()) {
      fields["metrics"] = fmt::format("127.0.0.1:{}", metrics->port());
    }
    if (absl::Status written = drip::WriteReadyFile(ready_file, fields); !written.ok()) {
      log->error("cannot write ready file: {}", std::string(written.message()));
      return kExitFailure;
    }
  }

  drip::agent::Agent* running = agent->get();
  // Under systemd (Type=notify): READY=1 once the first pass has run, and, with
  // WatchdogSec=, pings only while passes keep ending, so a hung sampling loop gets the
  // agent restarted. A no-op elsewhere.
  drip::SystemdNotifier notifier("agent");
  const std::chrono::steady_clock::duration stall_limit =
      std::max<std::chrono::steady_clock::duration>(3 * config->interval, std::chrono::seconds(30));
  const std::string ready_status = fmt::format(
      "sampling every {} with the {} sampler; streaming to {}",
      drip::FormatDuration(config->interval), running->sampler().name(), config->collector);
  running->SetFirstPassCallback([&notifier, running, stall_limit, ready_status] {
    notifier.Ready(ready_status);
    notifier.StartWatchdog([running, stall_limit] {
      return std::chrono::steady_clock::now() - running->last_pass_end() < stall_limit;
    });
  });
  std::thread signal_waiter([running, log, &notifier] {
    int signal = drip::WaitForShutdownSignal();
    log->info("received {}; shutting down", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    notifier.Stopping();
    running->RequestStop();
  });
  running->Run();  // returns only after RequestStop(), i.e. after the waiter fired
  signal_waiter.join();
  return kExitOk;
}
