#include "agent/slab_sampler.h"

#include "agent/component_namer.h"
#include "agent/proc_files.h"
#include "common/base/strings.h"
#include "fmt/format.h"

namespace drip::agent {

SlabSampler::SlabSampler(std::string slabinfo_path, int64_t boot_time_s)
    : slabinfo_path_(std::move(slabinfo_path)), instance_(fmt::format("boot@{}", boot_time_s)) {}

absl::StatusOr<std::vector<SlabSampler::Cache>> SlabSampler::Parse(std::string_view text,
                                                                   std::string_view source) {
  std::vector<Cache> caches;
  const std::vector<std::string> lines = SplitString(text, '\n');
  if (lines.empty() || !lines[0].starts_with("slabinfo - version: 2.")) {
    return absl::InvalidArgumentError(fmt::format(
        "{}:1: not slabinfo version 2.x (first line '{}')", source, lines.empty() ? "" : lines[0]));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty() || line[0] == '#') continue;
    // name active_objs num_objs objsize objperslab pagesperslab : tunables ... : slabdata ...
    std::vector<std::string> fields;
    for (const std::string& f : SplitString(line, ' ')) {
      if (!f.empty()) fields.push_back(f);
    }
    Cache cache;
    if (fields.size() < 4 || !ParseNumber(std::string_view(fields[1]), &cache.active_objects) ||
        !ParseNumber(std::string_view(fields[3]), &cache.object_size_bytes)) {
      return absl::InvalidArgumentError(
          fmt::format("{}:{}: expected 'name active_objs num_objs objsize ...', got '{}'", source,
                      i + 1, line));
    }
    cache.name = fields[0];
    caches.push_back(std::move(cache));
  }
  return caches;
}

absl::Status SlabSampler::AppendSamples(int64_t timestamp_ms, std::vector<drip::v1::Sample>* out) {
  absl::Status read = ReadProcFile(slabinfo_path_, &buffer_);
  if (!read.ok()) return read;
  absl::StatusOr<std::vector<Cache>> caches = Parse(buffer_, slabinfo_path_);
  if (!caches.ok()) return caches.status();
  uint64_t sampled = 0;
  for (const Cache& cache : *caches) {
    if (cache.active_objects == 0) continue;
    drip::v1::Sample& sample = out->emplace_back();
    sample.set_component(fmt::format("kernel:slab:{}", ComponentNamer::ToValidUtf8(cache.name)));
    sample.set_instance(instance_);
    sample.set_timestamp_ms(timestamp_ms);
    sample.mutable_slab()->set_active_objects(cache.active_objects);
    sample.mutable_slab()->set_object_size_bytes(cache.object_size_bytes);
    ++sampled;
  }
  caches_last_pass_ = sampled;
  return absl::OkStatus();
}

}  // namespace drip::agent
