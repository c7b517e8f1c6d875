// Rendezvous (highest-random-weight) placement of hosts on collectors: a host belongs to
// the member whose weight for it is highest, where the weight is a hash of (member, host).
// Every collector computes the same owner from the same member list, with no state to
// share beyond the list; a member joining takes about 1/N of the hosts (only those whose
// new highest weight is its own) and a member leaving hands only its own hosts on, each to
// the member with the next weight.
//
// The hash is fixed (FNV-1a 64 finished with a 64-bit mix), never std::hash: collectors of
// different builds must agree during an upgrade. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace drip::collector {

// The weight of `member` for `host`.
uint64_t RendezvousWeight(std::string_view member, std::string_view host);

// The member `host` belongs to among `members` ("" when there is none). Ties, which need
// a 64-bit collision, go to the smaller name, so that the answer never depends on order.
std::string RendezvousOwner(std::string_view host, const std::vector<std::string>& members);

// `members` in `host`'s order of preference: its owner first, then the member it would
// go to if the owner left, and so on (the same ties as RendezvousOwner). A host whose
// owner just changed is most likely still streaming to the next one in this order.
std::vector<std::string> RendezvousRanking(std::string_view host, std::vector<std::string> members);

}  // namespace drip::collector
