#include "collector/storage/rocksdb_series_store.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "collector/storage/meta_record.h"
#include "collector/storage/rocksdb_tuning.h"
#include "collector/storage/scoped_temp_dir.h"
#include "collector/storage/series_key.h"
#include "collector/storage/varint.h"
#include "fmt/format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace drip::collector {
namespace {

using google::protobuf::util::MessageDifferencer;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDayMs = 24 * kHourMs;
// Hour-aligned so that tests can reason about which chunk a sample lands in.
constexpr int64_t kNow = 472'222 * kHourMs;

drip::v1::Sample ProcessSample(std::string component, std::string instance, int64_t ts,
                               uint64_t anon) {
  drip::v1::Sample s;
  s.set_component(std::move(component));
  s.set_instance(std::move(instance));
  s.set_timestamp_ms(ts);
  auto* p = s.mutable_process();
  p->set_anon_rss_bytes(anon);
  p->set_file_rss_bytes(anon / 2);
  p->set_shmem_rss_bytes(4096);
  p->set_swap_bytes(anon / 8);
  return s;
}

drip::v1::SampleBatch Batch(uint64_t sequence, std::vector<drip::v1::Sample> samples) {
  drip::v1::SampleBatch batch;
  batch.set_sequence(sequence);
  for (auto& s : samples) *batch.add_samples() = std::move(s);
  return batch;
}

// What ReadSeries returns for a stored sample: the same figures, names cleared.
drip::v1::Sample AsRead(drip::v1::Sample s) {
  s.clear_host();
  s.clear_component();
  s.clear_instance();
  return s;
}

std::vector<int64_t> Timestamps(const drip::v1::Series& series) {
  std::vector<int64_t> ts;
  for (const auto& s : series.samples()) ts.push_back(s.timestamp_ms());
  return ts;
}

// A temp directory, a fake clock at kNow and a store on them.
struct Harness {
  ScopedTempDir dir;
  FakeClock clock{kNow};
  RocksDbSeriesStoreOptions options;

  Harness() {
    options.path = dir.path() + "/store";
    options.clock = &clock;
    // fsync per write only where a test is about durability: keeps the suite fast.
    options.sync_writes = false;
    // Folding only when a test asks for it, so that each test knows where its samples
    // are; StoresConcurrentBatchesExactlyOnce runs the background folder.
    options.fold_interval = milliseconds(0);
  }

  std::unique_ptr<RocksDbSeriesStore> Open() {
    absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }
};

AppendResult Append(RocksDbSeriesStore& store, const std::string& host,
                    const drip::v1::SampleBatch& batch) {
  absl::StatusOr<AppendResult> result = store.AppendBatch(host, batch);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : AppendResult{};
}

std::vector<drip::v1::Series> Read(RocksDbSeriesStore& store, const std::string& host,
                                   const std::string& component, int64_t since = 0,
                                   int64_t until = 0) {
  absl::StatusOr<std::vector<drip::v1::Series>> series =
      store.ReadSeries(host, component, since, until, 0);
  EXPECT_TRUE(series.ok()) << series.status();
  return series.ok() ? *series : std::vector<drip::v1::Series>{};
}

drip::v1::HostInfo HostNamed(RocksDbSeriesStore& store, const std::string& host) {
  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store.ListHosts();
  EXPECT_TRUE(hosts.ok()) << hosts.status();
  if (hosts.ok()) {
    for (const auto& h : *hosts) {
      if (h.host() == host) return h;
    }
  }
  ADD_FAILURE() << "no host " << host;
  return {};
}

TEST(RocksDbSeriesStoreTest, ReadsBackSamplesInTimeOrderWithExactFigures) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  // Out of order within a batch and across batches, spanning three chunk windows.
  std::vector<drip::v1::Sample> written = {
      ProcessSample("proc:redis", "7@1", kNow + 2 * kHourMs + 5, 300),
      ProcessSample("proc:redis", "7@1", kNow + 10, 100),
      ProcessSample("proc:redis", "7@1", kNow + kHourMs - 1, 200),
  };
  AppendResult first = Append(*store, "web-1", Batch(1, written));
  EXPECT_TRUE(first.stored);
  EXPECT_EQ(first.samples_stored, 3u);
  EXPECT_EQ(first.missing_batches, 0u);
  drip::v1::Sample early = ProcessSample("proc:redis", "7@1", kNow + 5, UINT64_MAX);
  early.set_host("web-1");  // an explicit host equal to the stream's is fine
  written.push_back(early);
  EXPECT_TRUE(Append(*store, "web-1", Batch(2, {early})).stored);

  std::vector<drip::v1::Series> series = Read(*store, "web-1", "proc:redis");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].host(), "web-1");
  EXPECT_EQ(series[0].component(), "proc:redis");
  EXPECT_EQ(series[0].instance(), "7@1");
  std::sort(written.begin(), written.end(),
            [](const auto& a, const auto& b) { return a.timestamp_ms() < b.timestamp_ms(); });
  ASSERT_EQ(series[0].samples_size(), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(series[0].samples(i), AsRead(written[i])))
        << i << ": " << series[0].samples(i).DebugString();
  }
}

TEST(RocksDbSeriesStoreTest, ReadsStagedAndFoldedSamplesAlike) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  for (uint64_t seq = 1; seq <= 6; ++seq) {
    const int64_t ts = kNow + static_cast<int64_t>(seq) * 20 * 60'000;  // crosses windows
    Append(*store, "h",
           Batch(seq,
                 {ProcessSample("proc:a", "1", ts, seq), ProcessSample("proc:a", "2", ts, 10 * seq),
                  ProcessSample("proc:b", "1", ts, 100 * seq)}));
    if (seq == 3) {
      // Half folded, half staged: one read must see both, each sample once.
      absl::StatusOr<FoldStats> folded = store->FoldStaged();
      ASSERT_TRUE(folded.ok()) << folded.status();
      EXPECT_EQ(folded->batches, 3u);
      EXPECT_EQ(folded->points, 9u);
    }
  }
  const auto before = Read(*store, "h", "proc:a");
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].samples_size(), 6);
  EXPECT_EQ(before[1].samples_size(), 6);

  absl::StatusOr<FoldStats> folded = store->FoldStaged();
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(folded->batches, 3u);
  // Batches 4..6 fall into 2 windows per series: points of a chunk are written together.
  EXPECT_EQ(folded->points, 9u);
  EXPECT_EQ(folded->chunk_writes, 6u);
  EXPECT_EQ(store->FoldStaged()->batches, 0u);

  const auto after = Read(*store, "h", "proc:a");
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(after[i], before[i])) << after[i].DebugString();
  }
  const auto other = Read(*store, "h", "proc:b", kNow + 40 * 60'000, kNow + 100 * 60'000);
  ASSERT_EQ(other.size(), 1u);
  std::vector<int64_t> expected;
  for (int seq = 2; seq <= 4; ++seq) expected.push_back(kNow + seq * 20 * 60'000);
  EXPECT_EQ(Timestamps(other[0]), expected);
}

TEST(RocksDbSeriesStoreTest, FoldsBatchesLeftStagedByAnEarlierRunWhenItOpens) {
  Harness h;
  {
    auto store = h.Open();
    ASSERT_NE(store, nullptr);
    Append(*store, "h", Batch(1, {ProcessSample("proc:a", "1", kNow, 1)}));
    Append(*store, "h", Batch(2, {ProcessSample("proc:a", "1", kNow + 1, 2)}));
  }
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->FoldStaged()->batches, 0u);  // folded before the store served anything
  auto series = Read(*store, "h", "proc:a");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(Timestamps(series[0]), (std::vector<int64_t>{kNow, kNow + 1}));
}

// The child's half of SurvivesAProcessCrashWithFoldsInFlight: appends, folds, and dies
// without closing anything. Returns only on failure.
int AppendFoldAndCrash(const RocksDbSeriesStoreOptions& options) {
  absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(options);
  if (!store.ok()) return 1;
  auto append = [&](uint64_t from, uint64_t to) {
    for (uint64_t seq = from; seq <= to; ++seq) {
      const int64_t ts = kNow + static_cast<int64_t>(seq) * 1000;
      absl::StatusOr<AppendResult> r =
          (*store)->AppendBatch("h", Batch(seq, {ProcessSample("proc:a", "1", ts, seq),
                                                 ProcessSample("proc:a", "2", ts, seq)}));
      if (!r.ok() || !r->stored) return false;
    }
    return true;
  };
  if (!append(1, 10) || !(*store)->FoldStaged().ok()) return 2;  // folded, unflushed
  if (!append(11, 20)) return 3;
  // Folds 11..20, then flushes every column family (compaction starts with a flush).
  if (!(*store)->EnforceRetention().ok()) return 4;
  if (!append(21, 30) || !(*store)->FoldStaged().ok()) return 5;  // folded, unflushed
  if (!append(31, 40)) return 6;                                  // staged only
  _exit(0);  // a crash: no destructor, memtables and the unlogged folds are lost
}

constexpr char kCrashStoreEnv[] = "DRIP_TEST_CRASH_STORE";

// Not a test: the process SurvivesAProcessCrashWithFoldsInFlight starts and kills. A
// fresh process, because a fork of this one would inherit RocksDB's thread pools
// without their threads.
TEST(RocksDbSeriesStoreCrashChild, DISABLED_AppendFoldAndCrash) {
  const char* path = std::getenv(kCrashStoreEnv);
  if (path == nullptr) GTEST_SKIP() << "run by SurvivesAProcessCrashWithFoldsInFlight only";
  FakeClock clock(kNow);
  RocksDbSeriesStoreOptions options;
  options.path = path;
  options.clock = &clock;
  options.sync_writes = false;  // a process crash keeps what reached the OS
  options.fold_interval = milliseconds(0);
  _exit(AppendFoldAndCrash(options));
}

TEST(RocksDbSeriesStoreTest, SurvivesAProcessCrashWithFoldsInFlight) {
  Harness h;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.push_back(fmt::format("{}={}", kCrashStoreEnv, h.options.path));
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = std::filesystem::read_symlink("/proc/self/exe");
  std::string filter = "--gtest_filter=RocksDbSeriesStoreCrashChild.DISABLED_AppendFoldAndCrash";
  std::string disabled = "--gtest_also_run_disabled_tests";
  std::vector<char*> argv = {self.data(), filter.data(), disabled.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ASSERT_EQ(spawned, 0) << "posix_spawn " << self;
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child failed before its crash";

  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->AckedSequence("h"), 40u);
  std::vector<int64_t> expected;
  for (int seq = 1; seq <= 40; ++seq) expected.push_back(kNow + seq * 1000);
  auto check = [&] {
    auto series = Read(*store, "h", "proc:a");
    ASSERT_EQ(series.size(), 2u);
    for (const auto& s : series) EXPECT_EQ(Timestamps(s), expected) << s.instance();
  };
  // What the crash undid was staged again and folded again, once, as the store opened.
  check();
  absl::StatusOr<FoldStats> refolded = store->FoldStaged();
  ASSERT_TRUE(refolded.ok()) << refolded.status();
  EXPECT_EQ(refolded->batches, 0u);
  check();
}

TEST(RocksDbSeriesStoreTest, StoresCgroupAndSlabFigures) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  drip::v1::Sample cgroup;
  cgroup.set_component("svc:nginx.service");
  cgroup.set_timestamp_ms(kNow);
  cgroup.mutable_cgroup()->set_current_bytes(1 << 30);
  cgroup.mutable_cgroup()->set_slab_unreclaimable_bytes(12345);
  cgroup.mutable_cgroup()->set_swap_bytes(7);
  drip::v1::Sample slab;
  slab.set_component("kernel:slab:kmalloc-512");
  slab.set_timestamp_ms(kNow + 1);
  slab.mutable_slab()->set_active_objects(98765);
  slab.mutable_slab()->set_object_size_bytes(512);
  Append(*store, "h", Batch(1, {cgroup, slab}));

  auto units = Read(*store, "h", "svc:nginx.service");
  ASSERT_EQ(units.size(), 1u);
  ASSERT_EQ(units[0].samples_size(), 1);
  EXPECT_TRUE(MessageDifferencer::Equals(units[0].samples(0), AsRead(cgroup)));
  EXPECT_EQ(units[0].instance(), "");
  auto slabs = Read(*store, "h", "kernel:slab:kmalloc-512");
  ASSERT_EQ(slabs.size(), 1u);
  EXPECT_TRUE(MessageDifferencer::Equals(slabs[0].samples(0), AsRead(slab)));
}

TEST(RocksDbSeriesStoreTest, KeepsInstancesApartAndOrdersThemByFirstSample) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  Append(*store, "web-1",
         Batch(1, {ProcessSample("proc:app", "2@200", kNow + 200, 2),
                   ProcessSample("proc:app", "1@100", kNow + 100, 1),
                   ProcessSample("proc:app-helper", "3@300", kNow + 50, 3),
                   ProcessSample("proc:app", "2@200", kNow + 300, 22)}));
  // Same names on another host: a different series.
  Append(*store, "web-2", Batch(1, {ProcessSample("proc:app", "1@100", kNow, 99)}));

  auto series = Read(*store, "web-1", "proc:app");
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].instance(), "1@100");
  EXPECT_EQ(Timestamps(series[0]), (std::vector<int64_t>{kNow + 100}));
  EXPECT_EQ(series[0].samples(0).process().anon_rss_bytes(), 1u);
  EXPECT_EQ(series[1].instance(), "2@200");
  EXPECT_EQ(Timestamps(series[1]), (std::vector<int64_t>{kNow + 200, kNow + 300}));

  auto other = Read(*store, "web-2", "proc:app");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].samples(0).process().anon_rss_bytes(), 99u);
  EXPECT_TRUE(Read(*store, "web-3", "proc:app").empty());
  EXPECT_TRUE(Read(*store, "web-1", "proc:ap").empty());
}

TEST(RocksDbSeriesStoreTest, FiltersBySinceInclusiveAndUntilExclusive) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  std::vector<drip::v1::Sample> samples;
  const int64_t step = 10 * 60'000;
  for (int i = 0; i <= 18; ++i) {  // every 10 minutes for 3 hours
    samples.push_back(ProcessSample("proc:db", "1@1", kNow + i * step, i));
  }
  Append(*store, "h", Batch(1, samples));

  auto all = Read(*store, "h", "proc:db");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].samples_size(), 19);

  auto window = Read(*store, "h", "proc:db", kNow + 3 * step, kNow + 12 * step);
  ASSERT_EQ(window.size(), 1u);
  std::vector<int64_t> expected;
  for (int i = 3; i < 12; ++i) expected.push_back(kNow + i * step);
  EXPECT_EQ(Timestamps(window[0]), expected);

  // Bounds off the sample grid and inside one window.
  auto inner = Read(*store, "h", "proc:db", kNow + step + 1, kNow + 2 * step + 1);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(Timestamps(inner[0]), (std::vector<int64_t>{kNow + 2 * step}));

  EXPECT_TRUE(Read(*store, "h", "proc:db", kNow + 19 * step, 0).empty());
  EXPECT_TRUE(Read(*store, "h", "proc:db", kNow + step, kNow + step).empty());
}

TEST(RocksDbSeriesStoreTest, IgnoresABatchAtOrBelowTheMark) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  Append(*store, "h", Batch(1, {ProcessSample("proc:a", "1", kNow, 1)}));
  Append(*store, "h", Batch(2, {ProcessSample("proc:a", "1", kNow + 1, 2)}));

  for (uint64_t resent : {2u, 1u}) {
    AppendResult again = Append(*store, "h",
                                Batch(resent, {ProcessSample("proc:a", "1", kNow + 5, 5),
                                               ProcessSample("proc:b", "1", kNow + 5, 5)}));
    EXPECT_FALSE(again.stored);
    EXPECT_EQ(again.samples_stored, 0u);
    EXPECT_EQ(again.missing_batches, 0u);
  }
  // Sequence 0 is never stored either (the validator rejects it before this).
  EXPECT_FALSE(
      Append(*store, "new-host", Batch(0, {ProcessSample("proc:a", "1", kNow, 1)})).stored);

  auto series = Read(*store, "h", "proc:a");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(Timestamps(series[0]), (std::vector<int64_t>{kNow, kNow + 1}));
  EXPECT_TRUE(Read(*store, "h", "proc:b").empty());
  drip::v1::HostInfo info = HostNamed(*store, "h");
  EXPECT_EQ(info.acked_sequence(), 2u);
  EXPECT_EQ(info.samples_stored(), 2u);
  EXPECT_EQ(info.gaps(), 0u);
  EXPECT_EQ(*store->AckedSequence("h"), 2u);
  EXPECT_EQ(*store->AckedSequence("new-host"), 0u);
}

TEST(RocksDbSeriesStoreTest, ARepairStoresOnlyTheSamplesItLacksAndMovesNoMark) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  drip::v1::SampleBatch not_known = Batch(1, {ProcessSample("proc:a", "1", kNow, 1)});
  EXPECT_EQ(store->AppendRepairSamples("h", not_known).status().code(),
            absl::StatusCode::kFailedPrecondition);
  Append(*store, "h",
         Batch(1, {ProcessSample("proc:a", "1", kNow, 1),
                   ProcessSample("proc:a", "1", kNow + 1000, 2)}));
  Append(*store, "h", Batch(3, {ProcessSample("proc:a", "1", kNow + 3000, 4)}));

  // The other copy's window: two samples this one has, two it lacks (one of a series it
  // never saw), and one past the retention.
  const drip::v1::SampleBatch other =
      Batch(1, {ProcessSample("proc:a", "1", kNow, 1), ProcessSample("proc:a", "1", kNow + 1000, 2),
                ProcessSample("proc:a", "1", kNow + 2000, 3),
                ProcessSample("proc:b", "7", kNow + 2000, 9),
                ProcessSample("proc:a", "1", kNow - 15 * kDayMs, 5)});
  absl::StatusOr<uint64_t> stored = store->AppendRepairSamples("h", other);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, 2u);
  EXPECT_EQ(*store->AppendRepairSamples("h", other), 0u) << "a repair sent twice lands once";

  auto check = [&](RocksDbSeriesStore& s) {
    auto a = Read(s, "h", "proc:a");
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(Timestamps(a[0]),
              (std::vector<int64_t>{kNow, kNow + 1000, kNow + 2000, kNow + 3000}));
    EXPECT_TRUE(MessageDifferencer::Equals(a[0].samples(2),
                                           AsRead(ProcessSample("proc:a", "1", kNow + 2000, 3))));
    auto b = Read(s, "h", "proc:b");
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].instance(), "7");
    EXPECT_EQ(Timestamps(b[0]), (std::vector<int64_t>{kNow + 2000}));
    drip::v1::HostInfo info = HostNamed(s, "h");
    EXPECT_EQ(info.acked_sequence(), 3u);
    EXPECT_EQ(info.samples_stored(), 3u);
    EXPECT_EQ(info.replica_samples_stored(), 2u);
    EXPECT_EQ(info.gaps(), 1u);
  };
  check(*store);
  // Durable, and the mark still takes the agent's next batch.
  store.reset();
  store = h.Open();
  ASSERT_NE(store, nullptr);
  check(*store);
  EXPECT_TRUE(Append(*store, "h", Batch(4, {ProcessSample("proc:a", "1", kNow + 4000, 5)})).stored);
}

// A repair can bring a batch's samples before the batch itself: the owner was killed
// after its replica stored a batch, and the replica's repair of the host's new owner ran
// before the agent resent the batch there. The batch then moves the mark and stores only
// what the repair did not, on the owner's stream and on a replica's copy alike.
TEST(RocksDbSeriesStoreTest, ABatchWhoseSamplesARepairBroughtFirstStoresThemOnce) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  Append(*store, "h", Batch(1, {ProcessSample("proc:a", "1", kNow, 1)}));
  ASSERT_EQ(
      *store->AppendRepairSamples("h", Batch(1, {ProcessSample("proc:a", "1", kNow + 1000, 2),
                                                 ProcessSample("proc:b", "7", kNow + 1000, 8)})),
      2u);
  EXPECT_EQ(HostNamed(*store, "h").repaired_newest_ms(), kNow + 1000);

  AppendResult resent = Append(*store, "h",
                               Batch(2, {ProcessSample("proc:a", "1", kNow + 1000, 2),
                                         ProcessSample("proc:b", "7", kNow + 1000, 8),
                                         ProcessSample("proc:a", "2", kNow + 1000, 5)}));
  EXPECT_TRUE(resent.stored);
  EXPECT_EQ(resent.samples_stored, 1u) << "only the instance the repair did not bring";
  // What the detector is given: the batch as stored.
  ASSERT_TRUE(resent.stored_part.has_value());
  ASSERT_EQ(resent.stored_part->samples_size(), 1);
  EXPECT_EQ(resent.stored_part->samples(0).instance(), "2");
  EXPECT_EQ(resent.stored_part->sequence(), 2u);
  absl::StatusOr<AppendResult> copied =
      store->AppendReplicaBatch("h", Batch(3, {ProcessSample("proc:b", "7", kNow + 1000, 8),
                                               ProcessSample("proc:b", "7", kNow + 2000, 9)}));
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(copied->samples_stored, 1u);
  ASSERT_TRUE(copied->stored_part.has_value());
  EXPECT_EQ(copied->stored_part->samples_size(), 1);
  // Past what any repair brought, a batch is stored whole without a read.
  AppendResult past = Append(*store, "h", Batch(4, {ProcessSample("proc:a", "1", kNow + 3000, 3)}));
  EXPECT_EQ(past.samples_stored, 1u);
  EXPECT_FALSE(past.stored_part.has_value());

  auto check = [&](RocksDbSeriesStore& s, uint64_t mark) {
    auto a = Read(s, "h", "proc:a");
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(Timestamps(a[0]), (std::vector<int64_t>{kNow, kNow + 1000, kNow + 3000}));
    EXPECT_EQ(Timestamps(a[1]), (std::vector<int64_t>{kNow + 1000}));
    auto b = Read(s, "h", "proc:b");
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(Timestamps(b[0]), (std::vector<int64_t>{kNow + 1000, kNow + 2000}));
    drip::v1::HostInfo info = HostNamed(s, "h");
    EXPECT_EQ(info.acked_sequence(), mark);
    EXPECT_EQ(info.samples_stored(), 3u);
    EXPECT_EQ(info.replica_samples_stored(), 3u);
  };
  check(*store, 4);
  // What the repair brought is remembered across a restart, like the mark.
  ASSERT_TRUE(store->FoldStaged().ok());
  store.reset();
  store = h.Open();
  ASSERT_NE(store, nullptr);
  check(*store, 4);
  EXPECT_EQ(
      Append(*store, "h", Batch(5, {ProcessSample("proc:b", "7", kNow + 1000, 8)})).samples_stored,
      0u);
  check(*store, 5);
}

TEST(RocksDbSeriesStoreTest, EmptyBatchAdvancesTheMark) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  AppendResult result = Append(*store, "h", Batch(1, {}));
  EXPECT_TRUE(result.stored);
  EXPECT_EQ(result.samples_stored, 0u);
  EXPECT_EQ(*store->AckedSequence("h"), 1u);
}

TEST(RocksDbSeriesStoreTest, RecordsAGapWhenTheSequenceJumps) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  auto sample = ProcessSample("proc:a", "1", kNow, 1);
  EXPECT_EQ(Append(*store, "h", Batch(1, {sample})).missing_batches, 0u);
  AppendResult jumped = Append(*store, "h", Batch(5, {sample}));
  EXPECT_TRUE(jumped.stored);
  EXPECT_EQ(jumped.missing_batches, 3u);  // 2, 3, 4

  // The agent's own account of where its drops began is overruled by the mark: 6 and 7
  // never arrived either, and never will be accepted now.
  h.clock.Advance(minutes(1));
  drip::v1::SampleBatch reported = Batch(10, {sample});
  reported.set_first_dropped_sequence(8);
  EXPECT_EQ(Append(*store, "h", reported).missing_batches, 4u);  // 6..9

  drip::v1::HostInfo info = HostNamed(*store, "h");
  EXPECT_EQ(info.gaps(), 7u);
  EXPECT_EQ(info.acked_sequence(), 10u);
  absl::StatusOr<std::vector<GapRecord>> gaps = store->ReadGaps("h");
  ASSERT_TRUE(gaps.ok()) << gaps.status();
  ASSERT_EQ(gaps->size(), 2u);
  EXPECT_EQ((*gaps)[0].from_sequence, 2u);
  EXPECT_EQ((*gaps)[0].to_sequence, 5u);
  EXPECT_EQ((*gaps)[0].recorded_ms, kNow);
  EXPECT_EQ((*gaps)[1].from_sequence, 6u);
  EXPECT_EQ((*gaps)[1].to_sequence, 10u);
  EXPECT_EQ((*gaps)[1].missing_batches(), 4u);
  EXPECT_EQ((*gaps)[1].recorded_ms, kNow + 60'000);
}

TEST(RocksDbSeriesStoreTest, GapKeepsTheTimeSpanOfTheSamplesTheAgentDropped) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  auto sample = ProcessSample("proc:a", "1", kNow, 1);
  Append(*store, "h", Batch(1, {sample}));
  drip::v1::SampleBatch after = Batch(6, {ProcessSample("proc:a", "1", kNow + 50'000, 1)});
  after.set_first_dropped_sequence(2);
  after.set_dropped_from_ms(kNow + 10'000);
  after.set_dropped_until_ms(kNow + 40'000);
  after.set_dropped_samples(40);
  Append(*store, "h", after);
  // Lost without the agent's account: only where the gap ends is known.
  Append(*store, "h", Batch(9, {ProcessSample("proc:a", "1", kNow + 90'000, 1)}));

  absl::StatusOr<std::vector<GapRecord>> gaps = store->ReadGaps("h");
  ASSERT_TRUE(gaps.ok()) << gaps.status();
  ASSERT_EQ(gaps->size(), 2u);
  EXPECT_EQ((*gaps)[0].from_ms, kNow + 10'000);
  EXPECT_EQ((*gaps)[0].until_ms, kNow + 40'000);
  EXPECT_EQ((*gaps)[0].samples, 40u);
  EXPECT_EQ((*gaps)[1].from_ms, 0);
  EXPECT_EQ((*gaps)[1].until_ms, kNow + 90'000);
  EXPECT_EQ((*gaps)[1].samples, 0u);
}

TEST(RocksDbSeriesStoreTest, GapValuesWrittenBeforeTimeSpansStillDecode) {
  std::string old_value;
  PutVarint64(9, &old_value);
  PutVarint64(123, &old_value);
  GapRecord gap;
  ASSERT_TRUE(DecodeGapValue(old_value, &gap));
  EXPECT_EQ(gap.to_sequence, 9u);
  EXPECT_EQ(gap.recorded_ms, 123);
  EXPECT_EQ(gap.samples, 0u);
  GapRecord round{1, 4, 55, 1000, 2000, 7};
  GapRecord back;
  ASSERT_TRUE(DecodeGapValue(EncodeGapValue(round), &back));
  EXPECT_EQ(back.until_ms, 2000);
  EXPECT_EQ(back.samples, 7u);
  EXPECT_FALSE(DecodeGapValue(old_value + "x", &back));
}

TEST(RocksDbSeriesStoreTest, TrustsTheAgentAboutDropsBeforeItsFirstStoredBatch) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  drip::v1::SampleBatch reported = Batch(10, {});
  reported.set_first_dropped_sequence(4);
  EXPECT_EQ(Append(*store, "dropped", reported).missing_batches, 6u);
  // Without the agent's word, a first batch above 1 is not a gap: the collector cannot
  // tell a lost history from a store that started late.
  EXPECT_EQ(Append(*store, "fresh", Batch(57, {})).missing_batches, 0u);

  EXPECT_EQ(HostNamed(*store, "dropped").gaps(), 6u);
  EXPECT_EQ(HostNamed(*store, "fresh").gaps(), 0u);
  EXPECT_TRUE(store->ReadGaps("fresh")->empty());
}

TEST(RocksDbSeriesStoreTest, KeepsEverythingAcrossAReopen) {
  Harness h;
  h.options.sync_writes = true;
  drip::v1::HostInfo hello;
  hello.set_host("db-1");
  (*hello.mutable_labels())["kernel"] = "6.1";
  hello.set_agent_version("0.1.0");
  hello.set_memory_total_bytes(64ull << 30);
  hello.set_sampler("bpf");
  hello.set_first_seen_ms(kNow);
  hello.set_last_seen_ms(kNow);
  {
    auto store = h.Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutHost(hello).ok());
    Append(*store, "db-1",
           Batch(1, {ProcessSample("proc:pg", "1@1", kNow, 10),
                     ProcessSample("proc:pg", "2@2", kNow, 20)}));
    Append(*store, "db-1", Batch(3, {ProcessSample("proc:pg", "1@1", kNow + 1000, 11)}));
  }
  h.clock.Advance(minutes(5));
  auto store = h.Open();
  ASSERT_NE(store, nullptr);

  EXPECT_EQ(*store->AckedSequence("db-1"), 3u);
  drip::v1::HostInfo info = HostNamed(*store, "db-1");
  EXPECT_EQ(info.labels().at("kernel"), "6.1");
  EXPECT_EQ(info.agent_version(), "0.1.0");
  EXPECT_EQ(info.memory_total_bytes(), 64ull << 30);
  EXPECT_EQ(info.sampler(), "bpf");
  EXPECT_EQ(info.first_seen_ms(), kNow);
  EXPECT_EQ(info.samples_stored(), 3u);
  EXPECT_EQ(info.gaps(), 1u);
  EXPECT_FALSE(info.connected());
  EXPECT_FALSE(Append(*store, "db-1", Batch(3, {ProcessSample("proc:pg", "1@1", kNow, 1)})).stored);

  // New series after the reopen get ids of their own: the old series do not gain points.
  Append(*store, "db-1",
         Batch(4, {ProcessSample("proc:new", "9@9", kNow + 2000, 90),
                   ProcessSample("proc:pg", "3@3", kNow + 2000, 30),
                   ProcessSample("proc:pg", "1@1", kNow + 2000, 12)}));
  auto pg = Read(*store, "db-1", "proc:pg");
  ASSERT_EQ(pg.size(), 3u);
  EXPECT_EQ(pg[0].instance(), "1@1");
  EXPECT_EQ(Timestamps(pg[0]), (std::vector<int64_t>{kNow, kNow + 1000, kNow + 2000}));
  EXPECT_EQ(pg[1].instance(), "2@2");
  EXPECT_EQ(pg[1].samples_size(), 1);
  EXPECT_EQ(pg[1].samples(0).process().anon_rss_bytes(), 20u);
  EXPECT_EQ(pg[2].instance(), "3@3");
  EXPECT_EQ(pg[2].samples_size(), 1);
  auto fresh = Read(*store, "db-1", "proc:new");
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].samples_size(), 1);
  EXPECT_EQ(fresh[0].samples(0).process().anon_rss_bytes(), 90u);
}

// A series whose every sample expired leaves the index with its chunks: listing a host's
// components (and the detector's replay at start) must not grow with every process that
// ever ran. One that reports again starts a new series and is read as usual.
TEST(RocksDbSeriesStoreTest, ASeriesLeftWithNoSampleLeavesTheIndex) {
  Harness h;
  h.options.retention = hours(24);
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  Append(*store, "h",
         Batch(1, {ProcessSample("proc:gone", "1", kNow - 3 * kDayMs, 1),
                   ProcessSample("proc:a", "1", kNow - 3 * kDayMs, 1),
                   ProcessSample("proc:a", "1", kNow, 2)}));
  ASSERT_TRUE(store->EnforceRetention().ok());
  absl::StatusOr<std::vector<std::string>> components = store->ListComponents("h");
  ASSERT_TRUE(components.ok()) << components.status();
  EXPECT_EQ(*components, std::vector<std::string>{"proc:a"});

  Append(*store, "h", Batch(2, {ProcessSample("proc:gone", "1", kNow + 1000, 7)}));
  auto back = Read(*store, "h", "proc:gone");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(Timestamps(back[0]), (std::vector<int64_t>{kNow + 1000}));
  ASSERT_TRUE(store->ListComponents("h").ok());
  EXPECT_EQ(store->ListComponents("h")->size(), 2u);
}

TEST(RocksDbSeriesStoreTest, DropsExpiredChunksOnEnforceRetention) {
  Harness h;
  h.options.retention = hours(24);
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  Append(*store, "h",
         Batch(1, {ProcessSample("proc:a", "1", kNow - 3 * kDayMs, 1),
                   ProcessSample("proc:a", "1", kNow - 2 * kDayMs, 2),
                   ProcessSample("proc:b", "1", kNow - 2 * kDayMs + 5, 2),
                   ProcessSample("proc:a", "1", kNow - kHourMs, 3),
                   ProcessSample("proc:a", "1", kNow, 4)}));

  absl::StatusOr<uint64_t> dropped = store->EnforceRetention();
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(*dropped, 3u);
  auto kept = Read(*store, "h", "proc:a");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(Timestamps(kept[0]), (std::vector<int64_t>{kNow - kHourMs, kNow}));

  // With the clock turned back the old samples would be in retention again: they are
  // gone from disk, not only hidden.
  h.clock.Set(kNow - 2 * kDayMs);
  auto rewound = Read(*store, "h", "proc:a");
  ASSERT_EQ(rewound.size(), 1u);
  EXPECT_EQ(Timestamps(rewound[0]), (std::vector<int64_t>{kNow - kHourMs, kNow}));
  EXPECT_TRUE(Read(*store, "h", "proc:b").empty());
}

TEST(RocksDbSeriesStoreTest, HidesExpiredSamplesBeforeCompaction) {
  Harness h;
  h.options.retention = hours(24);
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  Append(*store, "h",
         Batch(1, {ProcessSample("proc:a", "1", kNow - 2 * kDayMs, 1),
                   ProcessSample("proc:a", "1", kNow - kHourMs, 2),
                   ProcessSample("proc:a", "1", kNow, 3)}));
  auto series = Read(*store, "h", "proc:a");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(Timestamps(series[0]), (std::vector<int64_t>{kNow - kHourMs, kNow}));

  // Sample by sample, not chunk by chunk: the retention edge is exact (once a newer sample
  // has come: retention's "now" never passes the newest stored sample).
  h.clock.Set(kNow + kDayMs - kHourMs + 1);
  Append(*store, "h2", Batch(1, {ProcessSample("proc:z", "1", kNow + kDayMs - kHourMs + 1, 1)}));
  series = Read(*store, "h", "proc:a");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(Timestamps(series[0]), (std::vector<int64_t>{kNow}));
}

// A collector clock that jumps a year ahead (a bad NTP step, a VM restored with a wrong
// RTC) must not make the next compaction delete the store: retention's "now" is held to
// the newest sample stored, also after a restart. Samples that come in at the real time
// keep it there; once the fleet's samples are a day newer, the day-old data goes.
TEST(RocksDbSeriesStoreTest, AClockThatJumpsAheadExpiresNothingNewerThanTheNewestSample) {
  Harness h;
  h.options.retention = hours(24);
  {
    auto store = h.Open();
    ASSERT_NE(store, nullptr);
    Append(*store, "h",
           Batch(1, {ProcessSample("proc:a", "1", kNow - 2 * kHourMs, 1),
                     ProcessSample("proc:a", "1", kNow, 2)}));
  }
  h.clock.Set(kNow + 365 * kDayMs);
  auto store = h.Open();  // reopened: the newest sample is read back from the host records
  ASSERT_NE(store, nullptr);
  absl::StatusOr<uint64_t> dropped = store->EnforceRetention();
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(*dropped, 0u);
  auto kept = Read(*store, "h", "proc:a");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(Timestamps(kept[0]), (std::vector<int64_t>{kNow - 2 * kHourMs, kNow}));

  // The fleet goes on at the real time: a sample a day and an hour on still leaves the
  // last day of data, and hides what is older than a day before it.
  Append(*store, "h", Batch(2, {ProcessSample("proc:a", "1", kNow + kDayMs - kHourMs, 3)}));
  kept = Read(*store, "h", "proc:a");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(Timestamps(kept[0]), (std::vector<int64_t>{kNow, kNow + kDayMs - kHourMs}));
}

TEST(RocksDbSeriesStoreTest, RunsTheFullRetentionCompactionOnlyWhenEnoughHasExpired) {
  Harness h;
  h.options.retention = hours(24);  // full pass once the cutoff moved by 3 hours
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  // The first pass runs and drops nothing. Samples keep coming at the clock's time
  // (retention's "now" is the newest of them), one of them late, from 23.5 hours ago.
  Append(*store, "h", Batch(1, {ProcessSample("proc:a", "1", kNow, 1)}));
  ASSERT_EQ(*store->EnforceRetention(), 0u);
  Append(*store, "h", Batch(2, {ProcessSample("proc:a", "1", kNow - kDayMs + kHourMs / 2, 2)}));

  h.clock.Advance(hours(1));
  Append(*store, "h", Batch(3, {ProcessSample("proc:a", "1", kNow + kHourMs, 3)}));
  EXPECT_EQ(*store->EnforceRetention(), 0u);  // expired, but not worth a full rewrite yet
  EXPECT_EQ(Read(*store, "h", "proc:a")[0].samples_size(), 2);  // hidden nonetheless

  h.clock.Advance(hours(2));
  Append(*store, "h", Batch(4, {ProcessSample("proc:a", "1", kNow + 3 * kHourMs, 4)}));
  EXPECT_EQ(*store->EnforceRetention(), 1u);
}

TEST(RocksDbSeriesStoreTest, StoresConcurrentBatchesExactlyOnce) {
  Harness h;
  // Background folds every few batches, racing appends and reads.
  h.options.fold_interval = milliseconds(5);
  h.options.fold_bytes = 16 * 1024;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  constexpr int kHosts = 4;
  constexpr int kBatches = 40;
  constexpr int kSamples = 50;
  auto make_batch = [](int host, int sequence) {
    std::vector<drip::v1::Sample> samples;
    for (int i = 0; i < kSamples; ++i) {
      // Same names on every host: ids must still be per host.
      samples.push_back(ProcessSample(fmt::format("proc:svc-{}", i % 5), fmt::format("{}", i),
                                      kNow + sequence * 1000,
                                      static_cast<uint64_t>(host * 1'000'000 + sequence)));
    }
    return Batch(static_cast<uint64_t>(sequence), samples);
  };

  // Hosts 0..3 get one thread each; host 0 also gets a second thread resending the same
  // batches in the same order, as after a reconnect racing the old stream.
  std::atomic<int> stored_batches[kHosts] = {};
  std::atomic<uint64_t> stored_samples{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kHosts + 1; ++t) {
    const int host = t % kHosts;
    threads.emplace_back([&, host] {
      for (int seq = 1; seq <= kBatches; ++seq) {
        absl::StatusOr<AppendResult> r =
            store->AppendBatch(fmt::format("host-{}", host), make_batch(host, seq));
        ASSERT_TRUE(r.ok()) << r.status();
        if (r->stored) {
          stored_batches[host]++;
          stored_samples += r->samples_stored;
        }
      }
    });
  }
  // A reader racing the writers and the folder sees every sample at most once, in order.
  std::atomic<bool> writing{true};
  std::thread reader([&] {
    while (writing) {
      for (const auto& series : Read(*store, "host-1", "proc:svc-0")) {
        for (int i = 1; i < series.samples_size(); ++i) {
          ASSERT_LT(series.samples(i - 1).timestamp_ms(), series.samples(i).timestamp_ms());
        }
      }
    }
  });
  for (auto& t : threads) t.join();
  writing = false;
  reader.join();
  ASSERT_TRUE(store->FoldStaged().ok());

  EXPECT_EQ(stored_samples.load(), uint64_t{kHosts} * kBatches * kSamples);
  for (int host = 0; host < kHosts; ++host) {
    const std::string name = fmt::format("host-{}", host);
    EXPECT_EQ(stored_batches[host].load(), kBatches) << name;
    drip::v1::HostInfo info = HostNamed(*store, name);
    EXPECT_EQ(info.acked_sequence(), uint64_t{kBatches});
    EXPECT_EQ(info.samples_stored(), uint64_t{kBatches} * kSamples);
    EXPECT_EQ(info.gaps(), 0u);
    for (int c = 0; c < 5; ++c) {
      auto series = Read(*store, name, fmt::format("proc:svc-{}", c));
      ASSERT_EQ(series.size(), static_cast<size_t>(kSamples / 5)) << name;
      for (const auto& s : series) {
        ASSERT_EQ(s.samples_size(), kBatches) << name << " " << s.instance();
        for (int i = 0; i < kBatches; ++i) {
          EXPECT_EQ(s.samples(i).process().anon_rss_bytes(),
                    static_cast<uint64_t>(host * 1'000'000 + i + 1));
        }
      }
    }
  }
}

TEST(RocksDbSeriesStoreTest, PutHostKeepsFirstSeenAndTheStoreCounters) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  drip::v1::HostInfo hello;
  hello.set_host("h");
  hello.set_first_seen_ms(kNow - 1000);
  hello.set_last_seen_ms(kNow - 1000);
  (*hello.mutable_labels())["os"] = "debian12";
  hello.set_agent_version("0.1.0");
  ASSERT_TRUE(store->PutHost(hello).ok());
  Append(*store, "h", Batch(2, {ProcessSample("proc:a", "1", kNow, 1)}));

  h.clock.Advance(minutes(10));
  drip::v1::HostInfo again;
  again.set_host("h");
  again.set_first_seen_ms(kNow + 10 * 60'000);
  again.set_last_seen_ms(kNow + 10 * 60'000);
  (*again.mutable_labels())["os"] = "debian13";
  again.set_agent_version("0.2.0");
  again.set_sampler("proc");
  again.set_acked_sequence(99);  // the store's to keep: ignored
  again.set_samples_stored(99);
  again.set_gaps(99);
  again.set_connected(true);
  ASSERT_TRUE(store->PutHost(again).ok());

  drip::v1::HostInfo info = HostNamed(*store, "h");
  EXPECT_EQ(info.first_seen_ms(), kNow - 1000);
  EXPECT_EQ(info.last_seen_ms(), kNow + 10 * 60'000);
  EXPECT_EQ(info.labels().at("os"), "debian13");
  EXPECT_EQ(info.agent_version(), "0.2.0");
  EXPECT_EQ(info.sampler(), "proc");
  EXPECT_EQ(info.acked_sequence(), 2u);
  EXPECT_EQ(info.samples_stored(), 1u);
  EXPECT_EQ(info.gaps(), 0u);
  EXPECT_FALSE(info.connected());
  EXPECT_EQ(*store->AckedSequence("h"), 2u);

  drip::v1::HostInfo nameless;
  EXPECT_EQ(store->PutHost(nameless).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->AppendBatch("", Batch(1, {})).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RocksDbSeriesStoreTest, ListsHostsSortedIncludingThoseWithoutAHello) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  Append(*store, "zeta", Batch(1, {ProcessSample("proc:a", "1", kNow, 1)}));
  h.clock.Advance(minutes(1));
  Append(*store, "alpha", Batch(7, {}));
  drip::v1::HostInfo hello;
  hello.set_host("mid");
  ASSERT_TRUE(store->PutHost(hello).ok());

  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store->ListHosts();
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  ASSERT_EQ(hosts->size(), 3u);
  EXPECT_EQ((*hosts)[0].host(), "alpha");
  EXPECT_EQ((*hosts)[0].acked_sequence(), 7u);
  EXPECT_EQ((*hosts)[0].first_seen_ms(), kNow + 60'000);
  EXPECT_EQ((*hosts)[0].last_seen_ms(), kNow + 60'000);
  EXPECT_EQ((*hosts)[1].host(), "mid");
  EXPECT_EQ((*hosts)[1].first_seen_ms(), kNow + 60'000);
  EXPECT_EQ((*hosts)[2].host(), "zeta");
  EXPECT_EQ((*hosts)[2].samples_stored(), 1u);
  EXPECT_EQ((*hosts)[2].first_seen_ms(), kNow);
}

TEST(RocksDbSeriesStoreTest, NamesWithNulBytesStayDistinct) {
  using namespace std::string_literals;
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  Append(*store, "a\0b"s, Batch(1, {ProcessSample("c", "i", kNow, 1)}));
  Append(*store, "a"s, Batch(1, {ProcessSample("b\0c"s, "i", kNow, 2)}));
  auto first = Read(*store, "a\0b"s, "c");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].samples(0).process().anon_rss_bytes(), 1u);
  auto second = Read(*store, "a", "b\0c"s);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].samples(0).process().anon_rss_bytes(), 2u);
}

TEST(RocksDbSeriesStoreTest, KeepsTheChunkWindowItWasCreatedWith) {
  Harness h;
  h.options.chunk_window = hours(1);
  {
    auto store = h.Open();
    ASSERT_NE(store, nullptr);
    Append(*store, "h", Batch(1, {ProcessSample("proc:a", "1", kNow + 30 * 60'000, 1)}));
  }
  h.options.chunk_window = minutes(10);
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->chunk_window(), hours(1));
  Append(*store, "h", Batch(2, {ProcessSample("proc:a", "1", kNow + 45 * 60'000, 2)}));
  // A read starting mid-window finds the sample, which it would miss were the windows
  // now 10 minutes long.
  auto series = Read(*store, "h", "proc:a", kNow + 25 * 60'000, 0);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(Timestamps(series[0]), (std::vector<int64_t>{kNow + 30 * 60'000, kNow + 45 * 60'000}));
}

TEST(RocksDbSeriesStoreTest, ReportsASizeOnceDataIsWritten) {
  Harness h;
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  const uint64_t empty = store->ApproximateSizeBytes();
  std::vector<drip::v1::Sample> samples;
  for (int i = 0; i < 1000; ++i) samples.push_back(ProcessSample("proc:a", "1", kNow + i, i));
  Append(*store, "h", Batch(1, samples));
  EXPECT_GT(store->ApproximateSizeBytes(), empty);
}

TEST(RocksDbSeriesStoreTest, OpeningARegularFileNamesThePath) {
  ScopedTempDir dir;
  const std::string file = dir.path() + "/not-a-dir";
  std::ofstream(file) << "x";
  for (const std::string& path : {file, file + "/below"}) {
    RocksDbSeriesStoreOptions options;
    options.path = path;
    absl::StatusOr<std::unique_ptr<SeriesStore>> store = OpenRocksDbSeriesStore(options);
    ASSERT_FALSE(store.ok()) << path;
    EXPECT_NE(std::string(store.status().message()).find(path), std::string::npos)
        << store.status();
  }
}

TEST(RocksDbSeriesStoreTest, OpeningAnUnwritableDirectoryNamesThePath) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes to any directory";
  ScopedTempDir dir;
  const std::string path = dir.path() + "/locked";
  std::filesystem::create_directory(path);
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  RocksDbSeriesStoreOptions options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<SeriesStore>> store = OpenRocksDbSeriesStore(options);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(std::string(store.status().message()).find(path), std::string::npos) << store.status();
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

TEST(RocksDbSeriesStoreTest, OpeningAStoreInUseNamesThePath) {
  Harness h;
  auto first = h.Open();
  ASSERT_NE(first, nullptr);
  absl::StatusOr<std::unique_ptr<SeriesStore>> second = OpenRocksDbSeriesStore(h.options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(std::string(second.status().message()).find(h.options.path), std::string::npos)
      << second.status();
}

}  // namespace
}  // namespace drip::collector

namespace drip::collector {
namespace {

drip::v1::InstanceVersion Version(const std::string& component, const std::string& instance,
                                  int64_t first_seen_ms, const std::string& label) {
  drip::v1::InstanceVersion v;
  v.set_component(component);
  v.set_instance(instance);
  v.set_first_seen_ms(first_seen_ms);
  v.set_label(label);
  v.set_build_id("ab12");
  return v;
}

TEST(RocksDbSeriesStoreTest, KeepsTheLatestInstanceVersionsOfEachComponentAcrossReopen) {
  Harness h;
  {
    auto store = h.Open();
    for (int i = 0; i < 10; ++i) {
      drip::v1::SampleBatch batch =
          Batch(static_cast<uint64_t>(i + 1),
                {ProcessSample("svc:a.service", fmt::format("{}@1", i), kNow + i * 1000, 100)});
      *batch.add_versions() =
          Version("svc:a.service", fmt::format("{}@1", i), kNow + i * 1000, fmt::format("v{}", i));
      if (i == 0) {
        *batch.add_versions() = Version("svc:b.service", "7@1", kNow, "b1");
        batch.mutable_versions(1)->set_host("web-1");
      }
      ASSERT_TRUE(Append(*store, "web-1", batch).stored);
    }
    // An agent that restarted names instance 9 again, first seen later: the first stays.
    drip::v1::SampleBatch again =
        Batch(11, {ProcessSample("svc:a.service", "9@1", kNow + 60'000, 100)});
    *again.add_versions() = Version("svc:a.service", "9@1", kNow + 60'000, "v9");
    ASSERT_TRUE(Append(*store, "web-1", again).stored);
  }
  auto store = h.Open();
  absl::StatusOr<std::vector<drip::v1::InstanceVersion>> versions = store->ReadInstanceVersions();
  ASSERT_TRUE(versions.ok()) << versions.status();
  ASSERT_EQ(versions->size(), SeriesStore::kVersionsPerComponent + 1);
  for (size_t i = 0; i < SeriesStore::kVersionsPerComponent; ++i) {
    const drip::v1::InstanceVersion& v = (*versions)[i];
    EXPECT_EQ(v.host(), "web-1");
    EXPECT_EQ(v.component(), "svc:a.service");
    EXPECT_EQ(v.label(), fmt::format("v{}", i + 2));  // the two oldest fell out
    EXPECT_EQ(v.first_seen_ms(), kNow + static_cast<int64_t>(i + 2) * 1000);
  }
  EXPECT_EQ(versions->back().component(), "svc:b.service");
  EXPECT_EQ(versions->back().label(), "b1");
}

}  // namespace
}  // namespace drip::collector

namespace drip::collector {
namespace {

// Writes `entries` straight into the meta column family of the (closed) store at `path`,
// as a damaged disk or a buggy older build might have left them.
void WriteRawMeta(const std::string& path, const std::map<std::string, std::string>& entries) {
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(), kSeriesColumnFamily,
                           kMetaColumnFamily, kStagingColumnFamily, kReportsColumnFamily}) {
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(rocksdb::DBOptions(), path, families, &handles, &raw);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (const auto& [key, value] : entries) {
    ASSERT_TRUE(raw->Put(rocksdb::WriteOptions(), handles[2], key, value).ok());
  }
  for (rocksdb::ColumnFamilyHandle* h : handles)
    ASSERT_TRUE(raw->DestroyColumnFamilyHandle(h).ok());
  delete raw;
}

// One damaged index entry used to fail every read of its host, and with them the
// detector's rebuild: the collector would not start. It is left out, counted once, and
// the rest is served.
TEST(RocksDbSeriesStoreTest, ACorruptIndexEntryIsSkippedCountedOnceAndTheRestIsServed) {
  Harness h;
  {
    auto store = h.Open();
    ASSERT_NE(store, nullptr);
    Append(*store, "web-1", Batch(1, {ProcessSample("svc:a", "1@1", kNow - 60'000, 100)}));
    Append(*store, "web-2", Batch(1, {ProcessSample("svc:b", "2@1", kNow - 60'000, 200)}));
  }
  WriteRawMeta(h.options.path,
               {// an instance entry whose value is not a series id
                {SeriesIndexKey("web-1", "svc:a", "9@9"), "not an id"},
                // a key under web-1 whose component cannot be decoded
                {SeriesIndexHostPrefix("web-1") + std::string("\xff\xff\xff", 3), "x"}});
  auto store = h.Open();
  ASSERT_NE(store, nullptr);
  for (int pass = 0; pass < 2; ++pass) {
    absl::StatusOr<std::vector<std::string>> components = store->ListComponents("web-1");
    ASSERT_TRUE(components.ok()) << components.status();
    EXPECT_EQ(*components, std::vector<std::string>{"svc:a"});
    std::vector<drip::v1::Series> series = Read(*store, "web-1", "svc:a");
    ASSERT_EQ(series.size(), 1u);
    EXPECT_EQ(series[0].instance(), "1@1");
    EXPECT_EQ(Read(*store, "web-2", "svc:b").size(), 1u);
  }
  EXPECT_EQ(store->CorruptRecordsSkipped(), 2u);
}

}  // namespace
}  // namespace drip::collector
