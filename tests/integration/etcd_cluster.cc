#include "tests/integration/etcd_cluster.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "collector/cluster/etcd_client.h"
#include "fmt/format.h"

namespace drip::testing {

absl::StatusOr<int> FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::UnavailableError("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    close(fd);
    return absl::UnavailableError("cannot bind a loopback port");
  }
  const int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

absl::StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(int members,
                                                                const std::string& dir) {
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  std::vector<int> client_ports;
  std::vector<int> peer_ports;
  std::string initial;
  for (int i = 0; i < members; ++i) {
    absl::StatusOr<int> client = FreeLoopbackPort();
    absl::StatusOr<int> peer = FreeLoopbackPort();
    if (!client.ok() || !peer.ok()) return absl::UnavailableError("no free ports for etcd");
    client_ports.push_back(*client);
    peer_ports.push_back(*peer);
    initial += fmt::format("{}e{}=http://127.0.0.1:{}", i == 0 ? "" : ",", i, *peer);
  }
  for (int i = 0; i < members; ++i) {
    const std::string name = fmt::format("e{}", i);
    const std::string client_url = fmt::format("http://127.0.0.1:{}", client_ports[i]);
    const std::string peer_url = fmt::format("http://127.0.0.1:{}", peer_ports[i]);
    absl::StatusOr<std::unique_ptr<ChildProcess>> member =
        ChildProcess::Start({"/usr/bin/etcd",
                             "--name",
                             name,
                             "--data-dir",
                             fmt::format("{}/{}", dir, name),
                             "--listen-client-urls",
                             client_url,
                             "--advertise-client-urls",
                             client_url,
                             "--listen-peer-urls",
                             peer_url,
                             "--initial-advertise-peer-urls",
                             peer_url,
                             "--initial-cluster",
                             initial,
                             "--initial-cluster-state",
                             "new",
                             "--initial-cluster-token",
                             "drip-test",
                             "--heartbeat-interval",
                             "100",
                             "--election-timeout",
                             "1000",
                             "--log-level",
                             "warn",
                             "--logger",
                             "zap"},
                            fmt::format("{}/{}.log", dir, name));
    if (!member.ok()) return member.status();
    cluster->members_.push_back(std::move(*member));
    cluster->endpoints_.push_back(fmt::format("127.0.0.1:{}", client_ports[i]));
  }
  // Ready when a key can be written through each member (a leader is elected).
  for (const std::string& endpoint : cluster->endpoints_) {
    collector::EtcdOptions options;
    options.endpoints = {endpoint};
    options.tls.plaintext = true;
    options.timeout = std::chrono::seconds(2);
    absl::StatusOr<std::unique_ptr<collector::EtcdClient>> client =
        collector::EtcdClient::Create(options);
    if (!client.ok()) return client.status();
    absl::Status written = absl::UnavailableError("not tried");
    for (int attempt = 0; attempt < 100 && !written.ok(); ++attempt) {
      written = (*client)->Put("/drip-test/ready", endpoint).status();
      if (!written.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (!written.ok()) {
      return absl::UnavailableError(fmt::format("etcd at {} never took a write: {}\n{}", endpoint,
                                                std::string(written.message()), cluster->Logs()));
    }
  }
  return cluster;
}

std::string EtcdCluster::EndpointsYaml() const {
  std::string yaml = "[";
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    yaml += (i == 0 ? "\"" : ", \"") + endpoints_[i] + "\"";
  }
  return yaml + "]";
}

void EtcdCluster::Kill(size_t member) {
  if (member < members_.size() && members_[member]) {
    members_[member]->Signal(SIGKILL);
    members_[member]->Wait(std::chrono::seconds(10));
  }
}

std::string EtcdCluster::Logs() const {
  std::string logs;
  for (size_t i = 0; i < members_.size(); ++i) {
    logs += fmt::format("--- etcd e{} ---\n{}\n", i, members_[i] ? members_[i]->Log() : "");
  }
  return logs;
}

}  // namespace drip::testing
