// Append throughput of RocksDbSeriesStore with realistic batches, for the record in
// docs/storage.md ("Throughput"): with and without fsync, and with more writers sharing
// one WAL sync, side by side in one run. Batches are built up front, as the gRPC layer
// hands them over already parsed. Usage: store_append_bench [BATCHES_PER_HOST] (2000).
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "collector/storage/rocksdb_series_store.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

constexpr int kSamplesPerBatch = 500;  // one agent pass over a host's processes
constexpr int kHosts = 16;
constexpr int kRingBatches = 64;
constexpr int kDefaultWriters = 4;  // the collector's default storage.write_threads

// One host's batch: 500 processes under 97 components, timestamps 10 s apart per batch.
drip::v1::SampleBatch MakeBatch(int host, uint64_t sequence, int64_t t0_ms) {
  drip::v1::SampleBatch batch;
  batch.set_sequence(sequence);
  const int64_t ts = t0_ms + static_cast<int64_t>(sequence) * 10'000;
  for (int i = 0; i < kSamplesPerBatch; ++i) {
    drip::v1::Sample* s = batch.add_samples();
    s->set_component(fmt::format("proc:service-{}", i % 97));
    s->set_instance(fmt::format("{}@{}", 1000 + i, 1'700'000'000 + host));
    s->set_timestamp_ms(ts);
    drip::v1::ProcessMemory* p = s->mutable_process();
    p->set_anon_rss_bytes((50u << 20) + sequence * 4096 + i);
    p->set_file_rss_bytes(20u << 20);
    p->set_shmem_rss_bytes(1u << 20);
    p->set_swap_bytes(0);
  }
  return batch;
}

double MeasureSamplesPerSecond(bool sync_writes, int writers, int batches_per_host) {
  std::string dir = (std::filesystem::temp_directory_path() / "drip-append-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    return -1;
  }
  // Removed whatever happens below; the store is closed first (declared after).
  std::unique_ptr<std::string, void (*)(std::string*)> remove_dir(
      &dir, [](std::string* d) { std::filesystem::remove_all(*d); });
  RocksDbSeriesStoreOptions options;
  options.path = dir + "/store";
  options.sync_writes = sync_writes;
  absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> store = RocksDbSeriesStore::Open(options);
  if (!store.ok()) {
    fmt::print(stderr, "opening the store: {}\n", store.status().ToString());
    return -1;
  }

  const int64_t t0_ms = SystemClock::Get()->NowMs() - 3'600'000;
  // A ring of distinct batches per host, reused with fresh sequence numbers and times so
  // that long runs (which exercise flushes and compactions) fit in memory.
  std::vector<std::vector<drip::v1::SampleBatch>> ring(kHosts);
  for (int host = 0; host < kHosts; ++host) {
    for (int b = 1; b <= kRingBatches; ++b) {
      ring[host].push_back(MakeBatch(host, static_cast<uint64_t>(b), t0_ms));
    }
  }

  // Each writer thread owns kHosts / writers hosts and interleaves them, as the server's
  // writer pool does with many streams.
  std::atomic<uint64_t> samples{0};
  std::atomic<bool> failed{false};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < writers; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < batches_per_host; ++b) {
        for (int host = t; host < kHosts; host += writers) {
          drip::v1::SampleBatch& batch = ring[host][b % kRingBatches];
          batch.set_sequence(static_cast<uint64_t>(b) + 1);
          for (drip::v1::Sample& sample : *batch.mutable_samples()) {
            sample.set_timestamp_ms(t0_ms + (b + 1) * 10'000);
          }
          absl::StatusOr<AppendResult> r =
              (*store)->AppendBatch(fmt::format("host-{}", host), batch);
          if (!r.ok() || !r->stored) {
            fmt::print(stderr, "append refused: {}\n", r.status().ToString());
            failed = true;
            return;
          }
          samples += r->samples_stored;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const auto appended = std::chrono::steady_clock::now();
  // Whatever the background folder has not done yet is work this run caused: count it.
  absl::StatusOr<FoldStats> folded = (*store)->FoldStaged();
  if (!folded.ok() || failed) {
    if (!folded.ok()) fmt::print(stderr, "folding: {}\n", folded.status().ToString());
    return -1;
  }
  const auto end = std::chrono::steady_clock::now();
  const double append_seconds = std::chrono::duration<double>(appended - start).count();
  const double seconds = std::chrono::duration<double>(end - start).count();
  const double rate = static_cast<double>(samples.load()) / seconds;
  fmt::print(stderr,
             "append throughput: sync_writes={} {} writers: {} samples appended in {:.2f} s "
             "({:.0f} samples/s, {:.0f} batches/s of {}); with the staged rest folded {:.2f} s "
             "= {:.0f} samples/s; store size {:.1f} MiB\n",
             sync_writes, writers, samples.load(), append_seconds,
             static_cast<double>(samples.load()) / append_seconds,
             static_cast<double>(samples.load()) / append_seconds / kSamplesPerBatch,
             kSamplesPerBatch, seconds, rate,
             static_cast<double>((*store)->ApproximateSizeBytes()) / (1 << 20));
  return rate;
}

}  // namespace
}  // namespace drip::collector

int main(int argc, char** argv) {
  using drip::collector::kDefaultWriters;
  using drip::collector::MeasureSamplesPerSecond;
  const int batches = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (batches <= 0) {
    std::fprintf(stderr, "store_append_bench: BATCHES_PER_HOST must be a positive number\n");
    return 2;
  }
  struct Run {
    bool sync;
    int writers;
  };
  // With fsync, throughput grows with the writers that share one WAL sync.
  const Run runs[] = {{false, kDefaultWriters}, {true, kDefaultWriters}, {true, 8}, {true, 16}};
  std::printf("%-11s %-7s %s\n", "sync_writes", "writers", "samples/s incl. folding");
  for (const Run& run : runs) {
    const double rate = MeasureSamplesPerSecond(run.sync, run.writers, batches);
    if (rate < 0) return 1;
    std::printf("%-11s %-7d %.2f M\n", run.sync ? "true" : "false", run.writers, rate / 1e6);
  }
  return 0;
}
