#include "diagnoser/format/pprof_profile.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "diagnoser/stack_merge.h"
#include "fmt/format.h"

namespace drip::diagnoser {
namespace {

using perftools::profiles::Profile;

// Builds the profile's string table and its tables of functions, mappings and locations,
// each entry once.
class ProfileBuilder {
 public:
  explicit ProfileBuilder(Profile* profile) : profile_(profile) { String(""); }

  int64_t String(const std::string& s) {
    auto [it, added] = strings_.try_emplace(s, static_cast<int64_t>(strings_.size()));
    if (added) profile_->add_string_table(s);
    return it->second;
  }

  void ValueType(perftools::profiles::ValueType* type, const std::string& name,
                 const std::string& unit) {
    type->set_type(String(name));
    type->set_unit(String(unit));
  }

  uint64_t Location(const StackFrame& frame) {
    const LocationKey key{frame.module,   frame.build_id, frame.module_offset, frame.address,
                          frame.function, frame.file,     frame.line};
    if (auto it = locations_.find(key); it != locations_.end()) return it->second;
    perftools::profiles::Location* location = profile_->add_location();
    location->set_id(static_cast<uint64_t>(profile_->location_size()));
    if (frame.module.empty()) {
      location->set_address(frame.address);
    } else {
      // pprof symbolizes an address against its mapping; the module's own offset is what
      // its ELF file and build-id answer for, on any host.
      location->set_mapping_id(Mapping(frame));
      location->set_address(frame.module_offset);
    }
    if (!frame.function.empty()) {
      perftools::profiles::Line* line = location->add_line();
      line->set_function_id(Function(frame));
      line->set_line(frame.line);
    }
    locations_.emplace(key, location->id());
    return location->id();
  }

 private:
  using LocationKey =
      std::tuple<std::string, std::string, uint64_t, uint64_t, std::string, std::string, int>;

  uint64_t Mapping(const StackFrame& frame) {
    const std::pair<std::string, std::string> key{frame.module, frame.build_id};
    perftools::profiles::Mapping* mapping = nullptr;
    if (auto it = mappings_.find(key); it != mappings_.end()) {
      mapping = profile_->mutable_mapping(static_cast<int>(it->second - 1));
    } else {
      mapping = profile_->add_mapping();
      mapping->set_id(static_cast<uint64_t>(profile_->mapping_size()));
      mapping->set_filename(String(frame.module));
      mapping->set_build_id(String(frame.build_id));
      mappings_.emplace(key, mapping->id());
    }
    // Addresses are module offsets: the mapping spans the ones its frames use.
    mapping->set_memory_limit(std::max<uint64_t>(mapping->memory_limit(), frame.module_offset + 1));
    if (!frame.function.empty()) mapping->set_has_functions(true);
    if (!frame.file.empty()) mapping->set_has_filenames(true);
    if (frame.line > 0) mapping->set_has_line_numbers(true);
    return mapping->id();
  }

  uint64_t Function(const StackFrame& frame) {
    const std::pair<std::string, std::string> key{frame.function, frame.file};
    if (auto it = functions_.find(key); it != functions_.end()) return it->second;
    perftools::profiles::Function* function = profile_->add_function();
    function->set_id(static_cast<uint64_t>(profile_->function_size()));
    function->set_name(String(frame.function));
    function->set_system_name(String(frame.function));
    function->set_filename(String(frame.file));
    functions_.emplace(key, function->id());
    return function->id();
  }

  Profile* profile_;
  std::unordered_map<std::string, int64_t> strings_;
  std::map<LocationKey, uint64_t> locations_;
  std::map<std::pair<std::string, std::string>, uint64_t> mappings_;
  std::map<std::pair<std::string, std::string>, uint64_t> functions_;
};

// The site's allocated objects: its bytes over its mean live object size, since the
// snapshot estimates bytes allocated but not objects.
int64_t EstimatedAllocatedObjects(const SnapshotStack& stack, const LivePoint& end) {
  if (end.live_allocs > 0 && end.live_bytes > 0) {
    const double mean_size =
        static_cast<double>(end.live_bytes) / static_cast<double>(end.live_allocs);
    return std::max<int64_t>(
        stack.sampled_allocs,
        static_cast<int64_t>(std::llround(static_cast<double>(stack.allocated_bytes) / mean_size)));
  }
  return stack.sampled_allocs;
}

// Go's heap profile layout: the sample types in its order, inuse_space the default, the
// period in bytes, and what the profile is of as its first comment.
void StartHeapProfile(const HeapSnapshot& snapshot, const std::string& what,
                      ProfileBuilder* builder, Profile* profile) {
  builder->ValueType(profile->add_sample_type(), "alloc_objects", "count");
  builder->ValueType(profile->add_sample_type(), "alloc_space", "bytes");
  builder->ValueType(profile->add_sample_type(), "inuse_objects", "count");
  builder->ValueType(profile->add_sample_type(), "inuse_space", "bytes");
  profile->set_default_sample_type(builder->String("inuse_space"));
  builder->ValueType(profile->mutable_period_type(), "space", "bytes");
  profile->set_period(static_cast<int64_t>(snapshot.sampling_mean_bytes));
  std::string of = fmt::format("{} pid {}", what, snapshot.target.pid);
  if (!snapshot.target.comm.empty()) of += fmt::format(" ({})", snapshot.target.comm);
  if (!snapshot.target.host.empty()) of += " on " + snapshot.target.host;
  if (!snapshot.mode.empty()) of += ", " + snapshot.mode + " mode";
  profile->add_comment(builder->String(of));
}

void AddLabels(Verdict verdict, int64_t rank, ProfileBuilder* builder,
               perftools::profiles::Sample* sample) {
  perftools::profiles::Label* label = sample->add_label();
  label->set_key(builder->String("verdict"));
  label->set_str(builder->String(std::string(VerdictName(verdict))));
  if (rank > 0) {
    label = sample->add_label();
    label->set_key(builder->String("rank"));
    label->set_num(rank);
  }
}

absl::StatusOr<std::string> Gzip(const std::string& raw) {
  z_stream stream{};
  // 15 + 16: a gzip header and trailer around the deflate stream, as pprof writes.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return absl::InternalError("zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, raw.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  stream.avail_in = static_cast<uInt>(raw.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return absl::InternalError("zlib: deflate did not finish");
  return out;
}

}  // namespace

Profile HeapSnapshotToPprof(const HeapSnapshot& snapshot, const Diagnosis& diagnosis) {
  Profile profile;
  ProfileBuilder builder(&profile);
  StartHeapProfile(snapshot, "drip heap snapshot of", &builder, &profile);
  profile.set_time_nanos(snapshot.start_ms * 1'000'000);
  profile.set_duration_nanos(std::max<int64_t>(0, snapshot.end_ms - snapshot.start_ms) * 1'000'000);
  if (!diagnosis.summary.empty()) profile.add_comment(builder.String(diagnosis.summary));

  // Each merged site's verdict and rank, by the id the diagnosis keeps for it.
  std::unordered_map<uint64_t, std::pair<const DiagnosedStack*, int64_t>> judged;
  for (size_t i = 0; i < diagnosis.stacks.size(); ++i) {
    judged.emplace(diagnosis.stacks[i].stack_id,
                   std::make_pair(&diagnosis.stacks[i], static_cast<int64_t>(i + 1)));
  }
  for (const MergedStack& merged : MergeStacks(snapshot.stacks)) {
    const SnapshotStack& stack = merged.stack;
    const LivePoint end = stack.series.empty() ? LivePoint{} : stack.series.back();
    perftools::profiles::Sample* sample = profile.add_sample();
    for (const StackFrame& frame : stack.frames) sample->add_location_id(builder.Location(frame));
    sample->add_value(EstimatedAllocatedObjects(stack, end));
    sample->add_value(stack.allocated_bytes);
    sample->add_value(end.live_allocs);
    sample->add_value(end.live_bytes);
    if (auto it = judged.find(stack.id); it != judged.end()) {
      AddLabels(it->second.first->verdict, it->second.second, &builder, sample);
    }
  }
  return profile;
}

Profile SnapshotDiffToPprof(const HeapSnapshot& now, const SnapshotDiff& diff) {
  Profile profile;
  ProfileBuilder builder(&profile);
  StartHeapProfile(now, "drip heap diff: what grew between two snapshots of", &builder, &profile);
  profile.set_time_nanos(diff.base_end_ms * 1'000'000);
  profile.set_duration_nanos((diff.now_end_ms - diff.base_end_ms) * 1'000'000);
  profile.add_comment(builder.String(diff.summary));
  for (const SiteChange& site : diff.sites) {
    perftools::profiles::Sample* sample = profile.add_sample();
    for (const StackFrame& frame : site.frames) sample->add_location_id(builder.Location(frame));
    sample->add_value(std::llround(site.allocated_objects));
    sample->add_value(std::llround(site.allocated_bytes));
    sample->add_value(std::llround(site.grew_objects));
    sample->add_value(std::llround(site.grew_bytes));
    const SiteInWindow& latest = site.now ? *site.now : *site.base;
    AddLabels(latest.verdict, site.now ? site.now->rank : 0, &builder, sample);
  }
  return profile;
}

absl::StatusOr<std::string> SnapshotDiffToPprofGzip(const HeapSnapshot& now,
                                                    const SnapshotDiff& diff) {
  return Gzip(SnapshotDiffToPprof(now, diff).SerializeAsString());
}

absl::StatusOr<std::string> HeapSnapshotToPprofGzip(const HeapSnapshot& snapshot,
                                                    const Diagnosis& diagnosis) {
  return Gzip(HeapSnapshotToPprof(snapshot, diagnosis).SerializeAsString());
}

absl::StatusOr<std::string> Gunzip(const std::string& bytes) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return absl::InternalError("zlib: inflateInit2");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buffer[1 << 16];
  int result = Z_OK;
  while (result == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    result = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
    if (result == Z_BUF_ERROR && stream.avail_in == 0) break;
  }
  inflateEnd(&stream);
  if (result != Z_STREAM_END) return absl::InvalidArgumentError("not a complete gzip stream");
  return out;
}

}  // namespace drip::diagnoser
