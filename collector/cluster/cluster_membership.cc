#include "collector/cluster/cluster_membership.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "collector/cluster/rendezvous.h"
#include "common/base/clock.h"
#include "common/daemon/listen_address.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::collector {
namespace {

// What a member publishes about itself, as JSON: readable with `etcdctl get`.
std::string EncodeMember(const ClusterMember& m) {
  nlohmann::json j;
  j["name"] = m.name;
  j["address"] = m.address;
  j["started_ms"] = m.started_ms;
  j["hosts_connected"] = m.hosts_connected;
  return j.dump();
}

// A member publishes a few hundred bytes; anything much larger is not one.
constexpr size_t kMaxMemberRecordBytes = 4096;

}  // namespace

absl::StatusOr<ClusterMember> DecodeMemberRecord(std::string_view members_prefix,
                                                 const EtcdKeyValue& kv, int64_t now_ms) {
  std::string_view key = kv.key;
  if (!key.starts_with(members_prefix) || key.size() == members_prefix.size() ||
      key.substr(members_prefix.size()).find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError("not a member key");
  }
  const std::string name(key.substr(members_prefix.size()));
  if (kv.lease == 0) {
    return absl::InvalidArgumentError("no lease: a member's record lives on its lease");
  }
  if (kv.value.size() > kMaxMemberRecordBytes) {
    return absl::InvalidArgumentError(
        fmt::format("{} bytes, more than the {} a member record may have", kv.value.size(),
                    kMaxMemberRecordBytes));
  }
  const nlohmann::json j = nlohmann::json::parse(kv.value, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("not a JSON object");
  auto string_field = [&](const char* field) -> const nlohmann::json* {
    auto it = j.find(field);
    return it != j.end() && it->is_string() ? &*it : nullptr;
  };
  const nlohmann::json* recorded_name = string_field("name");
  if (recorded_name == nullptr || recorded_name->get<std::string>() != name) {
    return absl::InvalidArgumentError("its name is not its key's");
  }
  const nlohmann::json* address = string_field("address");
  if (address == nullptr) return absl::InvalidArgumentError("no address");
  absl::StatusOr<ListenAddress> parsed = ListenAddress::Parse(address->get<std::string>());
  if (!parsed.ok() || parsed->port == 0) {
    return absl::InvalidArgumentError("its address is not a TCP host:port");
  }
  auto started = j.find("started_ms");
  if (started == j.end() || !started->is_number_integer() || started->get<int64_t>() <= 0 ||
      started->get<int64_t>() > now_ms + kMaxEtcdClockSkewMs) {
    return absl::InvalidArgumentError("its start time is missing or in the future");
  }
  auto hosts = j.find("hosts_connected");
  if (hosts != j.end() && !hosts->is_number_unsigned()) {
    return absl::InvalidArgumentError("hosts_connected is not a count");
  }
  ClusterMember m;
  m.name = name;
  m.address = address->get<std::string>();
  m.started_ms = started->get<int64_t>();
  m.hosts_connected = hosts == j.end() ? 0 : hosts->get<uint64_t>();
  m.lease = kv.lease;
  return m;
}

absl::StatusOr<std::unique_ptr<ClusterMembership>> ClusterMembership::Join(
    const ClusterOptions& options, std::function<uint64_t()> hosts_connected,
    CollectorMetrics* metrics) {
  if (options.member_name.empty()) {
    return absl::InvalidArgumentError("cluster.member_name: must not be empty");
  }
  if (options.advertise_address.empty()) {
    return absl::InvalidArgumentError("cluster.advertise_address: must not be empty");
  }
  absl::StatusOr<std::unique_ptr<EtcdClient>> client = EtcdClient::Create(options.etcd);
  if (!client.ok()) return client.status();
  std::unique_ptr<ClusterMembership> membership(
      new ClusterMembership(options, std::move(*client), std::move(hosts_connected), metrics));
  membership->RunRound();
  membership->loop_.Start(options.lease_ttl / 3);
  return membership;
}

ClusterMembership::ClusterMembership(ClusterOptions options, std::unique_ptr<EtcdClient> client,
                                     std::function<uint64_t()> hosts_connected,
                                     CollectorMetrics* metrics)
    : options_(std::move(options)),
      client_(std::move(client)),
      hosts_connected_(std::move(hosts_connected)),
      metrics_(metrics),
      started_ms_(SystemClock::Get()->NowMs()),
      loop_("drip-cluster", [this] {
        RunRound();
        return std::chrono::duration_cast<LoopThread::Duration>(options_.lease_ttl / 3);
      }) {}

ClusterMembership::~ClusterMembership() { Leave(); }

void ClusterMembership::Leave() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_) return;
    left_ = true;
  }
  loop_.Stop();
  // With etcd away the revoke would only wait out its deadline on every endpoint.
  if (lease_ != 0 && etcd_up_.load()) {
    // Best effort: without it the others see this member go when the lease expires.
    if (absl::Status revoked = client_->RevokeLease(lease_); !revoked.ok()) {
      Logger("collector")
          ->info("cluster: could not revoke lease {:x} on leaving ({}); it expires in {} s", lease_,
                 std::string(revoked.message()), options_.lease_ttl.count());
    }
    lease_ = 0;
  }
}

std::string ClusterMembership::MemberKey() const {
  return options_.prefix + "members/" + options_.member_name;
}

void ClusterMembership::NoteEtcd(const absl::Status& status) {
  const bool up = status.ok();
  const int was = etcd_state_.exchange(up ? 1 : 0);
  etcd_up_.store(up);
  if (metrics_ != nullptr) {
    metrics_->cluster_etcd_up.Set(up ? 1 : 0);
    if (!up) metrics_->cluster_etcd_errors.Increment();
  }
  if (was != 0 && !up) {
    Logger("collector")
        ->warn(
            "cluster: etcd unavailable ({}); serving what this collector holds, membership "
            "frozen until it answers",
            std::string(status.message()));
  } else if (was != 1 && up) {
    Logger("collector")
        ->info("cluster: etcd answers at {}; member {} registered", client_->current_endpoint(),
               options_.member_name);
  }
}

absl::Status ClusterMembership::Register() {
  ClusterMember self;
  self.name = options_.member_name;
  self.address = options_.advertise_address;
  self.started_ms = started_ms_;
  self.hosts_connected = hosts_connected_ ? hosts_connected_() : 0;
  if (lease_ != 0) {
    absl::StatusOr<int64_t> ttl = client_->KeepAliveOnce(lease_);
    if (ttl.ok()) {
      // The published host count follows along; the key stays on the lease.
      absl::StatusOr<int64_t> put = client_->Put(MemberKey(), EncodeMember(self), lease_);
      return put.ok() ? absl::OkStatus() : put.status();
    }
    if (ttl.status().code() != absl::StatusCode::kNotFound) return ttl.status();
    // Expired while etcd was away (or this process stalled): register afresh.
    Logger("collector")
        ->warn("cluster: lease {:x} expired; registering {} again", lease_, options_.member_name);
    lease_ = 0;
  }
  absl::StatusOr<int64_t> lease = client_->GrantLease(options_.lease_ttl);
  if (!lease.ok()) return lease.status();
  absl::StatusOr<int64_t> put = client_->Put(MemberKey(), EncodeMember(self), *lease);
  if (!put.ok()) return put.status();
  lease_ = *lease;
  return absl::OkStatus();
}

absl::Status ClusterMembership::RefreshMembers() {
  absl::StatusOr<std::vector<EtcdKeyValue>> kvs = client_->GetPrefix(options_.prefix + "members/");
  if (!kvs.ok()) return kvs.status();
  std::vector<ClusterMember> members;
  std::set<std::pair<std::string, int64_t>> ignored;
  const std::string members_prefix = options_.prefix + "members/";
  const int64_t now_ms = SystemClock::Get()->NowMs();
  for (const EtcdKeyValue& kv : *kvs) {
    absl::StatusOr<ClusterMember> m = DecodeMemberRecord(members_prefix, kv, now_ms);
    if (m.ok()) {
      members.push_back(std::move(*m));
      continue;
    }
    // Once per record version, not every round: a record that is not a member's is news
    // to an operator (only collectors should be able to write there), but not every second.
    if (!ignored_records_.contains({kv.key, kv.mod_revision})) {
      Logger("collector")
          ->warn("cluster: ignoring the record at {} in etcd: {}", kv.key.substr(0, 256),
                 std::string(m.status().message()));
    }
    ignored.emplace(kv.key, kv.mod_revision);
  }
  ignored_records_ = std::move(ignored);
  if (metrics_ != nullptr) {
    metrics_->cluster_member_records_ignored.Set(static_cast<double>(ignored_records_.size()));
  }
  std::sort(members.begin(), members.end(),
            [](const ClusterMember& a, const ClusterMember& b) { return a.name < b.name; });
  if (metrics_ != nullptr) metrics_->cluster_members.Set(static_cast<double>(members.size()));
  std::function<void()> changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool same =
        std::equal(members.begin(), members.end(), members_.begin(), members_.end(),
                   [](const ClusterMember& a, const ClusterMember& b) { return a.name == b.name; });
    members_ = std::move(members);
    if (!same) changed = on_members_changed_;
  }
  // Outside mu_: the callback asks OwnerElsewhere, which takes it.
  if (changed) changed();
  return absl::OkStatus();
}

void ClusterMembership::SetOnMembersChanged(std::function<void()> callback) {
  std::lock_guard<std::mutex> lock(mu_);
  on_members_changed_ = std::move(callback);
}

void ClusterMembership::Share(
    std::string kind, int every_rounds, std::function<std::string()> produce,
    std::function<void(const std::map<std::string, std::string>&)> consume) {
  std::lock_guard<std::mutex> lock(mu_);
  shares_.push_back(std::make_unique<SharedValue>(SharedValue{
      std::move(kind), std::max(1, every_rounds), std::move(produce), std::move(consume), "", 0}));
}

absl::Status ClusterMembership::RunShares() {
  std::vector<SharedValue*> due;
  std::set<std::string> others;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& share : shares_) {
      if (rounds_ % static_cast<uint64_t>(share->every_rounds) == 0) due.push_back(share.get());
    }
    for (const ClusterMember& m : members_) {
      if (m.name != options_.member_name) others.insert(m.name);
    }
  }
  // Shares are never removed, and only this thread runs them: the pointers stay valid.
  for (SharedValue* share : due) {
    const std::string prefix = options_.prefix + share->kind + "/";
    std::string value = share->produce();
    if (value != share->last_put || lease_ != share->last_lease) {
      absl::StatusOr<int64_t> put = client_->Put(prefix + options_.member_name, value, lease_);
      if (!put.ok()) return put.status();
      share->last_put = std::move(value);
      share->last_lease = lease_;
    }
    absl::StatusOr<std::vector<EtcdKeyValue>> kvs = client_->GetPrefix(prefix);
    if (!kvs.ok()) return kvs.status();
    std::map<std::string, std::string> theirs;
    for (EtcdKeyValue& kv : *kvs) {
      std::string member = kv.key.substr(prefix.size());
      // Only live members: a share whose lease has not expired yet after its member left
      // (or a stale key of a name no longer registered) is not counted.
      if (others.contains(member)) theirs.emplace(std::move(member), std::move(kv.value));
    }
    share->consume(theirs);
  }
  return absl::OkStatus();
}

void ClusterMembership::RunRound() {
  absl::Status status = Register();
  if (status.ok()) status = RefreshMembers();
  if (status.ok()) status = RunShares();
  ++rounds_;
  NoteEtcd(status);
}

std::vector<ClusterMember> ClusterMembership::Members() const {
  std::lock_guard<std::mutex> lock(mu_);
  return members_;
}

std::optional<ClusterMember> ClusterMembership::OwnerElsewhere(const std::string& host) const {
  std::vector<ClusterMember> members = Members();
  std::vector<std::string> names;
  bool listed = false;
  for (const ClusterMember& m : members) {
    names.push_back(m.name);
    listed = listed || m.name == options_.member_name;
  }
  // Not (or no longer) in the list it reads: it cannot tell who owns what, and serves.
  if (!listed) return std::nullopt;
  const std::string owner = RendezvousOwner(host, names);
  for (ClusterMember& m : members) {
    if (m.name == owner && owner != options_.member_name && !m.address.empty()) {
      return std::move(m);
    }
  }
  return std::nullopt;
}

std::vector<ClusterMember> ClusterMembership::OthersByPreference(const std::string& host) const {
  std::map<std::string, ClusterMember> others;
  for (ClusterMember& m : Members()) {
    if (m.name != options_.member_name && !m.address.empty()) others[m.name] = std::move(m);
  }
  std::vector<std::string> names;
  for (const auto& [name, m] : others) names.push_back(name);
  std::vector<ClusterMember> ranked;
  for (const std::string& name : RendezvousRanking(host, std::move(names))) {
    ranked.push_back(std::move(others[name]));
  }
  return ranked;
}

}  // namespace drip::collector
