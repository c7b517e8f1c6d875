#include "common/snapshot/heap_snapshot_proto.h"

#include "common/base/status_macros.h"
#include "common/snapshot/heap_snapshot_validation.h"

namespace drip {

void StackFrameToProto(const StackFrame& f, drip::v1::StackFrame* out) {
  out->set_address(f.address);
  out->set_function(f.function);
  out->set_module(f.module);
  out->set_build_id(f.build_id);
  out->set_module_offset(f.module_offset);
  out->set_file(f.file);
  out->set_line(f.line);
}

StackFrame StackFrameFromProto(const drip::v1::StackFrame& p) {
  StackFrame f;
  f.address = p.address();
  f.function = p.function();
  f.module = p.module();
  f.build_id = p.build_id();
  f.module_offset = p.module_offset();
  f.file = p.file();
  f.line = p.line();
  return f;
}

void HeapSnapshotToProto(const HeapSnapshot& s, drip::v1::HeapSnapshot* out) {
  out->Clear();
  out->set_version(s.version);
  auto* target = out->mutable_target();
  target->set_pid(s.target.pid);
  target->set_comm(s.target.comm);
  target->set_exe(s.target.exe);
  target->set_start_time_ms(s.target.start_time_ms);
  target->set_host(s.target.host);
  target->set_component(s.target.component);
  target->set_instance(s.target.instance);
  target->set_allocator(s.target.allocator);
  target->set_expected_growth_bytes_per_hour(s.target.expected_growth_bytes_per_hour);
  out->set_mode(s.mode);
  out->set_start_ms(s.start_ms);
  out->set_end_ms(s.end_ms);
  out->set_interval_seconds(s.interval_seconds);
  out->set_sampling_mean_bytes(s.sampling_mean_bytes);
  auto* duty = out->mutable_duty_cycle();
  duty->set_cpu_budget(s.duty_cycle.cpu_budget);
  duty->set_probe_hit_cost_ns(s.duty_cycle.probe_hit_cost_ns);
  duty->set_on_fraction(s.duty_cycle.on_fraction);
  duty->set_probe_hits(s.duty_cycle.probe_hits);
  duty->set_estimated_cpu_fraction(s.duty_cycle.estimated_cpu_fraction);
  duty->set_free_on_fraction(s.duty_cycle.free_on_fraction);
  out->set_stop_reason(s.stop_reason);
  out->set_stop_detail(s.stop_detail);
  out->set_sampled_allocs(s.sampled_allocs);
  out->set_matched_frees(s.matched_frees);
  out->set_reused_address_frees(s.reused_address_frees);
  out->set_dropped_events(s.dropped_events);
  out->set_lost_while_behind(s.lost_while_behind);
  out->set_unwind_failures(s.unwind_failures);
  for (const std::string& call : s.unsampled_calls) out->add_unsampled_calls(call);
  out->mutable_rss()->Reserve(static_cast<int>(s.rss.size()));
  for (const RssPoint& p : s.rss) {
    auto* q = out->add_rss();
    q->set_t_ms(p.t_ms);
    q->set_rss_bytes(p.rss_bytes);
    q->set_anon_bytes(p.anon_bytes);
  }
  out->mutable_stacks()->Reserve(static_cast<int>(s.stacks.size()));
  for (const SnapshotStack& stack : s.stacks) {
    auto* q = out->add_stacks();
    q->set_id(stack.id);
    for (const StackFrame& f : stack.frames) StackFrameToProto(f, q->add_frames());
    q->mutable_series()->Reserve(static_cast<int>(stack.series.size()));
    for (const LivePoint& p : stack.series) {
      auto* point = q->add_series();
      point->set_t_ms(p.t_ms);
      point->set_live_bytes(p.live_bytes);
      point->set_live_allocs(p.live_allocs);
    }
    q->set_sampled_allocs(stack.sampled_allocs);
    q->set_sampled_frees(stack.sampled_frees);
    q->set_allocated_bytes(stack.allocated_bytes);
    q->set_freed_bytes(stack.freed_bytes);
    q->set_first_alloc_ms(stack.first_alloc_ms);
    q->set_last_alloc_ms(stack.last_alloc_ms);
    for (const AllocationCohort& c : stack.cohorts) {
      auto* qc = q->add_cohorts();
      qc->set_allocs(c.allocs);
      qc->set_live(c.live);
    }
  }
}

HeapSnapshot HeapSnapshotFromProto(const drip::v1::HeapSnapshot& p) {
  HeapSnapshot s;
  s.version = p.version();
  s.target.pid = p.target().pid();
  s.target.comm = p.target().comm();
  s.target.exe = p.target().exe();
  s.target.start_time_ms = p.target().start_time_ms();
  s.target.host = p.target().host();
  s.target.component = p.target().component();
  s.target.instance = p.target().instance();
  s.target.allocator = p.target().allocator();
  s.target.expected_growth_bytes_per_hour = p.target().expected_growth_bytes_per_hour();
  s.mode = p.mode();
  s.start_ms = p.start_ms();
  s.end_ms = p.end_ms();
  s.interval_seconds = p.interval_seconds();
  s.sampling_mean_bytes = p.sampling_mean_bytes();
  // An absent duty_cycle message (preload mode) reads as the struct's defaults.
  if (p.has_duty_cycle()) {
    s.duty_cycle.cpu_budget = p.duty_cycle().cpu_budget();
    s.duty_cycle.probe_hit_cost_ns = p.duty_cycle().probe_hit_cost_ns();
    s.duty_cycle.on_fraction = p.duty_cycle().on_fraction();
    s.duty_cycle.probe_hits = p.duty_cycle().probe_hits();
    s.duty_cycle.estimated_cpu_fraction = p.duty_cycle().estimated_cpu_fraction();
    if (p.duty_cycle().has_free_on_fraction()) {
      s.duty_cycle.free_on_fraction = p.duty_cycle().free_on_fraction();
    }
  }
  s.stop_reason = p.stop_reason();
  s.stop_detail = p.stop_detail();
  s.sampled_allocs = p.sampled_allocs();
  s.matched_frees = p.matched_frees();
  s.reused_address_frees = p.reused_address_frees();
  s.dropped_events = p.dropped_events();
  s.lost_while_behind = p.lost_while_behind();
  s.unwind_failures = p.unwind_failures();
  s.unsampled_calls.assign(p.unsampled_calls().begin(), p.unsampled_calls().end());
  s.rss.reserve(p.rss_size());
  for (const auto& q : p.rss()) s.rss.push_back({q.t_ms(), q.rss_bytes(), q.anon_bytes()});
  s.stacks.reserve(p.stacks_size());
  for (const auto& q : p.stacks()) {
    SnapshotStack& stack = s.stacks.emplace_back();
    stack.id = q.id();
    stack.frames.reserve(q.frames_size());
    for (const auto& f : q.frames()) stack.frames.push_back(StackFrameFromProto(f));
    stack.series.reserve(q.series_size());
    for (const auto& point : q.series()) {
      stack.series.push_back({point.t_ms(), point.live_bytes(), point.live_allocs()});
    }
    stack.sampled_allocs = q.sampled_allocs();
    stack.sampled_frees = q.sampled_frees();
    stack.allocated_bytes = q.allocated_bytes();
    stack.freed_bytes = q.freed_bytes();
    stack.first_alloc_ms = q.first_alloc_ms();
    stack.last_alloc_ms = q.last_alloc_ms();
    for (const auto& qc : q.cohorts()) stack.cohorts.push_back({qc.allocs(), qc.live()});
  }
  return s;
}

absl::StatusOr<HeapSnapshot> ParseHeapSnapshotProto(const drip::v1::HeapSnapshot& proto,
                                                    std::string_view source_name) {
  HeapSnapshot snapshot = HeapSnapshotFromProto(proto);
  RETURN_IF_ERROR(ValidateHeapSnapshot(snapshot, source_name));
  return snapshot;
}

}  // namespace drip
