// Ingest benchmark: N concurrent agent streams of realistic sample batches over
// loopback gRPC into a real drip-collector (separate process, RocksDB on disk), then
// the same samples written straight into RocksDB with WriteBatches, in the same run,
// so the ratio says what Drip's protocol, validation and layout cost on this machine.
//
//   ingest_bench [--streams N] [--batches-per-stream K] [--samples-per-batch S]
//                [--window W] [--sync true|false] [--dir DIR]
//
// Prints samples/s end to end, raw RocksDB samples/s, their ratio, ack latency p50/p99
// and the collector's peak RSS (VmHWM). Recorded in docs/benchmarks.md.
#include <grpcpp/grpcpp.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/daemon/ready_file.h"
#include "drip/v1/agent.grpc.pb.h"
#include "fmt/format.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int streams = 8;
  int batches_per_stream = 1000;
  int samples_per_batch = 500;
  int window = 16;  // unacknowledged batches in flight per stream
  bool sync = true;
  std::string dir;
};

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One agent's pass over a host with `samples` processes; timestamps 10 s apart per batch.
drip::v1::SampleBatch MakeBatch(int stream, uint64_t sequence, int samples, int64_t t0_ms) {
  drip::v1::SampleBatch batch;
  batch.set_sequence(sequence);
  int64_t ts = t0_ms + static_cast<int64_t>(sequence) * 10'000;
  for (int i = 0; i < samples; ++i) {
    auto* s = batch.add_samples();
    s->set_component(fmt::format("proc:service-{}", i % 97));
    s->set_instance(fmt::format("{}@{}", 1000 + i, 1'700'000'000 + stream));
    s->set_timestamp_ms(ts);
    auto* p = s->mutable_process();
    p->set_anon_rss_bytes((50u << 20) + sequence * 4096 + i);
    p->set_file_rss_bytes(20u << 20);
    p->set_shmem_rss_bytes(1u << 20);
    p->set_swap_bytes(0);
  }
  return batch;
}

// utime + stime of a live process, in seconds: the collector's own share of the two
// cores this benchmark splits with its load generator.
double CpuSeconds(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the parenthesised comm; utime and stime are fields 14 and 15.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

uint64_t PeakRssBytes(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

struct StreamStats {
  uint64_t samples = 0;
  std::vector<double> ack_latency_ms;
  std::string error;
};

// The load generator shares the machine's two cores with the collector, so it sends
// batches it serialised up front (as raw gRPC byte buffers on the AgentService/Connect
// method, which is what the generated stub does underneath) and spends its CPU on the
// transport only.
grpc::ByteBuffer Serialized(const google::protobuf::Message& msg) {
  std::string bytes = msg.SerializeAsString();
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

bool ParseReply(grpc::ByteBuffer& buffer, drip::v1::CollectorMessage* msg) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return false;
  std::string bytes;
  for (const auto& slice : slices)
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  return msg->ParseFromString(bytes);
}

// One agent stream: hello, then batches with at most `window` unacknowledged.
StreamStats RunStream(const std::string& address, int stream, const Options& opt,
                      const std::vector<grpc::ByteBuffer>& batches) {
  StreamStats stats;
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::ClientContext context;
  const grpc::internal::RpcMethod connect("/drip.v1.AgentService/Connect",
                                          grpc::internal::RpcMethod::BIDI_STREAMING, channel);
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> rw(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel.get(), connect, &context));
  drip::v1::AgentMessage hello;
  hello.mutable_hello()->set_host(fmt::format("bench-host-{}", stream));
  hello.mutable_hello()->set_agent_version("bench");
  grpc::ByteBuffer reply_bytes;
  drip::v1::CollectorMessage reply;
  if (!rw->Write(Serialized(hello)) || !rw->Read(&reply_bytes) ||
      !ParseReply(reply_bytes, &reply) || !reply.has_welcome()) {
    stats.error = "no welcome";
    return stats;
  }
  std::mutex mu;
  std::condition_variable cv;
  uint64_t acked = 0;
  std::map<uint64_t, Clock::time_point> sent_at;
  std::thread reader([&] {
    grpc::ByteBuffer bytes;
    drip::v1::CollectorMessage msg;
    while (rw->Read(&bytes)) {
      if (!ParseReply(bytes, &msg) || !msg.has_ack()) continue;
      std::lock_guard<std::mutex> lock(mu);
      auto now = Clock::now();
      for (auto it = sent_at.begin(); it != sent_at.end() && it->first <= msg.ack().sequence();) {
        stats.ack_latency_ms.push_back(
            std::chrono::duration<double, std::milli>(now - it->second).count());
        it = sent_at.erase(it);
      }
      acked = std::max(acked, msg.ack().sequence());
      cv.notify_all();
    }
  });
  for (size_t i = 0; i < batches.size(); ++i) {
    uint64_t seq = i + 1;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return seq <= acked + opt.window; });
      sent_at[seq] = Clock::now();
    }
    if (!rw->Write(batches[i])) {
      stats.error = "write failed";
      break;
    }
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(120), [&] { return acked >= batches.size(); });
    stats.samples = acked * opt.samples_per_batch;
  }
  rw->WritesDone();
  context.TryCancel();
  reader.join();
  grpc::Status status = rw->Finish();
  if (stats.error.empty() && acked < batches.size()) stats.error = "not every batch acknowledged";
  return stats;
}

// The same samples into RocksDB directly: one WriteBatch per agent batch, one key per
// sample (series key + timestamp), WAL on, same sync setting.
double RawRocksDbRate(const Options& opt,
                      const std::vector<std::vector<drip::v1::AgentMessage>>& all) {
  std::string path = opt.dir + "/raw-rocksdb";
  rocksdb::Options options;
  options.create_if_missing = true;
  options.IncreaseParallelism(2);
  options.allow_concurrent_memtable_write = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, path, &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "raw rocksdb open: %s\n", s.ToString().c_str());
    return 0;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions wo;
  wo.sync = opt.sync;
  auto start = Clock::now();
  std::vector<std::thread> threads;
  std::atomic<uint64_t> samples{0};
  for (int t = 0; t < opt.streams; ++t) {
    threads.emplace_back([&, t] {
      std::string key, value;
      for (const auto& msg : all[t]) {
        rocksdb::WriteBatch wb;
        for (const auto& sample : msg.batch().samples()) {
          key = fmt::format("bench-host-{}\x1f{}\x1f{}", t, sample.component(), sample.instance());
          int64_t ts = sample.timestamp_ms();
          for (int b = 7; b >= 0; --b) key.push_back(static_cast<char>((ts >> (8 * b)) & 0xff));
          value.clear();
          sample.process().SerializeToString(&value);
          wb.Put(key, value);
        }
        db->Write(wo, &wb);
        samples += msg.batch().samples_size();
      }
    });
  }
  for (auto& th : threads) th.join();
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  return samples.load() / secs;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

bool ParseArgs(int argc, char** argv, Options* opt) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--streams")
      opt->streams = std::stoi(value);
    else if (flag == "--batches-per-stream")
      opt->batches_per_stream = std::stoi(value);
    else if (flag == "--samples-per-batch")
      opt->samples_per_batch = std::stoi(value);
    else if (flag == "--window")
      opt->window = std::stoi(value);
    else if (flag == "--sync")
      opt->sync = value == "true";
    else if (flag == "--dir")
      opt->dir = value;
    else
      return false;
  }
  return (argc % 2) == 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!ParseArgs(argc, argv, &opt)) {
    std::fprintf(stderr,
                 "usage: ingest_bench [--streams N] [--batches-per-stream K] "
                 "[--samples-per-batch S] [--window W] [--sync true|false] [--dir DIR]\n");
    return 2;
  }
  bool own_dir = opt.dir.empty();
  if (own_dir) {
    char tmpl[] = "/tmp/drip-ingest-bench-XXXXXX";
    opt.dir = mkdtemp(tmpl);
  }
  std::printf("ingest_bench: %d streams x %d batches x %d samples, window %d, sync=%s\n",
              opt.streams, opt.batches_per_stream, opt.samples_per_batch, opt.window,
              opt.sync ? "true" : "false");

  // Build every message up front so the timed part is transport + storage only.
  int64_t t0 = NowMs() - static_cast<int64_t>(opt.batches_per_stream + 1) * 10'000;
  std::vector<std::vector<drip::v1::AgentMessage>> all(opt.streams);
  for (int t = 0; t < opt.streams; ++t) {
    for (int b = 0; b < opt.batches_per_stream; ++b) {
      drip::v1::AgentMessage msg;
      *msg.mutable_batch() = MakeBatch(t, b + 1, opt.samples_per_batch, t0);
      all[t].push_back(std::move(msg));
    }
  }

  std::vector<std::vector<grpc::ByteBuffer>> wire(opt.streams);
  for (int t = 0; t < opt.streams; ++t) {
    for (const auto& msg : all[t]) wire[t].push_back(Serialized(msg));
  }

  std::string config = opt.dir + "/collector.yaml";
  std::ofstream(config) << fmt::format(
      "grpc:\n  listen_address: \"127.0.0.1:0\"\nstorage:\n  path: \"{}/db\"\n  sync_writes: {}\n"
      "metrics:\n  listen_address: \"\"\nlog:\n  level: warn\ntls:\n  plaintext: true\n",
      opt.dir, opt.sync ? "true" : "false");
  std::string ready = opt.dir + "/ready";
  pid_t pid = fork();
  if (pid == 0) {
    execl(DRIP_COLLECTOR_BIN, DRIP_COLLECTOR_BIN, "--config", config.c_str(), "--ready-file",
          ready.c_str(), nullptr);
    _exit(127);
  }
  std::map<std::string, std::string> fields;
  for (int i = 0; i < 300; ++i) {
    auto r = drip::ReadReadyFile(ready);
    if (r.ok()) {
      fields = *r;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (fields.empty()) {
    std::fprintf(stderr, "collector did not start\n");
    kill(pid, SIGKILL);
    return 1;
  }

  const double cpu_before = CpuSeconds(pid);
  auto start = Clock::now();
  std::vector<StreamStats> stats(opt.streams);
  std::vector<std::thread> threads;
  for (int t = 0; t < opt.streams; ++t) {
    threads.emplace_back([&, t] { stats[t] = RunStream(fields["grpc"], t, opt, wire[t]); });
  }
  for (auto& th : threads) th.join();
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  const double collector_cpu = CpuSeconds(pid) - cpu_before;
  uint64_t peak_rss = PeakRssBytes(pid);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);

  uint64_t samples = 0;
  std::vector<double> latencies;
  int errors = 0;
  for (const auto& s : stats) {
    samples += s.samples;
    latencies.insert(latencies.end(), s.ack_latency_ms.begin(), s.ack_latency_ms.end());
    if (!s.error.empty()) {
      ++errors;
      std::fprintf(stderr, "stream error: %s\n", s.error.c_str());
    }
  }
  double e2e = samples / secs;
  double raw = RawRocksDbRate(opt, all);
  std::printf(
      "end-to-end (gRPC + drip-collector + RocksDB): %.0f samples/s (%.2f s, %d stream errors)\n",
      e2e, secs, errors);
  std::printf("raw RocksDB WriteBatch, same samples:        %.0f samples/s\n", raw);
  std::printf("ratio end-to-end / raw:                       %.2f\n", raw > 0 ? e2e / raw : 0);
  std::printf("ack latency p50 %.2f ms, p99 %.2f ms\n", Percentile(latencies, 0.5),
              Percentile(latencies, 0.99));
  std::printf("collector peak RSS: %.1f MiB\n", peak_rss / 1048576.0);
  std::printf("collector CPU: %.2f cores busy, %.0f samples per collector CPU-second\n",
              collector_cpu / secs, collector_cpu > 0 ? samples / collector_cpu : 0);
  if (own_dir) std::filesystem::remove_all(opt.dir);
  return errors == 0 ? 0 : 1;
}
