#include "common/snapshot/heap_snapshot_json.h"

#include <cstdint>
#include <limits>
#include <string>

#include "common/base/status_macros.h"
#include "common/snapshot/heap_snapshot_validation.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip {
namespace {

using Json = nlohmann::ordered_json;

// ---- Writing ----

Json FrameJson(const StackFrame& f) {
  Json j;
  j["address"] = f.address;
  j["function"] = f.function;
  j["module"] = f.module;
  j["build_id"] = f.build_id;
  j["module_offset"] = f.module_offset;
  j["file"] = f.file;
  j["line"] = f.line;
  return j;
}

Json StackJson(const SnapshotStack& s) {
  Json j;
  j["id"] = s.id;
  Json frames = Json::array();
  for (const StackFrame& f : s.frames) frames.push_back(FrameJson(f));
  j["frames"] = std::move(frames);
  Json series = Json::array();
  for (const LivePoint& p : s.series) {
    series.push_back(
        Json{{"t_ms", p.t_ms}, {"live_bytes", p.live_bytes}, {"live_allocs", p.live_allocs}});
  }
  j["series"] = std::move(series);
  j["sampled_allocs"] = s.sampled_allocs;
  j["sampled_frees"] = s.sampled_frees;
  j["allocated_bytes"] = s.allocated_bytes;
  j["freed_bytes"] = s.freed_bytes;
  j["first_alloc_ms"] = s.first_alloc_ms;
  j["last_alloc_ms"] = s.last_alloc_ms;
  if (!s.cohorts.empty()) {
    Json cohorts = Json::array();
    for (const AllocationCohort& c : s.cohorts) {
      cohorts.push_back(Json{{"allocs", c.allocs}, {"live", c.live}});
    }
    j["cohorts"] = std::move(cohorts);
  }
  return j;
}

// ---- Reading ----

// Walks the DOM with the JSON path of the current value, so that every error can say
// exactly which field is wrong.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  absl::Status Error(const std::string& path, std::string_view what) const {
    return absl::InvalidArgumentError(fmt::format("{}: {}: {}", source_, path, what));
  }

  static std::string Join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
  }
  static std::string Index(const std::string& path, size_t i) {
    return fmt::format("{}[{}]", path, i);
  }

  // Sets *out to the member `key` of `obj` (at `path`), or nullptr when it is absent and
  // not required.
  absl::Status Find(const Json& obj, const std::string& path, std::string_view key, bool required,
                    const Json** out) const {
    *out = nullptr;  // on every path, so that no caller reads an unset pointer
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) return Error(Join(path, key), "required field is missing");
      return absl::OkStatus();
    }
    *out = &*it;
    return absl::OkStatus();
  }

  absl::Status Object(const Json& obj, const std::string& path, std::string_view key, bool required,
                      const Json** out) const {
    RETURN_IF_ERROR(Find(obj, path, key, required, out));
    if (*out != nullptr && !(*out)->is_object())
      return Error(Join(path, key), "expected an object");
    return absl::OkStatus();
  }

  absl::Status Array(const Json& obj, const std::string& path, std::string_view key, bool required,
                     const Json** out) const {
    RETURN_IF_ERROR(Find(obj, path, key, required, out));
    if (*out != nullptr && !(*out)->is_array()) return Error(Join(path, key), "expected an array");
    return absl::OkStatus();
  }

  absl::Status Int64(const Json& obj, const std::string& path, std::string_view key, bool required,
                     int64_t* out) const {
    const Json* v;
    RETURN_IF_ERROR(Find(obj, path, key, required, &v));
    if (v == nullptr) return absl::OkStatus();
    if (!v->is_number_integer()) return Error(Join(path, key), "expected an integer");
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Error(Join(path, key), "integer out of range");
    }
    *out = v->get<int64_t>();
    return absl::OkStatus();
  }

  absl::Status Int(const Json& obj, const std::string& path, std::string_view key, bool required,
                   int* out) const {
    int64_t value = *out;
    RETURN_IF_ERROR(Int64(obj, path, key, required, &value));
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
      return Error(Join(path, key), "integer out of range");
    }
    *out = static_cast<int>(value);
    return absl::OkStatus();
  }

  absl::Status Uint64(const Json& obj, const std::string& path, std::string_view key, bool required,
                      uint64_t* out) const {
    const Json* v;
    RETURN_IF_ERROR(Find(obj, path, key, required, &v));
    if (v == nullptr) return absl::OkStatus();
    if (!v->is_number_integer()) return Error(Join(path, key), "expected an integer");
    if (!v->is_number_unsigned() && v->get<int64_t>() < 0) {
      return Error(Join(path, key),
                   fmt::format("must not be negative (got {})", v->get<int64_t>()));
    }
    *out = v->get<uint64_t>();
    return absl::OkStatus();
  }

  absl::Status Double(const Json& obj, const std::string& path, std::string_view key, bool required,
                      double* out) const {
    const Json* v;
    RETURN_IF_ERROR(Find(obj, path, key, required, &v));
    if (v == nullptr) return absl::OkStatus();
    if (!v->is_number()) return Error(Join(path, key), "expected a number");
    *out = v->get<double>();
    return absl::OkStatus();
  }

  absl::Status String(const Json& obj, const std::string& path, std::string_view key, bool required,
                      std::string* out) const {
    const Json* v;
    RETURN_IF_ERROR(Find(obj, path, key, required, &v));
    if (v == nullptr) return absl::OkStatus();
    if (!v->is_string()) return Error(Join(path, key), "expected a string");
    *out = v->get<std::string>();
    return absl::OkStatus();
  }

  absl::Status ExpectObject(const Json& v, const std::string& path) const {
    if (!v.is_object()) return Error(path, "expected an object");
    return absl::OkStatus();
  }

 private:
  std::string_view source_;
};

absl::Status ReadFrame(const Reader& r, const Json& j, const std::string& path, StackFrame* f) {
  RETURN_IF_ERROR(r.ExpectObject(j, path));
  RETURN_IF_ERROR(r.Uint64(j, path, "address", false, &f->address));
  RETURN_IF_ERROR(r.String(j, path, "function", false, &f->function));
  RETURN_IF_ERROR(r.String(j, path, "module", false, &f->module));
  RETURN_IF_ERROR(r.String(j, path, "build_id", false, &f->build_id));
  RETURN_IF_ERROR(r.Uint64(j, path, "module_offset", false, &f->module_offset));
  RETURN_IF_ERROR(r.String(j, path, "file", false, &f->file));
  RETURN_IF_ERROR(r.Int(j, path, "line", false, &f->line));
  return absl::OkStatus();
}

absl::Status ReadStack(const Reader& r, const Json& j, const std::string& path, SnapshotStack* s) {
  RETURN_IF_ERROR(r.ExpectObject(j, path));
  RETURN_IF_ERROR(r.Uint64(j, path, "id", true, &s->id));
  const Json* frames;
  RETURN_IF_ERROR(r.Array(j, path, "frames", true, &frames));
  const std::string frames_path = Reader::Join(path, "frames");
  s->frames.resize(frames->size());
  for (size_t i = 0; i < frames->size(); ++i) {
    RETURN_IF_ERROR(ReadFrame(r, (*frames)[i], Reader::Index(frames_path, i), &s->frames[i]));
  }
  const Json* series;
  RETURN_IF_ERROR(r.Array(j, path, "series", true, &series));
  const std::string series_path = Reader::Join(path, "series");
  s->series.resize(series->size());
  for (size_t i = 0; i < series->size(); ++i) {
    const Json& p = (*series)[i];
    const std::string point_path = Reader::Index(series_path, i);
    RETURN_IF_ERROR(r.ExpectObject(p, point_path));
    RETURN_IF_ERROR(r.Int64(p, point_path, "t_ms", true, &s->series[i].t_ms));
    RETURN_IF_ERROR(r.Int64(p, point_path, "live_bytes", true, &s->series[i].live_bytes));
    RETURN_IF_ERROR(r.Int64(p, point_path, "live_allocs", true, &s->series[i].live_allocs));
  }
  RETURN_IF_ERROR(r.Int64(j, path, "sampled_allocs", true, &s->sampled_allocs));
  RETURN_IF_ERROR(r.Int64(j, path, "sampled_frees", true, &s->sampled_frees));
  RETURN_IF_ERROR(r.Int64(j, path, "allocated_bytes", true, &s->allocated_bytes));
  RETURN_IF_ERROR(r.Int64(j, path, "freed_bytes", true, &s->freed_bytes));
  RETURN_IF_ERROR(r.Int64(j, path, "first_alloc_ms", true, &s->first_alloc_ms));
  RETURN_IF_ERROR(r.Int64(j, path, "last_alloc_ms", true, &s->last_alloc_ms));
  const Json* cohorts = nullptr;
  RETURN_IF_ERROR(r.Array(j, path, "cohorts", false, &cohorts));
  if (cohorts != nullptr) {
    const std::string cohorts_path = Reader::Join(path, "cohorts");
    s->cohorts.resize(cohorts->size());
    for (size_t i = 0; i < cohorts->size(); ++i) {
      const Json& c = (*cohorts)[i];
      const std::string cohort_path = Reader::Index(cohorts_path, i);
      RETURN_IF_ERROR(r.ExpectObject(c, cohort_path));
      RETURN_IF_ERROR(r.Int64(c, cohort_path, "allocs", true, &s->cohorts[i].allocs));
      RETURN_IF_ERROR(r.Int64(c, cohort_path, "live", true, &s->cohorts[i].live));
    }
  }
  return absl::OkStatus();
}

absl::Status ReadSnapshot(const Reader& r, const Json& root, HeapSnapshot* s) {
  if (!root.is_object()) return r.Error("top level", "expected an object");
  const std::string top;
  RETURN_IF_ERROR(r.Int(root, top, "version", true, &s->version));
  // A newer version may change meanings: refuse it before reading anything else.
  if (s->version != HeapSnapshot::kVersion) {
    return r.Error("version", fmt::format("{} is not supported (this build reads version {})",
                                          s->version, HeapSnapshot::kVersion));
  }

  const Json* target;
  RETURN_IF_ERROR(r.Object(root, top, "target", true, &target));
  RETURN_IF_ERROR(r.Int(*target, "target", "pid", true, &s->target.pid));
  RETURN_IF_ERROR(r.String(*target, "target", "comm", false, &s->target.comm));
  RETURN_IF_ERROR(r.String(*target, "target", "exe", false, &s->target.exe));
  RETURN_IF_ERROR(r.Int64(*target, "target", "start_time_ms", false, &s->target.start_time_ms));
  RETURN_IF_ERROR(r.String(*target, "target", "host", false, &s->target.host));
  RETURN_IF_ERROR(r.String(*target, "target", "component", false, &s->target.component));
  RETURN_IF_ERROR(r.String(*target, "target", "instance", false, &s->target.instance));
  RETURN_IF_ERROR(r.String(*target, "target", "allocator", false, &s->target.allocator));
  RETURN_IF_ERROR(r.Double(*target, "target", "expected_growth_bytes_per_hour", false,
                           &s->target.expected_growth_bytes_per_hour));

  RETURN_IF_ERROR(r.String(root, top, "mode", true, &s->mode));

  const Json* window;
  RETURN_IF_ERROR(r.Object(root, top, "window", true, &window));
  RETURN_IF_ERROR(r.Int64(*window, "window", "start_ms", true, &s->start_ms));
  RETURN_IF_ERROR(r.Int64(*window, "window", "end_ms", true, &s->end_ms));
  RETURN_IF_ERROR(r.Double(*window, "window", "interval_seconds", true, &s->interval_seconds));

  const Json* sampling;
  RETURN_IF_ERROR(r.Object(root, top, "sampling", true, &sampling));
  RETURN_IF_ERROR(r.Uint64(*sampling, "sampling", "mean_bytes", true, &s->sampling_mean_bytes));

  const Json* duty;
  RETURN_IF_ERROR(r.Object(root, top, "duty_cycle", false, &duty));
  if (duty != nullptr) {
    DutyCycle& d = s->duty_cycle;
    RETURN_IF_ERROR(r.Double(*duty, "duty_cycle", "cpu_budget", false, &d.cpu_budget));
    RETURN_IF_ERROR(
        r.Double(*duty, "duty_cycle", "probe_hit_cost_ns", false, &d.probe_hit_cost_ns));
    RETURN_IF_ERROR(r.Double(*duty, "duty_cycle", "on_fraction", false, &d.on_fraction));
    RETURN_IF_ERROR(r.Uint64(*duty, "duty_cycle", "probe_hits", false, &d.probe_hits));
    RETURN_IF_ERROR(
        r.Double(*duty, "duty_cycle", "estimated_cpu_fraction", false, &d.estimated_cpu_fraction));
    RETURN_IF_ERROR(r.Double(*duty, "duty_cycle", "free_on_fraction", false, &d.free_on_fraction));
  }

  const Json* stop;
  RETURN_IF_ERROR(r.Object(root, top, "stop", false, &stop));
  if (stop != nullptr) {
    RETURN_IF_ERROR(r.String(*stop, "stop", "reason", false, &s->stop_reason));
    RETURN_IF_ERROR(r.String(*stop, "stop", "detail", false, &s->stop_detail));
  }

  const Json* events;
  RETURN_IF_ERROR(r.Object(root, top, "events", false, &events));
  if (events != nullptr) {
    RETURN_IF_ERROR(r.Uint64(*events, "events", "sampled_allocs", false, &s->sampled_allocs));
    RETURN_IF_ERROR(r.Uint64(*events, "events", "matched_frees", false, &s->matched_frees));
    RETURN_IF_ERROR(
        r.Uint64(*events, "events", "reused_address_frees", false, &s->reused_address_frees));
    RETURN_IF_ERROR(r.Uint64(*events, "events", "dropped", false, &s->dropped_events));
    RETURN_IF_ERROR(r.Uint64(*events, "events", "lost_while_behind", false, &s->lost_while_behind));
    RETURN_IF_ERROR(r.Uint64(*events, "events", "unwind_failures", false, &s->unwind_failures));
    const Json* calls;
    RETURN_IF_ERROR(r.Array(*events, "events", "unsampled_calls", false, &calls));
    if (calls != nullptr) {
      for (size_t i = 0; i < calls->size(); ++i) {
        const Json& c = (*calls)[i];
        if (!c.is_string()) {
          return r.Error(Reader::Index("events.unsampled_calls", i), "expected a string");
        }
        s->unsampled_calls.push_back(c.get<std::string>());
      }
    }
  }

  const Json* rss;
  RETURN_IF_ERROR(r.Array(root, top, "rss", false, &rss));
  if (rss != nullptr) {
    s->rss.resize(rss->size());
    for (size_t i = 0; i < rss->size(); ++i) {
      const Json& p = (*rss)[i];
      const std::string path = Reader::Index("rss", i);
      RETURN_IF_ERROR(r.ExpectObject(p, path));
      RETURN_IF_ERROR(r.Int64(p, path, "t_ms", true, &s->rss[i].t_ms));
      RETURN_IF_ERROR(r.Int64(p, path, "rss_bytes", true, &s->rss[i].rss_bytes));
      RETURN_IF_ERROR(r.Int64(p, path, "anon_bytes", true, &s->rss[i].anon_bytes));
    }
  }

  const Json* stacks;
  RETURN_IF_ERROR(r.Array(root, top, "stacks", true, &stacks));
  s->stacks.resize(stacks->size());
  for (size_t i = 0; i < stacks->size(); ++i) {
    RETURN_IF_ERROR(ReadStack(r, (*stacks)[i], Reader::Index("stacks", i), &s->stacks[i]));
  }
  return absl::OkStatus();
}

// nlohmann's message is "[json.exception.parse_error.101] parse error at line 3, column 7:
// syntax error while parsing ..."; keep what a person needs.
std::string SyntaxErrorText(const nlohmann::json::parse_error& e) {
  std::string_view what = e.what();
  if (auto pos = what.find("] "); pos != std::string_view::npos) what.remove_prefix(pos + 2);
  if (what.starts_with("parse error ")) what.remove_prefix(12);
  return std::string(what);
}

}  // namespace

std::string HeapSnapshotToJson(const HeapSnapshot& s) {
  Json j;
  j["version"] = s.version;
  j["target"] = Json{{"pid", s.target.pid},           {"comm", s.target.comm},
                     {"exe", s.target.exe},           {"start_time_ms", s.target.start_time_ms},
                     {"host", s.target.host},         {"component", s.target.component},
                     {"instance", s.target.instance}, {"allocator", s.target.allocator}};
  if (s.target.expected_growth_bytes_per_hour != 0) {
    j["target"]["expected_growth_bytes_per_hour"] = s.target.expected_growth_bytes_per_hour;
  }
  j["mode"] = s.mode;
  j["window"] = Json{
      {"start_ms", s.start_ms}, {"end_ms", s.end_ms}, {"interval_seconds", s.interval_seconds}};
  j["sampling"] = Json{{"mean_bytes", s.sampling_mean_bytes}};
  j["duty_cycle"] = Json{{"cpu_budget", s.duty_cycle.cpu_budget},
                         {"probe_hit_cost_ns", s.duty_cycle.probe_hit_cost_ns},
                         {"on_fraction", s.duty_cycle.on_fraction},
                         {"probe_hits", s.duty_cycle.probe_hits},
                         {"estimated_cpu_fraction", s.duty_cycle.estimated_cpu_fraction},
                         {"free_on_fraction", s.duty_cycle.free_on_fraction}};
  j["stop"] = Json{{"reason", s.stop_reason}, {"detail", s.stop_detail}};
  j["events"] = Json{{"sampled_allocs", s.sampled_allocs},
                     {"matched_frees", s.matched_frees},
                     {"reused_address_frees", s.reused_address_frees},
                     {"dropped", s.dropped_events},
                     {"lost_while_behind", s.lost_while_behind},
                     {"unwind_failures", s.unwind_failures}};
  if (!s.unsampled_calls.empty()) j["events"]["unsampled_calls"] = s.unsampled_calls;
  Json rss = Json::array();
  for (const RssPoint& p : s.rss) {
    rss.push_back(Json{{"t_ms", p.t_ms}, {"rss_bytes", p.rss_bytes}, {"anon_bytes", p.anon_bytes}});
  }
  j["rss"] = std::move(rss);
  Json stacks = Json::array();
  for (const SnapshotStack& stack : s.stacks) stacks.push_back(StackJson(stack));
  j["stacks"] = std::move(stacks);
  // Symbol names come from the target's binaries: never let a stray byte make dump() throw.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

absl::StatusOr<HeapSnapshot> ParseHeapSnapshotJson(std::string_view text,
                                                   std::string_view source_name) {
  Json root;
  try {
    root = Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}: not valid JSON: {}", source_name, SyntaxErrorText(e)));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}: not valid JSON: {}", source_name, e.what()));
  }
  HeapSnapshot snapshot;
  const Reader reader(source_name);
  try {
    RETURN_IF_ERROR(ReadSnapshot(reader, root, &snapshot));
  } catch (const std::exception& e) {
    // Every access above is type-checked first; this is a last guard for the boundary.
    return absl::InvalidArgumentError(fmt::format("{}: {}", source_name, e.what()));
  }
  RETURN_IF_ERROR(ValidateHeapSnapshot(snapshot, source_name));
  return snapshot;
}

}  // namespace drip
