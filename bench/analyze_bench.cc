// `dripctl analyze` end to end: writes a fleet's day of samples as the CSV an operator
// would export (1,000 hosts × 20 components × 1 day at 60 s = 28.8 M rows by default),
// then runs the real dripctl binary on it as a child process and measures its wall time
// and peak RSS (wait4's ru_maxrss) — CSV parsing, sorting and the detector together.
//
//   analyze_bench [--hosts 1000] [--components 20] [--hours 24] [--interval 60]
//                 [--seed 1] [--dir /tmp] [--keep]
//
// Values come from tests/synthetic/FleetGenerator, so the detector does real work. Rows
// are written an hour at a time, and within each hour host by host in a shuffled order
// (each host's series for the whole hour), so the file is not in time order and the
// "rows in any order" path — the sort — is exercised. Recorded in docs/benchmarks.md.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/synthetic/fleet_generator.h"

namespace {

using Clock = std::chrono::steady_clock;
using drip::synthetic::FleetGenerator;
using drip::synthetic::FleetSpec;

struct Options {
  int hosts = 1000;
  int components = 20;
  int hours = 24;
  int interval_s = 60;
  uint64_t seed = 1;
  std::string dir = "/tmp";
  bool keep = false;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Writes the CSV; returns the number of rows, or -1 when the file cannot be written.
int64_t WriteCsv(const Options& opt, const std::string& path) {
  FleetSpec spec;
  spec.seed = opt.seed;
  spec.hosts = opt.hosts;
  // The generator's own mix is two healthy components for every leaking one.
  spec.leaking_components = std::max(1, opt.components / 3);
  spec.healthy_components = std::max(0, opt.components - spec.leaking_components);
  spec.duration_s = static_cast<int64_t>(opt.hours) * 3600;
  spec.interval_s = opt.interval_s;
  FleetGenerator generator(spec);

  std::map<std::string, std::vector<size_t>> by_host;
  for (size_t i = 0; i < generator.series().size(); ++i) {
    by_host[generator.series()[i].host].push_back(i);
  }
  std::vector<const std::vector<size_t>*> hosts;
  for (const auto& [host, series] : by_host) hosts.push_back(&series);

  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return -1;
  fmt::memory_buffer buf;
  fmt::format_to(std::back_inserter(buf), "timestamp,host,component,instance,bytes\n");
  int64_t rows = 0;
  bool ok = true;
  auto flush = [&] {
    ok = ok && std::fwrite(buf.data(), 1, buf.size(), out) == buf.size();
    buf.clear();
  };
  std::mt19937_64 rng(opt.seed);
  constexpr int64_t kBlockSeconds = 3600;
  const int64_t end = spec.start_s + spec.duration_s;
  drip::synthetic::SyntheticSample sample;
  for (int64_t block = spec.start_s; block < end; block += kBlockSeconds) {
    std::shuffle(hosts.begin(), hosts.end(), rng);
    const int64_t block_end = std::min(end, block + kBlockSeconds);
    for (const auto* series : hosts) {
      for (size_t index : *series) {
        const auto& s = generator.series()[index];
        for (int64_t t = block; t < block_end; t += spec.interval_s) {
          if (!generator.SampleAt(index, t, &sample)) continue;
          fmt::format_to(std::back_inserter(buf), "{},{},{},{},{}\n", sample.timestamp_s, s.host,
                         s.component, sample.instance, sample.bytes);
          ++rows;
        }
        if (buf.size() > (4 << 20)) flush();
      }
    }
  }
  flush();
  ok = (std::fclose(out) == 0) && ok;
  return ok ? rows : -1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"End-to-end speed and peak memory of `dripctl analyze` on a fleet CSV"};
  app.add_option("--hosts", opt.hosts, "hosts in the fleet")->check(CLI::PositiveNumber);
  app.add_option("--components", opt.components, "components per host")->check(CLI::PositiveNumber);
  app.add_option("--hours", opt.hours, "hours of samples")->check(CLI::PositiveNumber);
  app.add_option("--interval", opt.interval_s, "seconds between samples")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", opt.seed, "seed of the synthetic fleet");
  app.add_option("--dir", opt.dir, "where the temporary directory is made");
  app.add_flag("--keep", opt.keep, "keep the CSV and the report");
  CLI11_PARSE(app, argc, argv);

  std::string pattern = opt.dir + "/drip-analyze-bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "error: cannot create a directory under %s: %s\n", opt.dir.c_str(),
                 std::strerror(errno));
    return 1;
  }
  const std::string dir = pattern;
  const std::string csv = dir + "/samples.csv";
  const std::string report = dir + "/report.json";
  auto cleanup = [&] {
    if (!opt.keep) std::filesystem::remove_all(dir);
  };

  const auto write_start = Clock::now();
  const int64_t rows = WriteCsv(opt, csv);
  const double write_s = Seconds(Clock::now() - write_start);
  if (rows < 0) {
    std::fprintf(stderr, "error: cannot write %s\n", csv.c_str());
    cleanup();
    return 1;
  }
  const double file_mib = std::filesystem::file_size(csv) / 1048576.0;
  std::printf("CSV: %lld rows, %.0f MiB, written in %.1f s (%s)\n", static_cast<long long>(rows),
              file_mib, write_s, csv.c_str());
  std::fflush(stdout);

  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execl(DRIPCTL_BIN, DRIPCTL_BIN, "analyze", "--input", csv.c_str(), "--output", report.c_str(),
          nullptr);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) {
    std::fprintf(stderr, "error: cannot run %s\n", DRIPCTL_BIN);
    cleanup();
    return 1;
  }
  const double wall_s = Seconds(Clock::now() - start);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "error: dripctl analyze failed (status %d)\n", status);
    cleanup();
    return 1;
  }
  const double cpu_s = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
                       usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;

  size_t suspects = 0, components = 0;
  std::ifstream in(report);
  const nlohmann::json parsed = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.contains("suspects")) {
    std::fprintf(stderr, "error: %s is not a dripctl analyze report\n", report.c_str());
    cleanup();
    return 1;
  }
  suspects = parsed["suspects"].size();
  if (parsed.contains("components")) components = parsed["components"].size();

  std::printf(
      "dripctl analyze: %.1f s wall, %.1f s CPU, %.0f rows/s (%.0f MiB/s), peak RSS %.0f MiB\n",
      wall_s, cpu_s, rows / wall_s, file_mib / wall_s, usage.ru_maxrss / 1024.0);
  std::printf("report: %zu suspects, %zu components\n", suspects, components);
  cleanup();
  return 0;
}
