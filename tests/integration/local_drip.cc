#include "tests/integration/local_drip.h"

#include <signal.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "common/daemon/ready_file.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace drip::testing {
namespace {
std::string ChildProcessLogOrEmpty(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

std::string CollectorBinary() { return DRIP_COLLECTOR_BIN; }
std::string AgentBinary() { return DRIP_AGENT_BIN; }
std::string DripctlBinary() { return DRIPCTL_BIN; }
std::string TestAllocBinary() { return DRIP_TEST_ALLOC_BIN; }
std::string LeakyExampleBinary() { return DRIP_LEAKY_EXAMPLE_BIN; }

LocalDrip::LocalDrip() = default;

LocalDrip::~LocalDrip() {
  agent_.reset();
  collector_.reset();
}

void LocalDrip::SetStorage(const std::string& path, const std::string& extra_storage_yaml) {
  storage_path_ = path;
  storage_yaml_ = extra_storage_yaml;
}

absl::Status LocalDrip::StartCollector(const std::string& extra_yaml) {
  // A restart keeps the port, so the running agent finds the collector again.
  std::string listen = grpc_address_.empty() ? "127.0.0.1:0" : grpc_address_;
  std::string tls = "tls:\n  plaintext: true\n";
  if (tls_) {
    tls = fmt::format("tls:\n  ca_file: \"{}\"\n  cert_file: \"{}\"\n  key_file: \"{}\"\n",
                      tls_->ca_file, tls_->collector_cert, tls_->collector_key);
    if (!tls_->access_file.empty()) {
      tls += fmt::format("auth:\n  access_file: \"{}\"\n", tls_->access_file);
    }
  }
  WriteFile(dir_.File("collector.yaml"),
            fmt::format(R"(grpc:
  listen_address: "{}"
storage:
  path: "{}"
{}
metrics:
  listen_address: "127.0.0.1:0"
log:
  level: debug
{}{})",
                        listen, storage_path_.empty() ? dir_.File("db") : storage_path_,
                        storage_yaml_, tls, extra_yaml));
  std::string ready = dir_.File("collector.ready");
  std::remove(ready.c_str());
  auto process = ChildProcess::Start(
      {CollectorBinary(), "--config", dir_.File("collector.yaml"), "--ready-file", ready},
      dir_.File(fmt::format("collector.{}.log", ++collector_starts_)));
  if (!process.ok()) return process.status();
  collector_ = std::move(*process);
  auto fields = WaitForReadyFile(ready, collector_.get());
  if (!fields.ok()) return fields.status();
  grpc_address_ = (*fields)["grpc"];
  metrics_address_ = (*fields)["metrics"];
  return absl::OkStatus();
}

absl::Status LocalDrip::StartAgent(const std::string& host, std::chrono::milliseconds interval,
                                   const std::vector<std::string>& extra_args,
                                   const std::string& extra_yaml) {
  std::string tls = "tls:\n  plaintext: true\n";
  if (tls_) {
    tls = fmt::format("tls:\n  ca_file: \"{}\"\n  cert_file: \"{}\"\n  key_file: \"{}\"\n",
                      tls_->ca_file, tls_->agent_cert, tls_->agent_key);
  }
  std::string allowed = "commands:\n  allowed_components:\n";
  for (const std::string& pattern : allowed_components_) {
    allowed += fmt::format("    - \"{}\"\n", pattern);
  }
  std::string collector = fmt::format("collector: \"{}\"", grpc_address_);
  if (!agent_collectors_.empty()) {
    collector = fmt::format("collectors: [\"{}\"]", fmt::join(agent_collectors_, "\", \""));
  }
  if (!agent_redirect_to_.empty()) {
    collector += fmt::format("\nredirect_to: [\"{}\"]", fmt::join(agent_redirect_to_, "\", \""));
  }
  WriteFile(dir_.File("agent.yaml"),
            fmt::format(R"(host: "{}"
{}
interval: {}ms
labels:
  env: integration-test
backoff:
  initial: 100ms
  max: 1s
metrics:
  listen_address: "127.0.0.1:0"
log:
  level: debug
snapshots:
  cpu_budget: 0.5
{}{}{}
)",
                        host, collector, interval.count(), tls, allowed, extra_yaml));
  std::string ready = dir_.File("agent.ready");
  std::vector<std::string> argv = {AgentBinary(), "--config", dir_.File("agent.yaml"),
                                   "--ready-file", ready};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  auto process = ChildProcess::Start(argv, dir_.File("agent.log"));
  if (!process.ok()) return process.status();
  agent_ = std::move(*process);
  auto fields = WaitForReadyFile(ready, agent_.get());
  if (!fields.ok()) return fields.status();
  agent_sampler_ = (*fields)["sampler"];
  agent_metrics_address_ = (*fields)["metrics"];
  return absl::OkStatus();
}

void LocalDrip::KillCollector(int sig) {
  if (!collector_) return;
  collector_->Signal(sig);
  collector_->Wait(std::chrono::seconds(30));
}

CommandOutput LocalDrip::Dripctl(std::vector<std::string> args) {
  std::vector<std::string> head = {DripctlBinary(), "--collector", grpc_address_};
  if (tls_) {
    head.insert(head.end(), tls_->dripctl_flags.begin(), tls_->dripctl_flags.end());
  } else {
    head.push_back("--plaintext");
  }
  args.insert(args.begin(), head.begin(), head.end());
  return RunCommand(args);
}

absl::StatusOr<nlohmann::json> LocalDrip::Series(const std::string& host,
                                                 const std::string& component) {
  CommandOutput out = Dripctl({"series", "--host", host, "--component", component, "--json"});
  if (out.exit_code != 0) {
    return absl::InternalError(fmt::format("dripctl series exited {}: {}", out.exit_code, out.err));
  }
  auto parsed = nlohmann::json::parse(out.out, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return absl::InternalError("dripctl series printed invalid JSON");
  return parsed;
}

absl::StatusOr<int> LocalDrip::CollectorHealth() {
  auto channel = grpc::CreateChannel(grpc_address_, grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  if (!status.ok()) {
    return absl::UnavailableError(
        fmt::format("health check of {}: {}", grpc_address_, status.error_message()));
  }
  return static_cast<int>(response.status());
}

std::string LocalDrip::Logs() const {
  std::string logs;
  for (int i = 1; i <= collector_starts_; ++i) {
    logs += fmt::format("--- collector start {} ---\n{}\n", i,
                        ChildProcessLogOrEmpty(dir_.File(fmt::format("collector.{}.log", i))));
  }
  logs += fmt::format("--- agent ---\n{}\n", ChildProcessLogOrEmpty(dir_.File("agent.log")));
  return logs;
}

std::vector<int64_t> SampleTimestamps(const nlohmann::json& series,
                                      const std::string& instance_prefix) {
  std::vector<int64_t> out;
  for (const auto& s : series["series"]) {
    if (!s["instance"].get<std::string>().starts_with(instance_prefix)) continue;
    for (const auto& sample : s["samples"]) out.push_back(sample["timestamp_ms"].get<int64_t>());
  }
  return out;
}

absl::StatusOr<std::string> ComponentOfPid(int pid) {
  CommandOutput out = RunCommand({AgentBinary(), "sample", "--once", "--json"});
  if (out.exit_code != 0) {
    return absl::InternalError(
        fmt::format("drip-agent sample exited {}: {}", out.exit_code, out.err));
  }
  auto parsed = nlohmann::json::parse(out.out, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return absl::InternalError("drip-agent sample printed invalid JSON");
  std::string prefix = fmt::format("{}@", pid);
  for (const auto& s : parsed["samples"]) {
    if (s["instance"].get<std::string>().rfind(prefix, 0) == 0) {
      return s["component"].get<std::string>();
    }
  }
  return absl::NotFoundError(fmt::format("pid {} not in drip-agent sample output", pid));
}

nlohmann::json WaitForSuspect(LocalDrip& drip, const std::string& host,
                              const std::string& component, std::chrono::seconds wait,
                              std::string* last) {
  for (int attempt = 0; attempt < wait.count(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    CommandOutput out = drip.Dripctl({"suspects", "--json"});
    if (out.exit_code != 0) {
      *last = out.err;
      continue;
    }
    *last = out.out;
    const nlohmann::json listed = nlohmann::json::parse(out.out, nullptr, false);
    if (listed.is_discarded()) continue;
    for (const auto& s : listed["suspects"]) {
      if (s["host"] == host && s["component"] == component) return s;
    }
  }
  return nullptr;
}

nlohmann::json WaitForFinishedSnapshot(LocalDrip& drip, const std::string& host,
                                       const std::string& component, std::chrono::seconds wait,
                                       std::string* last) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < deadline) {
    const nlohmann::json s = WaitForSuspect(drip, host, component, std::chrono::seconds(1), last);
    if (!s.is_null() && s["snapshot"].is_object() && s["snapshot"]["state"] != "pending") {
      return s["snapshot"];
    }
  }
  return nullptr;
}

}  // namespace drip::testing
