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

RepairRound ReplicaRepairer::HandOver(std::chrono::steady_clock::time_point deadline) {
  Stop();  // no round runs beside it
  RepairRound round;
  if (replication_factor_ <= 1) return round;
  const std::vector<ClusterMember> members = membership_->Members();
  const std::string& self = membership_->member_name();
  std::vector<std::string> with_self;
  std::vector<std::string> others;
  std::map<std::string, const ClusterMember*> by_name;
  for (const ClusterMember& m : members) {
    with_self.push_back(m.name);
    by_name[m.name] = &m;
    if (m.name != self) others.push_back(m.name);
  }
  if (!by_name.contains(self)) return round;  // not registered: nobody would admit it
  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store_->ListHosts();
  if (!hosts.ok()) {
    Logger("collector")->warn("hand-over: cannot list hosts: {}", hosts.status().ToString());
    return round;
  }
  if (others.empty() && !hosts->empty()) {
    Logger("collector")
        ->warn("hand-over: no other member to hand {} hosts to; they stay on this disk",
               hosts->size());
    return round;
  }
  const auto steady_now = std::chrono::steady_clock::now();
  hand_over_deadline_ = std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::max(deadline - steady_now, std::chrono::steady_clock::duration{}));
  stopping_ = false;
  size_t handed = 0;
  std::vector<std::string> left;
  for (const drip::v1::HostInfo& host : *hosts) {
    if (std::chrono::steady_clock::now() >= deadline) {
      left.push_back(host.host());
      continue;
    }
    const std::vector<std::string> before = RendezvousRanking(host.host(), with_self);
    const std::vector<std::string> after = RendezvousRanking(host.host(), others);
    const auto holders = [this](const std::vector<std::string>& ranking) {
      return std::vector<std::string>(
          ranking.begin(),
          ranking.begin() + static_cast<std::ptrdiff_t>(std::min(
                                ranking.size(), static_cast<size_t>(replication_factor_))));
    };
    const std::vector<std::string> was = holders(before);
    const std::vector<std::string> will = holders(after);
    bool confirmed_stays = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const std::string& name : will) {
        if (std::find(was.begin(), was.end(), name) == was.end()) continue;
        auto found = confirmed_.find({host.host(), name});
        // A replication it missed unconfirmed it (NoteMissed).
        confirmed_stays |=
            found != confirmed_.end() && found->second == IncarnationOf(*by_name.at(name));
      }
    }
    if (confirmed_stays || will.empty()) continue;
    // The first holder to come that answers: a member stopped or hung (its lease not run
    // out yet) must not keep the host from the next.
    bool done = false;
    for (const std::string& name : will) {
      const ClusterMember& heir = *by_name.at(name);
      const uint64_t sent_before = round.samples_sent;
      if (absl::Status s = RepairCopy(host, heir, &round); !s.ok()) {
        Logger("collector")
            ->warn("hand-over: {} to {} ({}) failed: {}", host.host(), heir.name, heir.address,
                   s.ToString());
        continue;
      }
      if (round.samples_sent > sent_before) {
        Logger("collector")
            ->info("hand-over: sent {} samples of {} to {}", round.samples_sent - sent_before,
                   host.host(), heir.name);
      }
      done = true;
      break;
    }
    if (done) {
      ++handed;
    } else {
      left.push_back(host.host());
    }
  }
  hand_over_deadline_.reset();
  stopping_ = true;
  round.copies_failed = left.size();
  if (!left.empty()) {
    Logger("collector")
        ->warn(
            "hand-over: {} of {} hosts not compared with the members that go on holding them "
            "(first: {}); what only this member holds of them waits on its disk",
            left.size(), hosts->size(), left.front());
  } else {
    Logger("collector")
        ->info(
            "hand-over: {} hosts compared with the members that go on holding them, {} "
            "samples sent",
            handed, round.samples_sent);
  }
  return round;
}

std::chrono::system_clock::time_point ReplicaRepairer::CallDeadline() const {
  const auto now = std::chrono::system_clock::now();
  if (!hand_over_deadline_) return now + kCallDeadline;
  return std::min(now + kHandOverCallDeadline, *hand_over_deadline_);
}

absl::Status ReplicaRepairer::RepairCopy(const drip::v1::HostInfo& host,
                                         const ClusterMember& member, RepairRound* round) {
  const int64_t since_ms = clock_->NowMs() - retention_.count();
  auto deadline = [this] { return CallDeadline(); };
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
