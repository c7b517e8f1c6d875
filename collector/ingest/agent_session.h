// AgentSession: what the collector does with each message of one agent's stream, without
// gRPC (docs/collector.md, "Wire behaviour"). The stream reactor (agent_stream_reactor.h)
// moves bytes, threads and flow control and hands every message here; the message
// fuzzer (agent_message_fuzzer.cc) drives the very same session without a network.
//
//   Hello:          validated, the client's identity checked against the host it names
//                   (agent_identity.h); a host another collector of the fleet owns is
//                   sent there (kRedirect); else the host stored and answered with a
//                   Welcome that says how far the host's batches are durable.
//   SampleBatch:    validated, appended to the store, and once durable fed to the
//                   detector (DetectorFeed), counted and copied to the host's replicas
//                   (in a cluster); answered with an Ack (duplicates too).
//   CommandResult:  handed to the command router, which gives it to whoever sent the
//                   command (a snapshot, a mitigation, a relay); never answered.
// A refusal or a store failure ends the stream; the session says with which status.
//
// Not thread-safe: the reactor hands messages over one at a time (the next is read only
// once this one is done), which orders every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "collector/access/access_policy.h"
#include "collector/cluster/cluster_membership.h"
#include "collector/collector_metrics.h"
#include "collector/ingest/command_router.h"
#include "collector/ingest/sample_validator.h"
#include "collector/pipeline/detector_feed.h"
#include "collector/storage/series_store.h"
#include "collector/storage/storage_health.h"
#include "common/base/clock.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

// What every session of a collector works with; each must outlive the sessions. Every
// pointer but `access` is required: a session checks them when it is made.
struct AgentSessionParts {
  const SampleValidator* validator = nullptr;
  // With TLS a hello must name a host the client certificate names; `access` (may be
  // null) names the dripctl principals, whose certificates are refused as agents.
  bool tls = false;
  const AccessPolicy* access = nullptr;
  SeriesStore* store = nullptr;
  DetectorFeed* detector = nullptr;
  CommandRouter* commands = nullptr;
  StorageHealth* health = nullptr;
  CollectorMetrics* metrics = nullptr;
  const Clock* clock = nullptr;
  // ingest.max_components_per_host (0: no limit): samples of components a host adds past
  // it are not stored, and counted.
  uint64_t max_components_per_host = 0;
  // Collectors sharing a fleet (docs/cluster.md): the member that owns `host` when it is
  // another one, else nullopt (this collector owns it, or cannot tell). Unset: standalone.
  std::function<std::optional<ClusterMember>(const std::string& host)> owner_elsewhere;
  // Replication (docs/cluster.md): hands a batch this collector stored, or had already, to
  // the host's replicas, and returns once they have it or have failed to take it in time
  // (it never fails the batch: the owner's copy is durable). Unset: standalone, or a
  // replication factor of 1.
  std::function<void(const drip::v1::HostInfo& host, const drip::v1::SampleBatch& batch)> replicate;
};

// What the stream does after a message.
struct SessionReply {
  enum class Kind {
    kWelcome,        // send a Welcome with `sequence` (durable so far), read on
    kAck,            // ack `sequence` and read on (after `samples` more against the rate)
    kNone,           // nothing to send; read on
    kRefused,        // finish with `verdict.status`; count and log it as a refusal
    kStorageFailed,  // finish with `status` (UNAVAILABLE): the agent resends later
    kRedirect,       // finish with `status` (FAILED_PRECONDITION) naming `owner_address`
  };
  Kind kind = Kind::kNone;
  uint64_t sequence = 0;
  size_t samples = 0;
  bool stored = false;                    // kAck: the batch was new (not a resent duplicate)
  Verdict verdict;                        // kRefused
  std::optional<uint64_t> refused_batch;  // kRefused of a batch: the agent drops it
  absl::Status status;                    // kStorageFailed, kRedirect
  std::string owner_address;              // kRedirect

  static SessionReply Welcome(uint64_t durable_sequence);
  static SessionReply Ack(uint64_t sequence, size_t samples, bool stored);
  static SessionReply None();
  static SessionReply Refused(Verdict verdict, std::optional<uint64_t> batch = std::nullopt);
  static SessionReply StorageFailed(absl::Status status);
  static SessionReply Redirect(const std::string& host, const ClusterMember& owner);
};

class AgentSession {
 public:
  // `peer` is gRPC's peer address; `credentials` what the TLS handshake proved.
  AgentSession(const AgentSessionParts& parts, CallerCredentials credentials, std::string peer);

  // Whether the caller may stream as an agent at all (CheckAgentCertificate): asked when
  // the stream opens, before any message is read.
  Verdict CheckCaller() const;

  // Protocol order, checked before the message is handed on: a Hello first, and once.
  Verdict CheckOrder(const drip::v1::AgentMessage& message) const;

  // One message that passed CheckOrder; `wire_bytes` is its serialized size.
  SessionReply Handle(const drip::v1::AgentMessage& message, size_t wire_bytes);

  // The host the hello named; empty before an accepted hello.
  const std::string& host() const { return host_; }
  const std::string& peer() const { return peer_; }

 private:
  SessionReply HandleHello(const drip::v1::Hello& hello);
  SessionReply HandleBatch(const drip::v1::SampleBatch& batch, size_t wire_bytes);
  SessionReply HandleCommandResult(const drip::v1::CommandResult& result);
  // `batch` without the samples (and versions) of components over the host's quota,
  // counted; `batch` itself when there are none. Valid until the next call.
  const drip::v1::SampleBatch& WithinQuota(const drip::v1::SampleBatch& batch);
  // Counts the failure, brings StorageHealth in step with the store, and says how the
  // stream ends.
  SessionReply StoreFailed(const absl::Status& error, const std::string& what);

  const AgentSessionParts parts_;
  const CallerCredentials credentials_;
  bool over_quota_logged_ = false;
  drip::v1::SampleBatch within_quota_;  // what WithinQuota returned last, when it filtered
  const std::string peer_;
  std::string host_;
  drip::v1::HostInfo host_info_;  // what the hello said, for the replicas
  bool hello_seen_ = false;
};

}  // namespace drip::collector
