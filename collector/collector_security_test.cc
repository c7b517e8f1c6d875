// The collector's TLS and access control, in-process: a real server on 127.0.0.1:0 with
// certificates from a throwaway CA made by openssl, and real gRPC clients holding the
// right, the wrong or no credentials.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "collector/access/access_policy.h"
#include "collector/collector_server.h"
#include "drip/v1/agent.grpc.pb.h"
#include "drip/v1/query.grpc.pb.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/support/test_pki.h"

namespace drip::collector {
namespace {

using drip::testing::TestCertificate;
using drip::testing::TestPki;
using ::testing::HasSubstr;

constexpr auto kSecurityRpcDeadline = std::chrono::seconds(20);
constexpr const char* kViewerToken = "viewer-token-7f3a";
constexpr const char* kOperatorToken = "operator-token-91c2";

// What a client holds: which CA it trusts, which certificate it shows, which token.
struct ClientCredentials {
  std::string roots_file;  // empty: plaintext
  std::optional<TestCertificate> cert;
  std::string token;
};

class CollectorSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = TestPki::Create();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_.emplace(std::move(*pki));
    auto other = TestPki::Create("untrusted-ca");
    ASSERT_TRUE(other.ok()) << other.status();
    untrusted_.emplace(std::move(*other));

    auto server_cert = pki_->Issue("collector", {"DNS:localhost", "IP:127.0.0.1"});
    ASSERT_TRUE(server_cert.ok()) << server_cert.status();
    config_.tls.ca_file = pki_->ca_file();
    config_.tls.cert_file = server_cert->cert_file;
    config_.tls.key_file = server_cert->key_file;
    config_.grpc.listen_address = "127.0.0.1:0";
    config_.metrics.listen_address = "";
    config_.storage.path = pki_->dir() + "/db";
    config_.storage.write_threads = 1;
    access_file_ = pki_->WriteFile("access.yaml",
                                   fmt::format(R"(principals:
  - name: alice
    role: operator
    certificate: alice.oncall
  - name: grafana
    role: viewer
    token_sha256: {}
  - name: oncall-bot
    role: operator
    token_sha256: {}
)",
                                               Sha256Hex(kViewerToken), Sha256Hex(kOperatorToken)));
  }

  void TearDown() override { server_.reset(); }

  void Start(bool with_access_file = true) {
    if (with_access_file) config_.auth.access_file = access_file_;
    server_ = std::make_unique<CollectorServer>(config_);
    absl::StatusOr<ServingAddresses> bound = server_->Start();
    ASSERT_TRUE(bound.ok()) << bound.status();
    address_ = bound->grpc;
  }

  TestCertificate Issue(const std::string& cn, const std::vector<std::string>& san = {}) {
    auto cert = pki_->Issue(cn, san);
    EXPECT_TRUE(cert.ok()) << cert.status();
    return cert.value_or(TestCertificate{});
  }

  std::shared_ptr<grpc::Channel> Channel(const ClientCredentials& c) {
    if (c.roots_file.empty()) {
      return grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    }
    TlsSettings tls;
    tls.ca_file = c.roots_file;
    if (c.cert) {
      tls.cert_file = c.cert->cert_file;
      tls.key_file = c.cert->key_file;
    }
    grpc::ChannelArguments args;
    auto credentials = MakeChannelCredentials(tls, &args);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    // A fresh subchannel per client: one client's handshake must not be reused by another.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return grpc::CreateCustomChannel(address_, *credentials, args);
  }

  std::unique_ptr<grpc::ClientContext> Context(const ClientCredentials& c) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + kSecurityRpcDeadline);
    if (!c.token.empty()) context->AddMetadata("authorization", "Bearer " + c.token);
    return context;
  }

  grpc::Status ListHosts(const ClientCredentials& c) {
    auto stub = drip::v1::QueryService::NewStub(Channel(c));
    drip::v1::ListHostsResponse response;
    return stub->ListHosts(Context(c).get(), drip::v1::ListHostsRequest(), &response);
  }

  grpc::Status Mitigate(const ClientCredentials& c) {
    auto stub = drip::v1::QueryService::NewStub(Channel(c));
    drip::v1::MitigateRequest request;
    request.set_id("leak-404");
    request.set_action("recommend");
    drip::v1::MitigateResponse response;
    return stub->Mitigate(Context(c).get(), request, &response);
  }

  grpc::Status Acknowledge(const ClientCredentials& c) {
    auto stub = drip::v1::QueryService::NewStub(Channel(c));
    drip::v1::UpdateLeakStateRequest request;
    request.set_id("leak-404");
    request.set_state("acknowledged");
    drip::v1::LeakReport response;
    return stub->UpdateLeakState(Context(c).get(), request, &response);
  }

  // Opens an agent stream, says hello as `host`, and returns the Welcome or the status
  // the collector ended the stream with.
  grpc::Status HelloAs(const ClientCredentials& c, const std::string& host) {
    auto stub = drip::v1::AgentService::NewStub(Channel(c));
    auto context = Context(c);
    auto stream = stub->Connect(context.get());
    drip::v1::AgentMessage hello;
    hello.mutable_hello()->set_host(host);
    hello.mutable_hello()->set_agent_version("test");
    stream->Write(hello);
    drip::v1::CollectorMessage reply;
    if (stream->Read(&reply) && reply.has_welcome()) {
      stream->WritesDone();
      while (stream->Read(&reply)) {
      }
      EXPECT_TRUE(stream->Finish().ok());
      return grpc::Status::OK;
    }
    grpc::Status status = stream->Finish();
    EXPECT_FALSE(status.ok()) << "stream ended without a welcome but with OK";
    return status;
  }

  double Metric(const std::string& name, const std::map<std::string, std::string>& labels) {
    for (const prometheus::MetricFamily& family : server_->registry().Collect()) {
      if (family.name != name) continue;
      for (const prometheus::ClientMetric& m : family.metric) {
        size_t matched = 0;
        for (const auto& l : m.label) {
          auto it = labels.find(l.name);
          if (it != labels.end() && it->second == l.value) ++matched;
        }
        if (matched == labels.size()) {
          return family.type == prometheus::MetricType::Gauge ? m.gauge.value : m.counter.value;
        }
      }
    }
    return -1;
  }

  ClientCredentials Trusting() { return ClientCredentials{pki_->ca_file(), std::nullopt, ""}; }

  std::optional<TestPki> pki_;
  std::optional<TestPki> untrusted_;
  CollectorConfig config_;
  std::string access_file_;
  std::unique_ptr<CollectorServer> server_;
  std::string address_;
};

// ---- Transport ----

TEST_F(CollectorSecurityTest, PlaintextClientCannotTalkToATlsCollector) {
  Start();
  grpc::Status status = ListHosts(ClientCredentials{});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(CollectorSecurityTest, ClientThatTrustsAnotherCaRefusesTheCollector) {
  Start();
  ClientCredentials c{untrusted_->ca_file(), std::nullopt, kOperatorToken};
  grpc::Status status = ListHosts(c);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(CollectorSecurityTest, ClientCertificateFromAnotherCaFailsTheHandshake) {
  Start();
  auto foreign = untrusted_->Issue("web-1", {"DNS:web-1"});
  ASSERT_TRUE(foreign.ok()) << foreign.status();
  ClientCredentials c{pki_->ca_file(), *foreign, ""};
  grpc::Status status = HelloAs(c, "web-1");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_EQ(Metric("drip_agents_connected", {}), 0);
}

// ---- Agents: the certificate names the host ----

TEST_F(CollectorSecurityTest, AgentWithItsOwnHostCertificateIsWelcomed) {
  Start();
  ClientCredentials c{pki_->ca_file(), Issue("web-1", {"DNS:web-1"}), ""};
  EXPECT_TRUE(HelloAs(c, "web-1").ok());
}

TEST_F(CollectorSecurityTest, CertificateWithOnlyACommonNameNamesItsHost) {
  Start();
  ClientCredentials c{pki_->ca_file(), Issue("db-3"), ""};
  EXPECT_TRUE(HelloAs(c, "db-3").ok());
}

TEST_F(CollectorSecurityTest, AgentClaimingAnotherHostIsPermissionDeniedCountedAndServingGoesOn) {
  Start();
  ClientCredentials spoofer{pki_->ca_file(), Issue("web-1", {"DNS:web-1"}), ""};
  grpc::Status status = HelloAs(spoofer, "web-2");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("hello names host 'web-2'"));
  EXPECT_THAT(status.error_message(), HasSubstr("web-1"));
  EXPECT_EQ(Metric("drip_ingest_rejected_total", {{"reason", "host_identity_mismatch"}}), 1);
  // The honest web-2 still gets in.
  ClientCredentials honest{pki_->ca_file(), Issue("web-2", {"DNS:web-2"}), ""};
  EXPECT_TRUE(HelloAs(honest, "web-2").ok());
}

TEST_F(CollectorSecurityTest, AgentWithoutCertificateIsUnauthenticatedAndCounted) {
  Start();
  grpc::Status status = HelloAs(Trusting(), "web-1");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Metric("drip_ingest_rejected_total", {{"reason", "unauthenticated"}}), 1);
}

TEST_F(CollectorSecurityTest, QueryPrincipalsCertificateCannotStreamAsAnAgent) {
  Start();
  ClientCredentials alice{pki_->ca_file(), Issue("alice.oncall", {"DNS:alice.oncall"}), ""};
  grpc::Status status = HelloAs(alice, "alice.oncall");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Metric("drip_ingest_rejected_total", {{"reason", "user_certificate"}}), 1);
}

// ---- Identity before anything is read (docs/security.md, "Identity first") ----

// An agent message of about 30 MB: below gRPC's receive limit (twice
// grpc.max_message_bytes), so only the gate keeps it from being parsed. Its hello also
// carries a label past what the validator accepts: had it been parsed, the stream would
// be refused as field_too_long, not as unauthenticated.
drip::v1::AgentMessage HugeHello(const std::string& host) {
  drip::v1::AgentMessage hello;
  hello.mutable_hello()->set_host(host);
  (*hello.mutable_hello()->mutable_labels())["padding"] = std::string(30u << 20, 'x');
  return hello;
}

// What the collector did with a stream that wrote `message` first.
grpc::Status StreamOneMessage(const std::shared_ptr<grpc::Channel>& channel,
                              grpc::ClientContext* context, const drip::v1::AgentMessage& message) {
  auto stub = drip::v1::AgentService::NewStub(channel);
  auto stream = stub->Connect(context);
  stream->Write(message);  // may fail once the collector has refused the call
  stream->WritesDone();
  drip::v1::CollectorMessage reply;
  while (stream->Read(&reply)) {
  }
  return stream->Finish();
}

TEST_F(CollectorSecurityTest, AThirtyMegabyteMessageWithoutCredentialsIsRefusedUnread) {
  Start();
  ClientCredentials nobody = Trusting();
  grpc::Status status =
      StreamOneMessage(Channel(nobody), Context(nobody).get(), HugeHello("web-1"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_EQ(Metric("drip_ingest_rejected_total", {{"reason", "unauthenticated"}}), 1);
  EXPECT_EQ(Metric("drip_ingest_rejected_total", {{"reason", "field_too_long"}}), 0);
  // Refused before gRPC dispatched the call: no stream was ever opened to read it.
  EXPECT_EQ(Metric("drip_agent_streams_total", {{"outcome", "rejected"}}), 0);

  // A query with a 30 MB body, the same.
  auto stub = drip::v1::QueryService::NewStub(Channel(nobody));
  drip::v1::GetSeriesRequest request;
  request.set_host(std::string(30u << 20, 'h'));
  request.set_component("proc:x");
  drip::v1::GetSeriesResponse response;
  status = stub->GetSeries(Context(nobody).get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_EQ(
      Metric("drip_query_denied_total", {{"method", "GetSeries"}, {"code", "unauthenticated"}}), 1);

  // And the collector serves those who are known.
  ClientCredentials agent{pki_->ca_file(), Issue("web-1", {"DNS:web-1"}), ""};
  EXPECT_TRUE(HelloAs(agent, "web-1").ok());
}

TEST_F(CollectorSecurityTest, ATokenHolderCannotOpenAnAgentStreamNorHaveItRead) {
  Start();
  // A viewer's token gets past the gate (it may query), but an agent stream needs an
  // agent's certificate: refused when the stream opens, before its message is read.
  ClientCredentials viewer{pki_->ca_file(), std::nullopt, kViewerToken};
  grpc::Status status =
      StreamOneMessage(Channel(viewer), Context(viewer).get(), HugeHello("web-1"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("agents must present a client certificate"));
  EXPECT_EQ(Metric("drip_ingest_rejected_total", {{"reason", "unauthenticated"}}), 1);
  EXPECT_EQ(Metric("drip_ingest_rejected_total", {{"reason", "field_too_long"}}), 0);
  EXPECT_EQ(Metric("drip_agent_streams_total", {{"outcome", "rejected"}}), 1);
}

// ---- Query API roles ----

TEST_F(CollectorSecurityTest, ViewerTokenReadsButCannotMitigateOrAcknowledge) {
  Start();
  ClientCredentials viewer{pki_->ca_file(), std::nullopt, kViewerToken};
  EXPECT_TRUE(ListHosts(viewer).ok());
  grpc::Status mitigate = Mitigate(viewer);
  EXPECT_EQ(mitigate.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(mitigate.error_message(), HasSubstr("grafana is a viewer"));
  EXPECT_EQ(Acknowledge(viewer).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(
      Metric("drip_query_denied_total", {{"method", "Mitigate"}, {"code", "permission_denied"}}),
      1);
}

TEST_F(CollectorSecurityTest, OperatorTokenGetsPastAuthorization) {
  Start();
  ClientCredentials op{pki_->ca_file(), std::nullopt, kOperatorToken};
  // NOT_FOUND: the call was let in and looked for the report.
  EXPECT_EQ(Mitigate(op).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Acknowledge(op).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CollectorSecurityTest, OperatorCertificateGetsPastAuthorization) {
  Start();
  ClientCredentials alice{pki_->ca_file(), Issue("alice.oncall", {"DNS:alice.oncall"}), ""};
  EXPECT_EQ(Mitigate(alice).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CollectorSecurityTest, UnknownTokenAndNoCredentialsAreUnauthenticated) {
  Start();
  ClientCredentials wrong{pki_->ca_file(), std::nullopt, "guessed"};
  EXPECT_EQ(ListHosts(wrong).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(ListHosts(Trusting()).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(
      Metric("drip_query_denied_total", {{"method", "ListHosts"}, {"code", "unauthenticated"}}), 2);
}

TEST_F(CollectorSecurityTest, UnlistedCertificateIsDeniedWhenAnAccessFileExists) {
  Start();
  ClientCredentials agent{pki_->ca_file(), Issue("web-1", {"DNS:web-1"}), ""};
  EXPECT_EQ(ListHosts(agent).error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(CollectorSecurityTest, WithoutAccessFileCertificatesReadAndNobodyMutates) {
  Start(/*with_access_file=*/false);
  ClientCredentials cert{pki_->ca_file(), Issue("web-1", {"DNS:web-1"}), ""};
  EXPECT_TRUE(ListHosts(cert).ok());
  EXPECT_EQ(Mitigate(cert).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(ListHosts(Trusting()).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Metric("drip_collector_plaintext", {}), 0);
}

TEST_F(CollectorSecurityTest, UnreadableCertificateFailsTheStartNamingTheKeyAndFile) {
  config_.tls.key_file = pki_->dir() + "/missing.key";
  CollectorServer server(config_);
  absl::StatusOr<ServingAddresses> bound = server.Start();
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(std::string(bound.status().message()),
              HasSubstr("tls.key_file: cannot read " + pki_->dir() + "/missing.key"));
}

TEST_F(CollectorSecurityTest, MalformedAccessFileFailsTheStartNamingFileAndLine) {
  config_.auth.access_file = pki_->WriteFile("bad-access.yaml", R"(principals:
  - name: bob
    role: admin
    certificate: bob
)");
  CollectorServer server(config_);
  absl::StatusOr<ServingAddresses> bound = server.Start();
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(std::string(bound.status().message()),
              HasSubstr("bad-access.yaml:3: principals[0].role: 'admin' is not one of viewer, "
                        "member, operator"));
}

}  // namespace
}  // namespace drip::collector
