#include "collector/ingest/replica_writer.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/scoped_temp_dir.h"
#include "common/base/clock.h"
#include "prometheus/registry.h"

namespace drip::collector {
namespace {

constexpr int64_t kReplicaNowMs = 1'700'000'000'000;

// What the replica's detector was fed.
class RecordingDetector final : public DetectorFeed {
 public:
  std::set<std::string> ComponentsOverQuota(const std::string&, const drip::v1::SampleBatch&,
                                            size_t) const override {
    return {};
  }
  void ObserveBatch(const std::string& host, const drip::v1::SampleBatch& batch) override {
    observed.push_back("stream " + host + "#" + std::to_string(batch.sequence()));
  }
  void ObserveReplicaBatch(const std::string& host, const drip::v1::SampleBatch& batch) override {
    observed.push_back(host + "#" + std::to_string(batch.sequence()));
  }
  void SetHostMemory(const std::string& host, uint64_t bytes) override { memory[host] = bytes; }
  absl::StatusOr<uint64_t> ReplayHost(const std::string& host) override {
    replayed.push_back(host);
    return 0;
  }

  std::vector<std::string> observed;
  std::vector<std::string> replayed;
  std::map<std::string, uint64_t> memory;
};

drip::v1::SampleBatch Batch(uint64_t sequence) {
  drip::v1::SampleBatch batch;
  batch.set_sequence(sequence);
  drip::v1::Sample* s = batch.add_samples();
  s->set_component("svc:api.service");
  s->set_instance("100@1");
  s->set_timestamp_ms(kReplicaNowMs - 1000 + static_cast<int64_t>(sequence));
  s->mutable_process()->set_anon_rss_bytes(1 << 20);
  return batch;
}

class ReplicaWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RocksDbSeriesStoreOptions options;
    options.path = dir_.path();
    options.fold_interval = std::chrono::milliseconds(0);
    auto store = RocksDbSeriesStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    writer_ = std::make_unique<ReplicaWriter>(&validator_, store_.get(), &detector_, &metrics_);
    host_.set_host("web-1");
    host_.set_agent_version("1.2.3");
    host_.set_memory_total_bytes(8ull << 30);
  }

  ScopedTempDir dir_;
  FakeClock clock_{kReplicaNowMs};
  SampleValidator validator_{SampleValidatorOptions{}, &clock_};
  prometheus::Registry registry_;
  CollectorMetrics metrics_{registry_};
  RecordingDetector detector_;
  std::unique_ptr<RocksDbSeriesStore> store_;
  std::unique_ptr<ReplicaWriter> writer_;
  drip::v1::HostInfo host_;
};

TEST_F(ReplicaWriterTest, ACopySentTwiceIsStoredAndJudgedOnceUnderTheOwnersSequence) {
  absl::StatusOr<ReplicaWrite> first = writer_->Write(host_, Batch(7));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->stored);
  EXPECT_EQ(first->acked_sequence, 7u);
  absl::StatusOr<ReplicaWrite> again = writer_->Write(host_, Batch(7));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->stored);
  EXPECT_EQ(detector_.observed, std::vector<std::string>{"web-1#7"});
  EXPECT_EQ(detector_.memory["web-1"], 8ull << 30);
  // The host as its hello said, with the store's own counters.
  auto hosts = store_->ListHosts();
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ(hosts->size(), 1u);
  EXPECT_EQ((*hosts)[0].agent_version(), "1.2.3");
  EXPECT_EQ((*hosts)[0].acked_sequence(), 7u);
  // Counted as a replica's samples: the host's own count is its owner's.
  EXPECT_EQ((*hosts)[0].samples_stored(), 0u);
  EXPECT_EQ((*hosts)[0].replica_samples_stored(), 1u);
  auto series = store_->ReadSeries("web-1", "svc:api.service", 0, 0, 0);
  ASSERT_TRUE(series.ok());
  ASSERT_EQ(series->size(), 1u);
  EXPECT_EQ((*series)[0].samples_size(), 1);
}

// Copies a replica missed (it was down) are not the agent's drops: no gap is recorded.
TEST_F(ReplicaWriterTest, CopiesTheReplicaMissedAreNotRecordedAsTheAgentsGaps) {
  ASSERT_TRUE(writer_->Write(host_, Batch(1)).ok());
  ASSERT_TRUE(writer_->Write(host_, Batch(5)).ok());
  auto hosts = store_->ListHosts();
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ(hosts->size(), 1u);
  EXPECT_EQ((*hosts)[0].gaps(), 0u);
  auto gaps = store_->ReadGaps("web-1");
  ASSERT_TRUE(gaps.ok());
  EXPECT_TRUE(gaps->empty());
}

TEST_F(ReplicaWriterTest, ABatchAStreamWouldRefuseIsRefusedNamingIt) {
  drip::v1::SampleBatch bad = Batch(3);
  bad.mutable_samples(0)->set_timestamp_ms(kReplicaNowMs + 3'600'000);  // an hour ahead
  absl::StatusOr<ReplicaWrite> written = writer_->Write(host_, bad);
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(written.status().message().find("batch 3 of web-1"), std::string::npos)
      << written.status();
  EXPECT_TRUE(detector_.observed.empty());
  drip::v1::HostInfo nameless;
  EXPECT_EQ(writer_->Write(nameless, Batch(4)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ReplicaWriterTest, ARepairThatAddedSamplesReplaysTheHostOnceAtItsLastPart) {
  // A member that came back empty: it knows the host from its replica stream only.
  ASSERT_TRUE(writer_->Write(host_, Batch(9)).ok());
  drip::v1::SampleBatch older = Batch(3);
  *older.add_samples() = Batch(4).samples(0);

  absl::StatusOr<uint64_t> first = writer_->Repair(host_, older, /*last=*/false);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, 2u);
  EXPECT_TRUE(detector_.replayed.empty()) << "replayed before the repair ended";
  absl::StatusOr<uint64_t> last = writer_->Repair(host_, older, /*last=*/true);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(*last, 0u);
  EXPECT_EQ(detector_.replayed, (std::vector<std::string>{"web-1"}));
  EXPECT_EQ(metrics_.cluster_repaired_samples.Value(), 2);
  // A repair that found nothing missing changes nothing the detector judged.
  ASSERT_TRUE(writer_->Repair(host_, older, /*last=*/true).ok());
  EXPECT_EQ(detector_.replayed.size(), 1u);
  // The mark stays the owner's latest batch.
  EXPECT_EQ(*store_->AckedSequence("web-1"), 9u);

  // Checked as any batch: a sample of another host is refused.
  drip::v1::SampleBatch forged = Batch(5);
  forged.mutable_samples(0)->set_host("db-1");
  EXPECT_EQ(writer_->Repair(host_, forged, true).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace drip::collector
