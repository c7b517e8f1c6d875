// ClusterMembership: this collector's place among the collectors that share a fleet
// through etcd (docs/cluster.md). It registers the collector under a lease at
// <prefix>members/<name> with the address agents and dripctl reach it at, keeps the
// lease alive, and keeps the list of live members (every key under <prefix>members/,
// each alive only while its collector's lease is): a collector that dies leaves the list
// once its lease expires (cluster.lease_ttl).
//
// etcd unavailable: the collector keeps serving; membership is frozen at what was last
// read, `etcd_up()` is false, the drip_cluster_etcd_up gauge is 0, errors are counted and
// the outage is logged once (and its end). When the lease has expired meanwhile, the
// member registers again under a new lease once etcd answers.
//
// Thread-safe. Its own thread ("drip-cluster") runs the keep-alive and refresh rounds,
// every third of the lease TTL.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/cluster/etcd_client.h"
#include "collector/collector_metrics.h"
#include "collector/loop_thread.h"

namespace drip::collector {

struct ClusterOptions {
  EtcdOptions etcd;
  std::string member_name;
  std::string advertise_address;  // host:port agents and dripctl use to reach this one
  std::chrono::seconds lease_ttl{10};
  std::string prefix = "/drip/";  // every key Drip keeps in etcd is under it
};

struct ClusterMember {
  std::string name;
  std::string address;
  int64_t started_ms = 0;
  uint64_t hosts_connected = 0;  // agents streaming to it, as it last said
  int64_t lease = 0;
};

// How far ahead of this collector's clock a time read from etcd may be.
inline constexpr int64_t kMaxEtcdClockSkewMs = 5 * 60 * 1000;

// The member recorded at `kv` (a key under `members_prefix`), or why it is not taken as
// one. Nothing in a record is trusted beyond what etcd itself vouches for: the record
// must be on a lease (a member's record dies with its collector), its name is its key's
// (the JSON must agree), its address a TCP host:port (never another kind of gRPC target)
// and its start time in the past (up to kMaxEtcdClockSkewMs of clock skew).
absl::StatusOr<ClusterMember> DecodeMemberRecord(std::string_view members_prefix,
                                                 const EtcdKeyValue& kv, int64_t now_ms);

class ClusterMembership {
 public:
  // Connects to etcd and registers. An etcd that does not answer is not an error: the
  // collector starts, serves what it holds, and registers once etcd answers.
  // `hosts_connected` is asked each round, for what the member publishes; `metrics` may
  // be null (tests).
  static absl::StatusOr<std::unique_ptr<ClusterMembership>> Join(
      const ClusterOptions& options, std::function<uint64_t()> hosts_connected,
      CollectorMetrics* metrics);
  ~ClusterMembership();  // Leave()

  // Revokes the lease, so that the others see this member leave at once. Idempotent.
  void Leave();

  // The live members as last read (this one included once registered), by name.
  std::vector<ClusterMember> Members() const;
  // The member that owns `host` by rendezvous placement (rendezvous.h) over the members
  // as last read, when that is another one; nullopt when it is this one, or while this
  // one is not in the list (not registered yet, or its lease lost), when it cannot tell.
  // With etcd away the list is the one last read: hosts keep going where they went.
  std::optional<ClusterMember> OwnerElsewhere(const std::string& host) const;
  // The other members (with an address) in `host`'s order of preference
  // (RendezvousRanking): where its agent streams once placement has settled, then where
  // it streamed before this member joined or is going now that its owner left.
  std::vector<ClusterMember> OthersByPreference(const std::string& host) const;

  // Called on the membership thread after a round in which a member joined or left (by
  // name), so that hosts now placed elsewhere can be sent on. Thread-safe.
  void SetOnMembersChanged(std::function<void()> callback);

  // Something each member shares with the others through etcd (the detector's fleet
  // drift): every `every_rounds` rounds, on the membership thread, `produce()` is put at
  // <prefix><kind>/<member> under this member's lease when it changed (so a dead member's
  // share goes with its lease), then `consume` is given what the other live members put
  // there, by member name. With etcd away neither runs. Call before the first round
  // that should share (it runs at the next multiple of `every_rounds`).
  void Share(std::string kind, int every_rounds, std::function<std::string()> produce,
             std::function<void(const std::map<std::string, std::string>&)> consume);
  bool etcd_up() const { return etcd_up_.load(); }
  const std::string& member_name() const { return options_.member_name; }
  std::string etcd_endpoint_in_use() const { return client_->current_endpoint(); }
  // The etcd client and key prefix, for what else the members keep there (the leak
  // reports' owners, report_ownership.h).
  EtcdClient* etcd() const { return client_.get(); }
  const std::string& prefix() const { return options_.prefix; }

  // One round now (tests): keep-alive or register, then read the members.
  void RunRound();

 private:
  ClusterMembership(ClusterOptions options, std::unique_ptr<EtcdClient> client,
                    std::function<uint64_t()> hosts_connected, CollectorMetrics* metrics);
  absl::Status Register();
  absl::Status RefreshMembers();
  absl::Status RunShares();
  std::string MemberKey() const;
  void NoteEtcd(const absl::Status& status);

  const ClusterOptions options_;
  const std::unique_ptr<EtcdClient> client_;
  const std::function<uint64_t()> hosts_connected_;
  CollectorMetrics* const metrics_;
  // (key, mod_revision) of the records the last refresh ignored, to warn once about each.
  // Membership thread only.
  std::set<std::pair<std::string, int64_t>> ignored_records_;
  const int64_t started_ms_;
  std::atomic<bool> etcd_up_{false};
  std::atomic<int> etcd_state_{-1};  // -1 before the first round, then 0 down, 1 up
  mutable std::mutex mu_;
  std::function<void()> on_members_changed_;  // guarded by mu_
  std::vector<ClusterMember> members_;        // guarded by mu_
  int64_t lease_ = 0;                         // round thread only
  bool left_ = false;                         // guarded by mu_
  struct SharedValue {
    std::string kind;
    int every_rounds = 1;
    std::function<std::string()> produce;
    std::function<void(const std::map<std::string, std::string>&)> consume;
    std::string last_put;  // what was put last, under last_lease
    int64_t last_lease = 0;
  };
  // Added under mu_; each one's fields then belong to the round thread.
  std::vector<std::unique_ptr<SharedValue>> shares_;
  uint64_t rounds_ = 0;  // round thread only
  LoopThread loop_;
};

}  // namespace drip::collector
