#include "common/rpc/sample_figures.h"

#include "common/base/duration.h"
#include "fmt/format.h"

namespace drip {

uint64_t UnreclaimableBytes(const drip::v1::Sample& sample) {
  switch (sample.memory_case()) {
    case drip::v1::Sample::kProcess:
      return sample.process().anon_rss_bytes() + sample.process().swap_bytes();
    case drip::v1::Sample::kCgroup: {
      const auto& c = sample.cgroup();
      return c.anon_bytes() + c.swap_bytes() + c.shmem_bytes() + c.slab_unreclaimable_bytes() +
             c.sock_bytes();
    }
    case drip::v1::Sample::kSlab:
      return sample.slab().active_objects() * sample.slab().object_size_bytes();
    case drip::v1::Sample::kProcessExit:
      return 0;  // the process is gone and so is its memory
    case drip::v1::Sample::MEMORY_NOT_SET:
      break;
  }
  return 0;
}

uint64_t LimitBytes(const drip::v1::Sample& sample) {
  const drip::v1::MemoryLimit& limit = sample.limit();
  return limit.max_bytes() == 0 ? 0 : limit.max_bytes() + limit.swap_bytes();
}

std::string SampleKind(const drip::v1::Sample& sample) {
  switch (sample.memory_case()) {
    case drip::v1::Sample::kProcess:
      return "process";
    case drip::v1::Sample::kCgroup:
      return "cgroup";
    case drip::v1::Sample::kSlab:
      return "slab";
    case drip::v1::Sample::kProcessExit:
      return "exit";
    case drip::v1::Sample::MEMORY_NOT_SET:
      break;
  }
  return "none";
}

nlohmann::json SampleFiguresJson(const drip::v1::Sample& s) {
  nlohmann::json j = {{"timestamp_ms", s.timestamp_ms()},
                      {"kind", SampleKind(s)},
                      {"unreclaimable_bytes", UnreclaimableBytes(s)}};
  switch (s.memory_case()) {
    case drip::v1::Sample::kProcess:
      j["anon_rss_bytes"] = s.process().anon_rss_bytes();
      j["file_rss_bytes"] = s.process().file_rss_bytes();
      j["shmem_rss_bytes"] = s.process().shmem_rss_bytes();
      j["swap_bytes"] = s.process().swap_bytes();
      break;
    case drip::v1::Sample::kCgroup:
      j["current_bytes"] = s.cgroup().current_bytes();
      j["anon_bytes"] = s.cgroup().anon_bytes();
      j["kernel_bytes"] = s.cgroup().kernel_bytes();
      j["slab_unreclaimable_bytes"] = s.cgroup().slab_unreclaimable_bytes();
      j["sock_bytes"] = s.cgroup().sock_bytes();
      j["shmem_bytes"] = s.cgroup().shmem_bytes();
      j["swap_bytes"] = s.cgroup().swap_bytes();
      break;
    case drip::v1::Sample::kSlab:
      j["active_objects"] = s.slab().active_objects();
      j["object_size_bytes"] = s.slab().object_size_bytes();
      break;
    case drip::v1::Sample::kProcessExit:
      j["exited"] = true;
      j["peak_rss_bytes"] = s.process_exit().peak_rss_bytes();
      j["wait_status"] = s.process_exit().wait_status();
      j["oom_killed"] = s.process_exit().oom_killed();
      break;
    case drip::v1::Sample::MEMORY_NOT_SET:
      break;
  }
  if (s.has_limit()) {
    const drip::v1::MemoryLimit& l = s.limit();
    j["limit_bytes"] = LimitBytes(s);
    j["limit"] = {{"max_bytes", l.max_bytes()},
                  {"high_bytes", l.high_bytes()},
                  {"swap_bytes", l.swap_bytes()},
                  {"cgroup", l.cgroup()},
                  {"oom_kills", l.oom_kills()}};
  }
  return j;
}

namespace {

// "limit 512 MiB (3 OOM kills)", or "" without a limit or a kill.
std::string DescribeLimit(const drip::v1::Sample& s) {
  if (!s.has_limit()) return "";
  const uint64_t kills = s.limit().oom_kills();
  const std::string killed =
      kills == 0 ? "" : fmt::format(" ({} OOM kill{})", kills, kills == 1 ? "" : "s");
  if (LimitBytes(s) == 0) return fmt::format("no limit{}", killed);
  return fmt::format("limit {}{}", FormatBytes(LimitBytes(s)), killed);
}

std::string DescribeMemory(const drip::v1::Sample& s) {
  switch (s.memory_case()) {
    case drip::v1::Sample::kProcess:
      return fmt::format(
          "anon {} file {} shmem {} swap {}", FormatBytes(s.process().anon_rss_bytes()),
          FormatBytes(s.process().file_rss_bytes()), FormatBytes(s.process().shmem_rss_bytes()),
          FormatBytes(s.process().swap_bytes()));
    case drip::v1::Sample::kCgroup:
      return fmt::format(
          "current {} anon {} kernel {} slab_unreclaimable {} sock {}",
          FormatBytes(s.cgroup().current_bytes()), FormatBytes(s.cgroup().anon_bytes()),
          FormatBytes(s.cgroup().kernel_bytes()),
          FormatBytes(s.cgroup().slab_unreclaimable_bytes()), FormatBytes(s.cgroup().sock_bytes()));
    case drip::v1::Sample::kSlab:
      return fmt::format("{} objects x {} B", s.slab().active_objects(),
                         s.slab().object_size_bytes());
    case drip::v1::Sample::kProcessExit:
      return fmt::format(
          "exited (peak RSS {}, wait status {}{})", FormatBytes(s.process_exit().peak_rss_bytes()),
          s.process_exit().wait_status(), s.process_exit().oom_killed() ? ", OOM-killed" : "");
    case drip::v1::Sample::MEMORY_NOT_SET:
      break;
  }
  return "-";
}

}  // namespace

std::string DescribeFigures(const drip::v1::Sample& s) {
  const std::string limit = DescribeLimit(s);
  return limit.empty() ? DescribeMemory(s) : DescribeMemory(s) + " " + limit;
}

}  // namespace drip
