#include "collector/ingest/sample_validator.h"

#include <ctime>

#include "common/base/duration.h"
#include "common/rpc/agent_message_limits.h"
#include "fmt/chrono.h"
#include "fmt/format.h"

namespace drip::collector {
namespace reject_reason {

const std::vector<std::string_view>& All() {
  static const std::vector<std::string_view> all = {
      kEmptyHost,       kHostMismatch,   kFutureTimestamp, kExpiredTimestamp, kEmptyComponent,
      kMissingMemory,   kTooManySamples, kZeroSequence,    kInvalidGap,       kOversized,
      kHelloMissing,    kDuplicateHello, kEmptyMessage,    kUnauthenticated,  kHostIdentityMismatch,
      kUserCertificate, kInvalidVersion, kFieldTooLong};
  return all;
}

}  // namespace reject_reason

namespace {

// A GNU build-id is a 20-byte SHA-1 by default (ld --build-id=md5: 16, uuid: 16); 64
// bytes is room for any scheme. The agent cuts labels at 128 bytes.
constexpr size_t kMaxBuildIdHexChars = 128;
constexpr size_t kMaxVersionLabelBytes = 128;
// Year 9999's last millisecond: beyond it (and before the epoch) a calendar date says
// less than the raw number does.
constexpr int64_t kMaxFormattableMs = 253402300799999;

std::string FormatTimestamp(int64_t ms) {
  if (ms < 0 || ms > kMaxFormattableMs) return fmt::format("{}ms since the epoch", ms);
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", tm);
}

// "4000 days", "3 hours", "12 seconds": how far off a timestamp is, rounded down.
// Takes a double because the distance between two arbitrary int64 timestamps may not
// fit in an int64.
std::string HumanSpan(double ms) {
  struct Unit {
    double ms;
    const char* one;
    const char* many;
  };
  static constexpr Unit kUnits[] = {{86'400'000.0, "day", "days"},
                                    {3'600'000.0, "hour", "hours"},
                                    {60'000.0, "minute", "minutes"},
                                    {1000.0, "second", "seconds"}};
  for (const Unit& u : kUnits) {
    if (ms >= u.ms) {
      double n = static_cast<double>(static_cast<uint64_t>(ms / u.ms));
      return fmt::format("{:.0f} {}", n, n == 1 ? u.one : u.many);
    }
  }
  return fmt::format("{:.0f} ms", ms);
}

Verdict Reject(absl::StatusCode code, std::string_view reason, std::string message) {
  return Verdict{absl::Status(code, message), reason};
}

// What a refusal quotes of a string the agent sent: enough to recognise it, never all of
// a field that may be refused for its length (the message goes back as the gRPC status).
std::string Quote(std::string_view text) {
  constexpr size_t kQuoted = 64;
  if (text.size() <= kQuoted) return std::string(text);
  return fmt::format("{}... ({} bytes)", text.substr(0, kQuoted), text.size());
}

Verdict TooLong(std::string_view what, size_t bytes, size_t limit) {
  return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kFieldTooLong,
                fmt::format("{} has {} bytes, more than {}", what, bytes, limit));
}

}  // namespace

SampleValidator::SampleValidator(SampleValidatorOptions options, const Clock* clock)
    : options_(options), clock_(clock) {}

Verdict SampleValidator::CheckOrder(const drip::v1::AgentMessage& message, bool hello_seen) const {
  using drip::v1::AgentMessage;
  switch (message.body_case()) {
    case AgentMessage::kHello:
      if (hello_seen) {
        return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kDuplicateHello,
                      "a second hello on one stream; open a new stream to say hello again");
      }
      return Verdict::Accept();
    case AgentMessage::kBatch:
    case AgentMessage::kCommandResult:
      if (!hello_seen) {
        return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kHelloMissing,
                      message.has_batch()
                          ? fmt::format("batch {} arrived before hello; the first message on "
                                        "a stream must be a hello",
                                        message.batch().sequence())
                          : "a command result arrived before hello; the first message on a "
                            "stream must be a hello");
      }
      return Verdict::Accept();
    case AgentMessage::BODY_NOT_SET:
      break;
  }
  return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kEmptyMessage,
                "message has no body (hello, batch or command_result)");
}

Verdict SampleValidator::ValidateHello(const drip::v1::Hello& hello) const {
  if (hello.host().empty()) {
    return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kEmptyHost,
                  "hello: host is empty; set the agent's host name");
  }
  if (hello.host().size() > agent_limits::kMaxHostBytes) {
    return TooLong("hello: host", hello.host().size(), agent_limits::kMaxHostBytes);
  }
  if (static_cast<size_t>(hello.labels_size()) > agent_limits::kMaxHelloLabels) {
    return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kFieldTooLong,
                  fmt::format("hello: {} labels, more than {}; keep agent.yaml's labels to a "
                              "few",
                              hello.labels_size(), agent_limits::kMaxHelloLabels));
  }
  for (const auto& [key, value] : hello.labels()) {
    if (key.size() > agent_limits::kMaxLabelKeyBytes) {
      return TooLong("hello: a label's key", key.size(), agent_limits::kMaxLabelKeyBytes);
    }
    if (value.size() > agent_limits::kMaxLabelValueBytes) {
      return TooLong(fmt::format("hello: label '{}'", Quote(key)), value.size(),
                     agent_limits::kMaxLabelValueBytes);
    }
  }
  if (hello.agent_version().size() > agent_limits::kMaxStatusTextBytes) {
    return TooLong("hello: agent_version", hello.agent_version().size(),
                   agent_limits::kMaxStatusTextBytes);
  }
  return ValidateStatus(hello.status(), "hello");
}

Verdict SampleValidator::ValidateStatus(const drip::v1::AgentStatus& status,
                                        std::string_view where) const {
  if (status.sampler().size() > agent_limits::kMaxStatusTextBytes) {
    return TooLong(fmt::format("{}: status.sampler", where), status.sampler().size(),
                   agent_limits::kMaxStatusTextBytes);
  }
  if (status.sampler_fallback_reason().size() > agent_limits::kMaxStatusTextBytes) {
    return TooLong(fmt::format("{}: status.sampler_fallback_reason", where),
                   status.sampler_fallback_reason().size(), agent_limits::kMaxStatusTextBytes);
  }
  return Verdict::Accept();
}

Verdict SampleValidator::ValidateBatch(const drip::v1::SampleBatch& batch,
                                       const std::string& stream_host, size_t wire_bytes) const {
  // Size first: the cheapest check, and the one that matters most for memory.
  if (wire_bytes > options_.max_message_bytes) {
    return Reject(absl::StatusCode::kResourceExhausted, reject_reason::kOversized,
                  fmt::format("batch {}: {} ({} bytes) exceeds grpc.max_message_bytes ({}); "
                              "send smaller batches",
                              batch.sequence(), FormatBytes(wire_bytes), wire_bytes,
                              FormatBytes(options_.max_message_bytes)));
  }
  if (batch.sequence() == 0) {
    return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kZeroSequence,
                  "batch with sequence 0: sequences start at 1 (0 means \"nothing stored\")");
  }
  if (batch.first_dropped_sequence() != 0 && batch.first_dropped_sequence() >= batch.sequence()) {
    return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kInvalidGap,
                  fmt::format("batch {}: first_dropped_sequence {} is not below the batch's "
                              "own sequence",
                              batch.sequence(), batch.first_dropped_sequence()));
  }
  if (static_cast<uint64_t>(batch.samples_size()) > options_.max_samples_per_batch) {
    return Reject(
        absl::StatusCode::kResourceExhausted, reject_reason::kTooManySamples,
        fmt::format("batch {}: {} samples exceed ingest.max_samples_per_batch ({})",
                    batch.sequence(), batch.samples_size(), options_.max_samples_per_batch));
  }
  if (batch.has_status()) {
    Verdict v = ValidateStatus(batch.status(), fmt::format("batch {}", batch.sequence()));
    if (!v.ok()) return v;
  }
  int64_t now_ms = clock_->NowMs();
  for (int i = 0; i < batch.samples_size(); ++i) {
    Verdict v = ValidateSample(batch, i, stream_host, now_ms);
    if (!v.ok()) return v;
  }
  // An agent names each instance once, in the batch of its first sample: more versions
  // than samples is not what an agent sends.
  if (batch.versions_size() > batch.samples_size()) {
    return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kInvalidVersion,
                  fmt::format("batch {}: {} instance versions for {} samples; an agent sends "
                              "one per instance it samples",
                              batch.sequence(), batch.versions_size(), batch.samples_size()));
  }
  for (int i = 0; i < batch.versions_size(); ++i) {
    if (!batch.versions(i).host().empty() && batch.versions(i).host() != stream_host) {
      return Reject(absl::StatusCode::kPermissionDenied, reject_reason::kHostMismatch,
                    fmt::format("batch {} version {}: host '{}' is not this stream's host '{}'",
                                batch.sequence(), i, Quote(batch.versions(i).host()), stream_host));
    }
    Verdict v = ValidateVersion(batch, i);
    if (!v.ok()) return v;
  }
  return Verdict::Accept();
}

Verdict SampleValidator::ValidateVersion(const drip::v1::SampleBatch& batch, int index) const {
  const drip::v1::InstanceVersion& v = batch.versions(index);
  auto refuse = [&](std::string_view what) {
    return Reject(
        absl::StatusCode::kInvalidArgument, reject_reason::kInvalidVersion,
        fmt::format("batch {} version {} (component '{}', instance '{}'): {}", batch.sequence(),
                    index, Quote(v.component()), Quote(v.instance()), what));
  };
  if (v.component().empty()) return refuse("component is empty");
  if (v.instance().empty()) return refuse("instance is empty");
  if (v.component().size() > agent_limits::kMaxComponentBytes ||
      v.instance().size() > agent_limits::kMaxInstanceBytes) {
    return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kFieldTooLong,
                  fmt::format("batch {} version {}: component or instance longer than {} / {} "
                              "bytes",
                              batch.sequence(), index, agent_limits::kMaxComponentBytes,
                              agent_limits::kMaxInstanceBytes));
  }
  if (v.build_id().size() > kMaxBuildIdHexChars) {
    return refuse(fmt::format("build_id has {} characters, more than {}", v.build_id().size(),
                              kMaxBuildIdHexChars));
  }
  for (char c : v.build_id()) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return refuse("build_id is not lower-case hex");
    }
  }
  if (v.label().size() > kMaxVersionLabelBytes) {
    return refuse(
        fmt::format("label has {} bytes, more than {}", v.label().size(), kMaxVersionLabelBytes));
  }
  return Verdict::Accept();
}

Verdict SampleValidator::ValidateSample(const drip::v1::SampleBatch& batch, int index,
                                        const std::string& stream_host, int64_t now_ms) const {
  const drip::v1::Sample& s = batch.samples(index);
  // Formatted only for a refusal: every sample of every batch passes through here, and
  // building the string up front cost about 5 % of the collector's CPU under a
  // thousand agents (bench/fleet_load_bench.cc).
  auto where = [&] { return fmt::format("batch {} sample {}", batch.sequence(), index); };
  if (!s.host().empty() && s.host() != stream_host) {
    return Reject(absl::StatusCode::kPermissionDenied, reject_reason::kHostMismatch,
                  fmt::format("{}: host '{}' is not this stream's host '{}'; an agent may only "
                              "send its own host's samples",
                              where(), Quote(s.host()), stream_host));
  }
  if (s.component().empty()) {
    return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kEmptyComponent,
                  fmt::format("{}: component is empty", where()));
  }
  if (s.component().size() > agent_limits::kMaxComponentBytes) {
    return TooLong(fmt::format("{}: component", where()), s.component().size(),
                   agent_limits::kMaxComponentBytes);
  }
  if (s.instance().size() > agent_limits::kMaxInstanceBytes) {
    return TooLong(fmt::format("{} (component '{}'): instance", where(), Quote(s.component())),
                   s.instance().size(), agent_limits::kMaxInstanceBytes);
  }
  if (s.memory_case() == drip::v1::Sample::MEMORY_NOT_SET) {
    return Reject(absl::StatusCode::kInvalidArgument, reject_reason::kMissingMemory,
                  fmt::format("{} (component '{}'): no memory figures (process, cgroup or slab)",
                              where(), s.component()));
  }
  const int64_t ts = s.timestamp_ms();
  const double delta_ms = static_cast<double>(ts) - static_cast<double>(now_ms);
  if (delta_ms > static_cast<double>(options_.max_future_skew.count())) {
    // UNAVAILABLE, not a refusal: the agent keeps the batch and sends it again later. Which
    // clock is wrong cannot be told from here, and a collector clock that lags would
    // otherwise have every agent drop every batch; a sample that was ahead is taken once
    // the collector's clock has caught up with it.
    return Reject(absl::StatusCode::kUnavailable, reject_reason::kFutureTimestamp,
                  fmt::format("{}: timestamp {} is {} ahead of the collector's clock (max skew "
                              "{}); check the host's and the collector's clocks; the agent keeps "
                              "the batch and sends it again",
                              where(), FormatTimestamp(ts), HumanSpan(delta_ms),
                              FormatDuration(options_.max_future_skew)));
  }
  if (-delta_ms > static_cast<double>(options_.retention.count())) {
    return Reject(
        absl::StatusCode::kInvalidArgument, reject_reason::kExpiredTimestamp,
        fmt::format("{}: timestamp {} is {} old, beyond the retention of {}", where(),
                    FormatTimestamp(ts), HumanSpan(-delta_ms), FormatDuration(options_.retention)));
  }
  return Verdict::Accept();
}

bool PlausibleHostMemory(uint64_t bytes) {
  constexpr uint64_t kMinHostMemory = 64ull << 20;  // 64 MiB
  constexpr uint64_t kMaxHostMemory = 1ull << 50;   // 1 PiB
  return bytes >= kMinHostMemory && bytes <= kMaxHostMemory;
}

}  // namespace drip::collector
