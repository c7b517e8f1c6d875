// A real Prometheus server (Debian's /usr/bin/prometheus) scrapes a real drip-collector
// and drip-agent every second and evaluates the shipped alert rules
// (deploy/prometheus/drip-alerts.yml): what an operator's monitoring sees, end to end,
// including a leaking child's open leak report and the DripNewLeak alert it raises.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/integration/child_process.h"
#include "tests/integration/http_get.h"
#include "tests/integration/local_drip.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kPrometheusBin = "/usr/bin/prometheus";
const std::string kAlertRules = std::string(DRIP_DEPLOY_DIR) + "/prometheus/drip-alerts.yml";

// A port nothing listens on right now. Another process may take it before Prometheus
// binds it; LocalPrometheus::Start retries with a new one when that happens.
int PickFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// A Prometheus server in a temp dir, scraping drip-collector (job drip-collector, as in
// deploy/prometheus/prometheus.yml) and drip-agent (job drip-agent) every second and
// evaluating the shipped alert rules every second.
class LocalPrometheus {
 public:
  absl::Status Start(const std::string& collector_metrics, const std::string& agent_metrics) {
    WriteFile(dir_.File("prometheus.yml"),
              fmt::format(R"(global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - "{}"
scrape_configs:
  - job_name: drip-collector
    static_configs:
      - targets: ["{}"]
  - job_name: drip-agent
    static_configs:
      - targets: ["{}"]
)",
                          kAlertRules, collector_metrics, agent_metrics));
    std::string last_error;
    for (int attempt = 1; attempt <= 5; ++attempt) {
      const int port = PickFreePort();
      if (port == 0) return absl::InternalError("cannot pick a free port");
      address_ = fmt::format("127.0.0.1:{}", port);
      log_path_ = dir_.File(fmt::format("prometheus.{}.log", attempt));
      auto process =
          ChildProcess::Start({kPrometheusBin, "--config.file=" + dir_.File("prometheus.yml"),
                               "--storage.tsdb.path=" + dir_.File(fmt::format("tsdb.{}", attempt)),
                               "--web.listen-address=" + address_},
                              log_path_);
      if (!process.ok()) return process.status();
      process_ = std::move(*process);
      const auto deadline = std::chrono::steady_clock::now() + seconds(60);
      while (std::chrono::steady_clock::now() < deadline && process_->Running()) {
        if (HttpGet(address_, "/-/ready").ok()) return absl::OkStatus();
        std::this_thread::sleep_for(milliseconds(100));
      }
      last_error = process_->Log();
      const bool port_taken = last_error.find("address already in use") != std::string::npos;
      process_.reset();
      if (!port_taken) break;
    }
    return absl::UnavailableError("prometheus did not become ready; its log:\n" + last_error);
  }

  // /api/v1/query's `data.result` for `promql`, or an error with Prometheus's answer.
  absl::StatusOr<nlohmann::json> Query(const std::string& promql) {
    auto body = HttpGet(address_, "/api/v1/query?query=" + UrlEncode(promql));
    if (!body.ok()) return body.status();
    nlohmann::json parsed = nlohmann::json::parse(*body, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || parsed.value("status", "") != "success") {
      return absl::InternalError(fmt::format("query {}: {}", promql, *body));
    }
    return parsed["data"]["result"];
  }

  // Polls `promql` until `accept` likes its result or `timeout` passes; returns the last
  // result either way (null when no query succeeded).
  template <typename Accept>
  nlohmann::json PollUntil(const std::string& promql, seconds timeout, Accept accept) {
    nlohmann::json last;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto result = Query(promql);
      if (result.ok()) {
        last = *result;
        if (accept(last)) return last;
      }
      if (std::chrono::steady_clock::now() >= deadline) return last;
      std::this_thread::sleep_for(milliseconds(500));
    }
  }

  std::string Log() const { return process_ ? process_->Log() : ""; }
  const std::string& address() const { return address_; }

 private:
  TempDir dir_;
  std::string address_;
  std::string log_path_;
  std::unique_ptr<ChildProcess> process_;
};

// The sample value of a vector element ([timestamp, "value"]).
double ValueOf(const nlohmann::json& element) {
  return std::stod(element["value"][1].get<std::string>());
}

// The first element whose labels include every one of `labels`, or null.
nlohmann::json FindSeries(const nlohmann::json& result,
                          const std::map<std::string, std::string>& labels) {
  if (!result.is_array()) return nullptr;
  for (const nlohmann::json& element : result) {
    bool all = true;
    for (const auto& [name, value] : labels) {
      all = all && element["metric"].value(name, "") == value;
    }
    if (all) return element;
  }
  return nullptr;
}

TEST(PrometheusScrapeTest, PrometheusScrapesCollectorAndAgentAndNoAlertFiresOnAQuietFleet) {
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  const std::string host = fmt::format("it-prometheus-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000)).ok()) << drip.Logs();
  LocalPrometheus prometheus;
  ASSERT_TRUE(prometheus.Start(drip.metrics_address(), drip.agent_metrics_address()).ok())
      << prometheus.Log();

  const auto up_is_one = [](const nlohmann::json& r) {
    return r.is_array() && r.size() == 1 && ValueOf(r[0]) == 1;
  };
  nlohmann::json up = prometheus.PollUntil(R"(up{job="drip-collector"})", seconds(30), up_is_one);
  ASSERT_TRUE(up_is_one(up)) << up.dump() << "\n" << prometheus.Log();
  EXPECT_EQ(up[0]["metric"]["instance"], drip.metrics_address());
  up = prometheus.PollUntil(R"(up{job="drip-agent"})", seconds(30), up_is_one);
  EXPECT_TRUE(up_is_one(up)) << up.dump() << "\n" << prometheus.Log();

  // The agent's batches reach the store and the counter reaches Prometheus.
  const auto some_batches = [](const nlohmann::json& r) {
    return r.is_array() && r.size() == 1 && ValueOf(r[0]) > 0;
  };
  nlohmann::json batches = prometheus.PollUntil(
      R"(drip_ingest_batches_total{job="drip-collector"})", seconds(30), some_batches);
  EXPECT_TRUE(some_batches(batches)) << batches.dump() << drip.Logs();
  nlohmann::json last_batch = prometheus.PollUntil(
      "drip_agent_last_batch_timestamp_seconds", seconds(30), [&](const nlohmann::json& r) {
        return !FindSeries(r, {{"host", host}}).is_null();
      });
  EXPECT_FALSE(FindSeries(last_batch, {{"host", host}}).is_null()) << last_batch.dump();
  nlohmann::json agent_rss = prometheus.PollUntil(
      R"(drip_agent_resident_memory_bytes{job="drip-agent"})", seconds(30), some_batches);
  EXPECT_TRUE(some_batches(agent_rss)) << agent_rss.dump();

  // The rules loaded and were evaluated, and on a healthy fleet none of the health
  // alerts is pending or firing (leak alerts depend on what else runs on this machine).
  std::this_thread::sleep_for(seconds(3));
  auto rules = HttpGet(prometheus.address(), "/api/v1/rules");
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_NE(rules->find("DripCollectorDown"), std::string::npos) << *rules;
  EXPECT_EQ(rules->find("\"health\":\"err"), std::string::npos) << *rules;
  auto alerts = prometheus.Query(
      R"(ALERTS{alertname=~"DripCollectorDown|DripCollectorUnhealthy|DripIngestRejects|DripAgentNotReporting"})");
  ASSERT_TRUE(alerts.ok()) << alerts.status();
  EXPECT_TRUE(alerts->empty()) << alerts->dump(2);
}

TEST(PrometheusScrapeTest, LeakingChildsOpenLeakReportReachesPrometheusAndFiresDripNewLeak) {
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector(kFastDetectorYaml).ok()) << drip.Logs();
  const std::string host = fmt::format("it-prometheus-leak-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000)).ok()) << drip.Logs();
  LocalPrometheus prometheus;
  ASSERT_TRUE(prometheus.Start(drip.metrics_address(), drip.agent_metrics_address()).ok())
      << prometheus.Log();
  // ~4 MiB/s: far above the 25 % a young series must rise within 40 s.
  auto child =
      ChildProcess::Start({LeakyExampleBinary(), "--leak-kib-per-s", "4096", "--seconds", "300"},
                          drip.dir().File("leaky.log"));
  ASSERT_TRUE(child.ok());
  std::this_thread::sleep_for(milliseconds(500));
  auto component = ComponentOfPid((*child)->pid());
  ASSERT_TRUE(component.ok()) << component.status();

  nlohmann::json leaks = prometheus.PollUntil("drip_leaks_open", seconds(120), [&](const auto& r) {
    return !FindSeries(r, {{"component", *component}}).is_null();
  });
  const nlohmann::json leak = FindSeries(leaks, {{"component", *component}});
  ASSERT_FALSE(leak.is_null()) << "no drip_leaks_open series for " << *component << " in "
                               << leaks.dump(2) << "\n"
                               << drip.Logs();
  EXPECT_EQ(ValueOf(leak), 1);
  // Nobody acknowledged it: the state DripNewLeak alerts on.
  EXPECT_EQ(leak["metric"]["state"], "open") << leak.dump();
  EXPECT_EQ(leak["metric"]["job"], "drip-collector") << leak.dump();
  EXPECT_FALSE(leak["metric"].value("severity", "").empty()) << leak.dump();

  // The host's growth is exported with the report.
  nlohmann::json growth = prometheus.PollUntil(
      "drip_leak_host_growth_bytes_per_hour", seconds(30), [&](const nlohmann::json& r) {
        return !FindSeries(r, {{"component", *component}, {"host", host}}).is_null();
      });
  const nlohmann::json host_growth =
      FindSeries(growth, {{"component", *component}, {"host", host}});
  ASSERT_FALSE(host_growth.is_null()) << growth.dump(2);
  EXPECT_GT(ValueOf(host_growth), 1.0 * (1 << 30)) << host_growth.dump();

  // The shipped DripNewLeak rule fires on it, with the report's severity.
  nlohmann::json alerts =
      prometheus.PollUntil(R"(ALERTS{alertname="DripNewLeak",alertstate="firing"})", seconds(30),
                           [&](const nlohmann::json& r) {
                             return !FindSeries(r, {{"component", *component}}).is_null();
                           });
  const nlohmann::json alert = FindSeries(alerts, {{"component", *component}});
  ASSERT_FALSE(alert.is_null()) << alerts.dump(2) << "\n" << prometheus.Log();
  EXPECT_EQ(alert["metric"]["severity"], leak["metric"]["severity"]) << alert.dump();
}

}  // namespace
}  // namespace drip::testing
