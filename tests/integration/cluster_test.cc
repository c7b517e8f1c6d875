// Collectors sharing a fleet through a real etcd cluster (Debian's etcd-server, three
// members on loopback): each registers under a lease, `dripctl cluster` on any of them
// lists them all with the agents streaming to each, a collector killed with SIGKILL
// leaves the list once its lease expires, one etcd member down changes nothing, and with
// etcd's quorum gone the collectors keep serving and say that membership is frozen. The
// shipped etcd config (deploy/etcd.example.yaml) runs a real member that a collector
// reaches over mutual TLS and one without a client certificate cannot.
// Real binaries throughout: the collectors, an agent, dripctl and etcd.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collector/cluster/rendezvous.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/integration/etcd_cluster.h"
#include "tests/integration/local_drip.h"
#include "tests/support/test_pki.h"
#include "yaml-cpp/yaml.h"

namespace drip::testing {
namespace {

// What `dripctl cluster --json` says on `drip`; an object with an "error" on failure.
nlohmann::json Cluster(LocalDrip& drip) {
  CommandOutput out = drip.Dripctl({"cluster", "--json"});
  if (out.exit_code != 0) return {{"error", out.err}};
  nlohmann::json j = nlohmann::json::parse(out.out, nullptr, false);
  if (j.is_discarded()) return {{"error", out.out}};
  return j;
}

// Polls `drip` until `done(cluster)` or `timeout`; the last answer.
nlohmann::json AwaitCluster(LocalDrip& drip, const std::function<bool(const nlohmann::json&)>& done,
                            std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  nlohmann::json j = Cluster(drip);
  while (!done(j) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    j = Cluster(drip);
  }
  return j;
}

size_t Members(const nlohmann::json& j) { return j.contains("members") ? j["members"].size() : 0; }

const nlohmann::json* Member(const nlohmann::json& j, const std::string& name) {
  if (!j.contains("members")) return nullptr;
  for (const auto& m : j["members"]) {
    if (m.value("name", "") == name) return &m;
  }
  return nullptr;
}

TEST(ClusterTest, CollectorsShareARealEtcdAndLeaveWhenTheyDieOrEtcdIsGone) {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd = EtcdCluster::Start(3, dir.path());
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  std::vector<std::unique_ptr<LocalDrip>> collectors;
  for (int i = 0; i < 3; ++i) {
    auto& drip = collectors.emplace_back(std::make_unique<LocalDrip>());
    ASSERT_TRUE(drip->StartCollector(fmt::format("cluster:\n  etcd_endpoints: {}\n"
                                                 "  member_name: c{}\n  lease_ttl: 3s\n",
                                                 (*etcd)->EndpointsYaml(), i))
                    .ok())
        << drip->Logs();
  }
  auto logs = [&] {
    std::string all = (*etcd)->Logs();
    for (auto& c : collectors) all += c->Logs();
    return all;
  };

  // Every collector sees all three, each at the address it serves on.
  for (auto& drip : collectors) {
    nlohmann::json j = AwaitCluster(
        *drip, [](const nlohmann::json& c) { return Members(c) == 3; }, std::chrono::seconds(20));
    ASSERT_EQ(Members(j), 3u) << j.dump() << logs();
    EXPECT_EQ(j["mode"], "etcd");
    EXPECT_EQ(j["etcd_up"], true);
  }
  for (int i = 0; i < 3; ++i) {
    nlohmann::json j = Cluster(*collectors[0]);
    const nlohmann::json* m = Member(j, fmt::format("c{}", i));
    ASSERT_NE(m, nullptr) << j.dump();
    EXPECT_EQ((*m)["address"], collectors[i]->grpc_address());
    EXPECT_EQ((*m)["self"], i == 0);
  }

  // A real agent streams to c1; c0 learns it from what c1 publishes.
  ASSERT_TRUE(collectors[1]->StartAgent("web-1", std::chrono::seconds(1)).ok()) << logs();
  nlohmann::json j = AwaitCluster(
      *collectors[0],
      [](const nlohmann::json& c) {
        const nlohmann::json* m = Member(c, "c1");
        return m != nullptr && (*m)["hosts_connected"] == 1;
      },
      std::chrono::seconds(20));
  ASSERT_NE(Member(j, "c1"), nullptr) << j.dump();
  EXPECT_EQ((*Member(j, "c1"))["hosts_connected"], 1) << j.dump() << logs();
  // c1 has web-1 stored: rendezvous placement puts it on one member, the same one any
  // collector computes.
  j = Cluster(*collectors[1]);
  const std::string owner = collector::RendezvousOwner("web-1", {"c0", "c1", "c2"});
  for (const char* name : {"c0", "c1", "c2"}) {
    ASSERT_NE(Member(j, name), nullptr) << j.dump();
    EXPECT_EQ((*Member(j, name))["hosts_placed"], name == owner ? 1 : 0) << name << j.dump();
  }

  // c2 dies without a word: it leaves once its lease (3 s) expires.
  collectors[2]->KillCollector(SIGKILL);
  j = AwaitCluster(
      *collectors[0], [](const nlohmann::json& c) { return Members(c) == 2; },
      std::chrono::seconds(15));
  EXPECT_EQ(Members(j), 2u) << j.dump() << logs();
  EXPECT_EQ(Member(j, "c2"), nullptr) << j.dump();

  // One etcd member down, the first endpoint of every collector: nothing changes.
  (*etcd)->Kill(0);
  std::this_thread::sleep_for(std::chrono::seconds(4));  // more than a lease
  j = Cluster(*collectors[0]);
  EXPECT_EQ(Members(j), 2u) << j.dump() << logs();
  EXPECT_EQ(j["etcd_up"], true) << j.dump();

  // Quorum lost: the collectors keep serving, membership frozen at what was last read.
  (*etcd)->Kill(1);
  j = AwaitCluster(
      *collectors[0], [](const nlohmann::json& c) { return c.value("etcd_up", true) == false; },
      std::chrono::seconds(30));
  EXPECT_EQ(j["etcd_up"], false) << j.dump() << logs();
  EXPECT_EQ(Members(j), 2u) << j.dump();
  CommandOutput hosts = collectors[1]->Dripctl({"hosts", "--json"});
  EXPECT_EQ(hosts.exit_code, 0) << hosts.err;
  EXPECT_NE(hosts.out.find("web-1"), std::string::npos) << hosts.out;
}

// deploy/etcd.example.yaml, as an operator installs it, with only what differs from one
// machine to another changed: the member's name, addresses and data directory, and the
// certificate files. Everything else (TLS on both ports, client certificates required,
// compaction, quota) is the shipped file's.
TEST(ClusterTest, TheShippedEtcdConfigServesCollectorsOverMutualTlsAndRefusesOthers) {
  TempDir dir;
  absl::StatusOr<TestPki> pki = TestPki::Create();
  ASSERT_TRUE(pki.ok()) << pki.status();
  absl::StatusOr<TestCertificate> server = pki->Issue("etcd-1", {"IP:127.0.0.1"});
  absl::StatusOr<TestCertificate> client = pki->Issue("drip-collector");
  ASSERT_TRUE(server.ok() && client.ok());
  absl::StatusOr<int> client_port = FreeLoopbackPort();
  absl::StatusOr<int> peer_port = FreeLoopbackPort();
  ASSERT_TRUE(client_port.ok() && peer_port.ok());
  const std::string client_url = fmt::format("https://127.0.0.1:{}", *client_port);
  const std::string peer_url = fmt::format("https://127.0.0.1:{}", *peer_port);

  YAML::Node config = YAML::LoadFile(std::string(DRIP_DEPLOY_DIR) + "/etcd.example.yaml");
  config["data-dir"] = dir.File("etcd-data");
  config["listen-client-urls"] = client_url;
  config["advertise-client-urls"] = client_url;
  config["listen-peer-urls"] = peer_url;
  config["initial-advertise-peer-urls"] = peer_url;
  config["initial-cluster"] = fmt::format("{}={}", config["name"].as<std::string>(), peer_url);
  for (const char* side : {"client-transport-security", "peer-transport-security"}) {
    ASSERT_TRUE(config[side]["client-cert-auth"].as<bool>()) << side;
    config[side]["cert-file"] = server->cert_file;
    config[side]["key-file"] = server->key_file;
    config[side]["trusted-ca-file"] = pki->ca_file();
  }
  YAML::Emitter yaml;
  yaml << config;
  WriteFile(dir.File("etcd.yaml"), yaml.c_str());
  absl::StatusOr<std::unique_ptr<ChildProcess>> etcd = ChildProcess::Start(
      {"/usr/bin/etcd", "--config-file", dir.File("etcd.yaml")}, dir.File("etcd.log"));
  ASSERT_TRUE(etcd.ok()) << etcd.status();

  const std::string endpoints = fmt::format("[\"127.0.0.1:{}\"]", *client_port);
  LocalDrip trusted;
  ASSERT_TRUE(trusted
                  .StartCollector(fmt::format("cluster:\n  etcd_endpoints: {}\n"
                                              "  member_name: c0\n  lease_ttl: 3s\n"
                                              "  tls:\n    ca_file: \"{}\"\n"
                                              "    cert_file: \"{}\"\n    key_file: \"{}\"\n",
                                              endpoints, pki->ca_file(), client->cert_file,
                                              client->key_file))
                  .ok())
      << trusted.Logs();
  nlohmann::json j = AwaitCluster(
      trusted, [](const nlohmann::json& c) { return c.value("etcd_up", false) && Members(c) == 1; },
      std::chrono::seconds(30));
  EXPECT_EQ(j.value("etcd_up", false), true) << j.dump() << trusted.Logs() << (*etcd)->Log();
  ASSERT_NE(Member(j, "c0"), nullptr) << j.dump();

  // The CA alone is not enough: etcd wants a certificate it signed.
  LocalDrip stranger;
  ASSERT_TRUE(stranger
                  .StartCollector(fmt::format("cluster:\n  etcd_endpoints: {}\n"
                                              "  member_name: c1\n  lease_ttl: 3s\n"
                                              "  tls:\n    ca_file: \"{}\"\n",
                                              endpoints, pki->ca_file()))
                  .ok())
      << stranger.Logs();
  std::this_thread::sleep_for(std::chrono::seconds(4));  // more than a membership round
  j = Cluster(stranger);
  EXPECT_EQ(j.value("etcd_up", true), false) << j.dump() << stranger.Logs();
  j = Cluster(trusted);
  EXPECT_EQ(Members(j), 1u) << j.dump();
  EXPECT_EQ(Member(j, "c1"), nullptr) << j.dump();
}

// Without etcd a collector is alone, and says so.
TEST(ClusterTest, AStandaloneCollectorListsItselfAlone) {
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  nlohmann::json j = Cluster(drip);
  EXPECT_EQ(j.value("mode", ""), "standalone") << j.dump();
  EXPECT_EQ(Members(j), 1u);
}

}  // namespace
}  // namespace drip::testing
