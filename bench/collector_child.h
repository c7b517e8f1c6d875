// CollectorChild: a real drip-collector run as a child process of a benchmark, on
// 127.0.0.1 port 0 with its store in a directory of the benchmark's, and what /proc says
// about it while it runs (CPU time, resident and peak memory).
//
// The benchmark and the collector share the machine, so the collector is measured from
// outside — its own utime + stime and VmRSS/VmHWM — rather than trusted to report on
// itself. Its log (stderr) goes to collector.log in the directory.
//
// Not thread-safe: one thread starts, reads and stops it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace drip::bench {

// What /proc/PID says about a live process; zeros once it is gone.
struct ProcFigures {
  double cpu_seconds = 0;  // utime + stime
  uint64_t rss_bytes = 0;  // VmRSS
  uint64_t hwm_bytes = 0;  // VmHWM: peak RSS
  int threads = 0;
};
ProcFigures ReadProcFigures(pid_t pid);

// Bytes of every regular file under `dir` (the store's size on disk).
uint64_t DirectoryBytes(const std::string& dir);

// Text of GET http://`address`/metrics, empty on failure.
std::string ScrapeMetrics(const std::string& address);
// Sum of every series of `name` in a Prometheus text exposition whose labels contain
// `labels` (e.g. `outcome="closed"`; empty: all).
double MetricValue(const std::string& exposition, const std::string& name,
                   const std::string& labels = "");

class CollectorChild {
 public:
  // Writes `dir`/collector.yaml (store in `dir`/db, gRPC and /metrics on 127.0.0.1:0,
  // log level info, storage.write_threads `write_threads` unless 0, every other option
  // at its default; `tls_section` is the whole `tls:` section), starts `binary` and
  // waits up to 60 s for its ready file. nullopt, with the reason on stderr, when it did
  // not start.
  static std::optional<CollectorChild> Start(const std::string& binary, const std::string& dir,
                                             bool sync_writes, int write_threads,
                                             const std::string& tls_section);
  CollectorChild(CollectorChild&& other) noexcept;
  CollectorChild& operator=(CollectorChild&&) = delete;
  ~CollectorChild();  // Stop()s

  pid_t pid() const { return pid_; }
  const std::string& grpc_address() const { return grpc_; }
  const std::string& metrics_address() const { return metrics_; }
  const std::string& store_dir() const { return store_dir_; }
  const std::string& log_path() const { return log_; }

  // SIGTERM, then waits; the exit status as waitpid reports it (-1: not running).
  // The time it took is in shutdown_seconds().
  int Stop();
  double shutdown_seconds() const { return shutdown_seconds_; }

 private:
  CollectorChild() = default;

  pid_t pid_ = -1;
  std::string grpc_, metrics_, store_dir_, log_;
  double shutdown_seconds_ = 0;
};

}  // namespace drip::bench
