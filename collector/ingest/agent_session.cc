#include "collector/ingest/agent_session.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <utility>

#include "collector/ingest/agent_identity.h"
#include "common/base/check.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

// The first required part `parts` lacks, or null.
const char* MissingPart(const AgentSessionParts& parts) {
  if (parts.validator == nullptr) return "validator";
  if (parts.store == nullptr) return "store";
  if (parts.detector == nullptr) return "detector";
  if (parts.commands == nullptr) return "commands";
  if (parts.health == nullptr) return "health";
  if (parts.metrics == nullptr) return "metrics";
  if (parts.clock == nullptr) return "clock";
  return nullptr;
}

}  // namespace

SessionReply SessionReply::Welcome(uint64_t durable_sequence) {
  SessionReply reply;
  reply.kind = Kind::kWelcome;
  reply.sequence = durable_sequence;
  return reply;
}

SessionReply SessionReply::Ack(uint64_t sequence, size_t samples, bool stored) {
  SessionReply reply;
  reply.kind = Kind::kAck;
  reply.sequence = sequence;
  reply.samples = samples;
  reply.stored = stored;
  return reply;
}

SessionReply SessionReply::None() { return SessionReply(); }

SessionReply SessionReply::Refused(Verdict verdict, std::optional<uint64_t> batch) {
  SessionReply reply;
  reply.kind = Kind::kRefused;
  reply.verdict = std::move(verdict);
  reply.refused_batch = batch;
  return reply;
}

SessionReply SessionReply::Redirect(const std::string& host, const ClusterMember& owner) {
  SessionReply reply;
  reply.kind = Kind::kRedirect;
  reply.owner_address = owner.address;
  reply.status = absl::FailedPreconditionError(fmt::format(
      "host {} belongs to collector {} at {}; connect there", host, owner.name, owner.address));
  return reply;
}

SessionReply SessionReply::StorageFailed(absl::Status status) {
  SessionReply reply;
  reply.kind = Kind::kStorageFailed;
  reply.status = std::move(status);
  return reply;
}

AgentSession::AgentSession(const AgentSessionParts& parts, CallerCredentials credentials,
                           std::string peer)
    : parts_(parts), credentials_(std::move(credentials)), peer_(std::move(peer)) {
  const char* missing = MissingPart(parts_);
  DRIP_CHECK(missing == nullptr, "AgentSessionParts::{} is null", missing);
}

Verdict AgentSession::CheckCaller() const {
  return CheckAgentCertificate(credentials_, parts_.tls, parts_.access);
}

Verdict AgentSession::CheckOrder(const drip::v1::AgentMessage& message) const {
  return parts_.validator->CheckOrder(message, hello_seen_);
}

SessionReply AgentSession::Handle(const drip::v1::AgentMessage& message, size_t wire_bytes) {
  switch (message.body_case()) {
    case drip::v1::AgentMessage::kHello:
      return HandleHello(message.hello());
    case drip::v1::AgentMessage::kBatch:
      return HandleBatch(message.batch(), wire_bytes);
    case drip::v1::AgentMessage::kCommandResult:
      return HandleCommandResult(message.command_result());
    case drip::v1::AgentMessage::BODY_NOT_SET:
      break;
  }
  DRIP_CHECK(false, "host {}: a message without a body passed CheckOrder, which refuses it", host_);
  return SessionReply::None();  // not reached
}

SessionReply AgentSession::HandleHello(const drip::v1::Hello& hello) {
  Verdict verdict = parts_.validator->ValidateHello(hello);
  if (verdict.ok()) {
    verdict = CheckAgentIdentity(credentials_, hello.host(), parts_.tls, parts_.access);
  }
  if (!verdict.ok()) return SessionReply::Refused(verdict);
  // Before anything is stored: a host this collector does not own leaves no record here.
  if (parts_.owner_elsewhere) {
    if (std::optional<ClusterMember> owner = parts_.owner_elsewhere(hello.host())) {
      return SessionReply::Redirect(hello.host(), *owner);
    }
  }

  const int64_t now_ms = parts_.clock->NowMs();
  drip::v1::HostInfo info;
  info.set_host(hello.host());
  *info.mutable_labels() = hello.labels();
  info.set_agent_version(hello.agent_version());
  info.set_memory_total_bytes(hello.memory_total_bytes());
  if (PlausibleHostMemory(hello.memory_total_bytes())) {
    parts_.detector->SetHostMemory(hello.host(), hello.memory_total_bytes());
  } else if (hello.memory_total_bytes() != 0) {
    Logger("collector")
        ->warn("host {}: hello claims {} bytes of memory; not believed (ETAs use the default)",
               hello.host(), hello.memory_total_bytes());
  }
  info.set_sampler(hello.status().sampler());
  info.set_first_seen_ms(now_ms);
  info.set_last_seen_ms(now_ms);
  if (absl::Status put = parts_.store->PutHost(info); !put.ok()) {
    return StoreFailed(put, "storing the hello");
  }
  absl::StatusOr<uint64_t> acked = parts_.store->AckedSequence(hello.host());
  if (!acked.ok()) return StoreFailed(acked.status(), "storing the hello");

  host_ = hello.host();
  host_info_ = std::move(info);
  hello_seen_ = true;
  Logger("collector")
      ->info("host {}: connected from {} (agent {}, sampler {}); durable up to sequence {}", host_,
             peer_, hello.agent_version().empty() ? "?" : hello.agent_version(),
             hello.status().sampler().empty() ? "?" : hello.status().sampler(), *acked);
  return SessionReply::Welcome(*acked);
}

SessionReply AgentSession::HandleBatch(const drip::v1::SampleBatch& batch, size_t wire_bytes) {
  const uint64_t sequence = batch.sequence();
  Verdict verdict = parts_.validator->ValidateBatch(batch, host_, wire_bytes);
  if (!verdict.ok()) return SessionReply::Refused(verdict, sequence);

  CollectorMetrics& m = *parts_.metrics;
  const drip::v1::SampleBatch& admitted = WithinQuota(batch);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<AppendResult> result = parts_.store->AppendBatch(host_, admitted);
  m.storage_write_seconds.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!result.ok()) return StoreFailed(result.status(), fmt::format("storing batch {}", sequence));

  // Only what is durable feeds the detector, so a replay after a crash sees the same.
  if (result->stored) {
    parts_.detector->ObserveBatch(host_, result->stored_part ? *result->stored_part : admitted);
    m.agent_last_batch.Add({{"host", host_}})
        .Set(static_cast<double>(parts_.clock->NowMs()) / 1000);
    m.ingest_batches.Increment();
    m.ingest_samples.Increment(static_cast<double>(result->samples_stored));
    m.ingest_bytes.Increment(static_cast<double>(wire_bytes));
  } else {
    m.ingest_duplicate_batches.Increment();
  }
  if (result->missing_batches > 0) {
    m.ingest_gap_batches.Increment(static_cast<double>(result->missing_batches));
    Logger("collector")
        ->info("host {}: {} batches missing before batch {} (the agent dropped them)", host_,
               result->missing_batches, sequence);
  }
  // Before the ack: an acknowledged batch is on every replica that could take it. A
  // duplicate goes too, so that a replica that missed it the first time catches up.
  if (parts_.replicate) parts_.replicate(host_info_, admitted);
  // A duplicate is acked too: the agent resent it only because it missed the ack.
  return SessionReply::Ack(sequence, static_cast<size_t>(batch.samples_size()), result->stored);
}

const drip::v1::SampleBatch& AgentSession::WithinQuota(const drip::v1::SampleBatch& batch) {
  if (parts_.max_components_per_host == 0) return batch;
  const std::set<std::string> over = parts_.detector->ComponentsOverQuota(
      host_, batch, static_cast<size_t>(parts_.max_components_per_host));
  if (over.empty()) return batch;
  // The rest of the batch is stored and acked as usual: the host's known components keep
  // flowing, and the agent has nothing to resend.
  within_quota_ = batch;
  within_quota_.clear_samples();
  within_quota_.clear_versions();
  int dropped = 0;
  for (const drip::v1::Sample& sample : batch.samples()) {
    if (over.count(sample.component()) == 0) {
      *within_quota_.add_samples() = sample;
    } else {
      ++dropped;
    }
  }
  for (const drip::v1::InstanceVersion& version : batch.versions()) {
    if (over.count(version.component()) == 0) *within_quota_.add_versions() = version;
  }
  parts_.metrics->ingest_over_quota_samples.Increment(dropped);
  if (!over_quota_logged_) {
    over_quota_logged_ = true;
    Logger("collector")
        ->warn(
            "host {}: has {} components (ingest.max_components_per_host); samples of new ones "
            "such as '{}' are not stored (drip_ingest_over_quota_samples_total)",
            host_, parts_.max_components_per_host, over.begin()->substr(0, 128));
  }
  return within_quota_;
}

SessionReply AgentSession::HandleCommandResult(const drip::v1::CommandResult& result) {
  if (!parts_.commands->Deliver(host_, result)) {
    Logger("collector")
        ->info("host {}: result for unknown or expired command '{}' (ok={}); ignored", host_,
               result.command_id(), result.ok());
  }
  return SessionReply::None();
}

SessionReply AgentSession::StoreFailed(const absl::Status& error, const std::string& what) {
  parts_.metrics->storage_write_errors.Increment();
  // What the store says, not this one error: a write that failed just before a
  // recovery must not mark the recovered store unhealthy again.
  parts_.health->Update(parts_.store->WriteState());
  // StorageHealth logs the transition once; per-stream detail only at debug.
  Logger("collector")
      ->debug("host {}: {} failed: {}", host_.empty() ? "(no hello)" : host_, what,
              std::string(error.message()));
  return SessionReply::StorageFailed(absl::UnavailableError(
      fmt::format("collector could not store data ({} failed: {}); resend after reconnecting", what,
                  std::string(error.message()))));
}

}  // namespace drip::collector
