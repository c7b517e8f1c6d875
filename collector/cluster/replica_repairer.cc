#include "collector/cluster/replica_repairer.h"

#include <algorithm>

#include "collector/cluster/rendezvous.h"
#include "collector/storage/host_sample_counts.h"
#include "common/daemon/logging.h"
#include "common/rpc/grpc_conversions.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

// What a member's copy was confirmed against: a member that restarted may have come back
// with another disk, so its copies are compared again.
std::string IncarnationOf(const ClusterMember& member) {
  return fmt::format("{}/{}", member.started_ms, member.lease);
}

}  // namespace

ReplicaRepairer::ReplicaRepairer(const ClusterMembership* membership, MemberQueryClient* members,
                                 SeriesStore* store, int replication_factor,
                                 std::chrono::milliseconds retention, CollectorMetrics* metrics,
                                 const Clock* clock)
    : membership_(membership),
      members_(members),
      store_(store),
      replication_factor_(replication_factor),
      retention_(retention),
      metrics_(metrics),
      clock_(clock),
      loop_("drip-repair", [this] {
        RunRound();
        return kRoundInterval;
      }) {}

ReplicaRepairer::~ReplicaRepairer() { Stop(); }

void ReplicaRepairer::Start() {
  stopping_ = false;
  // After a round of membership, so that the first comparison sees every member.
  loop_.Start(kRoundInterval);
}

void ReplicaRepairer::Stop() {
  stopping_ = true;
  loop_.Stop();
}

void ReplicaRepairer::NoteMissed(const std::string& host, const std::string& member) {
  std::lock_guard<std::mutex> lock(mu_);
  confirmed_.erase({host, member});
  missed_.insert({host, member});
}

ReplicaRepairer::Survey ReplicaRepairer::SurveyLocked(const std::vector<drip::v1::HostInfo>& hosts,
                                                      const std::vector<ClusterMember>& members,
                                                      int64_t now_ms) {
  Survey survey;
  std::vector<std::string> names;
  names.reserve(members.size());
  std::map<std::string, const ClusterMember*> by_name;
  for (const ClusterMember& m : members) {
    names.push_back(m.name);
    by_name[m.name] = &m;
  }
  const std::string& self = membership_->member_name();
  std::map<CopyKey, int64_t> waiting;
  // Only holders keep their confirmation: one that stops being a holder gets no more
  // copies, so it is compared again if it becomes one again.
  std::map<CopyKey, std::string> confirmed;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::vector<std::string> ranking = RendezvousRanking(hosts[i].host(), names);
    const size_t holders = std::min(ranking.size(), static_cast<size_t>(replication_factor_));
    const auto end = ranking.begin() + static_cast<std::ptrdiff_t>(holders);
    // A member that no longer holds the host (a member joined or came back ahead of it)
    // hands its copy over too: it may hold what it alone got while it was a holder.
    bool whole = holders == static_cast<size_t>(replication_factor_);
    for (auto it = ranking.begin(); it != end; ++it) {
      if (*it == self) continue;
      const ClusterMember& member = *by_name.at(*it);
      CopyKey key{hosts[i].host(), member.name};
      auto found = confirmed_.find(key);
      if (found != confirmed_.end() && found->second == IncarnationOf(member)) {
        confirmed.insert(*found);
        continue;
      }
      whole = false;
      auto since = waiting_since_ms_.find(key);
      waiting[key] = since == waiting_since_ms_.end() ? now_ms : since->second;
      survey.copies.push_back({i, member});
    }
    if (!whole && ranking.front() == self) ++survey.under_replicated_hosts;
  }
  waiting_since_ms_ = std::move(waiting);
  confirmed_ = std::move(confirmed);
  int64_t oldest = now_ms;
  for (const auto& [key, since] : waiting_since_ms_) oldest = std::min(oldest, since);
  metrics_->cluster_under_replicated_hosts.Set(static_cast<double>(survey.under_replicated_hosts));
  metrics_->cluster_repair_backlog.Set(static_cast<double>(waiting_since_ms_.size()));
  metrics_->cluster_replication_lag.Set(static_cast<double>(now_ms - oldest) / 1000.0);
  return survey;
}

RepairRound ReplicaRepairer::RunRound() {
  RepairRound round;
  if (replication_factor_ <= 1) return round;
  const std::vector<ClusterMember> members = membership_->Members();
  const std::string& self = membership_->member_name();
  if (std::none_of(members.begin(), members.end(),
                   [&](const ClusterMember& m) { return m.name == self; })) {
    return round;  // not registered: it cannot tell which copies are its to look after
  }
  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store_->ListHosts();
  if (!hosts.ok()) {
    Logger("collector")->warn("repair: cannot list hosts: {}", hosts.status().ToString());
    return round;
  }
  Survey survey;
  {
    std::lock_guard<std::mutex> lock(mu_);
    survey = SurveyLocked(*hosts, members, clock_->NowMs());
  }
  for (const Survey::Copy& copy : survey.copies) {
    if (stopping_.load()) break;
    const drip::v1::HostInfo& host = (*hosts)[copy.host_index];
    const CopyKey key{host.host(), copy.member.name};
    {
      std::lock_guard<std::mutex> lock(mu_);
      missed_.erase(key);
    }
    const auto start = std::chrono::steady_clock::now();
    const uint64_t sent_before = round.samples_sent;
    absl::Status repaired = RepairCopy(host, copy.member, &round);
    std::lock_guard<std::mutex> lock(mu_);
    if (!repaired.ok()) {
      ++round.copies_failed;
      if (logged_failing_.insert(key).second) {
        Logger("collector")
            ->warn(
                "repair: the copy of {} on {} ({}) cannot be compared yet: {}; trying again "
                "every {} s",
                host.host(), copy.member.name, copy.member.address, repaired.ToString(),
                kRoundInterval.count());
      }
      continue;
    }
    logged_failing_.erase(key);
    // A batch it missed meanwhile is compared at the next round.
    if (!missed_.contains(key)) confirmed_[key] = IncarnationOf(copy.member);
    if (round.samples_sent > sent_before) {
      Logger("collector")
          ->info("repair: sent {} samples of {} to {} in {:.1f} s",
                 round.samples_sent - sent_before, host.host(), copy.member.name,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  SurveyLocked(*hosts, members, clock_->NowMs());
  return round;
}

absl::Status ReplicaRepairer::RepairCopy(const drip::v1::HostInfo& host,
                                         const ClusterMember& member, RepairRound* round) {
  const int64_t since_ms = clock_->NowMs() - retention_.count();
  auto deadline = [] { return std::chrono::system_clock::now() + kCallDeadline; };
  drip::v1::CountHostSamplesRequest count;
  count.set_host(host.host());
  count.set_since_ms(since_ms);
  count.set_window_ms(kCountWindowMs);
  MemberAnswer<drip::v1::CountHostSamplesResponse> theirs = std::move(
      members_->AskAll({member}, &drip::v1::MemberService::Stub::async_interface::CountHostSamples,
                       count, deadline())[0]);
  if (!theirs.status.ok() && theirs.status.error_code() != grpc::StatusCode::NOT_FOUND) {
    return FromGrpcStatus(theirs.status);
  }
  std::map<int64_t, uint64_t> their_counts;
  for (const auto& window : theirs.response.windows()) {
    their_counts[window.start_ms()] = window.samples();
  }
  absl::StatusOr<std::map<int64_t, uint64_t>> mine =
      CountHostSamples(store_, host.host(), since_ms, kCountWindowMs);
  if (!mine.ok()) return mine.status();
  ++round->copies_compared;
  std::vector<int64_t> differing;
  for (const auto& [start_ms, samples] : *mine) {
    auto other = their_counts.find(start_ms);
    if (other == their_counts.end() || other->second != samples) differing.push_back(start_ms);
  }
  if (differing.empty()) return absl::OkStatus();

  absl::StatusOr<std::vector<std::string>> components = store_->ListComponents(host.host());
  if (!components.ok()) return components.status();
  drip::v1::RepairHostRequest part;
  *part.mutable_host() = host;
  // Not stored (a repair moves no mark); the receiver checks the batch as any other.
  part.mutable_batch()->set_sequence(std::max<uint64_t>(1, host.acked_sequence()));
  auto send = [&](bool last) -> absl::Status {
    part.set_last(last);
    MemberAnswer<drip::v1::RepairHostResponse> answer = std::move(
        members_->AskAll({member}, &drip::v1::MemberService::Stub::async_interface::RepairHost,
                         part, deadline())[0]);
    if (!answer.status.ok()) return FromGrpcStatus(answer.status);
    round->samples_sent += static_cast<uint64_t>(part.batch().samples_size());
    part.mutable_batch()->clear_samples();
    return absl::OkStatus();
  };
  for (int64_t start_ms : differing) {
    for (const std::string& component : *components) {
      absl::StatusOr<std::vector<drip::v1::Series>> read =
          store_->ReadSeries(host.host(), component, start_ms, start_ms + kCountWindowMs, 0);
      if (!read.ok()) return read.status();
      for (const drip::v1::Series& series : *read) {
        for (const drip::v1::Sample& stored : series.samples()) {
          drip::v1::Sample* sample = part.mutable_batch()->add_samples();
          *sample = stored;
          sample->set_component(component);
          sample->set_instance(series.instance());
          if (part.batch().samples_size() >= kSamplesPerPart) {
            if (absl::Status sent = send(false); !sent.ok()) return sent;
          }
        }
      }
    }
    if (stopping_.load()) return absl::CancelledError("the collector is stopping");
  }
  if (absl::Status sent = send(true); !sent.ok()) return sent;
  ++round->copies_repaired;
  return absl::OkStatus();
}

}  // namespace drip::collector
