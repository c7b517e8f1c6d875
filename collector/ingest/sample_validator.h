// SampleValidator: decides whether the collector accepts what an agent sends, before
// anything touches the store. A refusal carries the status the stream is finished with
// (its message says exactly what is wrong, so that an operator reading the agent's log
// can fix it) and a short machine reason that labels drip_ingest_rejected_total.
//
// Reasons and codes (docs/collector.md lists them for operators):
//   INVALID_ARGUMENT    empty_host, empty_message, hello_missing, duplicate_hello,
//                       zero_sequence, invalid_gap, empty_component, missing_memory,
//                       future_timestamp, expired_timestamp, invalid_version
//   PERMISSION_DENIED   host_mismatch (a sample names a host other than the stream's),
//                       host_identity_mismatch (the hello names a host the client
//                       certificate does not), user_certificate (the certificate is a
//                       dripctl principal's, not an agent's)
//   UNAUTHENTICATED     unauthenticated (a TLS collector got no client certificate)
//   RESOURCE_EXHAUSTED  oversized, too_many_samples
//
// Stateless apart from its options and clock: every method is const and thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/base/clock.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

// Machine reasons, the values of drip_ingest_rejected_total's "reason" label.
namespace reject_reason {
inline constexpr std::string_view kEmptyHost = "empty_host";
inline constexpr std::string_view kHostMismatch = "host_mismatch";
inline constexpr std::string_view kFutureTimestamp = "future_timestamp";
inline constexpr std::string_view kExpiredTimestamp = "expired_timestamp";
inline constexpr std::string_view kEmptyComponent = "empty_component";
inline constexpr std::string_view kMissingMemory = "missing_memory";
inline constexpr std::string_view kTooManySamples = "too_many_samples";
inline constexpr std::string_view kZeroSequence = "zero_sequence";
inline constexpr std::string_view kInvalidGap = "invalid_gap";
inline constexpr std::string_view kOversized = "oversized";
inline constexpr std::string_view kHelloMissing = "hello_missing";
inline constexpr std::string_view kDuplicateHello = "duplicate_hello";
inline constexpr std::string_view kEmptyMessage = "empty_message";
inline constexpr std::string_view kInvalidVersion = "invalid_version";
// Checked by CheckAgentIdentity (agent_identity.h).
inline constexpr std::string_view kUnauthenticated = "unauthenticated";
inline constexpr std::string_view kHostIdentityMismatch = "host_identity_mismatch";
inline constexpr std::string_view kUserCertificate = "user_certificate";
// A string longer, or a map larger, than any agent sends (limits in sample_validator.cc).
inline constexpr std::string_view kFieldTooLong = "field_too_long";
// Every reason above, so that metrics can show each at zero before it first happens.
const std::vector<std::string_view>& All();
}  // namespace reject_reason

// The outcome of a check: ok(), or the status to finish the stream with and its reason.
struct Verdict {
  absl::Status status;
  std::string_view reason;  // empty when ok(); otherwise one of reject_reason::k*

  bool ok() const { return status.ok(); }
  static Verdict Accept() { return {}; }
};

struct SampleValidatorOptions {
  // Largest serialized message accepted (grpc.max_message_bytes).
  uint64_t max_message_bytes = 16 * 1024 * 1024;
  uint64_t max_samples_per_batch = 100000;
  // How far ahead of the collector's clock a sample may be (ingest.max_future_skew).
  std::chrono::milliseconds max_future_skew = std::chrono::minutes(5);
  // Samples older than this would be deleted at once (storage.retention).
  std::chrono::milliseconds retention = std::chrono::hours(24 * 14);
};

// Whether a hello's memory_total_bytes is one a Linux host could have (64 MiB to 1 PiB):
// every ETA to OOM of the host's suspects is computed from it, and automatic policies act
// on the urgent ones first, so a claim no host makes is ignored, not believed.
bool PlausibleHostMemory(uint64_t bytes);

class SampleValidator {
 public:
  // `clock` must outlive the validator.
  SampleValidator(SampleValidatorOptions options, const Clock* clock);

  // Protocol order: the first message on a stream is a Hello, and only the first.
  // `hello_seen` says whether this stream already had one.
  Verdict CheckOrder(const drip::v1::AgentMessage& message, bool hello_seen) const;

  Verdict ValidateHello(const drip::v1::Hello& hello) const;

  // Checks `batch` received on the stream of `stream_host`; `wire_bytes` is the
  // serialized size of the AgentMessage that carried it. Stops at the first problem.
  Verdict ValidateBatch(const drip::v1::SampleBatch& batch, const std::string& stream_host,
                        size_t wire_bytes) const;

  const SampleValidatorOptions& options() const { return options_; }

 private:
  Verdict ValidateSample(const drip::v1::SampleBatch& batch, int index,
                         const std::string& stream_host, int64_t now_ms) const;
  Verdict ValidateVersion(const drip::v1::SampleBatch& batch, int index) const;
  // The agent's status strings, from a hello or a batch (`where` names which).
  Verdict ValidateStatus(const drip::v1::AgentStatus& status, std::string_view where) const;

  SampleValidatorOptions options_;
  const Clock* clock_;
};

}  // namespace drip::collector
