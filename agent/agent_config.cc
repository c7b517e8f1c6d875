#include "agent/agent_config.h"

#include <limits.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "common/base/config_reader.h"
#include "common/base/duration.h"
#include "common/base/mitigation_action.h"
#include "common/base/status_macros.h"
#include "common/base/strings.h"
#include "common/daemon/listen_address.h"
#include "common/rpc/agent_message_limits.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace drip::agent {
namespace {

using std::chrono::milliseconds;

// The collector refuses batches above its ingest.max_samples_per_batch, 100 000 by
// default; more would only produce refused batches.
constexpr uint64_t kMaxSamplesPerBatchLimit = 100000;
// Below this a /proc pass over a busy host would not finish before the next one.
constexpr milliseconds kMinInterval(100);

struct Problem {
  std::string key;
  std::string what;
};

std::string MachineHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

std::optional<Problem> FindProblem(const AgentConfig& c) {
  if (TrimWhitespace(c.host).empty()) {
    return Problem{"host", "must not be empty (no host name could be read from the system)"};
  }
  if (TrimWhitespace(c.collector).empty()) return Problem{"collector", "must not be empty"};
  if (c.buffer.max_bytes > kMaxBufferBytes) {
    return Problem{"buffer.max_bytes",
                   fmt::format("{} is more than {}: the buffer lives in the agent's memory, which "
                               "its unit caps at 256 MiB",
                               FormatBytes(c.buffer.max_bytes), FormatBytes(kMaxBufferBytes))};
  }
  if (c.proc_root.empty()) return Problem{"proc_root", "must not be empty"};
  if (!c.metrics.listen_address.empty()) {
    if (auto a = ListenAddress::Parse(c.metrics.listen_address); !a.ok()) {
      return Problem{"metrics.listen_address", std::string(a.status().message())};
    }
  }
  if (c.interval < kMinInterval) {
    return Problem{"interval", fmt::format("{} is below the minimum {}", FormatDuration(c.interval),
                                           FormatDuration(kMinInterval))};
  }
  if (c.backoff.initial > c.backoff.max) {
    return Problem{"backoff.initial",
                   fmt::format("{} is above backoff.max ({})", FormatDuration(c.backoff.initial),
                               FormatDuration(c.backoff.max))};
  }
  if (c.host.size() > agent_limits::kMaxHostBytes) {
    return Problem{"host", fmt::format("{} bytes, more than the {} a host name may have",
                                       c.host.size(), agent_limits::kMaxHostBytes)};
  }
  // The collector refuses a hello past these (common/rpc/agent_message_limits.h).
  if (c.labels.size() > agent_limits::kMaxOperatorLabels) {
    return Problem{"labels", fmt::format("{} labels, more than {}", c.labels.size(),
                                         agent_limits::kMaxOperatorLabels)};
  }
  for (const auto& [key, value] : c.labels) {
    if (TrimWhitespace(key).empty()) return Problem{"labels", "a label name is empty"};
    if (key.size() > agent_limits::kMaxLabelKeyBytes) {
      return Problem{"labels", fmt::format("a label name has {} bytes, more than {}", key.size(),
                                           agent_limits::kMaxLabelKeyBytes)};
    }
    if (value.size() > agent_limits::kMaxLabelValueBytes) {
      return Problem{"labels." + key, fmt::format("{} bytes, more than {}", value.size(),
                                                  agent_limits::kMaxLabelValueBytes)};
    }
  }
  for (const std::string& action : c.mitigation.allowed_actions) {
    if (action != mitigation_action::kRestartUnit && action != mitigation_action::kSignalProcess) {
      return Problem{
          "mitigation.allowed_actions",
          fmt::format("unknown action '{}' (expected restart-unit or signal-process)", action)};
    }
  }
  for (const std::string& pattern : c.commands.allowed_components) {
    if (TrimWhitespace(pattern).empty()) {
      return Problem{"commands.allowed_components", "an entry is empty"};
    }
  }
  // Last, so that a file without a tls section still hears of its other problems.
  if (std::optional<TlsProblem> tls = FindTlsProblem(c.tls, TlsRole::kAgent)) {
    return Problem{tls->key, tls->what};
  }
  return std::nullopt;
}

absl::Status ReadAll(ConfigReader& r, AgentConfig* c) {
  RETURN_IF_ERROR(r.ReadString("host", &c->host));
  // A value no YAML scalar reads as, to tell "collector" left out from given.
  const std::string kNotGiven(1, '\0');
  std::string collector = kNotGiven;
  RETURN_IF_ERROR(r.ReadString("collector", &collector));
  RETURN_IF_ERROR(r.ReadStringList("collectors", &c->collectors));
  if (!c->collectors.empty()) {
    if (collector != kNotGiven) {
      return r.Error("collectors", "give either collector or collectors, not both");
    }
    for (const std::string& address : c->collectors) {
      if (TrimWhitespace(address).empty()) return r.Error("collectors", "an entry is empty");
    }
    c->collector = c->collectors.front();
  } else if (collector != kNotGiven) {
    c->collector = collector;
  }
  RETURN_IF_ERROR(r.ReadStringList("redirect_to", &c->redirect_to));
  for (const std::string& pattern : c->redirect_to) {
    if (TrimWhitespace(pattern).empty()) return r.Error("redirect_to", "an entry is empty");
    if (pattern.find(':') == std::string::npos) {
      return r.Error(
          "redirect_to",
          fmt::format("'{}' is not a host:port pattern (e.g. '*.collectors.example:7070')",
                      pattern));
    }
  }
  RETURN_IF_ERROR(ReadTlsSettings(r, "tls.", &c->tls));
  RETURN_IF_ERROR(r.ReadDuration("interval", &c->interval, kMinInterval));
  RETURN_IF_ERROR(r.ReadStringMap("labels", &c->labels));
  RETURN_IF_ERROR(r.ReadUint("buffer.max_batches", &c->buffer.max_batches, 1, 10'000'000));
  RETURN_IF_ERROR(r.ReadByteSize("buffer.max_bytes", &c->buffer.max_bytes, 64 * 1024));
  RETURN_IF_ERROR(r.ReadDuration("backoff.initial", &c->backoff.initial, milliseconds(10)));
  RETURN_IF_ERROR(r.ReadDuration("backoff.max", &c->backoff.max, milliseconds(10)));
  RETURN_IF_ERROR(
      r.ReadUint("max_samples_per_batch", &c->max_samples_per_batch, 1, kMaxSamplesPerBatchLimit));
  RETURN_IF_ERROR(r.ReadEnum("sampler", {"auto", "bpf", "proc"}, &c->sampler));
  RETURN_IF_ERROR(r.ReadBool("sample_units", &c->sample_units));
  RETURN_IF_ERROR(r.ReadBool("sample_slab", &c->sample_slab));
  RETURN_IF_ERROR(r.ReadUint("max_entities", &c->max_entities, 1, 10'000'000));
  RETURN_IF_ERROR(r.ReadString("metrics.listen_address", &c->metrics.listen_address));
  RETURN_IF_ERROR(
      r.ReadEnum("log.level", {"trace", "debug", "info", "warn", "error", "off"}, &c->log.level));
  RETURN_IF_ERROR(r.ReadString("proc_root", &c->proc_root));
  RETURN_IF_ERROR(r.ReadBool("snapshots.enabled", &c->snapshots.enabled));
  RETURN_IF_ERROR(r.ReadDouble("snapshots.cpu_budget", &c->snapshots.cpu_budget, 0.001, 1.0));
  RETURN_IF_ERROR(r.ReadByteSize("snapshots.sample_bytes", &c->snapshots.sample_bytes, 0));
  RETURN_IF_ERROR(r.ReadDuration("snapshots.max_duration", &c->snapshots.max_duration,
                                 std::chrono::seconds(1)));
  RETURN_IF_ERROR(r.ReadUint("snapshots.max_per_hour", &c->snapshots.max_per_hour, 0, 3600));
  RETURN_IF_ERROR(r.ReadStringList("commands.allowed_components", &c->commands.allowed_components));
  // Checked with the other cross-field problems in FindProblem, so that a flag or a test
  // that fills the set by hand gets the same message.
  std::vector<std::string> allowed_actions(c->mitigation.allowed_actions.begin(),
                                           c->mitigation.allowed_actions.end());
  RETURN_IF_ERROR(r.ReadStringList("mitigation.allowed_actions", &allowed_actions));
  c->mitigation.allowed_actions = {allowed_actions.begin(), allowed_actions.end()};
  return r.CheckNoUnknownKeys();
}

}  // namespace

AgentConfig AgentConfig::Defaults() {
  AgentConfig config;
  config.host = MachineHostName();
  return config;
}

absl::StatusOr<AgentConfig> AgentConfig::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot open config file", path));
  std::stringstream text;
  text << in.rdbuf();
  return FromString(text.str(), path);
}

absl::StatusOr<AgentConfig> AgentConfig::FromString(std::string_view yaml, std::string source) {
  ASSIGN_OR_RETURN(ConfigReader reader, ConfigReader::FromString(yaml, source));
  AgentConfig config = Defaults();
  RETURN_IF_ERROR(ReadAll(reader, &config));
  if (std::optional<Problem> p = FindProblem(config)) {
    // Same shape as ConfigReader's own errors: file:line: key: what.
    return absl::InvalidArgumentError(ConfigProblem(source, yaml, p->key, p->what));
  }
  return config;
}

absl::Status AgentConfig::Validate() const {
  if (std::optional<Problem> p = FindProblem(*this)) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", p->key, p->what));
  }
  return absl::OkStatus();
}

}  // namespace drip::agent
