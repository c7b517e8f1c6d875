#include "collector/cluster/member_query_client.h"

#include <utility>

#include "fmt/format.h"

namespace drip::collector {

MemberQueryClient::MemberQueryClient(TlsSettings tls, std::chrono::milliseconds deadline)
    : tls_(std::move(tls)), deadline_(deadline) {}

std::shared_ptr<drip::v1::MemberService::Stub> MemberQueryClient::StubFor(
    const std::string& address, grpc::Status* error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stubs_.find(address);
  if (it != stubs_.end()) return it->second;
  grpc::ChannelArguments args;
  // Members answer with whole host lists and series: as large as dripctl may read.
  args.SetMaxReceiveMessageSize(512 << 20);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(tls_, &args);
  if (!credentials.ok()) {
    *error = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          fmt::format("credentials for {}: {}", address,
                                      std::string(credentials.status().message())));
    return nullptr;
  }
  auto stub = std::shared_ptr<drip::v1::MemberService::Stub>(
      drip::v1::MemberService::NewStub(grpc::CreateCustomChannel(address, *credentials, args)));
  stubs_.emplace(address, stub);
  return stub;
}

}  // namespace drip::collector
