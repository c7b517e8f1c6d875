// RocksDbSeriesStore after write errors: RocksDB stops taking writes, the store says so,
// keeps answering reads, and Recover() brings writes back once the disk has room, with
// every acknowledged batch there exactly once. Faults come from FaultyFileSystem (no
// mount needed); tests/integration/storage_fault_test.cc fills a real tmpfs.
#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collector/storage/faulty_file_system_test_util.h"
#include "collector/storage/rocksdb_series_store.h"
#include "collector/storage/scoped_temp_dir.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

using std::chrono::milliseconds;

constexpr int64_t kRecoveryNow = 472'222LL * 3'600'000;
constexpr uint64_t kGiB = 1ull << 30;
constexpr char kComponent[] = "proc:api";

// Batch `sequence` of a host sampling one process every second: its samples' timestamps
// say which batch they came from, so a duplicate or a loss shows in the series.
drip::v1::SampleBatch Batch(uint64_t sequence, int samples = 4) {
  drip::v1::SampleBatch batch;
  batch.set_sequence(sequence);
  for (int i = 0; i < samples; ++i) {
    drip::v1::Sample* s = batch.add_samples();
    s->set_component(kComponent);
    s->set_instance("100@1");
    s->set_timestamp_ms(kRecoveryNow + static_cast<int64_t>(sequence * 100 + i) * 1000);
    s->mutable_process()->set_anon_rss_bytes(sequence * 100 + i);
  }
  return batch;
}

// The timestamps batches 1..last put in the series, each once.
std::vector<int64_t> Expected(uint64_t last, int samples = 4) {
  std::vector<int64_t> ts;
  for (uint64_t seq = 1; seq <= last; ++seq) {
    for (int i = 0; i < samples; ++i)
      ts.push_back(kRecoveryNow + static_cast<int64_t>(seq * 100 + i) * 1000);
  }
  return ts;
}

// A store on a FaultyFileSystem, with the free space its recovery sees under test control.
struct RecoveryHarness {
  ScopedTempDir dir;
  FakeClock clock{kRecoveryNow};
  std::shared_ptr<FaultyFileSystem> fs = std::make_shared<FaultyFileSystem>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  std::atomic<uint64_t> free_bytes{kGiB};
  RocksDbSeriesStoreOptions options;

  RecoveryHarness() {
    options.path = dir.path() + "/store";
    options.clock = &clock;
    options.fold_interval = milliseconds(0);
    options.env = env.get();
    options.recovery_free_bytes = 64 << 20;
    options.free_space = [this](const std::string&) -> absl::StatusOr<uint64_t> {
      return free_bytes.load();
    };
  }

  std::unique_ptr<RocksDbSeriesStore> Open() {
    absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }
};

std::vector<int64_t> StoredTimestamps(RocksDbSeriesStore& store, const std::string& host) {
  absl::StatusOr<std::vector<drip::v1::Series>> series =
      store.ReadSeries(host, kComponent, 0, 0, 0);
  EXPECT_TRUE(series.ok()) << series.status();
  std::vector<int64_t> ts;
  if (!series.ok()) return ts;
  for (const auto& s : *series) {
    for (const auto& sample : s.samples()) ts.push_back(sample.timestamp_ms());
  }
  return ts;
}

void AppendOk(RocksDbSeriesStore& store, const std::string& host, uint64_t sequence) {
  absl::StatusOr<AppendResult> r = store.AppendBatch(host, Batch(sequence));
  ASSERT_TRUE(r.ok()) << "batch " << sequence << ": " << r.status();
  EXPECT_TRUE(r->stored) << "batch " << sequence;
}

drip::v1::HostInfo Hello(const std::string& host) {
  drip::v1::HostInfo info;
  info.set_host(host);
  info.set_agent_version("test");
  return info;
}

TEST(RocksDbSeriesStoreRecoveryTest, FullDiskStopsWritesKeepsReadsAndRecoversOnceSpaceReturns) {
  RecoveryHarness h;
  h.options.sync_writes = true;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutHost(Hello("web-1")).ok());
  AppendOk(*store, "web-1", 1);
  AppendOk(*store, "web-1", 2);
  EXPECT_TRUE(store->WriteState().ok());

  h.fs->FailAppends(FaultyFileSystem::kAll);
  h.free_bytes = 0;
  absl::StatusOr<AppendResult> failed = store->AppendBatch("web-1", Batch(3));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
  absl::Status state = store->WriteState();
  EXPECT_EQ(state.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(state.message().find("No space"), std::string::npos) << state;

  // Reads go on: what was acknowledged before is all there.
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(2));
  EXPECT_EQ(*store->AckedSequence("web-1"), 2u);
  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store->ListHosts();
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  EXPECT_EQ(hosts->size(), 1u);

  // Every write fails, also after the device would take one again, until Recover().
  EXPECT_FALSE(store->PutHost(Hello("web-1")).ok());
  h.fs->FailAppends(FaultyFileSystem::kNone);
  EXPECT_FALSE(store->AppendBatch("web-1", Batch(3)).ok());
  EXPECT_FALSE(store->WriteState().ok());

  // Not enough room yet: Recover() waits, and says why.
  h.free_bytes = 10 << 20;
  absl::Status waiting = store->Recover();
  EXPECT_EQ(waiting.code(), absl::StatusCode::kResourceExhausted) << waiting;
  EXPECT_NE(waiting.message().find("10.0 MiB free"), std::string::npos) << waiting;
  EXPECT_FALSE(store->WriteState().ok());
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(2));

  h.free_bytes = kGiB;
  ASSERT_TRUE(store->Recover().ok());
  EXPECT_TRUE(store->WriteState().ok());
  // The agent resends from its buffer: what was acked is a duplicate, the rest is new.
  absl::StatusOr<AppendResult> resent = store->AppendBatch("web-1", Batch(2));
  ASSERT_TRUE(resent.ok()) << resent.status();
  EXPECT_FALSE(resent->stored);
  AppendOk(*store, "web-1", 3);
  AppendOk(*store, "web-1", 4);
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(4));

  // Nothing unlogged in the memtables, so closing flushes nothing and the next open
  // replays the WALs, as after a crash: the torn record the full disk left must not
  // stop the replay before what was acknowledged after the recovery.
  store.reset();
  store = h.Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(4));
  EXPECT_EQ(*store->AckedSequence("web-1"), 4u);
  ASSERT_TRUE(store->FoldStaged().ok());
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(4));
}

// The case RocksDB 7.8 cannot resume from in place: the WAL append fails while every
// memtable is empty, so DB::Resume() has nothing to flush, keeps the WAL writer that
// failed, and the next write aborts the process (Debian builds RocksDB with asserts).
TEST(RocksDbSeriesStoreRecoveryTest, RecoversFromAWalErrorWithEmptyMemtables) {
  RecoveryHarness h;
  {
    auto store = h.Open();
    ASSERT_NE(store, nullptr);
    AppendOk(*store, "web-1", 1);
  }
  // Reopening flushes what the WAL held: the memtables start empty.
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  h.fs->FailAppends(FaultyFileSystem::kWal);
  EXPECT_FALSE(store->AppendBatch("web-1", Batch(2)).ok());
  EXPECT_FALSE(store->WriteState().ok());
  h.fs->FailAppends(FaultyFileSystem::kNone);
  ASSERT_TRUE(store->Recover().ok());
  AppendOk(*store, "web-1", 2);
  AppendOk(*store, "web-1", 3);
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(3));
}

TEST(RocksDbSeriesStoreRecoveryTest, FailedFlushStopsWritesUntilRecovered) {
  RecoveryHarness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  AppendOk(*store, "web-1", 1);
  AppendOk(*store, "web-1", 2);
  // The retention pass folds and compacts, which flushes the memtables first: with
  // table files failing, the flush fails and RocksDB stops writes with it.
  h.fs->FailAppends(FaultyFileSystem::kTable);
  EXPECT_FALSE(store->EnforceRetention().ok());
  absl::Status state = store->WriteState();
  EXPECT_FALSE(state.ok());
  EXPECT_FALSE(store->AppendBatch("web-1", Batch(3)).ok());
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(2));

  h.fs->FailAppends(FaultyFileSystem::kNone);
  ASSERT_TRUE(store->Recover().ok());
  AppendOk(*store, "web-1", 3);
  // The fold lost with the unflushed memtable is done again: still each sample once.
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(3));
  ASSERT_TRUE(store->FoldStaged().ok());
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(3));
  ASSERT_TRUE(store->EnforceRetention().ok());
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(3));
}

TEST(RocksDbSeriesStoreRecoveryTest, IoErrorIsRetriedWithoutWaitingForSpace) {
  RecoveryHarness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  AppendOk(*store, "web-1", 1);
  h.free_bytes = 0;  // irrelevant: the disk is not full, it fails
  h.fs->FailAppends(FaultyFileSystem::kWal, rocksdb::IOStatus::IOError("injected", "EIO"));
  EXPECT_FALSE(store->AppendBatch("web-1", Batch(2)).ok());
  EXPECT_FALSE(store->WriteState().ok());

  // Still failing: the store tries at once (nothing to wait for), and fails. Opening
  // writes to the new WAL, so the store is left closed until a later attempt works.
  absl::Status still = store->Recover();
  EXPECT_FALSE(still.ok());
  EXPECT_NE(still.code(), absl::StatusCode::kResourceExhausted) << still;
  EXPECT_FALSE(store->WriteState().ok());

  h.fs->FailAppends(FaultyFileSystem::kNone);
  ASSERT_TRUE(store->Recover().ok());
  EXPECT_TRUE(store->WriteState().ok());
  AppendOk(*store, "web-1", 2);
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(2));
}

TEST(RocksDbSeriesStoreRecoveryTest, FailedReopenLeavesTheStoreClosedUntilTheNextRecover) {
  RecoveryHarness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutHost(Hello("web-1")).ok());
  AppendOk(*store, "web-1", 1);
  // Every file fails, so opening again (a new MANIFEST, OPTIONS) fails too.
  h.fs->FailAppends(FaultyFileSystem::kAll);
  EXPECT_FALSE(store->AppendBatch("web-1", Batch(2)).ok());
  absl::Status reopen = store->Recover();
  ASSERT_FALSE(reopen.ok());
  EXPECT_NE(reopen.code(), absl::StatusCode::kResourceExhausted) << reopen;

  // Closed: every call fails cleanly, none crashes.
  absl::Status state = store->WriteState();
  EXPECT_NE(state.message().find("closed"), std::string::npos) << state;
  EXPECT_EQ(store->ReadSeries("web-1", kComponent, 0, 0, 0).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(store->ListHosts().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store->AppendBatch("web-1", Batch(2)).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store->reports()->LoadReports().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(store->FoldStaged().ok());
  EXPECT_FALSE(store->EnforceRetention().ok());
  EXPECT_EQ(store->ApproximateSizeBytes(), 0u);

  // Still full: a closed store that closed for lack of space waits for space too.
  h.fs->FailAppends(FaultyFileSystem::kNone);
  h.free_bytes = 0;
  EXPECT_EQ(store->Recover().code(), absl::StatusCode::kResourceExhausted);
  h.free_bytes = kGiB;
  ASSERT_TRUE(store->Recover().ok());
  EXPECT_TRUE(store->WriteState().ok());
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(1));
  AppendOk(*store, "web-1", 2);
  EXPECT_EQ(StoredTimestamps(*store, "web-1"), Expected(2));
}

TEST(RocksDbSeriesStoreRecoveryTest, AuditSequencesContinueAfterARecovery) {
  RecoveryHarness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  std::vector<drip::v1::AuditEntry> audit(2);
  for (auto& entry : audit) entry.set_time_ms(kRecoveryNow);
  ASSERT_TRUE(store->reports()->Write({}, {}, &audit).ok());
  h.fs->FailAppends(FaultyFileSystem::kWal);
  std::vector<drip::v1::AuditEntry> lost(1);
  EXPECT_FALSE(store->reports()->Write({}, {}, &lost).ok());
  h.fs->FailAppends(FaultyFileSystem::kNone);
  ASSERT_TRUE(store->Recover().ok());
  std::vector<drip::v1::AuditEntry> more(1);
  more[0].set_time_ms(kRecoveryNow + 1);
  ASSERT_TRUE(store->reports()->Write({}, {}, &more).ok());
  absl::StatusOr<std::vector<drip::v1::AuditEntry>> read = store->reports()->ReadAudit("", 0, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  std::set<std::string> ids;
  for (const auto& entry : *read) ids.insert(entry.id());
  EXPECT_EQ(ids.size(), read->size()) << "an audit id was handed out twice";
  EXPECT_EQ(read->size(), 3u);
}

// Agents resending what was not acked, readers and the background folder, while the
// disk fills and empties again and again: no call crashes or deadlocks, and in the end
// every batch is stored exactly once.
TEST(RocksDbSeriesStoreRecoveryTest, ConcurrentWritersAndReadersSurviveRepeatedRecoveries) {
  RecoveryHarness h;
  h.options.fold_interval = milliseconds(5);
  h.options.fold_bytes = 4 * 1024;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  constexpr int kHosts = 3;
  constexpr uint64_t kBatches = 60;

  std::atomic<bool> done{false};
  std::vector<std::thread> agents;
  for (int host = 0; host < kHosts; ++host) {
    agents.emplace_back([&, host] {
      const std::string name = fmt::format("host-{}", host);
      uint64_t next = 1;
      while (next <= kBatches) {
        absl::StatusOr<AppendResult> r = store->AppendBatch(name, Batch(next));
        if (r.ok()) {
          ++next;
          continue;
        }
        // As an agent after a failed stream: reconnect, learn the mark, resend after it.
        std::this_thread::sleep_for(milliseconds(1));
        absl::StatusOr<uint64_t> mark = store->AckedSequence(name);
        if (mark.ok()) next = *mark + 1;
      }
    });
  }
  std::thread reader([&] {
    while (!done) {
      absl::StatusOr<std::vector<drip::v1::Series>> series =
          store->ReadSeries("host-0", kComponent, 0, 0, 0);
      if (!series.ok()) continue;  // closed between a failed reopen and the next one
      std::set<int64_t> seen;
      for (const auto& s : *series) {
        for (const auto& sample : s.samples()) {
          ASSERT_TRUE(seen.insert(sample.timestamp_ms()).second) << "read a sample twice";
        }
      }
    }
  });

  for (int round = 0; round < 6; ++round) {
    std::this_thread::sleep_for(milliseconds(15));
    h.fs->FailAppends(round % 2 == 0 ? FaultyFileSystem::kWal : FaultyFileSystem::kAll);
    std::this_thread::sleep_for(milliseconds(15));
    h.fs->FailAppends(FaultyFileSystem::kNone);
    absl::Status recovered;
    for (int attempt = 0; attempt < 100; ++attempt) {
      recovered = store->Recover();
      if (recovered.ok()) break;
    }
    ASSERT_TRUE(recovered.ok()) << recovered;
  }
  for (auto& agent : agents) agent.join();
  done = true;
  reader.join();

  ASSERT_TRUE(store->FoldStaged().ok());
  for (int host = 0; host < kHosts; ++host) {
    const std::string name = fmt::format("host-{}", host);
    EXPECT_EQ(StoredTimestamps(*store, name), Expected(kBatches)) << name;
    EXPECT_EQ(*store->AckedSequence(name), kBatches) << name;
  }
  store.reset();
  store = h.Open();
  ASSERT_NE(store, nullptr);
  for (int host = 0; host < kHosts; ++host) {
    const std::string name = fmt::format("host-{}", host);
    EXPECT_EQ(StoredTimestamps(*store, name), Expected(kBatches)) << name;
  }
}

}  // namespace
}  // namespace drip::collector
