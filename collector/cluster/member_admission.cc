#include "collector/cluster/member_admission.h"

#include <algorithm>

#include "common/daemon/listen_address.h"
#include "fmt/format.h"

namespace drip::collector {

absl::StatusOr<Caller> AdmitMember(const AccessPolicy& access, const CallerCredentials& credentials,
                                   const std::vector<ClusterMember>& members,
                                   std::string_view self) {
  if (!credentials.bearer_token.empty()) {
    return absl::UnauthenticatedError(
        "a bearer token is not a member's credential: members call each other with their "
        "certificates and never forward a caller's token");
  }
  absl::StatusOr<Caller> listed = access.Authorize(credentials, Role::kMember);
  if (listed.ok() && (listed->role == Role::kMember || listed->method == "unauthenticated")) {
    return listed;
  }
  if (credentials.certificate_names.empty()) {
    return absl::UnauthenticatedError(
        "no client certificate: the member API is for the collectors of the cluster, each "
        "with its own certificate");
  }
  const auto& names = credentials.certificate_names;
  if (credentials.certificate_serves) {
    for (const ClusterMember& member : members) {
      if (member.name == self) continue;
      absl::StatusOr<ListenAddress> address = ListenAddress::Parse(member.address);
      if (!address.ok()) continue;
      if (std::find(names.begin(), names.end(), address->host) == names.end()) continue;
      Caller caller;
      caller.name = member.name;
      caller.role = Role::kMember;
      caller.method = "certificate";
      caller.peer = credentials.peer;
      return caller;
    }
  }
  return absl::PermissionDeniedError(fmt::format(
      "certificate '{}' is not a member's: {}, and the access file does not give it the "
      "member role",
      names.front(),
      credentials.certificate_serves
          ? "it names no host a live member advertises (cluster.advertise_address)"
          : "its key usage is clientAuth only (an agent's or a user's)"));
}

}  // namespace drip::collector
