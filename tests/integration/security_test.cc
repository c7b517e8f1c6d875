// Security end to end on the real binaries with mutual TLS, certificates made by the test
// with openssl: who gets in (plaintext, a foreign CA and a spoofed host do not), what each
// role may do through dripctl, and the agent's own guard refusing the collector's
// commands against processes outside its allow-list.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "fmt/format.h"
#include "tests/integration/http_get.h"
#include "tests/integration/local_drip.h"
#include "tests/support/test_pki.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kViewerToken = "grafana-read-only-8b1f";
constexpr const char* kOperatorToken = "oncall-operator-2c7d";

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = TestPki::Create();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_.emplace(std::move(*pki));
    host_ = fmt::format("it-secure-{}", getpid());
    auto collector = pki_->Issue("collector", {"DNS:localhost", "IP:127.0.0.1"});
    auto agent = pki_->Issue(host_, {"DNS:" + host_}, CertificateUse::kClientOnly);
    ASSERT_TRUE(collector.ok() && agent.ok());
    viewer_token_ = pki_->WriteFile("viewer.token", std::string(kViewerToken) + "\n");
    operator_token_ = pki_->WriteFile("operator.token", kOperatorToken);
    tls_.ca_file = pki_->ca_file();
    tls_.collector_cert = collector->cert_file;
    tls_.collector_key = collector->key_file;
    tls_.agent_cert = agent->cert_file;
    tls_.agent_key = agent->key_file;
    tls_.access_file =
        pki_->WriteFile("access.yaml", fmt::format(R"(principals:
  - name: grafana
    role: viewer
    token_sha256: {}
  - name: oncall
    role: operator
    token_sha256: {}
)",
                                                   TestPki::TokenSha256(kViewerToken),
                                                   TestPki::TokenSha256(kOperatorToken)));
    tls_.dripctl_flags = {"--ca", pki_->ca_file(), "--token-file", operator_token_};
    drip_.UseTls(tls_);
  }

  // dripctl with the viewer's token instead of the operator's.
  CommandOutput AsViewer(std::vector<std::string> args) {
    std::vector<std::string> argv = {DripctlBinary(), "--collector",  drip_.grpc_address(), "--ca",
                                     pki_->ca_file(), "--token-file", viewer_token_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  double CollectorMetric(const std::string& series) {
    auto body = HttpGet(drip_.metrics_address(), "/metrics");
    if (!body.ok()) return -1;
    auto value = MetricValue(*body, series);
    return value.ok() ? *value : -1;
  }

  std::optional<TestPki> pki_;
  std::string host_;
  std::string viewer_token_;
  std::string operator_token_;
  LocalDripTls tls_;
  LocalDrip drip_;
};

TEST_F(SecurityTest, OnlyClientsWithTheRightCaAndCertificateGetIn) {
  ASSERT_TRUE(drip_.StartCollector().ok()) << drip_.Logs();
  ASSERT_TRUE(drip_.StartAgent(host_, milliseconds(500)).ok()) << drip_.Logs();

  // The real agent, with its own host's certificate, streams.
  bool listed = false;
  for (int i = 0; i < 40 && !listed; ++i) {
    std::this_thread::sleep_for(milliseconds(250));
    CommandOutput hosts = drip_.Dripctl({"hosts", "--json"});
    ASSERT_EQ(hosts.exit_code, 0) << hosts.err;
    listed = hosts.out.find(host_) != std::string::npos;
  }
  EXPECT_TRUE(listed) << drip_.Logs();

  // A plaintext client of a TLS collector cannot connect.
  CommandOutput plain =
      RunCommand({DripctlBinary(), "--collector", drip_.grpc_address(), "--plaintext", "hosts"});
  EXPECT_EQ(plain.exit_code, 3) << plain.err;
  EXPECT_NE(plain.err.find("cannot reach collector"), std::string::npos) << plain.err;

  // Nor can one that trusts another CA (the collector's certificate does not verify).
  auto other = TestPki::Create("other-ca");
  ASSERT_TRUE(other.ok());
  CommandOutput foreign = RunCommand({DripctlBinary(), "--collector", drip_.grpc_address(), "--ca",
                                      other->ca_file(), "--token-file", operator_token_, "hosts"});
  EXPECT_EQ(foreign.exit_code, 3) << foreign.err;

  // dripctl without any TLS setting says how to choose, and exits 2.
  CommandOutput unset = RunCommand({DripctlBinary(), "--collector", drip_.grpc_address(), "hosts"});
  EXPECT_EQ(unset.exit_code, 2);
  EXPECT_NE(unset.err.find("pass --ca FILE"), std::string::npos) << unset.err;

  // A host whose certificate names web-1 but whose agent claims web-2 is refused, counted,
  // and never listed; the collector goes on serving the honest agent.
  auto web1 = pki_->Issue("web-1", {"DNS:web-1"});
  ASSERT_TRUE(web1.ok());
  WriteFile(drip_.dir().File("spoof.yaml"),
            fmt::format(R"(host: web-2
collector: "{}"
interval: 500ms
tls:
  ca_file: "{}"
  cert_file: "{}"
  key_file: "{}"
backoff:
  initial: 100ms
  max: 500ms
metrics:
  listen_address: ""
)",
                        drip_.grpc_address(), pki_->ca_file(), web1->cert_file, web1->key_file));
  auto spoofer = ChildProcess::Start(
      {AgentBinary(), "--config", drip_.dir().File("spoof.yaml"), "--sampler", "proc"},
      drip_.dir().File("spoof.log"));
  ASSERT_TRUE(spoofer.ok());
  double rejected = 0;
  bool agent_says_so = false;
  for (int i = 0; i < 60 && (rejected < 1 || !agent_says_so); ++i) {
    std::this_thread::sleep_for(milliseconds(250));
    rejected = CollectorMetric("drip_ingest_rejected_total{reason=\"host_identity_mismatch\"}");
    agent_says_so = (*spoofer)->Log().find("refuses this agent") != std::string::npos;
  }
  EXPECT_GE(rejected, 1) << drip_.Logs();
  EXPECT_TRUE(agent_says_so) << (*spoofer)->Log();
  (*spoofer)->Signal(SIGTERM);
  (*spoofer)->Wait(seconds(10));
  CommandOutput hosts = drip_.Dripctl({"hosts", "--json"});
  EXPECT_EQ(hosts.out.find("web-2"), std::string::npos) << hosts.out;
  EXPECT_NE(hosts.out.find(host_), std::string::npos) << hosts.out;

  // A host's certificate is a client's only (clientAuth): a collector serving with one,
  // which a forged member record could otherwise send agents to, is not trusted, though
  // it chains to the fleet's CA.
  // (Issued for the names dripctl dials, so that only its use is wrong.)
  auto client_only =
      pki_->Issue("localhost", {"DNS:localhost", "IP:127.0.0.1"}, CertificateUse::kClientOnly);
  ASSERT_TRUE(client_only.ok()) << client_only.status();
  LocalDrip impostor;
  LocalDripTls stolen = tls_;
  stolen.collector_cert = client_only->cert_file;
  stolen.collector_key = client_only->key_file;
  impostor.UseTls(stolen);
  ASSERT_TRUE(impostor.StartCollector().ok()) << impostor.Logs();
  CommandOutput posing =
      RunCommand({DripctlBinary(), "--collector", impostor.grpc_address(), "--ca", pki_->ca_file(),
                  "--token-file", operator_token_, "hosts"});
  EXPECT_EQ(posing.exit_code, 3) << posing.out << posing.err;
}

// A leaking child becomes a leak report; the agent refuses the collector's snapshot of it
// (outside commands.allowed_components); a viewer can read the report but not act, an
// operator can, and the audit log names the operator.
TEST_F(SecurityTest, ViewerReadsOperatorActsAndTheAgentRefusesTargetsOutsideItsAllowList) {
  auto child =
      ChildProcess::Start({LeakyExampleBinary(), "--leak-kib-per-s", "4096", "--seconds", "300"},
                          drip_.dir().File("leaky.log"));
  ASSERT_TRUE(child.ok());
  std::this_thread::sleep_for(milliseconds(500));
  auto component = ComponentOfPid((*child)->pid());
  ASSERT_TRUE(component.ok()) << component.status();

  ASSERT_TRUE(drip_
                  .StartCollector(std::string(kFastDetectorYaml) +
                                  "snapshots:\n  duration: 5s\n  hosts_per_component: 1\n")
                  .ok())
      << drip_.Logs();
  // Only systemd services: the test's child is not one.
  drip_.SetAgentAllowedComponents({"svc:*"});
  ASSERT_TRUE(drip_
                  .StartAgent(host_, milliseconds(1000), {},
                              "mitigation:\n  allowed_actions: [signal-process]\n")
                  .ok())
      << drip_.Logs();

  // The suspect's snapshot is refused by the agent's guard, and says why.
  std::string last;
  nlohmann::json snapshot;
  // The fast detector flags within about a minute; a loaded machine may take a few.
  for (int i = 0; i < 300 && snapshot.is_null(); ++i) {
    std::this_thread::sleep_for(seconds(1));
    CommandOutput out = drip_.Dripctl({"suspects", "--json"});
    ASSERT_EQ(out.exit_code, 0) << out.err;
    last = out.out;
    const nlohmann::json listed = nlohmann::json::parse(out.out);
    for (const auto& s : listed["suspects"]) {
      if (s["component"] == *component && s["snapshot"].is_object() &&
          s["snapshot"]["state"] == "failed") {
        snapshot = s["snapshot"];
      }
    }
  }
  ASSERT_FALSE(snapshot.is_null()) << last << drip_.Logs();
  EXPECT_NE(snapshot["error"].get<std::string>().find("commands.allowed_components"),
            std::string::npos)
      << snapshot.dump();
  auto agent_metrics = HttpGet(drip_.agent_metrics_address(), "/metrics");
  ASSERT_TRUE(agent_metrics.ok());
  auto refused = MetricValue(
      *agent_metrics,
      "drip_agent_commands_refused_total{kind=\"snapshot\",reason=\"outside_allow_list\"}");
  EXPECT_TRUE(refused.ok() && *refused >= 1) << *agent_metrics;

  std::string id;
  for (int i = 0; i < 60 && id.empty(); ++i) {
    CommandOutput out = AsViewer({"leaks", "list", "--json"});
    ASSERT_EQ(out.exit_code, 0) << out.err;
    const nlohmann::json listed = nlohmann::json::parse(out.out);
    for (const auto& r : listed["reports"]) {
      if (r["component"] == *component) id = r["id"];
    }
    if (id.empty()) std::this_thread::sleep_for(seconds(1));
  }
  ASSERT_FALSE(id.empty()) << drip_.Logs();

  // The viewer reads, and is refused (exit 7) when acting.
  EXPECT_EQ(AsViewer({"leaks", "show", id}).exit_code, 0);
  CommandOutput viewer_ack = AsViewer({"leaks", "ack", id});
  EXPECT_EQ(viewer_ack.exit_code, 7) << viewer_ack.err;
  EXPECT_NE(viewer_ack.err.find("grafana is a viewer"), std::string::npos) << viewer_ack.err;
  CommandOutput viewer_mitigate =
      AsViewer({"mitigate", id, "--action", "signal-process", "--dry-run"});
  EXPECT_EQ(viewer_mitigate.exit_code, 7) << viewer_mitigate.err;
  EXPECT_GE(CollectorMetric(
                "drip_query_denied_total{code=\"permission_denied\",method=\"UpdateLeakState\"}"),
            1);

  // The operator acts; the agent refuses a real signal to a process outside its
  // allow-list, and the child keeps running.
  CommandOutput ack = drip_.Dripctl({"leaks", "ack", id, "--note", "looking"});
  EXPECT_EQ(ack.exit_code, 0) << ack.err;
  CommandOutput mitigate =
      drip_.Dripctl({"mitigate", id, "--action", "signal-process", "--wait", "20s", "--json"});
  EXPECT_EQ(mitigate.exit_code, 4) << mitigate.out << mitigate.err;
  EXPECT_NE(mitigate.out.find("commands.allowed_components"), std::string::npos) << mitigate.out;
  EXPECT_TRUE((*child)->Running());

  CommandOutput audit = drip_.Dripctl({"audit", "--json"});
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  EXPECT_NE(audit.out.find("oncall (operator, token) via"), std::string::npos) << audit.out;
  EXPECT_NE(audit.out.find("\"outcome\": \"refused\""), std::string::npos) << audit.out;
}

// A snapshot carries call stacks and sizes only: the target's secrets, on its heap and its
// stack, appear nowhere in what the agent writes (and would send).
TEST(SnapshotContentsTest, SnapshotCarriesNoMemoryContentsOfTheTarget) {
  TempDir dir;
  const std::string secret = fmt::format("DRIP-SECRET-{}-{}", getpid(), std::rand());
  auto child = ChildProcess::Start(
      {LeakyExampleBinary(), "--leak-kib-per-s", "512", "--seconds", "120", "--secret", secret},
      dir.File("leaky.log"));
  ASSERT_TRUE(child.ok());
  std::this_thread::sleep_for(milliseconds(500));
  const std::string out = dir.File("snapshot.json");
  CommandOutput snap = RunCommand(
      {AgentBinary(), "snapshot", "--pid", std::to_string((*child)->pid()), "--duration", "4",
       "--output", out, "--mode", "attach", "--cpu-budget", "0.5", "--sample-bytes", "16384"},
      seconds(90));
  ASSERT_EQ(snap.exit_code, 0) << snap.err;
  std::ifstream in(out);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NE(json.find("RememberSession"), std::string::npos) << "the snapshot saw no allocation";
  EXPECT_EQ(json.find(secret), std::string::npos) << "memory contents leaked into the snapshot";
  std::string hex;
  for (unsigned char c : secret.substr(0, 12)) hex += fmt::format("{:02x}", c);
  EXPECT_EQ(json.find(hex), std::string::npos) << "memory contents (hex) in the snapshot";
}

}  // namespace
}  // namespace drip::testing
