// The shipped deployment files (deploy/) checked by the real tools an operator would
// run — systemd-analyze and promtool — and against the metrics the daemons really
// export, so that a renamed metric breaks this test rather than a dashboard or an alert
// in production. Every tool's output is printed when a check fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/agent_metrics.h"
#include "collector/collector_metrics.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"
#include "tests/integration/child_process.h"
#include "yaml-cpp/yaml.h"

namespace drip::testing {
namespace {

namespace fs = std::filesystem;

const std::string kDeployDir = DRIP_DEPLOY_DIR;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The tool's absolute path from $PATH (RunCommand execs without a PATH search), or ""
// when it is not installed. scripts/install-deps.sh installs every tool used here.
std::string FindTool(const std::string& name) {
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  path += ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string Describe(const CommandOutput& out) {
  return fmt::format("exit code {}\n--- stdout ---\n{}\n--- stderr ---\n{}", out.exit_code, out.out,
                     out.err);
}

// --- systemd ----------------------------------------------------------------------------

struct Unit {
  std::string file;        // under deploy/systemd
  std::string shipped;     // the ExecStart binary as installed
  std::string built;       // the same binary in this build tree, or on this machine
  std::string exec_start;  // the whole ExecStart line as shipped
  bool drip_daemon;        // ours (watchdog pings), not etcd
};

std::vector<Unit> Units() {
  return {{"drip-agent.service", "/usr/bin/drip-agent", DRIP_AGENT_BIN,
           "ExecStart=/usr/bin/drip-agent --config /etc/drip/agent.yaml", true},
          {"drip-collector.service", "/usr/bin/drip-collector", DRIP_COLLECTOR_BIN,
           "ExecStart=/usr/bin/drip-collector --config /etc/drip/collector.yaml", true},
          // etcd-server (scripts/install-deps.sh) installs /usr/bin/etcd itself.
          {"drip-etcd.service", "/usr/bin/etcd", "/usr/bin/etcd",
           "ExecStart=/usr/bin/etcd --config-file /etc/drip/etcd.yaml", false}};
}

TEST(DeployTest, SystemdUnitsPassSystemdAnalyzeVerify) {
  const std::string analyze = FindTool("systemd-analyze");
  ASSERT_FALSE(analyze.empty())
      << "systemd-analyze not found: install the systemd package (scripts/install-deps.sh)";
  TempDir dir;
  for (const Unit& unit : Units()) {
    SCOPED_TRACE(unit.file);
    std::string text = ReadText(kDeployDir + "/systemd/" + unit.file);
    ASSERT_FALSE(text.empty()) << "cannot read " << unit.file;
    // verify checks that ExecStart's binary exists and is executable, and /usr/bin/drip-*
    // is not installed on a build machine: point it at the binaries just built.
    const size_t at = text.find(unit.exec_start);
    ASSERT_NE(at, std::string::npos) << "expected the line `" << unit.exec_start << "`";
    text.replace(at + std::string("ExecStart=").size(), unit.shipped.size(), unit.built);
    const std::string copy = dir.File(unit.file);
    WriteFile(copy, text);

    // systemd is not PID 1 here, and verify does not need it to be: it runs its own
    // manager in test mode (unit search path: the unit's directory, then /etc and /lib,
    // where network-online.target and multi-user.target come from the systemd package).
    // What it does need offline:
    //  - --man=no: otherwise it runs man(1) for every Documentation=man: entry, and a
    //    missing man page or man-db fails the check;
    //  - SYSTEMD_LOG_LEVEL=info: a debug level inherited from the environment prints
    //    "Failed to read $container of PID 1" and similar noise about the container;
    //    warnings such as "Unknown key" are printed at the default level and must not be
    //    hidden, which is why the level is pinned rather than raised;
    //  - SYSTEMD_LOG_COLOR=0 so that the output matched below has no escape codes.
    // Unknown keys and bad values are only warnings (exit 0), hence the output check.
    const CommandOutput out =
        RunCommand({"/usr/bin/env", "SYSTEMD_LOG_LEVEL=info", "SYSTEMD_LOG_COLOR=0", analyze,
                    "verify", "--man=no", copy},
                   std::chrono::seconds(60));
    EXPECT_EQ(out.exit_code, 0) << Describe(out);
    const std::string all = out.out + out.err;
    for (const char* bad : {"Unknown", "Failed", "nvalid", "ignoring", "not executable"}) {
      EXPECT_EQ(all.find(bad), std::string::npos) << "`" << bad << "` in\n" << Describe(out);
    }
  }
}

// What the daemons rely on (docs/agent.md, docs/collector.md): they notify readiness
// and send watchdog pings, and neither can reload its config.
TEST(DeployTest, SystemdUnitsAreNotifyWithWatchdogRestartAndNoReload) {
  for (const Unit& unit : Units()) {
    SCOPED_TRACE(unit.file);
    const std::string text = ReadText(kDeployDir + "/systemd/" + unit.file);
    for (const char* line :
         {"\nType=notify\n", "\nNotifyAccess=main\n", "\nRestart=on-failure\n", "\nRestartSec=",
          "\nStartLimitBurst=", "\nStartLimitIntervalSec=", "\nNoNewPrivileges=yes\n",
          "\nProtectSystem=strict\n", "\nRestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX\n"}) {
      EXPECT_NE(text.find(line), std::string::npos) << "missing " << line;
    }
    // etcd sends no watchdog pings.
    EXPECT_EQ(text.find("\nWatchdogSec=") != std::string::npos, unit.drip_daemon);
    EXPECT_EQ(text.find("ExecReload="), std::string::npos);
  }
  const std::string collector = ReadText(kDeployDir + "/systemd/drip-collector.service");
  EXPECT_NE(collector.find("\nCapabilityBoundingSet=\n"), std::string::npos);
  EXPECT_NE(collector.find("\nStateDirectory=drip\n"), std::string::npos);
  // The collector, not the host, gives way when it grows (issue 17, #12).
  EXPECT_NE(collector.find("\nMemoryMax="), std::string::npos);
  EXPECT_NE(collector.find("\nTasksMax="), std::string::npos);
  const std::string agent = ReadText(kDeployDir + "/systemd/drip-agent.service");
  // The root agent refuses the system calls it never makes, and its threads are bounded.
  EXPECT_NE(agent.find("\nSystemCallFilter=~@clock @cpu-emulation @module @mount @obsolete "
                       "@raw-io @reboot @swap\n"),
            std::string::npos);
  EXPECT_NE(agent.find("\nTasksMax="), std::string::npos);
  EXPECT_NE(agent.find("\nMemoryMax="), std::string::npos);
  // Least privilege: the agent's capabilities are exactly the ones its comments justify.
  for (const char* key : {"\nCapabilityBoundingSet=", "\nAmbientCapabilities="}) {
    const size_t at = agent.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    const size_t begin = at + std::string(key).size();
    EXPECT_EQ(agent.substr(begin, agent.find('\n', begin) - begin),
              "CAP_BPF CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_SYS_RESOURCE CAP_KILL "
              "CAP_SYS_ADMIN");
  }
  EXPECT_NE(agent.find("\nMemoryMax="), std::string::npos);
}

// --- Prometheus -------------------------------------------------------------------------

std::string Promtool() { return FindTool("promtool"); }

TEST(DeployTest, AlertRulesPassPromtoolCheck) {
  const std::string promtool = Promtool();
  ASSERT_FALSE(promtool.empty()) << "promtool not found: install the prometheus package";
  const CommandOutput out =
      RunCommand({promtool, "check", "rules", kDeployDir + "/prometheus/drip-alerts.yml"});
  EXPECT_EQ(out.exit_code, 0) << Describe(out);
  EXPECT_NE(out.out.find("SUCCESS"), std::string::npos) << Describe(out);
}

TEST(DeployTest, AlertRulesPassTheirUnitTests) {
  const std::string promtool = Promtool();
  ASSERT_FALSE(promtool.empty()) << "promtool not found: install the prometheus package";
  const CommandOutput out =
      RunCommand({promtool, "test", "rules", kDeployDir + "/prometheus/drip-alerts.test.yml"});
  EXPECT_EQ(out.exit_code, 0) << Describe(out);
  EXPECT_NE(out.out.find("SUCCESS"), std::string::npos) << Describe(out);
}

TEST(DeployTest, PrometheusConfigPassesPromtoolCheck) {
  const std::string promtool = Promtool();
  ASSERT_FALSE(promtool.empty()) << "promtool not found: install the prometheus package";
  // promtool resolves rule_files relative to the config file, as Prometheus does, and
  // checks them too: a wrong path fails here.
  const CommandOutput out =
      RunCommand({promtool, "check", "config", kDeployDir + "/prometheus/prometheus.yml"});
  EXPECT_EQ(out.exit_code, 0) << Describe(out);
  EXPECT_NE(out.out.find("1 rule files found"), std::string::npos) << Describe(out);
  EXPECT_NE(out.out.find("11 rules found"), std::string::npos) << Describe(out);
}

struct Alert {
  std::string name;
  std::string expr;
  YAML::Node rule;
};

std::vector<Alert> LoadAlerts() {
  std::vector<Alert> alerts;
  const YAML::Node root = YAML::LoadFile(kDeployDir + "/prometheus/drip-alerts.yml");
  const YAML::Node groups = root["groups"];
  for (const YAML::Node& group : groups) {
    const YAML::Node rules = group["rules"];
    for (const YAML::Node& rule : rules) {
      if (!rule["alert"]) continue;
      alerts.push_back({rule["alert"].as<std::string>(), rule["expr"].as<std::string>(), rule});
    }
  }
  return alerts;
}

TEST(DeployTest, EveryAlertHasAUnitTest) {
  const std::vector<Alert> alerts = LoadAlerts();
  ASSERT_FALSE(alerts.empty());
  std::set<std::string> tested;
  const YAML::Node root = YAML::LoadFile(kDeployDir + "/prometheus/drip-alerts.test.yml");
  const YAML::Node tests = root["tests"];
  for (const YAML::Node& test : tests) {
    const YAML::Node cases = test["alert_rule_test"];
    for (const YAML::Node& c : cases) tested.insert(c["alertname"].as<std::string>());
  }
  for (const Alert& alert : alerts) {
    EXPECT_TRUE(tested.count(alert.name)) << alert.name << " has no alert_rule_test";
  }
}

// Routing and on-call need these on every alert; the anchors are docs/runbook.md's.
TEST(DeployTest, EveryAlertHasSeveritySummaryDescriptionAndRunbook) {
  const std::set<std::string> anchors = {"new-leak",
                                         "host-oom-soon",
                                         "agent-not-reporting",
                                         "ingest-rejects",
                                         "collector-unhealthy",
                                         "collector-disk-filling",
                                         "mitigation-failed",
                                         "collector-down",
                                         "collector-left-cluster",
                                         "cluster-etcd-unreachable",
                                         "hosts-under-replicated"};
  const std::vector<Alert> alerts = LoadAlerts();
  ASSERT_EQ(alerts.size(), 11u);
  for (const Alert& alert : alerts) {
    SCOPED_TRACE(alert.name);
    EXPECT_TRUE(alert.rule["labels"]["severity"].IsScalar());
    const YAML::Node annotations = alert.rule["annotations"];
    EXPECT_TRUE(annotations["summary"].IsScalar());
    EXPECT_TRUE(annotations["description"].IsScalar());
    ASSERT_TRUE(annotations["runbook_url"].IsScalar());
    const std::string url = annotations["runbook_url"].as<std::string>();
    const std::string prefix = "docs/runbook.md#";
    ASSERT_EQ(url.rfind(prefix, 0), 0u) << url;
    EXPECT_TRUE(anchors.count(url.substr(prefix.size()))) << url;
  }
}

// --- Metric names -----------------------------------------------------------------------

void AddFamilies(prometheus::Registry& registry, std::set<std::string>* names) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    names->insert(family.name);
    // The text format exports a histogram's (and summary's) series under these names;
    // counters keep the name they were registered with (_total included).
    if (family.type == prometheus::MetricType::Histogram) {
      names->insert(family.name + "_bucket");
      names->insert(family.name + "_sum");
      names->insert(family.name + "_count");
    } else if (family.type == prometheus::MetricType::Summary) {
      names->insert(family.name + "_sum");
      names->insert(family.name + "_count");
    }
  }
}

// Every metric family the collector and the agent export, plus what Prometheus adds.
std::set<std::string> ExportedMetricNames() {
  std::set<std::string> names;
  prometheus::Registry collector_registry;
  collector::CollectorMetrics metrics(collector_registry);
  // Families whose series appear only once a report, host or agent exists: give each a
  // series so that Collect() lists the family whether or not it skips empty ones.
  metrics.leaks_open.Add({{"component", "c"}, {"severity", "warning"}, {"state", "open"}});
  metrics.leak_host_eta.Add({{"component", "c"}, {"host", "h"}});
  metrics.leak_host_growth.Add({{"component", "c"}, {"host", "h"}});
  metrics.agent_last_batch.Add({{"host", "h"}});
  AddFamilies(collector_registry, &names);

  // The agent's own metrics, registered without serving them.
  auto agent = agent::AgentMetrics::Create("", "bpf", "");
  EXPECT_TRUE(agent.ok()) << agent.status();
  if (agent.ok()) AddFamilies((*agent)->registry(), &names);

  names.insert("up");  // Prometheus's own, per scrape target
  return names;
}

std::vector<std::string> DripIdentifiers(const std::string& expr) {
  static const std::regex kName("drip_[a-z0-9_]+");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), kName);
       it != std::sregex_iterator(); ++it) {
    out.push_back(it->str());
  }
  return out;
}

TEST(DeployTest, ExportedMetricNamesIncludeEveryKindOfFamily) {
  // Guards the helper above, so that the two tests below cannot pass vacuously.
  const std::set<std::string> names = ExportedMetricNames();
  for (const char* name :
       {"drip_leaks_open", "drip_ingest_batches_total", "drip_detector_run_seconds_bucket",
        "drip_agent_last_batch_timestamp_seconds", "drip_agent_resident_memory_bytes",
        "drip_agent_pass_duration_seconds_count", "up"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
  EXPECT_FALSE(names.count("drip_ingest_batches"));
}

// Walks panels, including those nested in collapsed rows.
void CollectPanels(const nlohmann::json& panels, std::vector<nlohmann::json>* out) {
  for (const nlohmann::json& panel : panels) {
    out->push_back(panel);
    if (panel.contains("panels")) CollectPanels(panel["panels"], out);
  }
}

TEST(DeployTest, DashboardJsonParsesAndNamesOnlyExportedMetrics) {
  const std::string text = ReadText(kDeployDir + "/grafana/drip-fleet.json");
  ASSERT_FALSE(text.empty());
  const nlohmann::json dashboard = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(dashboard.is_discarded()) << "drip-fleet.json is not valid JSON";
  EXPECT_FALSE(dashboard.value("title", "").empty());
  EXPECT_FALSE(dashboard.value("uid", "").empty());

  // The data source is a variable, so the dashboard imports into any Grafana.
  bool has_datasource_variable = false;
  const nlohmann::json variables = dashboard.value("templating", nlohmann::json::object())
                                       .value("list", nlohmann::json::array());
  for (const nlohmann::json& variable : variables) {
    if (variable.value("name", "") == "DS_PROMETHEUS" && variable.value("type", "") == "datasource")
      has_datasource_variable = true;
  }
  EXPECT_TRUE(has_datasource_variable);

  const std::set<std::string> exported = ExportedMetricNames();
  std::vector<nlohmann::json> panels;
  ASSERT_TRUE(dashboard.contains("panels"));
  CollectPanels(dashboard.at("panels"), &panels);
  int queries = 0;
  for (const nlohmann::json& panel : panels) {
    const std::string title = panel.value("title", "");
    // Rows only group panels; they have no query by design.
    if (panel.value("type", "") == "row") continue;
    SCOPED_TRACE(title);
    EXPECT_FALSE(title.empty());
    ASSERT_TRUE(panel.contains("targets"));
    const nlohmann::json targets = panel["targets"];
    EXPECT_FALSE(targets.empty()) << "panel without a query";
    EXPECT_EQ(panel.value("datasource", nlohmann::json::object()).value("uid", ""),
              "${DS_PROMETHEUS}");
    for (const nlohmann::json& target : targets) {
      const std::string expr = target.value("expr", "");
      EXPECT_FALSE(expr.empty());
      const std::vector<std::string> names = DripIdentifiers(expr);
      // Only the scrape-health panel reads no drip metric (Prometheus's own `up`).
      EXPECT_TRUE(!names.empty() || expr.find("up{job=\"drip-collector\"}") != std::string::npos)
          << "no drip metric in " << expr;
      for (const std::string& name : names) {
        EXPECT_TRUE(exported.count(name)) << name << " (in `" << expr << "`) is not exported";
      }
      ++queries;
    }
  }
  EXPECT_GE(queries, 20);
}

// Grafana only reports a broken query when someone looks at the panel; promtool parses
// the dashboard's queries as recording rules now.
TEST(DeployTest, DashboardQueriesAreValidPromQL) {
  const std::string promtool = Promtool();
  ASSERT_FALSE(promtool.empty()) << "promtool not found: install the prometheus package";
  const nlohmann::json dashboard =
      nlohmann::json::parse(ReadText(kDeployDir + "/grafana/drip-fleet.json"));
  std::vector<nlohmann::json> panels;
  CollectPanels(dashboard.at("panels"), &panels);
  YAML::Emitter rules;
  rules << YAML::BeginMap << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
  rules << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "dashboard";
  rules << YAML::Key << "rules" << YAML::Value << YAML::BeginSeq;
  int n = 0;
  for (const nlohmann::json& panel : panels) {
    if (!panel.contains("targets")) continue;
    const nlohmann::json targets = panel["targets"];
    for (const nlohmann::json& target : targets) {
      rules << YAML::BeginMap << YAML::Key << "record" << YAML::Value
            << fmt::format("dashboard:query_{}", n++) << YAML::Key << "expr" << YAML::Value
            << target.value("expr", "") << YAML::EndMap;
    }
  }
  rules << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  TempDir dir;
  WriteFile(dir.File("dashboard-rules.yml"), rules.c_str());
  const CommandOutput out =
      RunCommand({promtool, "check", "rules", dir.File("dashboard-rules.yml")});
  EXPECT_EQ(out.exit_code, 0) << Describe(out) << "\n--- rules ---\n" << rules.c_str();
}

TEST(DeployTest, AlertRulesNameOnlyExportedMetrics) {
  const std::set<std::string> exported = ExportedMetricNames();
  const std::vector<Alert> alerts = LoadAlerts();
  ASSERT_FALSE(alerts.empty());
  for (const Alert& alert : alerts) {
    SCOPED_TRACE(alert.name);
    for (const std::string& name : DripIdentifiers(alert.expr)) {
      EXPECT_TRUE(exported.count(name)) << name << " (in `" << alert.expr << "`) is not exported";
    }
  }
  // DripCollectorDown is about Prometheus's `up`; every other alert reads a drip metric.
  for (const Alert& alert : alerts) {
    if (alert.name == "DripCollectorDown") continue;
    EXPECT_FALSE(DripIdentifiers(alert.expr).empty()) << alert.name << ": " << alert.expr;
  }
}

}  // namespace
}  // namespace drip::testing
