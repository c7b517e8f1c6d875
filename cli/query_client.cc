#include "cli/query_client.h"

#include <grpcpp/grpcpp.h>

#include <iostream>

#include "cli/terminal_safe_text.h"
#include "common/base/strings.h"
#include "common/rpc/tls_settings.h"
#include "fmt/format.h"

namespace drip::cli {

QueryClient::QueryClient(std::string address, std::chrono::milliseconds timeout)
    : QueryClient(address, timeout,
                  grpc::CreateChannel(address, grpc::InsecureChannelCredentials()), "") {}

QueryClient::QueryClient(std::string address, std::chrono::milliseconds timeout,
                         std::shared_ptr<grpc::Channel> channel, std::string token)
    : address_(std::move(address)),
      timeout_(timeout),
      token_(std::move(token)),
      stub_(drip::v1::QueryService::NewStub(std::move(channel))) {}

absl::StatusOr<std::unique_ptr<QueryClient>> QueryClient::Create(const DripctlConfig& config) {
  grpc::ChannelArguments args;
  // gRPC's default 4 MiB is one large fleet's host list (or one agent's oversized strings,
  // before the collector bounded them) away from breaking every query; answers are
  // bounded by the collector, not by this.
  args.SetMaxReceiveMessageSize(kMaxAnswerBytes);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(config.tls, &args);
  if (!credentials.ok()) return credentials.status();
  std::string token;
  if (!config.token_file.empty()) {
    absl::StatusOr<std::string> text = ReadSecretFile("token_file", config.token_file);
    if (!text.ok()) return text.status();
    // `echo TOKEN > file` leaves a newline that is not part of the token.
    token = std::string(TrimWhitespace(*text));
    if (token.empty()) {
      return absl::InvalidArgumentError(
          fmt::format("token_file: {}: holds only whitespace", config.token_file));
    }
  }
  return std::unique_ptr<QueryClient>(new QueryClient(
      config.collector, config.timeout,
      grpc::CreateCustomChannel(config.collector, *credentials, args), std::move(token)));
}

std::unique_ptr<grpc::ClientContext> QueryClient::NewContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  // Without wait_for_ready a down collector fails at once instead of after the deadline.
  context->set_deadline(std::chrono::system_clock::now() + timeout_);
  if (!token_.empty()) context->AddMetadata("authorization", "Bearer " + token_);
  return context;
}

absl::Status QueryClient::ToStatus(const grpc::Status& status, const char* method) const {
  if (status.ok()) return absl::OkStatus();
  auto code = static_cast<absl::StatusCode>(status.error_code());
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::UnavailableError(fmt::format("cannot reach collector at {}: {}", address_,
                                              TerminalSafe(status.error_message())));
  }
  return absl::Status(code, fmt::format("collector at {} refused {}: {}", address_, method,
                                        TerminalSafe(status.error_message())));
}

void QueryClient::WarnUnanswered(
    const google::protobuf::RepeatedPtrField<drip::v1::MemberError>& unanswered) {
  if (unanswered.empty() || warned_unanswered_) return;
  warned_unanswered_ = true;
  for (const drip::v1::MemberError& e : unanswered) {
    std::cerr << fmt::format(
        "dripctl: warning: collector {} ({}) did not answer ({}): this answer lacks the hosts "
        "and reports it holds\n",
        e.member(), e.address(), e.error());
  }
}

void QueryClient::WarnHostsWithoutCopy(
    const google::protobuf::RepeatedPtrField<std::string>& hosts) {
  if (hosts.empty()) return;
  std::cerr << fmt::format(
      "dripctl: warning: no copy of {} host(s) answered ({}{}): what is shown of them is old "
      "or missing\n",
      hosts.size(), TerminalSafe(hosts[0]), hosts.size() > 1 ? ", ..." : "");
}

absl::StatusOr<drip::v1::ListHostsResponse> QueryClient::ListHosts() {
  auto context = NewContext();
  drip::v1::ListHostsResponse response;
  grpc::Status status = stub_->ListHosts(context.get(), drip::v1::ListHostsRequest(), &response);
  if (!status.ok()) return ToStatus(status, "ListHosts");
  MakeTerminalSafe(&response);
  WarnUnanswered(response.unanswered());
  WarnHostsWithoutCopy(response.hosts_without_copy());
  return response;
}

absl::StatusOr<drip::v1::GetSeriesResponse> QueryClient::GetSeries(
    const drip::v1::GetSeriesRequest& request) {
  auto context = NewContext();
  drip::v1::GetSeriesResponse response;
  grpc::Status status = stub_->GetSeries(context.get(), request, &response);
  if (!status.ok()) return ToStatus(status, "GetSeries");
  MakeTerminalSafe(&response);
  WarnUnanswered(response.unanswered());
  WarnHostsWithoutCopy(response.hosts_without_copy());
  return response;
}

absl::StatusOr<drip::v1::ListSuspectsResponse> QueryClient::ListSuspects(
    const drip::v1::ListSuspectsRequest& request) {
  auto context = NewContext();
  drip::v1::ListSuspectsResponse response;
  grpc::Status status = stub_->ListSuspects(context.get(), request, &response);
  if (!status.ok()) return ToStatus(status, "ListSuspects");
  MakeTerminalSafe(&response);
  WarnUnanswered(response.unanswered());
  return response;
}

absl::StatusOr<drip::v1::ListLeaksResponse> QueryClient::ListLeaks(
    const drip::v1::ListLeaksRequest& request) {
  auto context = NewContext();
  drip::v1::ListLeaksResponse response;
  grpc::Status status = stub_->ListLeaks(context.get(), request, &response);
  if (!status.ok()) return ToStatus(status, "ListLeaks");
  MakeTerminalSafe(&response);
  WarnUnanswered(response.unanswered());
  return response;
}

absl::StatusOr<drip::v1::LeakReport> QueryClient::GetLeak(const std::string& id) {
  auto context = NewContext();
  drip::v1::GetLeakRequest request;
  request.set_id(id);
  drip::v1::LeakReport response;
  grpc::Status status = stub_->GetLeak(context.get(), request, &response);
  if (!status.ok()) return ToStatus(status, "GetLeak");
  MakeTerminalSafe(&response);
  return response;
}

absl::StatusOr<drip::v1::HeapSnapshot> QueryClient::GetLeakSnapshot(const std::string& id,
                                                                    bool first) {
  auto context = NewContext();
  drip::v1::GetLeakSnapshotRequest request;
  request.set_id(id);
  request.set_first(first);
  drip::v1::HeapSnapshot response;
  grpc::Status status = stub_->GetLeakSnapshot(context.get(), request, &response);
  if (!status.ok()) return ToStatus(status, "GetLeakSnapshot");
  return response;
}

absl::StatusOr<drip::v1::LeakReport> QueryClient::UpdateLeakState(
    const drip::v1::UpdateLeakStateRequest& request) {
  auto context = NewContext();
  drip::v1::LeakReport response;
  grpc::Status status = stub_->UpdateLeakState(context.get(), request, &response);
  if (!status.ok()) return ToStatus(status, "UpdateLeakState");
  MakeTerminalSafe(&response);
  return response;
}

absl::StatusOr<drip::v1::MitigateResponse> QueryClient::Mitigate(
    const drip::v1::MitigateRequest& request) {
  auto context = NewContext();
  drip::v1::MitigateResponse response;
  grpc::Status status = stub_->Mitigate(context.get(), request, &response);
  if (!status.ok()) return ToStatus(status, "Mitigate");
  MakeTerminalSafe(&response);
  return response;
}

absl::StatusOr<drip::v1::ListAuditResponse> QueryClient::ListAudit(
    const drip::v1::ListAuditRequest& request) {
  auto context = NewContext();
  drip::v1::ListAuditResponse response;
  grpc::Status status = stub_->ListAudit(context.get(), request, &response);
  if (!status.ok()) return ToStatus(status, "ListAudit");
  MakeTerminalSafe(&response);
  WarnUnanswered(response.unanswered());
  return response;
}

absl::StatusOr<drip::v1::ListMembersResponse> QueryClient::ListMembers(
    const drip::v1::ListMembersRequest& request) {
  auto context = NewContext();
  drip::v1::ListMembersResponse response;
  grpc::Status status = stub_->ListMembers(context.get(), request, &response);
  if (!status.ok()) return ToStatus(status, "ListMembers");
  MakeTerminalSafe(&response);
  return response;
}

}  // namespace drip::cli
