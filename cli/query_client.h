// QueryClient: dripctl's connection to the collector's query API. Turns gRPC failures
// into absl::Status values whose message an on-call engineer can act on (which
// collector, what went wrong), and maps "cannot connect" to UNAVAILABLE so that main
// can give it its own exit code.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "drip/v1/query.grpc.pb.h"

namespace drip::cli {

class QueryClient {
 public:
  QueryClient(std::string address, std::chrono::milliseconds timeout);

  absl::StatusOr<drip::v1::ListHostsResponse> ListHosts();
  absl::StatusOr<drip::v1::GetSeriesResponse> GetSeries(const drip::v1::GetSeriesRequest& request);
  absl::StatusOr<drip::v1::ListSuspectsResponse> ListSuspects(
      const drip::v1::ListSuspectsRequest& request);

  const std::string& address() const { return address_; }

 private:
  std::unique_ptr<grpc::ClientContext> NewContext() const;
  absl::Status ToStatus(const grpc::Status& status, const char* method) const;

  std::string address_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<drip::v1::QueryService::Stub> stub_;
};

}  // namespace drip::cli
