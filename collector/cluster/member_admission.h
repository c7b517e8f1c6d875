// AdmitMember: who may call the member API (drip.v1.MemberService, docs/security.md, "The
// cluster's trust model"). Its calls read what one member holds and deliver mitigations to
// the hosts streaming there, so they are for the collectors of the cluster alone, never for
// people or agents, whatever role those have on the query API.
//
// A caller is a member when
//   - the access file gives its certificate the member role, or
//   - its certificate may serve (a collector's key usage, CallerCredentials) and names the
//     host a live member other than this one advertises: membership in etcd, which only
//     collectors can write, vouches for the name, and the key usage keeps out the agent
//     that runs on every collector's host under the same name, or
//   - the collector is plaintext without an access file (open, for loopback trials).
// A bearer token is refused outright: members never send one, because they never forward
// their callers' (MemberQueryClient).
//
// A pure function of its arguments; thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/access/access_policy.h"
#include "collector/cluster/cluster_membership.h"

namespace drip::collector {

// The member calling, or UNAUTHENTICATED (no certificate, or a token) or PERMISSION_DENIED
// (a certificate that is not a member's) saying why. `members` are the live members, `self`
// this collector's name. The caller's `name` is its principal's, or the member's whose
// host its certificate names.
absl::StatusOr<Caller> AdmitMember(const AccessPolicy& access, const CallerCredentials& credentials,
                                   const std::vector<ClusterMember>& members,
                                   std::string_view self);

}  // namespace drip::collector
