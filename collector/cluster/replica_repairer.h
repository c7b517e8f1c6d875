// ReplicaRepairer: brings every copy of a host this member holds up to date with its own
// (docs/cluster.md, "Repair"). Replication copies each batch as it comes; what it cannot
// copy is repaired here: batches a replica missed while it was down or slow, a member
// that came back with an empty disk, and the new holder of a host's copy after a member
// joined or left.
//
// Each member looks after every host it has a copy of: for each of the host's holders
// (the first replication_factor members of its rendezvous order) other than itself, the
// copy there is "confirmed" once compared with this one. A member that stopped being a
// holder (another joined or came back ahead of it) hands its copy over this way, since it
// may hold samples it alone got while it was one. A copy is compared
// again when the member holding it restarts (a new start time or lease: its disk may be
// new), when replication to it failed (BatchReplicator::NoteMissed), and when it newly
// holds the host (membership changed). Comparing asks the other member for its sample
// counts per hour (host_sample_counts.h) and sends it, in parts, this member's samples
// of every hour whose counts differ; the receiver keeps those it lacks and, at the last
// part, replays the host's history into its detector. Both holders do this, so each
// gets what only the other had. Membership changes move only the hosts whose set of
// holders changed: rendezvous order keeps every other host's holders as they were.
//
// One thread; a round goes through the hosts in the store until the backlog is empty or
// it is stopped.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/cluster/cluster_membership.h"
#include "collector/cluster/member_query_client.h"
#include "collector/collector_metrics.h"
#include "collector/loop_thread.h"
#include "collector/storage/series_store.h"
#include "common/base/clock.h"

namespace drip::collector {

struct RepairRound {
  size_t copies_compared = 0;
  size_t copies_repaired = 0;  // compared and sent samples
  uint64_t samples_sent = 0;
  size_t copies_failed = 0;  // left in the backlog for the next round
};

class ReplicaRepairer {
 public:
  // Counts are compared per hour; samples go in parts of at most this many.
  static constexpr int64_t kCountWindowMs = 3600 * 1000;
  static constexpr int kSamplesPerPart = 4096;
  static constexpr std::chrono::seconds kRoundInterval{5};
  static constexpr std::chrono::seconds kCallDeadline{10};
  // While handing over: a holder that does not answer in this long is passed for the next.
  static constexpr std::chrono::seconds kHandOverCallDeadline{5};

  // Every pointer must outlive the repairer. `retention` bounds what is compared.
  ReplicaRepairer(const ClusterMembership* membership, MemberQueryClient* members,
                  SeriesStore* store, int replication_factor, std::chrono::milliseconds retention,
                  CollectorMetrics* metrics, const Clock* clock);
  ~ReplicaRepairer();  // Stop()

  void Start();
  void Stop();

  // The copy of `host` on `member` missed a batch: compare it again at the next round.
  // Thread-safe.
  void NoteMissed(const std::string& host, const std::string& member);

  // One round now (tests and the loop): compares and repairs every copy waiting.
  RepairRound RunRound();
  // The member is leaving (stopped as systemd stops it), its agents' streams ended: each
  // host it has samples of goes on with the holders it will have without it, and what
  // only this member holds must reach one of them first, or an acknowledged sample is
  // lost with it (a batch acknowledged while its replica refused, say, and not repaired
  // yet). A host with a holder that stays one and whose copy is confirmed needs nothing
  // (a replication it missed would have unconfirmed it); for the others, the first of its
  // holders to come is compared and sent what it lacks, and repairs the next one itself.
  // Stops the rounds first; must run while this member is still registered, since the
  // others admit only live members to their member API. Hosts left at `deadline` are
  // counted in copies_failed and logged.
  RepairRound HandOver(std::chrono::steady_clock::time_point deadline);
  // Runs the next round now, not at the end of the wait: members changed, and the copies
  // (and the gauges) should follow at once. Thread-safe.
  void Wake() { loop_.Wake(); }

 private:
  using CopyKey = std::pair<std::string, std::string>;  // (host, member)
  // The copies to compare this round, and the gauges (set by SurveyLocked).
  struct Survey {
    struct Copy {
      size_t host_index;  // into the hosts surveyed
      ClusterMember member;
    };
    std::vector<Copy> copies;
    size_t under_replicated_hosts = 0;
  };
  Survey SurveyLocked(const std::vector<drip::v1::HostInfo>& hosts,
                      const std::vector<ClusterMember>& members, int64_t now_ms);
  // Sends `member` this member's samples of `host` where the two copies' counts differ.
  absl::Status RepairCopy(const drip::v1::HostInfo& host, const ClusterMember& member,
                          RepairRound* round);
  // When each call to another member must end: kCallDeadline from now, or the hand-over's
  // deadline when that comes first.
  std::chrono::system_clock::time_point CallDeadline() const;

  const ClusterMembership* membership_;
  MemberQueryClient* members_;
  SeriesStore* store_;
  const int replication_factor_;
  const std::chrono::milliseconds retention_;
  CollectorMetrics* metrics_;
  const Clock* clock_;
  std::atomic<bool> stopping_{false};
  // While handing over (HandOver): when it must be done, as a system_clock time.
  std::optional<std::chrono::system_clock::time_point> hand_over_deadline_;
  std::mutex mu_;
  // The member's incarnation (start time and lease) each copy was confirmed against.
  std::map<CopyKey, std::string> confirmed_;
  std::map<CopyKey, int64_t> waiting_since_ms_;  // the backlog
  std::set<CopyKey> missed_;                     // missed a batch since its comparison began
  std::set<CopyKey> logged_failing_;
  LoopThread loop_;
};

}  // namespace drip::collector
