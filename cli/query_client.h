// QueryClient: dripctl's connection to the collector's query API. Turns gRPC failures
// into absl::Status values whose message an on-call engineer can act on (which
// collector, what went wrong), and maps "cannot connect" to UNAVAILABLE so that main
// can give it its own exit code. A refusal by the collector's access policy keeps its
// code (UNAUTHENTICATED, PERMISSION_DENIED) and the collector's reason.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/dripctl_config.h"
#include "common/rpc/message_size.h"
#include "drip/v1/query.grpc.pb.h"

namespace drip::cli {

class QueryClient {
 public:
  // The largest answer dripctl reads: the most any collector may be configured to send
  // (gRPC's own default is 4 MiB).
  static constexpr int kMaxAnswerBytes = static_cast<int>(kMaxMessageBytesLimit);

  // Plaintext, no credentials: for tests against an in-process collector.
  QueryClient(std::string address, std::chrono::milliseconds timeout);
  // TLS (or plaintext, when it says so) with the certificate and token `config` names.
  // Fails, naming the file, when a certificate or the token file cannot be read.
  static absl::StatusOr<std::unique_ptr<QueryClient>> Create(const DripctlConfig& config);

  absl::StatusOr<drip::v1::ListHostsResponse> ListHosts();
  absl::StatusOr<drip::v1::GetSeriesResponse> GetSeries(const drip::v1::GetSeriesRequest& request);
  absl::StatusOr<drip::v1::ListSuspectsResponse> ListSuspects(
      const drip::v1::ListSuspectsRequest& request);

  // Leak reports, mitigations and the audit log (proto/drip/v1/report.proto). An unknown
  // report id is NOT_FOUND; a state change the report does not allow (acknowledging a
  // resolved report) FAILED_PRECONDITION; both keep the collector's own message.
  absl::StatusOr<drip::v1::ListLeaksResponse> ListLeaks(const drip::v1::ListLeaksRequest& request);
  absl::StatusOr<drip::v1::LeakReport> GetLeak(const std::string& id);
  // The report's first or latest heap snapshot, as the agent took it: names are left as
  // they are (for pprof files), and whoever prints them makes them terminal-safe.
  absl::StatusOr<drip::v1::HeapSnapshot> GetLeakSnapshot(const std::string& id, bool first);
  absl::StatusOr<drip::v1::LeakReport> UpdateLeakState(
      const drip::v1::UpdateLeakStateRequest& request);
  // Returns once the collector has sent the commands, with one audit entry per host
  // (requested, refused or recommended); the agents' answers follow in ListAudit.
  absl::StatusOr<drip::v1::MitigateResponse> Mitigate(const drip::v1::MitigateRequest& request);
  absl::StatusOr<drip::v1::ListAuditResponse> ListAudit(const drip::v1::ListAuditRequest& request);
  absl::StatusOr<drip::v1::ListMembersResponse> ListMembers(
      const drip::v1::ListMembersRequest& request);

  const std::string& address() const { return address_; }

 private:
  QueryClient(std::string address, std::chrono::milliseconds timeout,
              std::shared_ptr<grpc::Channel> channel, std::string token);

  std::unique_ptr<grpc::ClientContext> NewContext() const;
  absl::Status ToStatus(const grpc::Status& status, const char* method) const;
  // A fleet-wide answer some members' parts are missing from (docs/cluster.md) is still
  // printed, after saying so on stderr, once per run.
  void WarnUnanswered(const google::protobuf::RepeatedPtrField<drip::v1::MemberError>& unanswered);
  // Hosts none of whose copies answered (ListHosts, GetSeries).
  void WarnHostsWithoutCopy(const google::protobuf::RepeatedPtrField<std::string>& hosts);

  std::string address_;
  std::chrono::milliseconds timeout_;
  bool warned_unanswered_ = false;
  std::string token_;  // sent as `authorization: Bearer` when not empty
  std::unique_ptr<drip::v1::QueryService::Stub> stub_;
};

}  // namespace drip::cli
