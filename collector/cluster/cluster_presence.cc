#include "collector/cluster/cluster_presence.h"

#include <unistd.h>

#include <utility>
#include <vector>

#include "collector/cluster/fleet_drift_share.h"
#include "common/base/status_macros.h"
#include "common/daemon/listen_address.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace drip::collector {
namespace {

// The detector judges a component's fleet drift by all its hosts, wherever they stream:
// each member shares its counts every tenth round (half a minute at the default lease;
// drift moves by detector epochs, hours long) and adds the others' to its own.
constexpr int kDriftShareRounds = 10;

}  // namespace

std::string MemberNameOf(const CollectorConfig& config) {
  if (!config.cluster.member_name.empty()) return config.cluster.member_name;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0) return name;
  return "collector";
}

absl::StatusOr<std::unique_ptr<ClusterPresence>> ClusterPresence::Join(
    const CollectorConfig& config, const std::string& bound_grpc, int grpc_port, Parts parts) {
  ClusterOptions options;
  options.etcd.endpoints = config.cluster.etcd_endpoints;
  options.etcd.tls = config.cluster.tls;
  options.member_name = MemberNameOf(config);
  options.advertise_address = config.cluster.advertise_address;
  if (options.advertise_address.empty()) {
    absl::StatusOr<ListenAddress> listen = ListenAddress::Parse(config.grpc.listen_address);
    // A wildcard listen address is reached by this host's name from elsewhere.
    options.advertise_address = listen.ok() && (listen->host == "0.0.0.0" || listen->host == "::")
                                    ? fmt::format("{}:{}", options.member_name, grpc_port)
                                    : bound_grpc;
  }
  options.lease_ttl = std::chrono::duration_cast<std::chrono::seconds>(config.cluster.lease_ttl);
  ConnectedHosts* hosts = parts.hosts;
  absl::StatusOr<std::unique_ptr<ClusterMembership>> membership = ClusterMembership::Join(
      options, [hosts] { return hosts->size(); }, parts.metrics);
  if (!membership.ok()) return WithContext(membership.status(), "cluster");
  std::unique_ptr<ClusterPresence> presence(new ClusterPresence(
      parts, std::move(*membership), std::make_unique<MemberQueryClient>(config.tls)));
  presence->repairer_ = std::make_unique<ReplicaRepairer>(
      presence->membership_.get(), presence->member_queries_.get(), parts.store,
      config.cluster.replication_factor, config.storage.retention, parts.metrics, parts.clock);
  presence->repairer_to_wake_.store(presence->repairer_.get());
  presence->replicator_ = std::make_unique<BatchReplicator>(
      presence->membership_.get(), presence->member_queries_.get(),
      config.cluster.replication_factor, parts.metrics, presence->repairer_.get());
  Logger("collector")
      ->info("cluster: member {} at {} with etcd {} (lease {} s, replication factor {})",
             options.member_name, options.advertise_address, fmt::join(options.etcd.endpoints, ","),
             options.lease_ttl.count(), config.cluster.replication_factor);
  return presence;
}

ClusterPresence::ClusterPresence(Parts parts, std::unique_ptr<ClusterMembership> membership,
                                 std::unique_ptr<MemberQueryClient> member_queries)
    : parts_(parts),
      membership_(std::move(membership)),
      member_queries_(std::move(member_queries)) {
  LeakPipeline* pipeline = parts_.pipeline;
  // Mitigations of a report's hosts that stream to other members go through them.
  command_relay_ = std::make_unique<MemberCommandRelay>(membership_.get(), member_queries_.get(),
                                                        parts_.metrics);
  pipeline->SetCommandRelay(command_relay_.get());
  membership_->SetOnMembersChanged([this] {
    DrainHostsPlacedElsewhere();
    // A member back (maybe empty) or new holds copies to compare now, not a round later.
    if (ReplicaRepairer* repairer = repairer_to_wake_.load()) repairer->Wake();
  });
  membership_->Share(
      "drift", kDriftShareRounds, [pipeline] { return EncodeFleetDrift(pipeline->LocalDrifts()); },
      [this](const std::map<std::string, std::string>& shares) { TakePeerDrifts(shares); });
  // Each component's leak report has one owner among the members (report_ownership.h).
  report_ownership_ =
      std::make_unique<ReportOwnership>(membership_.get(), member_queries_.get(), pipeline,
                                        parts_.hosts, parts_.metrics, pipeline->interval());
  ReportOwnership* ownership = report_ownership_.get();
  pipeline->reports().SetOnChangeBetweenPasses([ownership] { ownership->Wake(); });
}

ClusterPresence::~ClusterPresence() { Stop(); }

void ClusterPresence::Start() {
  report_ownership_->Start();
  repairer_->Start();
}

void ClusterPresence::HandOver(std::chrono::milliseconds budget) {
  if (stopped_.load()) return;
  repairer_to_wake_.store(nullptr);
  repairer_->HandOver(std::chrono::steady_clock::now() + budget);
}

void ClusterPresence::Leave() { membership_->Leave(); }

void ClusterPresence::Stop() {
  if (stopped_.exchange(true)) return;
  repairer_to_wake_.store(nullptr);
  repairer_->Stop();
  report_ownership_->Stop();
  parts_.pipeline->reports().SetOnChangeBetweenPasses(nullptr);
  // Cancels the relayed commands still waiting, whose answers the pipeline records.
  parts_.pipeline->SetCommandRelay(nullptr);
  command_relay_.reset();
  // No more rounds: nothing drains hosts or shares drift from here on.
  membership_->Leave();
  membership_->SetOnMembersChanged(nullptr);
}

std::optional<ClusterMember> ClusterPresence::OwnerElsewhere(const std::string& host) const {
  if (stopped_.load()) return std::nullopt;
  return membership_->OwnerElsewhere(host);
}

void ClusterPresence::Replicate(const drip::v1::HostInfo& host,
                                const drip::v1::SampleBatch& batch) const {
  if (stopped_.load()) return;
  replicator_->Replicate(host, batch);
}

void ClusterPresence::DrainHostsPlacedElsewhere() {
  for (const std::string& host : parts_.hosts->Hosts()) {
    if (std::optional<ClusterMember> owner = membership_->OwnerElsewhere(host)) {
      parts_.hosts->MoveTo(host, owner->name, owner->address);
    }
  }
}

void ClusterPresence::TakePeerDrifts(const std::map<std::string, std::string>& shares) {
  std::vector<std::string> unreadable;
  parts_.pipeline->SetPeerDrifts(SumPeerDrift(shares, &unreadable));
  parts_.metrics->cluster_drift_members.Set(static_cast<double>(shares.size() - unreadable.size()));
  if (!unreadable.empty() && unreadable.size() != drift_unreadable_) {
    Logger("collector")
        ->warn("cluster: fleet drift of {} left out: {}", fmt::join(unreadable, "; "),
               "the fleet rule judges without their hosts until they share a readable one");
  }
  drift_unreadable_ = unreadable.size();
}

}  // namespace drip::collector
