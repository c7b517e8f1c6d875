// drip-agent: samples this host's memory per process and streams it to the collector.
// This file only parses flags, loads the config and wires the Agent (agent/agent.h);
// docs/agent.md describes every flag and option.
//
//   drip-agent --config FILE [--collector HOST:PORT] [--host NAME] [--interval DUR]
//              [--sampler auto|bpf|proc] [--ready-file PATH]   the daemon, until SIGTERM/SIGINT
//   drip-agent sample --once [--json] [--sampler S] [--config FILE]   one pass, printed
//
// Exit codes: 0 success or clean shutdown, 1 runtime failure, 2 bad flags or config.
#include <csignal>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "agent/agent.h"
#include "agent/agent_config.h"
#include "agent/sample_report.h"
#include "agent/sampler_factory.h"
#include "common/clock.h"
#include "common/duration.h"
#include "common/logging.h"
#include "common/ready_file.h"
#include "common/shutdown_signal.h"
#include "common/status_macros.h"
#include "common/version.h"
#include "fmt/format.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

// Bad flags or config: one line on stderr.
int Usage(const std::string& message) {
  std::fprintf(stderr, "drip-agent: %s\n", message.c_str());
  return kExitUsage;
}

int RuntimeFailure(const std::string& message) {
  std::fprintf(stderr, "drip-agent: %s\n", message.c_str());
  return kExitRuntime;
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
  return std::fflush(stdout) == 0 ? kExitOk : kExitRuntime;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists, so that every thread inherits the mask and the signal
  // reaches only WaitForShutdownSignal.
  drip::BlockShutdownSignals();

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    std::printf("%s\n", drip::kVersion);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    return Usage(std::string(e.what()) + " (see drip-agent --help)");
  }

  if (sample->parsed()) {
    if (!once) return Usage("sample: --once is required (continuous sampling is the daemon)");
    return RunSampleOnce(sample_config_path.empty() ? config_path : sample_config_path,
                         sampler_flag, json);
  }

  if (config_path.empty()) return Usage("--config is required (see drip-agent --help)");
  absl::StatusOr<drip::agent::AgentConfig> config = drip::agent::AgentConfig::FromFile(config_path);
  if (!config.ok()) return Usage(std::string(config.status().message()));
  if (collector) config->collector = *collector;
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
  auto log = drip::Logger("agent");
  absl::StatusOr<std::unique_ptr<drip::agent::Agent>> agent = drip::agent::Agent::Create(*config);
  if (!agent.ok()) {
    log->error("cannot start: {}", std::string(agent.status().message()));
    return kExitRuntime;
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
      return kExitRuntime;
    }
  }

  drip::agent::Agent* running = agent->get();
  std::thread signal_waiter([running, log] {
    int signal = drip::WaitForShutdownSignal();
    log->info("received {}; shutting down", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    running->RequestStop();
  });
  running->Run();  // returns only after RequestStop(), i.e. after the waiter fired
  signal_waiter.join();
  return kExitOk;
}
