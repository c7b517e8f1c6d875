// Fleet load benchmark (issue 7): a thousand agents' streams from one process against
// one real drip-collector (a child process, RocksDB on disk, loopback) for minutes, at
// a real agent's behaviour: Hello, wait for Welcome, then one batch per host every
// interval with per-host increasing sequences and a bounded window of unacknowledged
// batches, nothing resent; at the end WritesDone, every ack awaited, every stream
// finished. It reports what an operator sizing a collector needs:
//
//   - offered vs sustained (acknowledged) samples/s over the steady part (ramp-up and a
//     warm-up excluded), ack latency p50/p90/p99/max, stream errors (must be 0);
//   - the collector's CPU (utime + stime, as a share of a core), RSS every few seconds
//     and its peak (VmHWM), the store's size on disk, the ramp-up time;
//   - the generator's own CPU, since it shares the machine's cores with the collector;
//   - a self-check against the collector's query API: every host's acked_sequence and
//     samples_stored match what the generator sent and saw acked (no loss, no
//     duplicates), and a few hosts' series hold exactly the samples sent: PASS/FAIL.
//
//   fleet_load_bench [--streams 1000] [--interval 1s] [--samples-per-batch 300]
//                    [--window 8] [--duration 300s] [--warmup 20s] [--report-every 10s]
//                    [--tls plaintext|mtls|both] [--certs DIR] [--dir DIR] [--keep]
//                    [--collectors 1,2,3] [--replication-factors 1,2]
//
// Design: one ClientBidiReactor per stream on gRPC's callback API, each on its own
// channel and so its own TCP connection (a fleet is a thousand connections, not a
// thousand streams on one), one scheduler thread that tells streams when a batch is
// due, and gRPC's own small callback thread pool doing the I/O. A thread per blocking
// stream — the ingest benchmark's design — would be a thousand threads, a thousand
// stacks and a scheduler storm on two cores that the collector needs; here the
// generator runs on a handful of threads whatever the stream count. Batches are written
// straight to wire format by FleetBatchEncoder (only varints and memcpy per sample) and
// sent as raw byte buffers, so the generator's CPU goes to the transport.
//
// `--collectors 1,2,3` runs the same load against one collector, then against clusters
// of two and three (a real etcd member on loopback, `cluster:` in each collector's config),
// each host streaming to the member that owns it by the collectors' own placement
// (collector/cluster/rendezvous.h), as agents end up doing; it reports the aggregate
// samples/s, the collectors' CPU per million samples, each member's share, and the time
// of a fleet-wide ListHosts (fanned out to every member) beside the same call answered by
// one member alone. The self-check then asks the first member, whose merged answer must
// account for every host of every member. `--replication-factors 1,2` runs each cluster
// once per cluster.replication_factor, side by side: what the copy to a host's replica
// costs in CPU per million samples and in the time to the agent's acknowledgement.
//
// `--tls both` runs the same load twice, plaintext then mutual TLS (one certificate per
// host, made with scripts/make-certs.sh), each against a fresh collector, and prints
// the ratios. Results and the commands that reproduce them: docs/benchmarks.md.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/collector_child.h"
#include "bench/fleet_agent_stream.h"
#include "bench/fleet_batch_encoder.h"
#include "bench/fleet_run_stats.h"
#include "bench/fleet_scheduler.h"
#include "collector/cluster/rendezvous.h"
#include "common/base/duration.h"
#include "common/rpc/tls_settings.h"
#include "drip/v1/member.grpc.pb.h"
#include "drip/v1/query.grpc.pb.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "tests/integration/etcd_cluster.h"

namespace drip::bench {
namespace {

using std::chrono::milliseconds;

struct Options {
  int streams = 1000;
  milliseconds interval{1000};
  int samples_per_batch = 300;
  int window = 8;
  milliseconds duration{300'000};
  milliseconds warmup{20'000};
  milliseconds report_every{10'000};
  milliseconds ramp_timeout{120'000};
  milliseconds drain_timeout{120'000};
  std::string tls = "plaintext";
  std::string certs;
  std::string dir;
  bool keep = false;
  bool sync = true;
  int write_threads = 0;              // 0: the collector's default
  std::vector<int> collectors = {1};  // a phase per count
  // With several collectors, a phase per replication factor (0: the collector's default).
  std::vector<int> replication_factors = {0};
};

double Seconds(FleetClock::duration d) { return std::chrono::duration<double>(d).count(); }
double MiB(uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

double Percentile(std::vector<float>& v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return v[k];
}

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
  size_t count = 0;
};
Percentiles PercentilesOf(std::vector<float> v) {
  Percentiles p;
  p.count = v.size();
  if (v.empty()) return p;
  p.p50 = Percentile(v, 0.50);
  p.p90 = Percentile(v, 0.90);
  p.p99 = Percentile(v, 0.99);
  p.max = *std::max_element(v.begin(), v.end());
  return p;
}

// A point of the collector's resource timeline.
struct ResourcePoint {
  double t;  // seconds since all streams were welcomed
  ProcFigures collector;
  ProcFigures generator;
};

// What one phase (one TLS mode, one count of collectors) measured.
struct PhaseResult {
  std::string mode;
  int collectors = 1;
  int replication_factor = 0;        // 0: the collector's default (and 1 for one collector)
  std::vector<double> member_cores;  // each collector's, over the steady part
  // With copies: the last member killed, its disk deleted, started again; the time until
  // no member has a copy waiting, and the samples its peers gave it.
  double repair_seconds = 0;
  double repaired_samples = 0;
  Percentiles fleet_list_ms, local_list_ms;  // ListHosts on the first member
  int samples_per_batch = 0;
  bool started = false;
  int welcomed = 0;
  double ramp_seconds = 0;
  Percentiles welcome;  // per-stream Start → Welcome, seconds
  double steady_seconds = 0;
  double offered_batches_per_s = 0, sent_batches_per_s = 0, acked_batches_per_s = 0;
  Percentiles write_ms, due_ms;
  int errors = 0;  // streams with any problem
  int bad_status = 0, ended_early = 0, never_welcomed = 0, unacked = 0, not_done = 0;
  uint64_t protocol_errors = 0, commands = 0, abandoned = 0;
  double collector_cores = 0, generator_cores = 0;
  double collector_cpu_per_msample = 0;
  uint64_t peak_rss = 0, rss_at_start = 0, rss_at_60s = 0, rss_at_end = 0;
  double rss_slope_mib_per_min = 0;  // over the second half of the steady part
  uint64_t generator_peak_rss = 0;
  uint64_t store_bytes = 0, store_bytes_after_shutdown = 0;
  uint64_t samples_acked = 0;
  double drain_seconds = 0, shutdown_seconds = 0;
  int exit_status = 0;
  bool check_pass = false;
  std::string check_detail;
  int log_warnings = 0, log_errors = 0;
};

// Least-squares slope of RSS over time, MiB per minute, for points with t in [from, to].
double RssSlope(const std::vector<ResourcePoint>& points, double from, double to) {
  double n = 0, st = 0, sr = 0, stt = 0, str = 0;
  for (const ResourcePoint& p : points) {
    if (p.t < from || p.t > to || p.collector.rss_bytes == 0) continue;
    const double r = MiB(p.collector.rss_bytes);
    n += 1;
    st += p.t;
    sr += r;
    stt += p.t * p.t;
    str += p.t * r;
  }
  const double denom = n * stt - st * st;
  return n < 3 || denom == 0 ? 0 : (n * str - st * sr) / denom * 60;
}

uint64_t RssNear(const std::vector<ResourcePoint>& points, double t) {
  uint64_t best = 0;
  double best_gap = 1e18;
  for (const ResourcePoint& p : points) {
    if (std::abs(p.t - t) < best_gap && p.collector.rss_bytes > 0) {
      best_gap = std::abs(p.t - t);
      best = p.collector.rss_bytes;
    }
  }
  return best;
}

std::string Certs(const Options& opt) { return opt.certs.empty() ? opt.dir + "/certs" : opt.certs; }

// One certificate per host, as a fleet has; made once and kept in --certs DIR.
bool EnsureCertificates(const Options& opt, const std::vector<FleetBatchEncoder>& hosts) {
  const std::string dir = Certs(opt);
  std::string missing;
  int count = 0;
  for (const FleetBatchEncoder& h : hosts) {
    if (!std::filesystem::exists(fmt::format("{}/agent-{}.key", dir, h.host()))) {
      missing += " --agent " + h.host();
      ++count;
    }
  }
  if (count == 0 && std::filesystem::exists(dir + "/collector.crt")) return true;
  std::printf("making %d agent certificates in %s (scripts/make-certs.sh) ...\n", count,
              dir.c_str());
  std::fflush(stdout);
  const std::string cmd = fmt::format("bash '{}/scripts/make-certs.sh' '{}'{} >/dev/null",
                                      DRIP_SOURCE_DIR, dir, missing);
  return std::system(cmd.c_str()) == 0;
}

std::pair<int, int> CountLogProblems(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int warnings = 0, errors = 0;
  while (std::getline(in, line)) {
    if (line.find(" warning: ") != std::string::npos) ++warnings;
    if (line.find(" error: ") != std::string::npos ||
        line.find(" critical: ") != std::string::npos) {
      ++errors;
    }
  }
  return {warnings, errors};
}

// A channel to `address` that presents `certs/<cert_base>.crt` over TLS.
std::shared_ptr<grpc::Channel> MakeChannelAs(const Options& opt, bool tls,
                                             const std::string& address,
                                             const std::string& cert_base) {
  grpc::ChannelArguments args;
  // Channels with equal arguments share connections through gRPC's global subchannel
  // pool; a local pool gives every simulated agent its own TCP connection, as hosts have.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (tls) {
    TlsSettings settings;
    settings.ca_file = Certs(opt) + "/ca.crt";
    settings.cert_file = fmt::format("{}/{}.crt", Certs(opt), cert_base);
    settings.key_file = fmt::format("{}/{}.key", Certs(opt), cert_base);
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> made =
        MakeChannelCredentials(settings, &args);
    if (!made.ok()) {
      std::fprintf(stderr, "TLS credentials %s: %s\n", cert_base.c_str(),
                   std::string(made.status().message()).c_str());
      return nullptr;
    }
    creds = *made;
  }
  return grpc::CreateCustomChannel(address, creds, args);
}

// The channel of `host`'s agent.
std::shared_ptr<grpc::Channel> MakeChannel(const Options& opt, bool tls, const std::string& address,
                                           const std::string& host) {
  return MakeChannelAs(opt, tls, address, "agent-" + host);
}

// The self-check: the collector's own account of every host against the generator's.
void CheckStore(const Options& opt, bool tls, const std::string& address,
                const std::vector<FleetBatchEncoder>& hosts,
                const std::vector<FleetAgentStream::Outcome>& outcomes, PhaseResult* r) {
  auto channel = MakeChannel(opt, tls, address, hosts[0].host());
  auto stub = drip::v1::QueryService::NewStub(channel);
  drip::v1::ListHostsResponse listed;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    grpc::Status s = stub->ListHosts(&ctx, drip::v1::ListHostsRequest(), &listed);
    if (!s.ok()) {
      r->check_detail = "ListHosts failed: " + s.error_message();
      return;
    }
  }
  std::map<std::string, const drip::v1::HostInfo*> by_host;
  for (const auto& h : listed.hosts()) by_host[h.host()] = &h;
  int mismatches = 0;
  std::string first;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const FleetAgentStream::Outcome& o = outcomes[i];
    const uint64_t samples =
        (o.acked - o.welcome_acked) * static_cast<uint64_t>(hosts[i].samples());
    auto it = by_host.find(hosts[i].host());
    std::string problem;
    if (it == by_host.end()) {
      problem = "not listed";
    } else if (it->second->acked_sequence() != o.acked) {
      problem = fmt::format("acked_sequence {} but the generator saw {} acked",
                            it->second->acked_sequence(), o.acked);
    } else if (o.welcome_acked == 0 && it->second->samples_stored() != samples) {
      problem = fmt::format("samples_stored {} but {} were sent and acked",
                            it->second->samples_stored(), samples);
    } else if (it->second->gaps() != 0) {
      problem = fmt::format("{} gaps", it->second->gaps());
    } else if (o.last_sent != o.acked) {
      problem = fmt::format("sent up to {} but acked up to {}", o.last_sent, o.acked);
    }
    if (!problem.empty() && mismatches++ == 0) first = hosts[i].host() + ": " + problem;
  }
  // Beyond the counters: three hosts' samples of one component, read back.
  const std::string component = "svc:postgresql.service";
  int series_checked = 0;
  for (size_t i : {size_t{0}, hosts.size() / 2, hosts.size() - 1}) {
    drip::v1::AgentMessage one = hosts[i].Build(1, 0);
    int expected_series = 0;
    for (const auto& s : one.batch().samples()) expected_series += s.component() == component;
    drip::v1::GetSeriesRequest req;
    req.set_host(hosts[i].host());
    req.set_component(component);
    drip::v1::GetSeriesResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    grpc::Status s = stub->GetSeries(&ctx, req, &resp);
    const uint64_t batches = outcomes[i].acked - outcomes[i].welcome_acked;
    std::string problem;
    if (!s.ok()) {
      problem = "GetSeries failed: " + s.error_message();
    } else if (resp.series_size() != expected_series) {
      problem = fmt::format("{} series of {}, expected {}", resp.series_size(), component,
                            expected_series);
    } else {
      for (const auto& series : resp.series()) {
        if (static_cast<uint64_t>(series.samples_size()) != batches) {
          problem = fmt::format("series {} holds {} samples, {} batches were acked",
                                series.instance(), series.samples_size(), batches);
          break;
        }
      }
    }
    ++series_checked;
    if (!problem.empty() && mismatches++ == 0) first = hosts[i].host() + ": " + problem;
  }
  const int extra = listed.hosts_size() - static_cast<int>(hosts.size());
  r->check_pass = mismatches == 0 && extra == 0;
  r->check_detail =
      r->check_pass
          ? fmt::format(
                "{} hosts: acked_sequence = last acked batch, samples_stored = samples "
                "sent, no gaps; {} hosts' {} series read back with every sample",
                hosts.size(), series_checked, component)
          : fmt::format("{} mismatches, {} unexpected hosts; first: {}", mismatches, extra, first);
}

// The collectors' figures added up: their CPU time, resident and peak memory.
ProcFigures SumFigures(const std::vector<CollectorChild>& collectors) {
  ProcFigures sum;
  for (const CollectorChild& c : collectors) {
    const ProcFigures f = ReadProcFigures(c.pid());
    sum.cpu_seconds += f.cpu_seconds;
    sum.rss_bytes += f.rss_bytes;
    sum.hwm_bytes += f.hwm_bytes;
    sum.threads += f.threads;
  }
  return sum;
}

// `count` pairs of ListHosts calls on `address`, each timed (ms): a fleet-wide one, then
// that collector's own part, asked as another member asks it (MemberService, over TLS with
// the collectors' certificate), interleaved so that both meet the same state of the machine.
std::pair<Percentiles, Percentiles> TimeListHosts(const Options& opt, bool tls,
                                                  const std::string& address,
                                                  const std::string& any_host, int count) {
  auto query = drip::v1::QueryService::NewStub(MakeChannel(opt, tls, address, any_host));
  auto member = drip::v1::MemberService::NewStub(MakeChannelAs(opt, tls, address, "collector"));
  std::vector<float> fleet_ms, member_ms;
  for (int i = 0; i < 2 * count; ++i) {
    const bool member_part = i % 2 == 1;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    drip::v1::ListHostsResponse response;
    const auto start = std::chrono::steady_clock::now();
    const grpc::Status status =
        member_part ? member->ListHosts(&ctx, drip::v1::ListHostsRequest(), &response)
                    : query->ListHosts(&ctx, drip::v1::ListHostsRequest(), &response);
    if (!status.ok()) continue;
    (member_part ? member_ms : fleet_ms)
        .push_back(static_cast<float>(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count()));
  }
  return {PercentilesOf(std::move(fleet_ms)), PercentilesOf(std::move(member_ms))};
}

PhaseResult RunPhase(const Options& opt, const std::string& mode, int collector_count,
                     int replication_factor, const std::vector<FleetBatchEncoder>& hosts) {
  PhaseResult r;
  r.mode = mode;
  r.collectors = collector_count;
  r.replication_factor = replication_factor;
  r.samples_per_batch = hosts[0].samples();
  const bool tls = mode == "mtls";
  const std::string dir =
      fmt::format("{}/{}-{}-rf{}", opt.dir, mode, collector_count, replication_factor);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string tls_section =
      tls ? fmt::format(
                "tls:\n  ca_file: \"{0}/ca.crt\"\n  cert_file: \"{0}/collector.crt\"\n"
                "  key_file: \"{0}/collector.key\"\n",
                Certs(opt))
          : "tls:\n  plaintext: true\n";
  // Several collectors share the fleet through a real etcd member, as in production.
  std::unique_ptr<testing::EtcdCluster> etcd;
  if (collector_count > 1) {
    std::filesystem::create_directories(dir + "/etcd");
    absl::StatusOr<std::unique_ptr<testing::EtcdCluster>> started =
        testing::EtcdCluster::Start(1, dir + "/etcd");
    if (!started.ok()) {
      std::fprintf(stderr, "etcd did not start: %s\n", started.status().ToString().c_str());
      return r;
    }
    etcd = std::move(*started);
  }
  std::vector<CollectorChild> collectors;
  std::vector<std::string> names;
  auto cluster_section = [&](const std::string& name) {
    return etcd ? fmt::format("cluster:\n  etcd_endpoints: {}\n  member_name: {}\n{}",
                              etcd->EndpointsYaml(), name,
                              replication_factor > 0
                                  ? fmt::format("  replication_factor: {}\n", replication_factor)
                                  : "")
                : "";
  };
  for (int c = 0; c < collector_count; ++c) {
    names.push_back(fmt::format("c{}", c));
    const std::string member_dir = collector_count > 1 ? dir + "/" + names.back() : dir;
    std::filesystem::create_directories(member_dir);
    std::optional<CollectorChild> child =
        CollectorChild::Start(DRIP_COLLECTOR_BIN, member_dir, opt.sync, opt.write_threads,
                              tls_section + cluster_section(names.back()));
    if (!child) return r;
    collectors.push_back(std::move(*child));
  }
  // Every member sees all the others before the first hello, so that no agent is
  // redirected (these streams do not follow redirects: the owner is dialled at once).
  for (const CollectorChild& c : collectors) {
    if (collector_count == 1) break;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (MetricValue(ScrapeMetrics(c.metrics_address()), "drip_cluster_members") !=
               collector_count &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  r.started = true;
  const pid_t self = getpid();
  CollectorChild* const first = &collectors[0];

  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<int> hosts_of(collectors.size(), 0);
  for (const FleetBatchEncoder& h : hosts) {
    size_t owner = 0;
    if (collector_count > 1) {
      const std::string name = collector::RendezvousOwner(h.host(), names);
      owner = static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    }
    ++hosts_of[owner];
    channels.push_back(MakeChannel(opt, tls, collectors[owner].grpc_address(), h.host()));
    if (!channels.back()) return r;
  }

  const int max_seconds = static_cast<int>(
      Seconds(opt.ramp_timeout + opt.duration + opt.drain_timeout + std::chrono::seconds(60)));
  FleetRunStats stats(FleetClock::now(), max_seconds);
  FleetScheduler scheduler(opt.interval, &stats);
  std::mutex mu;
  std::condition_variable changed;
  int welcomed = 0, done = 0;
  std::vector<std::unique_ptr<FleetAgentStream>> streams;
  for (size_t i = 0; i < hosts.size(); ++i) {
    FleetAgentStream::Options so;
    so.interval = opt.interval;
    so.window = opt.window;
    // Golden-ratio spread: phases evenly over the interval whatever the stream count.
    so.phase = static_cast<double>(i) * 0.6180339887498949;
    so.phase -= static_cast<double>(static_cast<uint64_t>(so.phase));
    streams.push_back(std::make_unique<FleetAgentStream>(
        channels[i], &hosts[i], so, &stats,
        [&](FleetAgentStream* s, FleetClock::time_point first_due) {
          scheduler.Add(s, first_due);
          std::lock_guard<std::mutex> lock(mu);
          ++welcomed;
          changed.notify_all();
        },
        [&] {
          std::lock_guard<std::mutex> lock(mu);
          ++done;
          changed.notify_all();
        }));
  }

  std::printf(
      "\n== %s, %d collector(s) (hosts each: %s): %zu streams, %d samples per batch every "
      "%lld ms, window %d, %s ==\n",
      mode.c_str(), collector_count, fmt::format("{}", fmt::join(hosts_of, "/")).c_str(),
      hosts.size(), hosts[0].samples(), static_cast<long long>(opt.interval.count()), opt.window,
      FormatDuration(opt.duration).c_str());
  const ProcFigures collector_idle = SumFigures(collectors);
  const FleetClock::time_point ramp_start = FleetClock::now();
  for (auto& s : streams) s->Start();
  {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait_until(lock, ramp_start + opt.ramp_timeout,
                       [&] { return welcomed == static_cast<int>(streams.size()) || done > 0; });
    r.welcomed = welcomed;
  }
  const FleetClock::time_point t0 = FleetClock::now();
  r.ramp_seconds = Seconds(t0 - ramp_start);
  std::printf("ramp-up: %d of %zu streams welcomed in %.2f s; collector RSS %.0f MiB (idle %.0f)\n",
              r.welcomed, streams.size(), r.ramp_seconds, MiB(SumFigures(collectors).rss_bytes),
              MiB(collector_idle.rss_bytes));
  std::printf("%7s %9s %12s %12s %9s %9s %9s %9s %10s %9s\n", "t (s)", "offered", "acked", "acked",
              "write>ack", "write>ack", "due>ack", "collector", "collector", "generator");
  std::printf("%7s %9s %12s %12s %9s %9s %9s %9s %10s %9s\n", "", "batch/s", "batch/s", "samples/s",
              "p50 ms", "p99 ms", "p99 ms", "cores", "RSS MiB", "cores");
  std::fflush(stdout);

  // The steady part: from the end of the warm-up to the stop, in whole seconds of the run.
  const double t0_s = stats.SecondsAt(t0);
  const int steady_from = static_cast<int>(std::ceil(t0_s + Seconds(opt.warmup)));
  const int steady_to = static_cast<int>(std::floor(t0_s + Seconds(opt.duration)));
  std::vector<ResourcePoint> points;
  size_t cursor = 0;
  std::vector<float> period_write, period_due;
  ProcFigures last_c = SumFigures(collectors), last_g = ReadProcFigures(self);
  ProcFigures steady_c{}, steady_g{};
  std::vector<double> member_cpu_at_steady(collectors.size(), 0);
  double last_report = 0;
  const FleetClock::time_point end = t0 + opt.duration;
  bool early_stop = false;
  for (int tick = 1;; ++tick) {
    const FleetClock::time_point next = t0 + std::chrono::seconds(tick);
    std::this_thread::sleep_until(std::min(next, end));
    const FleetClock::time_point now = FleetClock::now();
    ResourcePoint p{Seconds(now - t0), SumFigures(collectors), ReadProcFigures(self)};
    points.push_back(p);
    if (steady_c.cpu_seconds == 0 && stats.SecondsAt(now) >= steady_from) {
      steady_c = p.collector;
      steady_g = p.generator;
      for (size_t c = 0; c < collectors.size(); ++c) {
        member_cpu_at_steady[c] = ReadProcFigures(collectors[c].pid()).cpu_seconds;
      }
    }
    for (const AckLatency& a : stats.RecordsSince(&cursor)) {
      period_write.push_back(a.write_ms);
      period_due.push_back(a.due_ms);
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (done > 0) early_stop = true;
    }
    if (p.t - last_report >= Seconds(opt.report_every) - 0.01 || now >= end || early_stop) {
      const double span = p.t - last_report;
      const int from = static_cast<int>(t0_s + last_report), to = static_cast<int>(t0_s + p.t);
      const FleetRunStats::Second sum = stats.Sum(from, to);
      const double secs = std::max(1, to - from);
      std::printf("%7.0f %9.0f %12.0f %12.0f %9.1f %9.1f %9.1f %9.2f %10.0f %9.2f\n", p.t,
                  sum.due / secs, sum.acked / secs, sum.acked * hosts[0].samples() / secs,
                  Percentile(period_write, 0.5), Percentile(period_write, 0.99),
                  Percentile(period_due, 0.99),
                  (p.collector.cpu_seconds - last_c.cpu_seconds) / span, MiB(p.collector.rss_bytes),
                  (p.generator.cpu_seconds - last_g.cpu_seconds) / span);
      std::fflush(stdout);
      period_write.clear();
      period_due.clear();
      last_c = p.collector;
      last_g = p.generator;
      last_report = p.t;
    }
    if (now >= end || early_stop) break;
  }
  const ProcFigures end_c = SumFigures(collectors), end_g = ReadProcFigures(self);
  std::vector<double> member_cpu_at_end;
  for (const CollectorChild& c : collectors) {
    member_cpu_at_end.push_back(ReadProcFigures(c.pid()).cpu_seconds);
  }
  if (early_stop) std::printf("a stream ended before the stop; stopping the run early\n");

  // Stop: no batch falls due any more; every stream half-closes once its last write is
  // out, and the collector acks what it holds and finishes each with OK.
  scheduler.Stop();
  const FleetClock::time_point stop = FleetClock::now();
  for (auto& s : streams) s->Stop();
  {
    std::unique_lock<std::mutex> lock(mu);
    if (!changed.wait_until(lock, stop + opt.drain_timeout,
                            [&] { return done == static_cast<int>(streams.size()); })) {
      lock.unlock();
      for (auto& s : streams) {
        if (!s->done()) s->Cancel();
      }
      lock.lock();
      changed.wait_for(lock, std::chrono::seconds(30),
                       [&] { return done == static_cast<int>(streams.size()); });
    }
  }
  r.drain_seconds = Seconds(FleetClock::now() - stop);

  // Figures over the steady part.
  r.steady_seconds = steady_to - steady_from;
  const FleetRunStats::Second steady = stats.Sum(steady_from, steady_to);
  r.offered_batches_per_s = steady.due / std::max(r.steady_seconds, 1.0);
  r.sent_batches_per_s = steady.sent / std::max(r.steady_seconds, 1.0);
  r.acked_batches_per_s = steady.acked / std::max(r.steady_seconds, 1.0);
  std::vector<float> write_ms, due_ms;
  size_t all = 0;
  for (const AckLatency& a : stats.RecordsSince(&all)) {
    if (a.ack_seconds >= steady_from && a.ack_seconds < steady_to) {
      write_ms.push_back(a.write_ms);
      due_ms.push_back(a.due_ms);
    }
  }
  r.write_ms = PercentilesOf(std::move(write_ms));
  r.due_ms = PercentilesOf(std::move(due_ms));
  const double steady_wall = Seconds(opt.duration) - (steady_from - t0_s);
  if (steady_c.cpu_seconds > 0 && steady_wall > 0) {
    r.collector_cores = (end_c.cpu_seconds - steady_c.cpu_seconds) / steady_wall;
    r.generator_cores = (end_g.cpu_seconds - steady_g.cpu_seconds) / steady_wall;
    for (size_t c = 0; c < collectors.size(); ++c) {
      r.member_cores.push_back((member_cpu_at_end[c] - member_cpu_at_steady[c]) / steady_wall);
    }
  }
  const double samples_per_s = r.acked_batches_per_s * hosts[0].samples();
  r.collector_cpu_per_msample = samples_per_s > 0 ? r.collector_cores / samples_per_s * 1e6 : 0;
  r.rss_at_start = points.empty() ? 0 : points.front().collector.rss_bytes;
  r.rss_at_60s = RssNear(points, 60);
  r.rss_at_end = end_c.rss_bytes;
  const double steady_start_t = steady_from - t0_s, steady_end_t = Seconds(opt.duration);
  r.rss_slope_mib_per_min =
      RssSlope(points, steady_start_t + (steady_end_t - steady_start_t) / 2, steady_end_t);

  std::vector<FleetAgentStream::Outcome> outcomes;
  std::vector<float> welcome_s;
  for (auto& s : streams) {
    FleetAgentStream::Outcome o = s->outcome();
    const bool done_ok = s->done();
    bool bad = false;
    if (!o.welcomed) ++r.never_welcomed, bad = true;
    if (!done_ok) ++r.not_done, bad = true;
    if (o.code != grpc::StatusCode::OK) ++r.bad_status, bad = true;
    if (o.ended_early) ++r.ended_early, bad = true;
    if (o.acked != o.last_sent && o.welcomed) ++r.unacked, bad = true;
    if (o.protocol_errors > 0) bad = true;
    if (bad && r.errors++ < 5) {
      std::fprintf(stderr,
                   "stream %s: welcomed=%d done=%d status=%d '%s' early=%d sent=%llu "
                   "acked=%llu protocol_errors=%llu\n",
                   s->host().c_str(), o.welcomed, done_ok, static_cast<int>(o.code),
                   o.message.c_str(), o.ended_early, static_cast<unsigned long long>(o.last_sent),
                   static_cast<unsigned long long>(o.acked),
                   static_cast<unsigned long long>(o.protocol_errors));
    }
    r.protocol_errors += o.protocol_errors;
    r.commands += o.commands;
    r.abandoned += o.abandoned;
    r.samples_acked += (o.acked - o.welcome_acked) * static_cast<uint64_t>(hosts[0].samples());
    if (o.welcomed) welcome_s.push_back(static_cast<float>(o.welcome_seconds));
    outcomes.push_back(o);
  }
  r.welcome = PercentilesOf(std::move(welcome_s));

  std::vector<std::string> expositions;
  for (const CollectorChild& c : collectors)
    expositions.push_back(ScrapeMetrics(c.metrics_address()));
  // A metric summed over the collectors.
  auto metric = [&](const std::string& name, const std::string& labels = "") {
    double sum = 0;
    for (const std::string& e : expositions) sum += MetricValue(e, name, labels);
    return sum;
  };
  // The first member answers for every host: with several, through its fan-out.
  CheckStore(opt, tls, first->grpc_address(), hosts, outcomes, &r);
  std::tie(r.fleet_list_ms, r.local_list_ms) =
      TimeListHosts(opt, tls, first->grpc_address(), hosts[0].host(), 20);
  for (const CollectorChild& c : collectors) r.store_bytes += DirectoryBytes(c.store_dir());
  r.peak_rss = SumFigures(collectors).hwm_bytes;
  r.generator_peak_rss = ReadProcFigures(self).hwm_bytes;
  // Streams hold their channels; release every connection before the collectors stop.
  streams.clear();
  channels.clear();
  if (collector_count > 1 && replication_factor != 1) {
    // The last member's disk is lost while it is down; it comes back empty and its peers
    // repair it (docs/cluster.md, "Repair"), while nothing else runs.
    const std::string member_dir = dir + "/" + names.back();
    kill(collectors.back().pid(), SIGKILL);
    collectors.back().Stop();
    collectors.pop_back();
    std::filesystem::remove_all(member_dir + "/db");
    const auto restart = std::chrono::steady_clock::now();
    std::optional<CollectorChild> back =
        CollectorChild::Start(DRIP_COLLECTOR_BIN, member_dir, opt.sync, opt.write_threads,
                              tls_section + cluster_section(names.back()));
    if (!back) return r;
    collectors.push_back(std::move(*back));
    const auto deadline = restart + std::chrono::minutes(15);
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      bool settled = true;
      for (const CollectorChild& c : collectors) {
        const std::string e = ScrapeMetrics(c.metrics_address());
        settled = settled && MetricValue(e, "drip_cluster_members") == collector_count &&
                  MetricValue(e, "drip_cluster_repair_backlog") == 0 &&
                  MetricValue(e, "drip_cluster_under_replicated_hosts") == 0;
      }
      r.repaired_samples = MetricValue(ScrapeMetrics(collectors.back().metrics_address()),
                                       "drip_cluster_repaired_samples_total");
      if (settled && r.repaired_samples > 0) break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      r.check_pass = false;
      r.check_detail += "; repair did not settle within 15 minutes";
    }
    r.repair_seconds = Seconds(std::chrono::steady_clock::now() - restart);
    std::printf(
        "\nrepair:         %s killed, its store deleted, started again: %.0f samples repaired "
        "from its peers, no copy waiting %.1f s after the restart (%.0f samples/s)\n",
        names.back().c_str(), r.repaired_samples, r.repair_seconds,
        r.repair_seconds > 0 ? r.repaired_samples / r.repair_seconds : 0);
    std::fflush(stdout);
  }
  for (CollectorChild& c : collectors) {
    const int status = c.Stop();
    if (r.exit_status == 0) r.exit_status = status;
    r.shutdown_seconds = std::max(r.shutdown_seconds, c.shutdown_seconds());
    r.store_bytes_after_shutdown += DirectoryBytes(c.store_dir());
    auto [warnings, errors] = CountLogProblems(c.log_path());
    r.log_warnings += warnings;
    r.log_errors += errors;
  }

  // The report of this phase.
  const int s = hosts[0].samples();
  std::printf(
      "\n-- %s: results over the steady part (%.0f s: from %.0f s after the last Welcome "
      "to the stop) --\n",
      mode.c_str(), r.steady_seconds, steady_start_t);
  std::printf(
      "ramp-up:        %d streams welcomed in %.2f s (Start to Welcome per stream: p50 "
      "%.2f s, p99 %.2f s, max %.2f s)\n",
      r.welcomed, r.ramp_seconds, r.welcome.p50, r.welcome.p99, r.welcome.max);
  std::printf("offered:        %.0f samples/s (%.1f batches/s)\n", r.offered_batches_per_s * s,
              r.offered_batches_per_s);
  std::printf("sustained:      %.0f samples/s acked (%.1f batches/s; %.1f sent), %.4f of offered\n",
              r.acked_batches_per_s * s, r.acked_batches_per_s, r.sent_batches_per_s,
              r.offered_batches_per_s > 0 ? r.acked_batches_per_s / r.offered_batches_per_s : 0);
  std::printf(
      "ack latency:    write->ack p50 %.1f ms, p90 %.1f, p99 %.1f, max %.1f (%zu batches); "
      "due->ack p50 %.1f, p99 %.1f, max %.1f\n",
      r.write_ms.p50, r.write_ms.p90, r.write_ms.p99, r.write_ms.max, r.write_ms.count,
      r.due_ms.p50, r.due_ms.p99, r.due_ms.max);
  std::printf(
      "stream errors:  %d (non-OK status %d, ended early %d, never welcomed %d, unacked "
      "at the end %d, unfinished %d, protocol errors %llu); commands received %llu; "
      "batches due but unsent at the stop %llu\n",
      r.errors, r.bad_status, r.ended_early, r.never_welcomed, r.unacked, r.not_done,
      static_cast<unsigned long long>(r.protocol_errors),
      static_cast<unsigned long long>(r.commands), static_cast<unsigned long long>(r.abandoned));
  std::printf("collector CPU:  %.2f cores (%.2f core-s per million samples)%s\n", r.collector_cores,
              r.collector_cpu_per_msample,
              collector_count > 1
                  ? fmt::format("; per member: {:.2f}", fmt::join(r.member_cores, ", ")).c_str()
                  : "");
  std::printf(
      "ListHosts:      on the first member, %zu hosts: fleet-wide p50 %.1f ms, max %.1f; "
      "that member alone p50 %.1f ms, max %.1f\n",
      hosts.size(), r.fleet_list_ms.p50, r.fleet_list_ms.max, r.local_list_ms.p50,
      r.local_list_ms.max);
  std::printf(
      "collector RSS:  peak (VmHWM) %.0f MiB; after ramp-up %.0f MiB, at 60 s %.0f MiB, "
      "at the stop %.0f MiB; slope over the 2nd half of the steady part %+.2f MiB/min\n",
      MiB(r.peak_rss), MiB(r.rss_at_start), MiB(r.rss_at_60s), MiB(r.rss_at_end),
      r.rss_slope_mib_per_min);
  std::string timeline;
  for (size_t i = 0; i < points.size(); i += 30) {
    timeline += fmt::format(" {:.0f}s:{:.0f}", points[i].t, MiB(points[i].collector.rss_bytes));
  }
  std::printf("RSS timeline:  %s (MiB, every 30 s)\n", timeline.c_str());
  std::printf(
      "store on disk:  %.0f MiB at the stop (%.1f bytes per sample acked), %.0f MiB after "
      "shutdown\n",
      MiB(r.store_bytes),
      r.samples_acked ? static_cast<double>(r.store_bytes) / r.samples_acked : 0,
      MiB(r.store_bytes_after_shutdown));
  std::printf("generator:      %.2f cores, peak RSS %.0f MiB\n", r.generator_cores,
              MiB(r.generator_peak_rss));
  std::printf(
      "stop:           every stream finished %.2f s after the stop; collector shut down "
      "in %.2f s (exit status %d); its log: %d warnings, %d errors\n",
      r.drain_seconds, r.shutdown_seconds, r.exit_status, r.log_warnings, r.log_errors);
  const double metric_samples = metric("drip_ingest_samples_total");
  const double writes = metric("drip_storage_write_seconds_count");
  std::printf(
      "metrics:        drip_ingest_samples_total %.0f (generator saw %llu acked), "
      "throttled batches %.0f, rejected %.0f, streams closed %.0f of %zu; store write "
      "(AppendBatch, synced) mean %.2f ms over %.0f batches\n",
      metric_samples, static_cast<unsigned long long>(r.samples_acked),
      metric("drip_ingest_throttled_batches_total"), metric("drip_ingest_rejected_total"),
      metric("drip_agent_streams_total", "outcome=\"closed\""), hosts.size(),
      writes > 0 ? metric("drip_storage_write_seconds_sum") / writes * 1e3 : 0, writes);
  if (metric_samples != static_cast<double>(r.samples_acked)) {
    r.check_pass = false;
    r.check_detail += "; drip_ingest_samples_total differs from the samples acked";
  }
  std::printf("self-check:     %s: %s\n", r.check_pass ? "PASS" : "FAIL", r.check_detail.c_str());
  std::fflush(stdout);
  return r;
}

// One row per count of collectors (and replication factor), same load: how ingest scales
// out on this machine, and what each copy of a sample costs.
void PrintScaling(const std::vector<PhaseResult>& results) {
  std::printf(
      "\n== scaling out: the same load on 1..N collectors (this machine's cores are shared) ==\n");
  std::printf("%-11s %4s %12s %12s %10s %12s %12s %14s %14s\n", "collectors", "rf", "k samples/s",
              "vs first", "cores", "core-s/M", "ack p50 ms", "ListHosts p50", "one member p50");
  const PhaseResult& first = results[0];
  const double base = first.acked_batches_per_s * first.samples_per_batch;
  for (const PhaseResult& r : results) {
    const double rate = r.acked_batches_per_s * r.samples_per_batch;
    const std::string rf = r.collectors == 1           ? "1"
                           : r.replication_factor == 0 ? "def"
                                                       : std::to_string(r.replication_factor);
    std::printf("%-11d %4s %12.1f %12.2f %10.2f %12.2f %12.1f %11.1f ms %11.1f ms\n", r.collectors,
                rf.c_str(), rate * 0.001, base > 0 ? rate / base : 0, r.collector_cores,
                r.collector_cpu_per_msample, r.write_ms.p50, r.fleet_list_ms.p50,
                r.local_list_ms.p50);
  }
}

void PrintComparison(const PhaseResult& a, const PhaseResult& b) {
  auto ratio = [](double x, double y) { return y != 0 ? x / y : 0; };
  std::printf("\n== %s vs %s, same load ==\n", b.mode.c_str(), a.mode.c_str());
  std::printf("%-34s %12s %12s %8s\n", "", a.mode.c_str(), b.mode.c_str(), "ratio");
  auto row = [&](const char* name, double x, double y) {
    std::printf("%-34s %12.2f %12.2f %8.2f\n", name, x, y, ratio(y, x));
  };
  row("ramp-up (s)", a.ramp_seconds, b.ramp_seconds);
  row("sustained (k samples/s)", a.acked_batches_per_s * a.samples_per_batch * 0.001,
      b.acked_batches_per_s * b.samples_per_batch * 0.001);
  row("collector CPU (cores)", a.collector_cores, b.collector_cores);
  row("collector core-s per M samples", a.collector_cpu_per_msample, b.collector_cpu_per_msample);
  row("write->ack p50 (ms)", a.write_ms.p50, b.write_ms.p50);
  row("write->ack p99 (ms)", a.write_ms.p99, b.write_ms.p99);
  row("collector peak RSS (MiB)", MiB(a.peak_rss), MiB(b.peak_rss));
  row("generator CPU (cores)", a.generator_cores, b.generator_cores);
}

}  // namespace
}  // namespace drip::bench

int main(int argc, char** argv) {
  using namespace drip::bench;
  Options opt;
  std::string interval = "1s", duration = "300s", warmup = "20s", report_every = "10s";
  CLI::App app{"Fleet load benchmark: N agent streams against drip-collector(s)"};
  std::vector<int> collectors = {1};
  app.add_option("--streams", opt.streams, "agent streams, one host each")
      ->check(CLI::Range(1, 20000));
  app.add_option("--interval", interval, "a batch per host this often (e.g. 1s, 200ms)");
  app.add_option("--samples-per-batch", opt.samples_per_batch, "samples per batch")
      ->check(CLI::Range(1, 100000));
  app.add_option("--window", opt.window, "unacknowledged batches per stream at most")
      ->check(CLI::Range(1, 1000));
  app.add_option("--duration", duration, "how long batches are sent after the last Welcome");
  app.add_option("--warmup", warmup, "start of the run left out of the steady figures");
  app.add_option("--report-every", report_every, "period of the progress lines");
  app.add_option("--tls", opt.tls, "plaintext, mtls, or both (one after the other)")
      ->check(CLI::IsMember({"plaintext", "mtls", "both"}));
  app.add_option("--certs", opt.certs,
                 "certificates for mtls; made when missing (default DIR/certs)");
  app.add_option("--dir", opt.dir, "working directory (default: a new one under /tmp)");
  app.add_flag("--keep", opt.keep, "keep the working directory");
  app.add_option("--sync", opt.sync, "storage.sync_writes of the collector (default true)");
  app.add_option("--write-threads", opt.write_threads,
                 "storage.write_threads of the collector (default: its own default)")
      ->check(CLI::Range(0, 256));
  app.add_option("--collectors", collectors,
                 "a phase per count of collectors sharing the fleet through etcd, e.g. 1,2,3")
      ->delimiter(',')
      ->check(CLI::Range(1, 16));
  app.add_option("--replication-factors", opt.replication_factors,
                 "with several collectors, a phase per cluster.replication_factor, e.g. 1,2 "
                 "(default: the collector's own)")
      ->delimiter(',')
      ->check(CLI::Range(1, 3));
  CLI11_PARSE(app, argc, argv);
  opt.collectors = collectors;
  for (auto [text, out] : {std::pair{&interval, &opt.interval},
                           {&duration, &opt.duration},
                           {&warmup, &opt.warmup},
                           {&report_every, &opt.report_every}}) {
    absl::StatusOr<std::chrono::milliseconds> d = drip::ParseDuration(*text);
    if (!d.ok() || d->count() <= 0) {
      std::fprintf(stderr, "fleet_load_bench: bad duration '%s'\n", text->c_str());
      return 2;
    }
    *out = *d;
  }
  if (opt.warmup >= opt.duration) {
    std::fprintf(stderr, "fleet_load_bench: --warmup must be shorter than --duration\n");
    return 2;
  }
  const bool own_dir = opt.dir.empty();
  if (own_dir) {
    char tmpl[] = "/tmp/drip-fleet-bench-XXXXXX";
    opt.dir = mkdtemp(tmpl);
  }

  std::vector<FleetBatchEncoder> hosts;
  hosts.reserve(opt.streams);
  for (int i = 0; i < opt.streams; ++i) hosts.emplace_back(i, opt.samples_per_batch);
  // The hand-written wire bytes must be exactly what protobuf would send.
  std::string encoded;
  hosts[0].Encode(7, 1'760'000'000'000, &encoded);
  if (encoded != hosts[0].Build(7, 1'760'000'000'000).SerializeAsString()) {
    std::fprintf(stderr, "fleet_load_bench: FleetBatchEncoder differs from protobuf\n");
    return 1;
  }
  std::printf(
      "fleet_load_bench: %d streams x %d samples every %lld ms (%.0f samples/s offered), "
      "window %d, duration %s, warm-up %s, tls %s, sync_writes %s, write_threads %s; %zu "
      "bytes per batch\n",
      opt.streams, opt.samples_per_batch, static_cast<long long>(opt.interval.count()),
      opt.streams * opt.samples_per_batch * 1000.0 / opt.interval.count(), opt.window,
      drip::FormatDuration(opt.duration).c_str(), drip::FormatDuration(opt.warmup).c_str(),
      opt.tls.c_str(), opt.sync ? "true" : "false",
      opt.write_threads > 0 ? std::to_string(opt.write_threads).c_str() : "default",
      encoded.size());
  std::ifstream loadavg("/proc/loadavg");
  std::string load;
  std::getline(loadavg, load);
  std::printf("load average at start: %s\n", load.c_str());

  if (opt.tls != "plaintext" && !EnsureCertificates(opt, hosts)) {
    std::fprintf(stderr, "fleet_load_bench: could not make certificates in %s\n",
                 Certs(opt).c_str());
    return 1;
  }
  std::vector<PhaseResult> results;
  for (const std::string mode : {"plaintext", "mtls"}) {
    if (opt.tls != "both" && opt.tls != mode) continue;
    for (int count : opt.collectors) {
      for (int rf : opt.replication_factors) {
        results.push_back(RunPhase(opt, mode, count, rf, hosts));
        if (!results.back().started) {
          std::fprintf(stderr, "fleet_load_bench: the %s collectors (%d) did not start\n",
                       mode.c_str(), count);
          return 1;
        }
        if (count == 1) break;  // one collector has one copy, whatever the factor
      }
    }
  }
  if (results.size() > 1 && (opt.collectors.size() > 1 || opt.replication_factors.size() > 1)) {
    PrintScaling(results);
  }
  if (results.size() == 2 && opt.collectors.size() == 1) PrintComparison(results[0], results[1]);
  std::ifstream loadavg_end("/proc/loadavg");
  std::getline(loadavg_end, load);
  std::printf("load average at the end: %s\n", load.c_str());
  if (own_dir && !opt.keep) std::filesystem::remove_all(opt.dir);
  bool ok = true;
  for (const PhaseResult& r : results) ok = ok && r.errors == 0 && r.check_pass;
  return ok ? 0 : 1;
}
