// How the members' parts of a fleet-wide query become the one answer a single collector
// would give (docs/cluster.md, "One fleet view"). Pure functions over the wire messages,
// so that the query service and the tests run the same merge.
//
// A host's data may sit on several members: every collector that owned it within the
// retention keeps what it stored, and a batch a dead owner stored without acknowledging
// it is stored again by the next one. So a host's records are combined (first seen the
// earliest, last seen the latest, the member streaming it named), a series' samples are
// the union by timestamp (one sample per instant: a resent batch is the same samples), and
// every list is sorted as a single collector sorts it.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "drip/v1/query.pb.h"

namespace drip::collector {

// One member's part: its name, and its answer.
template <typename Response>
struct MemberPart {
  std::string member;
  Response response;
};

// Of `hosts`, those whose every holder (the first `replication_factor` of `members` in the
// host's rendezvous order, docs/cluster.md "Replication") is `silent`: no copy of them is
// in a merged answer.
std::vector<std::string> HostsWithNoCopyAnswering(const std::vector<std::string>& hosts,
                                                  const std::vector<std::string>& members,
                                                  int replication_factor,
                                                  const std::set<std::string>& silent);

// Hosts by name; a host several members stored combines into one record whose
// `collector` is the member it streams to (else the one that heard from it last).
drip::v1::ListHostsResponse MergeHosts(std::vector<MemberPart<drip::v1::ListHostsResponse>> parts);

// Series by (component, instance), samples in time order, one per timestamp; gaps
// de-duplicated, oldest first.
drip::v1::GetSeriesResponse MergeSeries(std::vector<drip::v1::GetSeriesResponse> parts);

// Suspects by (host, component, instance), the most recently updated kept, most urgent
// first (score, then growth); components recounted from the merged suspects, hosts seen
// summed, earliest flagged first.
drip::v1::ListSuspectsResponse MergeSuspects(std::vector<drip::v1::ListSuspectsResponse> parts);

// Reports by id (the most recently changed kept), unresolved first, then by severity,
// then the most recently seen.
drip::v1::ListLeaksResponse MergeLeaks(std::vector<drip::v1::ListLeaksResponse> parts);

// Audit entries newest first, at most `limit`.
drip::v1::ListAuditResponse MergeAudit(std::vector<drip::v1::ListAuditResponse> parts,
                                       size_t limit);

}  // namespace drip::collector
