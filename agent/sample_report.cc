#include "agent/sample_report.h"

#include <algorithm>

#include "common/duration.h"
#include "common/sample_figures.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::agent {

void SortByUnreclaimable(std::vector<drip::v1::Sample>* samples) {
  std::sort(samples->begin(), samples->end(),
            [](const drip::v1::Sample& a, const drip::v1::Sample& b) {
              const uint64_t ua = UnreclaimableBytes(a);
              const uint64_t ub = UnreclaimableBytes(b);
              if (ua != ub) return ua > ub;
              if (a.component() != b.component()) return a.component() < b.component();
              return a.instance() < b.instance();
            });
}

std::string RenderSampleTable(std::string_view sampler,
                              const std::vector<drip::v1::Sample>& samples) {
  size_t component_width = std::string_view("COMPONENT").size();
  size_t instance_width = std::string_view("INSTANCE").size();
  for (const auto& s : samples) {
    component_width = std::max(component_width, s.component().size());
    instance_width = std::max(instance_width, s.instance().size());
  }
  std::string out = fmt::format("sampler: {} ({} processes)\n", sampler, samples.size());
  constexpr size_t kNumberWidth = 13;
  out += fmt::format("{:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}\n", "COMPONENT",
                     component_width, "INSTANCE", instance_width, "UNRECLAIMABLE", kNumberWidth,
                     "ANON", kNumberWidth, "FILE", kNumberWidth, "SHMEM", kNumberWidth, "SWAP",
                     kNumberWidth);
  for (const auto& s : samples) {
    const drip::v1::ProcessMemory& m = s.process();
    out += fmt::format(
        "{:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}\n", s.component(), component_width,
        s.instance(), instance_width, FormatBytes(UnreclaimableBytes(s)), kNumberWidth,
        FormatBytes(m.anon_rss_bytes()), kNumberWidth, FormatBytes(m.file_rss_bytes()),
        kNumberWidth, FormatBytes(m.shmem_rss_bytes()), kNumberWidth, FormatBytes(m.swap_bytes()),
        kNumberWidth);
  }
  return out;
}

std::string RenderSampleJson(std::string_view sampler,
                             const std::vector<drip::v1::Sample>& samples) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : samples) {
    const drip::v1::ProcessMemory& m = s.process();
    list.push_back({{"component", s.component()},
                    {"instance", s.instance()},
                    {"timestamp_ms", s.timestamp_ms()},
                    {"anon_rss_bytes", m.anon_rss_bytes()},
                    {"file_rss_bytes", m.file_rss_bytes()},
                    {"shmem_rss_bytes", m.shmem_rss_bytes()},
                    {"swap_bytes", m.swap_bytes()},
                    {"unreclaimable_bytes", UnreclaimableBytes(s)}});
  }
  nlohmann::json out = {{"sampler", std::string(sampler)}, {"samples", std::move(list)}};
  // Component names come from executables and cgroups; replace invalid UTF-8 rather
  // than fail the whole output.
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace drip::agent
