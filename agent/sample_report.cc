#include "agent/sample_report.h"

#include <algorithm>

#include "common/base/duration.h"
#include "common/rpc/sample_figures.h"
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

std::string RenderSampleTable(std::string_view sampler, std::string_view fallback_reason,
                              const std::vector<drip::v1::Sample>& samples) {
  size_t component_width = std::string_view("COMPONENT").size();
  size_t instance_width = std::string_view("INSTANCE").size();
  size_t processes = 0;
  for (const auto& s : samples) {
    component_width = std::max(component_width, s.component().size());
    instance_width = std::max(instance_width, s.instance().size());
    processes += s.memory_case() == drip::v1::Sample::kProcess;
  }
  std::string out = fmt::format(
      "sampler: {}{} ({} processes, {} entities)\n", sampler,
      fallback_reason.empty() ? std::string() : fmt::format(" (fallback: {})", fallback_reason),
      processes, samples.size());
  constexpr size_t kNumberWidth = 13;
  out += fmt::format("{:<{}}  {:<{}}  {:<7}  {:>{}}  {}\n", "COMPONENT", component_width,
                     "INSTANCE", instance_width, "KIND", "UNRECLAIMABLE", kNumberWidth, "FIGURES");
  for (const auto& s : samples) {
    out += fmt::format("{:<{}}  {:<{}}  {:<7}  {:>{}}  {}\n", s.component(), component_width,
                       s.instance(), instance_width, SampleKind(s),
                       FormatBytes(UnreclaimableBytes(s)), kNumberWidth, DescribeFigures(s));
  }
  return out;
}

std::string RenderSampleJson(std::string_view sampler, std::string_view fallback_reason,
                             const std::vector<drip::v1::Sample>& samples) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : samples) {
    nlohmann::json j = SampleFiguresJson(s);
    j["component"] = s.component();
    j["instance"] = s.instance();
    list.push_back(std::move(j));
  }
  nlohmann::json out = {{"sampler", std::string(sampler)},
                        {"fallback_reason", std::string(fallback_reason)},
                        {"samples", std::move(list)}};
  // Component names come from executables and cgroups; replace invalid UTF-8 rather
  // than fail the whole output.
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace drip::agent
