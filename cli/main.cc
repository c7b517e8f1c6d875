// dripctl: the on-call engineer's view of Drip. Parses flags and hands each command to
// its own file; see docs/dripctl.md for every command and the exit codes.
#include <iostream>
#include <optional>

#include "CLI/CLI.hpp"
#include "cli/actor.h"
#include "cli/analyze_command.h"
#include "cli/audit_command.h"
#include "cli/cluster_command.h"
#include "cli/diagnose_command.h"
#include "cli/dripctl_config.h"
#include "cli/exit_codes.h"
#include "cli/hosts_command.h"
#include "cli/leaks_list_command.h"
#include "cli/leaks_show_command.h"
#include "cli/leaks_state_command.h"
#include "cli/mitigate_command.h"
#include "cli/query_client.h"
#include "cli/series_command.h"
#include "cli/suspects_command.h"
#include "cli/terminal_style.h"
#include "common/base/duration.h"
#include "common/daemon/command_line.h"
#include "common/rpc/grpc_logging.h"
#include "common/rpc/report_state.h"
#include "common/version.h"

namespace {

int Fail(const absl::Status& status) {
  std::cerr << "dripctl: " << status.message() << "\n";
  return drip::cli::ExitCodeFor(status);
}

// For the commands that take a report ID: an unknown one has its own exit code.
int FailReport(const absl::Status& status) {
  std::cerr << "dripctl: " << status.message() << "\n";
  return drip::cli::ReportExitCodeFor(status);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dripctl — query and operate Drip, the fleet memory-leak service"};
  app.set_version_flag("--version", drip::kVersion);
  app.require_subcommand(1);
  std::string config_path;
  std::optional<std::string> collector;
  std::optional<std::string> timeout_text;
  app.add_option("--config", config_path, "dripctl YAML config (collector, timeout)");
  app.add_option("--collector", collector,
                 "collector query address HOST:PORT (default 127.0.0.1:7070, or $DRIP_COLLECTOR)");
  app.add_option("--timeout", timeout_text, "how long to wait for the collector (default 10s)");
  std::optional<std::string> ca_file;
  std::optional<std::string> cert_file;
  std::optional<std::string> key_file;
  std::optional<std::string> server_name;
  std::optional<std::string> token_file;
  bool plaintext = false;
  app.add_option("--ca", ca_file, "CA certificate that signed the collector's (tls.ca_file)");
  app.add_option("--cert", cert_file, "client certificate of a principal (tls.cert_file)");
  app.add_option("--key", key_file, "its private key (tls.key_file)");
  app.add_option("--server-name", server_name,
                 "name the collector's certificate carries, when not the address's host");
  app.add_option("--token-file", token_file,
                 "file holding a bearer token for the collector's access policy (token_file)");
  app.add_flag("--plaintext", plaintext,
               "talk to a collector that serves without TLS (tls.plaintext)");

  bool hosts_json = false;
  auto* hosts =
      app.add_subcommand("hosts", "list hosts, their agents and when they were last seen");
  hosts->add_flag("--json", hosts_json, "print JSON instead of a table");

  drip::cli::ClusterOptions cluster_options;
  auto* cluster = app.add_subcommand(
      "cluster",
      "list the collectors that share the fleet, their agents, the hosts each owns and etcd's "
      "state");
  cluster->add_flag("--json", cluster_options.json, "print JSON instead of a table");
  cluster->add_option("--host", cluster_options.host, "only say which member holds this host");
  cluster->add_option("--max-hosts", cluster_options.max_hosts,
                      "host names listed per member (default 100, at most 10000)");

  drip::cli::SeriesCommandOptions series_options;
  std::string since_text;
  auto* series = app.add_subcommand("series", "print the stored samples of a component on a host");
  series->add_option("--host", series_options.host, "host name")->required();
  series
      ->add_option("--component", series_options.component,
                   "component, e.g. svc:nginx.service or proc:redis-server")
      ->required();
  series->add_option("--since", since_text, "only samples newer than this (e.g. 30m, 6h, 2d)");
  series->add_flag("--json", series_options.json, "print JSON instead of a table");

  drip::cli::AnalyzeOptions analyze_options;
  auto* analyze = app.add_subcommand(
      "analyze", "replay a CSV of memory samples through the leak detector (no collector needed)");
  analyze
      ->add_option("--input", analyze_options.input,
                   "CSV with header timestamp,host,component,instance,bytes ('-' for stdin)")
      ->required();
  analyze->add_option("--config", analyze_options.config_path,
                      "detector YAML (docs/detector.md); the detector's defaults when absent");
  analyze->add_option("--output", analyze_options.output_path,
                      "write the JSON report to this file instead of stdout");
  analyze->add_flag("--skip-bad-rows", analyze_options.skip_bad_rows,
                    "skip and count malformed rows instead of stopping at the first");

  drip::cli::DiagnoseOptions diagnose_options;
  auto* diagnose = app.add_subcommand(
      "diagnose",
      "rank a heap snapshot's call stacks: leak, cache, startup or transient (offline)");
  diagnose
      ->add_option("FILE", diagnose_options.input,
                   "snapshot JSON written by drip-agent snapshot ('-' for stdin)")
      ->required();
  diagnose->add_flag("--json", diagnose_options.json, "print JSON instead of tables");
  diagnose->add_option("--config", diagnose_options.config_path,
                       "diagnoser YAML (docs/snapshot.md); the diagnoser's defaults when absent");
  diagnose->add_option("--top", diagnose_options.top, "stacks in the table (default 20, 0: all)")
      ->check(CLI::NonNegativeNumber);
  diagnose->add_option("--pprof", diagnose_options.pprof_path,
                       "also write the snapshot and its verdicts as a gzipped pprof profile "
                       "(go tool pprof, Pyroscope, Parca, speedscope)");
  diagnose->add_option("--base", diagnose_options.base,
                       "an earlier snapshot of the same process: show what grew between the two "
                       "(text, --json, --pprof)");

  bool suspects_json = false;
  std::string suspects_component;
  auto* suspects = app.add_subcommand(
      "suspects", "what the collector's online leak detector suspects now, and why");
  suspects->add_option("--component", suspects_component, "only this component");
  suspects->add_flag("--json", suspects_json, "print JSON instead of tables");

  auto* leaks = app.add_subcommand("leaks", "leak reports: list, show, acknowledge, resolve");
  leaks->require_subcommand(1);
  drip::cli::LeaksListOptions list_options;
  auto* leaks_list = leaks->add_subcommand(
      "list", "leak reports, most severe first (default: every report not resolved)");
  leaks_list->add_option("--state", list_options.state,
                         "open, acknowledged, mitigated, resolved or all");
  leaks_list->add_option("--component", list_options.component, "only this component");
  leaks_list->add_flag("--json", list_options.json, "print JSON instead of a table");

  drip::cli::LeaksShowOptions show_options;
  auto* leaks_show = leaks->add_subcommand(
      "show", "one leak report: hosts, leaking call stacks, recommendation, history");
  leaks_show->add_option("ID", show_options.id, "report id, e.g. leak-7")->required();
  leaks_show->add_flag("--json", show_options.json, "print JSON instead of the report");
  leaks_show->add_option("--pprof", show_options.pprof_path,
                         "also write the report's latest heap snapshot (or with --diff, the "
                         "diff) as a gzipped pprof profile");
  leaks_show->add_flag("--diff", show_options.diff,
                       "show what grew between the first and latest snapshots the report keeps "
                       "of one process");

  // ack and resolve take the same arguments and differ in the state they set.
  auto add_state_command = [&](const char* name, drip::v1::ReportState state, const char* help,
                               drip::cli::LeakStateOptions* options) {
    options->state = std::string(drip::ReportStateName(state));
    auto* command = leaks->add_subcommand(name, help);
    command->add_option("ID", options->id, "report id")->required();
    command->add_option("--note", options->note, "why, for the report's history");
    command->add_flag("--json", options->json, "print the updated report as JSON");
    return command;
  };
  drip::cli::LeakStateOptions ack_options;
  auto* leaks_ack =
      add_state_command("ack", drip::v1::REPORT_STATE_ACKNOWLEDGED,
                        "acknowledge a leak report: someone is working on it", &ack_options);
  drip::cli::LeakStateOptions resolve_options;
  auto* leaks_resolve =
      add_state_command("resolve", drip::v1::REPORT_STATE_RESOLVED,
                        "resolve a leak report: fixed, or not a leak", &resolve_options);

  drip::cli::MitigateOptions mitigate_options;
  auto* mitigate = app.add_subcommand(
      "mitigate", "act on a leak report's hosts within its policy and wait for the outcome");
  mitigate->add_option("ID", mitigate_options.id, "report id")->required();
  mitigate
      ->add_option("--action", mitigate_options.action, "restart-unit, signal-process or recommend")
      ->required();
  mitigate->add_flag("--dry-run", mitigate_options.dry_run,
                     "agents check and say what they would do, and do nothing");
  mitigate->add_option("--host", mitigate_options.host,
                       "only this host of the report (default: the policy picks)");
  mitigate->add_option("--signal", mitigate_options.signal_text,
                       "signal-process: SIGTERM, TERM or 15 (default: the policy's)");
  mitigate->add_option("--wait", mitigate_options.wait_text,
                       "how long to wait for the agents' answers (default 30s, 0: do not wait)");
  mitigate->add_flag("--json", mitigate_options.json, "print JSON instead of a table");

  drip::cli::AuditOptions audit_options;
  auto* audit = app.add_subcommand(
      "audit", "the audit log: mitigations and report state changes, newest first");
  audit->add_option("--report", audit_options.report_id, "only this report's entries");
  audit->add_option("--since", audit_options.since_text,
                    "only entries newer than this (e.g. 30m, 24h, 7d)");
  audit->add_option("--limit", audit_options.limit, "at most this many (default 100)");
  audit->add_flag("--json", audit_options.json, "print JSON instead of a table");

  if (std::optional<int> ended = drip::ParseCommandLine(app, argc, argv, "dripctl")) return *ended;

  // Offline: no collector, so neither the dripctl config nor a client is involved.
  if (analyze->parsed()) {
    absl::Status status = drip::cli::RunAnalyzeCommand(analyze_options, std::cout, std::cerr);
    return status.ok() ? drip::cli::kExitOk : Fail(status);
  }
  if (diagnose->parsed()) {
    absl::Status status = drip::cli::RunDiagnoseCommand(diagnose_options, std::cout);
    return status.ok() ? drip::cli::kExitOk : Fail(status);
  }

  auto config = drip::cli::LoadDripctlConfig(config_path);
  if (!config.ok()) return Fail(absl::InvalidArgumentError(std::string(config.status().message())));
  if (collector) config->collector = *collector;
  if (timeout_text) {
    auto timeout = drip::ParseDuration(*timeout_text);
    if (!timeout.ok()) {
      return Fail(
          absl::InvalidArgumentError("--timeout: " + std::string(timeout.status().message())));
    }
    config->timeout = *timeout;
  }
  if (ca_file) config->tls.ca_file = *ca_file;
  if (cert_file) config->tls.cert_file = *cert_file;
  if (key_file) config->tls.key_file = *key_file;
  if (server_name) config->tls.server_name = *server_name;
  if (token_file) config->token_file = *token_file;
  if (plaintext) config->tls.plaintext = true;
  if (absl::Status valid = drip::cli::ValidateDripctlConfig(*config); !valid.ok()) {
    return Fail(valid);
  }
  if (config->tls.plaintext && !config->token_file.empty()) {
    std::cerr << "dripctl: warning: the bearer token travels in the clear (--plaintext)\n";
  }
  // Connection failures reach the user as statuses; gRPC's own lines would repeat them.
  drip::SilenceGrpcLogs();
  absl::StatusOr<std::unique_ptr<drip::cli::QueryClient>> connected =
      drip::cli::QueryClient::Create(*config);
  if (!connected.ok()) {
    return Fail(absl::InvalidArgumentError(std::string(connected.status().message())));
  }
  drip::cli::QueryClient& client = **connected;
  const drip::cli::TerminalStyle style = drip::cli::TerminalStyle::ForStdout();

  if (leaks_list->parsed()) {
    absl::Status status = drip::cli::RunLeaksListCommand(client, list_options, style, std::cout);
    return status.ok() ? drip::cli::kExitOk : Fail(status);
  }
  // The commands that name a report: an unknown ID has its own exit code (FailReport).
  if (leaks_show->parsed()) {
    absl::Status status = drip::cli::RunLeaksShowCommand(client, show_options, style, std::cout);
    return status.ok() ? drip::cli::kExitOk : FailReport(status);
  }
  if (leaks_ack->parsed() || leaks_resolve->parsed()) {
    absl::Status status =
        drip::cli::RunLeakStateCommand(client, leaks_ack->parsed() ? ack_options : resolve_options,
                                       drip::cli::CurrentActor(), std::cout);
    return status.ok() ? drip::cli::kExitOk : FailReport(status);
  }
  if (mitigate->parsed()) {
    absl::StatusOr<int> code = drip::cli::RunMitigateCommand(
        client, mitigate_options, drip::cli::CurrentActor(), style, std::cout, std::cerr);
    return code.ok() ? *code : FailReport(code.status());
  }
  if (audit->parsed()) {
    absl::Status status = drip::cli::RunAuditCommand(client, audit_options, style, std::cout);
    return status.ok() ? drip::cli::kExitOk : FailReport(status);
  }

  absl::Status status;
  if (hosts->parsed()) {
    status = drip::cli::RunHostsCommand(client, hosts_json, std::cout);
  } else if (cluster->parsed()) {
    status = drip::cli::RunClusterCommand(client, cluster_options, std::cout);
  } else if (series->parsed()) {
    if (!since_text.empty()) {
      auto since = drip::ParseDuration(since_text);
      if (!since.ok()) {
        return Fail(
            absl::InvalidArgumentError("--since: " + std::string(since.status().message())));
      }
      series_options.since = *since;
    }
    status = drip::cli::RunSeriesCommand(client, series_options, std::cout);
  } else if (suspects->parsed()) {
    status = drip::cli::RunSuspectsCommand(client, suspects_component, suspects_json, std::cout);
  }
  if (!status.ok()) return Fail(status);
  return drip::cli::kExitOk;
}
