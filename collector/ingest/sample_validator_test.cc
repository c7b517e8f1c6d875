#include "collector/ingest/sample_validator.h"

#include <chrono>
#include <string>

#include "common/base/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNowMs = 1704067200000;  // 2024-01-01T00:00:00Z
constexpr int64_t kDayMs = 86'400'000;

class SampleValidatorTest : public ::testing::Test {
 protected:
  SampleValidatorTest() : clock_(kNowMs), validator_(Options(), &clock_) {}

  static SampleValidatorOptions Options() {
    SampleValidatorOptions o;
    o.max_message_bytes = 64 * 1024;
    o.max_samples_per_batch = 10;
    o.max_future_skew = std::chrono::minutes(5);
    o.retention = std::chrono::hours(24 * 14);
    return o;
  }

  static drip::v1::SampleBatch GoodBatch(uint64_t sequence) {
    drip::v1::SampleBatch batch;
    batch.set_sequence(sequence);
    for (int i = 0; i < 4; ++i) {
      drip::v1::Sample* s = batch.add_samples();
      s->set_component("svc:nginx.service");
      s->set_instance("100@1");
      s->set_timestamp_ms(kNowMs - 1000 * i);
      s->mutable_process()->set_anon_rss_bytes(1 << 20);
    }
    return batch;
  }

  Verdict Validate(const drip::v1::SampleBatch& batch) {
    return validator_.ValidateBatch(batch, "web-1", batch.ByteSizeLong());
  }

  FakeClock clock_;
  SampleValidator validator_;
};

TEST_F(SampleValidatorTest, GoodHelloAndBatchAreAccepted) {
  drip::v1::Hello hello;
  hello.set_host("web-1");
  EXPECT_TRUE(validator_.ValidateHello(hello).ok());
  EXPECT_TRUE(Validate(GoodBatch(1)).ok());
}

TEST_F(SampleValidatorTest, SampleNamingTheStreamHostExplicitlyIsAccepted) {
  drip::v1::SampleBatch batch = GoodBatch(1);
  batch.mutable_samples(2)->set_host("web-1");
  EXPECT_TRUE(Validate(batch).ok());
}

TEST_F(SampleValidatorTest, InstanceVersionsAreAcceptedAndMalformedOnesNamed) {
  drip::v1::SampleBatch batch = GoodBatch(5);
  drip::v1::InstanceVersion* version = batch.add_versions();
  version->set_component("svc:nginx.service");
  version->set_instance("100@1");
  version->set_build_id("3fa9c0de");
  version->set_label("1.25.3");
  EXPECT_TRUE(Validate(batch).ok());

  version->set_build_id("3FA9-zz");
  Verdict v = Validate(batch);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "invalid_version");
  EXPECT_THAT(std::string(v.status.message()),
              HasSubstr("batch 5 version 0 (component 'svc:nginx.service', instance '100@1'): "
                        "build_id is not lower-case hex"));

  version->set_build_id("");
  version->set_label(std::string(129, 'x'));
  EXPECT_THAT(std::string(Validate(batch).status.message()), HasSubstr("label has 129 bytes"));

  version->set_label("1");
  version->clear_instance();
  EXPECT_THAT(std::string(Validate(batch).status.message()), HasSubstr("instance is empty"));

  version->set_instance("100@1");
  for (int i = 0; i < 4; ++i) *batch.add_versions() = *version;
  EXPECT_THAT(std::string(Validate(batch).status.message()),
              HasSubstr("5 instance versions for 4 samples"));
}

TEST_F(SampleValidatorTest, EmptyHostInHelloIsInvalidArgument) {
  Verdict v = validator_.ValidateHello(drip::v1::Hello());
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "empty_host");
  EXPECT_THAT(std::string(v.status.message()), HasSubstr("host is empty"));
}

TEST_F(SampleValidatorTest, SampleClaimingAnotherHostIsPermissionDenied) {
  drip::v1::SampleBatch batch = GoodBatch(17);
  batch.mutable_samples(3)->set_host("db-1");
  Verdict v = Validate(batch);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(v.reason, "host_mismatch");
  EXPECT_THAT(std::string(v.status.message()),
              HasSubstr("batch 17 sample 3: host 'db-1' is not this stream's host 'web-1'"));
}

// UNAVAILABLE: the agent keeps the batch and resends it (the collector's clock may be the
// one that is wrong).
TEST_F(SampleValidatorTest, FutureTimestampNamesBatchSampleDateDistanceAndSkew) {
  drip::v1::SampleBatch batch = GoodBatch(17);
  batch.mutable_samples(3)->set_timestamp_ms(2208988800000);  // 2040-01-01T00:00:00Z
  Verdict v = Validate(batch);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(v.reason, "future_timestamp");
  EXPECT_THAT(std::string(v.status.message()),
              HasSubstr("batch 17 sample 3: timestamp 2040-01-01T00:00:00Z is 5844 days ahead of "
                        "the collector's clock (max skew 5m)"));
}

TEST_F(SampleValidatorTest, TimestampWithinSkewIsAccepted) {
  drip::v1::SampleBatch batch = GoodBatch(1);
  batch.mutable_samples(0)->set_timestamp_ms(kNowMs + 4 * 60'000);
  EXPECT_TRUE(Validate(batch).ok());
}

TEST_F(SampleValidatorTest, TimestampOlderThanRetentionIsExpired) {
  drip::v1::SampleBatch batch = GoodBatch(9);
  batch.mutable_samples(1)->set_timestamp_ms(kNowMs - 15 * kDayMs);
  Verdict v = Validate(batch);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "expired_timestamp");
  EXPECT_THAT(std::string(v.status.message()),
              HasSubstr("batch 9 sample 1: timestamp 2023-12-17T00:00:00Z is 15 days old, beyond "
                        "the retention of 14d"));
}

TEST_F(SampleValidatorTest, AbsurdTimestampsAreReportedWithoutOverflow) {
  drip::v1::SampleBatch batch = GoodBatch(2);
  batch.mutable_samples(0)->set_timestamp_ms(INT64_MIN);
  Verdict v = Validate(batch);
  EXPECT_EQ(v.reason, "expired_timestamp");
  EXPECT_THAT(std::string(v.status.message()), HasSubstr("ms since the epoch"));
  batch.mutable_samples(0)->set_timestamp_ms(INT64_MAX);
  EXPECT_EQ(Validate(batch).reason, "future_timestamp");
}

TEST_F(SampleValidatorTest, EmptyComponentIsInvalidArgument) {
  drip::v1::SampleBatch batch = GoodBatch(5);
  batch.mutable_samples(0)->clear_component();
  Verdict v = Validate(batch);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "empty_component");
  EXPECT_THAT(std::string(v.status.message()), HasSubstr("batch 5 sample 0: component is empty"));
}

// One agent's strings are kept, listed to every dripctl user and replayed at every restart:
// a label of megabytes or a component name of a megabyte is refused, not stored.
TEST_F(SampleValidatorTest, HelloWithTooManyOrTooLongLabelsIsRefusedAsFieldTooLong) {
  drip::v1::Hello hello;
  hello.set_host("web-1");
  for (int i = 0; i < 64; ++i) (*hello.mutable_labels())["k" + std::to_string(i)] = "v";
  EXPECT_TRUE(validator_.ValidateHello(hello).ok());
  (*hello.mutable_labels())["one-more"] = "v";
  Verdict v = validator_.ValidateHello(hello);
  EXPECT_EQ(v.reason, reject_reason::kFieldTooLong);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status.message(), HasSubstr("65 labels, more than 64"));

  drip::v1::Hello big;
  big.set_host("web-1");
  (*big.mutable_labels())["team"] = std::string(4 << 20, 'x');
  v = validator_.ValidateHello(big);
  EXPECT_EQ(v.reason, reject_reason::kFieldTooLong);
  EXPECT_THAT(v.status.message(), HasSubstr("label 'team' has 4194304 bytes, more than 1024"));

  drip::v1::Hello long_host;
  long_host.set_host(std::string(300, 'h'));
  EXPECT_EQ(validator_.ValidateHello(long_host).reason, reject_reason::kFieldTooLong);

  drip::v1::Hello status;
  status.set_host("web-1");
  status.mutable_status()->set_sampler_fallback_reason(std::string(2000, 'r'));
  EXPECT_EQ(validator_.ValidateHello(status).reason, reject_reason::kFieldTooLong);
}

TEST_F(SampleValidatorTest,
       ComponentOrInstanceLongerThanAnyAgentSendsIsRefusedQuotingOnlyItsStart) {
  drip::v1::SampleBatch batch = GoodBatch(1);
  batch.mutable_samples(2)->set_component("proc:" + std::string(20000, 'c'));
  Verdict v = Validate(batch);
  EXPECT_EQ(v.reason, reject_reason::kFieldTooLong);
  EXPECT_THAT(v.status.message(),
              HasSubstr("batch 1 sample 2: component has 20005 bytes, more than 512"));
  EXPECT_LT(v.status.message().size(), 200u) << v.status.message().substr(0, 300);

  batch = GoodBatch(2);
  batch.mutable_samples(0)->set_instance(std::string(300, '1'));
  EXPECT_EQ(Validate(batch).reason, reject_reason::kFieldTooLong);

  // A host that is not the stream's is quoted, not echoed whole.
  batch = GoodBatch(3);
  batch.mutable_samples(0)->set_host(std::string(20000, 'h'));
  v = Validate(batch);
  EXPECT_EQ(v.reason, reject_reason::kHostMismatch);
  EXPECT_LT(v.status.message().size(), 300u);
}

TEST_F(SampleValidatorTest, SampleWithoutMemoryFiguresIsInvalidArgument) {
  drip::v1::SampleBatch batch = GoodBatch(5);
  batch.mutable_samples(2)->clear_process();
  Verdict v = Validate(batch);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "missing_memory");
  EXPECT_THAT(std::string(v.status.message()), HasSubstr("batch 5 sample 2"));
}

TEST_F(SampleValidatorTest, TooManySamplesIsResourceExhausted) {
  drip::v1::SampleBatch batch = GoodBatch(3);
  while (batch.samples_size() <= 10) *batch.add_samples() = batch.samples(0);
  Verdict v = Validate(batch);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(v.reason, "too_many_samples");
  EXPECT_THAT(std::string(v.status.message()),
              HasSubstr("batch 3: 11 samples exceed ingest.max_samples_per_batch (10)"));
}

TEST_F(SampleValidatorTest, SequenceZeroIsInvalidArgument) {
  Verdict v = Validate(GoodBatch(0));
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "zero_sequence");
}

TEST_F(SampleValidatorTest, FirstDroppedSequenceNotBelowSequenceIsInvalidArgument) {
  drip::v1::SampleBatch batch = GoodBatch(8);
  batch.set_first_dropped_sequence(8);
  Verdict v = Validate(batch);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "invalid_gap");
  batch.set_first_dropped_sequence(5);
  EXPECT_TRUE(Validate(batch).ok());
}

TEST_F(SampleValidatorTest, OversizedMessageIsResourceExhausted) {
  drip::v1::SampleBatch batch = GoodBatch(42);
  Verdict v = validator_.ValidateBatch(batch, "web-1", 64 * 1024 + 1);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(v.reason, "oversized");
  EXPECT_THAT(std::string(v.status.message()), HasSubstr("batch 42: "));
  EXPECT_THAT(std::string(v.status.message()), HasSubstr("grpc.max_message_bytes (64.0 KiB)"));
}

TEST_F(SampleValidatorTest, BatchBeforeHelloIsHelloMissing) {
  drip::v1::AgentMessage m;
  m.mutable_batch()->set_sequence(4);
  Verdict v = validator_.CheckOrder(m, /*hello_seen=*/false);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "hello_missing");
  EXPECT_THAT(std::string(v.status.message()), HasSubstr("batch 4 arrived before hello"));
  EXPECT_TRUE(validator_.CheckOrder(m, /*hello_seen=*/true).ok());
}

TEST_F(SampleValidatorTest, SecondHelloIsDuplicateHello) {
  drip::v1::AgentMessage m;
  m.mutable_hello()->set_host("web-1");
  EXPECT_TRUE(validator_.CheckOrder(m, /*hello_seen=*/false).ok());
  Verdict v = validator_.CheckOrder(m, /*hello_seen=*/true);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "duplicate_hello");
}

TEST_F(SampleValidatorTest, MessageWithoutBodyIsEmptyMessage) {
  Verdict v = validator_.CheckOrder(drip::v1::AgentMessage(), /*hello_seen=*/true);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.reason, "empty_message");
}

TEST_F(SampleValidatorTest, ValidationFollowsTheInjectedClock) {
  drip::v1::SampleBatch batch = GoodBatch(1);
  clock_.Advance(std::chrono::hours(24 * 20));
  EXPECT_EQ(Validate(batch).reason, "expired_timestamp");
}

}  // namespace
}  // namespace drip::collector
