// ReportOwnership: one owner for each component's leak report across the members of a
// cluster (docs/cluster.md, "One owner per leak report"). A component's report belongs to
// the member that rendezvous placement (rendezvous.h) gives the component's name over the
// live members: every member computes the same owner from the same list, and a member
// leaving hands only its own components on.
//
// Each round, on its own thread ("drip-reports"), this member
//   1. reads the reports the owners wrote to etcd (<prefix>reports/<component>, no lease:
//      they outlive the member that wrote them);
//   2. asks the other live members for their suspects (their ListSuspects part, the same
//      call a fleet-wide `dripctl suspects` makes), so that the owner's report of a
//      component lists its hosts wherever they stream, with their snapshots' diagnoses;
//   3. hands both, with what it owns, to the leak pipeline, whose next pass adopts the
//      cluster's copy of a component it now owns before it could open a second report;
//   4. writes each owned report that changed to etcd, as a compare-and-swap on the key's
//      revision: a member that still thinks it owns a component another one took over
//      fails the swap, reads the other's report next round, and gives way to it.
// A member not in the list it read (not registered yet, or its lease lost) owns nothing
// new and changes nothing. With etcd away ownership stays as last read, the reports go
// on being kept by their owners, and writes wait until etcd answers.
//
// Thread-safe; Start/Stop from the owner.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "collector/cluster/cluster_membership.h"
#include "collector/cluster/member_query_client.h"
#include "collector/collector_metrics.h"
#include "collector/ingest/connected_hosts.h"
#include "collector/loop_thread.h"
#include "collector/pipeline/fleet_suspects.h"
#include "collector/pipeline/leak_pipeline.h"

namespace drip::collector {

// What of `member`'s suspects (`part`, its answer to ListSuspects) the reports of this
// member read: the components it owns (`owns`), and only hosts placed on `member` among the
// live `members`, or on it just before (second in the host's rendezvous order: a host
// whose owner joined or came back is judged from the history its previous member holds),
// never a host that streams to this member now (`streams_here`: then it streams to no
// other, and this member's own evidence is the fresh one), and with no time ahead of
// `now_s` by more than the allowed clock skew. A compromised member
// must not put the whole fleet's hosts into reports that automatic policies act on, nor
// stamp its evidence ahead of the clock to win over another's. Hosts left out are added
// to `refused`.
FleetSuspects SuspectsAMemberSpeaksFor(const std::string& member,
                                       const std::vector<std::string>& members,
                                       const FleetSuspects& part,
                                       const std::function<bool(const std::string&)>& owns,
                                       const std::function<bool(const std::string&)>& streams_here,
                                       int64_t now_s, size_t* refused);

class ReportOwnership {
 public:
  // A copy larger than this (a leak over tens of thousands of hosts) is written with its
  // least urgent hosts left out: etcd refuses requests over 1.5 MiB, and the next owner
  // gets the active hosts back from the members' suspects anyway.
  static constexpr size_t kMaxStoredReportBytes = 1 << 20;
  // At most this many reports are read from etcd (one per component with a leak).
  static constexpr size_t kMaxSharedReports = 50'000;

  // Every pointer must outlive the object. `interval` is the pipeline's.
  ReportOwnership(ClusterMembership* cluster, MemberQueryClient* members, LeakPipeline* pipeline,
                  const ConnectedHosts* hosts, CollectorMetrics* metrics,
                  std::chrono::milliseconds interval);
  ~ReportOwnership();  // Stop()

  void Start();
  void Stop();

  // The next round now: a report changed between passes (on-call's ack, a mitigation),
  // and etcd should have it before the owner could die. Does not block.
  void Wake() { loop_.Wake(); }

  // One round now (tests).
  void RunRound();

 private:
  // What etcd held for a component as last read.
  struct StoredCopy {
    std::string id;
    std::string state;
    int64_t updated_ms = 0;
    int64_t mod_revision = 0;
  };
  std::string KeyOf(const std::string& component) const;
  void WriteOwned(const std::function<bool(const std::string&)>& owns);

  ClusterMembership* const cluster_;
  MemberQueryClient* const members_;
  LeakPipeline* const pipeline_;
  const ConnectedHosts* const hosts_;
  CollectorMetrics* const metrics_;
  const std::chrono::milliseconds interval_;
  // Round thread only.
  std::map<std::string, StoredCopy> stored_;  // by component
  size_t refused_suspects_ = 0;  // peers' host suspects left out last round, logged on change
  // The reports as last read, shared with the pipeline's view, never changed once made.
  std::shared_ptr<const std::vector<drip::v1::LeakReport>> shared_ =
      std::make_shared<const std::vector<drip::v1::LeakReport>>();
  std::map<std::string, FleetSuspects> peer_suspects_;  // by member, as last answered
  size_t unreadable_ = 0;                               // stored reports not parsed, last round
  std::set<std::string> silent_;                        // members whose suspects failed
  std::map<std::string, size_t> skipped_;               // suspects left out, by member
  bool read_once_ = false;                              // the reports were read from etcd
  LoopThread loop_;
};

}  // namespace drip::collector
