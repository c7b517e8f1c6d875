// drip-fuzz-seeds: writes the generated part of the fuzzers' seed corpora (the files
// named gen-*) under tests/fuzz/corpus/, the rest of the corpora being written by hand;
// and carries the snapshot crashers kept for heap_snapshot_json_fuzzer over to the two
// targets that take a snapshot in protobuf (tests/fuzz/regressions/). Run it after
// changing a format and commit what changes:
//
//   build/tests/fuzz/drip-fuzz-seeds tests/fuzz
//
// Generated seeds are valid inputs that reach deep (a snapshot with a leak, a cache and
// a startup buffer; an agent session whose leak the collector flags, snapshots, diagnoses
// and mitigates) and near-valid variants that each break one rule, so that mutations start
// next to every check.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/heap_snapshot.h"
#include "common/snapshot/heap_snapshot_json.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "diagnoser/synthetic_heap.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/query.pb.h"
#include "fmt/format.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "nlohmann/json.hpp"

namespace drip::fuzz {
namespace {

using diagnoser::testing::AllocationSite;
using diagnoser::testing::Frame;
using diagnoser::testing::SyntheticHeap;
using diagnoser::testing::SyntheticOptions;

std::filesystem::path root;  // tests/fuzz/corpus

// agent_message_fuzzer's clock at the start, and heap_diagnoser_fuzzer's base time.
constexpr int64_t kNowMs = 1'700'000'000'000;

// Serialized with map entries in key order, so that regenerating gives the same files.
std::string Bytes(const google::protobuf::Message& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

void Write(const std::string& fuzzer, const std::string& name, std::string_view bytes) {
  const std::filesystem::path dir = root / fuzzer;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
    std::exit(1);
  }
}

// ---- Heap snapshots ----

// A leak, a cache that fills and evicts, a startup arena and churn, over 5 minutes read
// every 10 s: small enough for a fuzzer to mutate quickly, rich enough for every verdict.
HeapSnapshot RichSnapshot(const std::string& mode) {
  SyntheticOptions options;
  options.start_ms = 1'699'999'000'000;
  options.duration_s = 300;
  options.interval_s = 10;
  options.mode = mode;
  options.sampling_mean_bytes = 64 * 1024;
  SyntheticHeap heap(options);
  AllocationSite leak;
  leak.frames = {Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
                 Frame("operator new(unsigned long)", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
                 Frame("Session::Remember(Request const&)", "/usr/bin/app", "src/session.cc", 88),
                 Frame("main", "/usr/bin/app", "src/main.cc", 12)};
  leak.rate_per_s = 100;
  leak.size = 512;
  heap.AddSite(leak);
  AllocationSite cache;
  cache.frames = {Frame("_Znwm", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
                  Frame("LruCache::Insert(Key const&, Value)", "/usr/bin/app", "src/lru.cc", 57)};
  cache.rate_per_s = 200;
  cache.size = 1024;
  cache.fifo_capacity = 20'000;
  heap.AddSite(cache);
  AllocationSite startup;
  startup.frames = {Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
                    Frame("Arena::Arena(unsigned long)", "/usr/bin/app", "src/arena.cc", 12)};
  startup.to_s = 5;
  startup.rate_per_s = 4;
  startup.size = 4 << 20;
  heap.AddSite(startup);
  AllocationSite churn;
  churn.frames = {Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
                  Frame("Buffer::Buffer(unsigned long)", "/usr/bin/app", "src/buffer.cc", 20)};
  churn.rate_per_s = 2'000;
  churn.size = 4096;
  churn.lifetime_s = 2;
  heap.AddSite(churn);
  HeapSnapshot s = heap.Build();
  s.target.pid = 4242;
  s.target.comm = "leaky_svc";
  s.target.exe = "/usr/bin/app";
  s.target.host = "web-1";
  s.target.component = "svc:leaky.service";
  s.target.instance = "4242@1699990000";
  s.stop_reason = "duration";
  return s;
}

HeapSnapshot TinySnapshot() {
  HeapSnapshot s;
  s.target.pid = 1;
  s.mode = "preload";
  s.start_ms = 1000;
  s.end_ms = 31000;
  s.interval_seconds = 10;
  SnapshotStack stack;
  stack.id = 1;
  stack.frames = {Frame("malloc", "/lib/libc.so.6"), Frame("f", "/bin/x", "x.cc", 3)};
  for (int i = 0; i < 4; ++i) stack.series.push_back({1000 + i * 10'000, i * 4096, i});
  stack.sampled_allocs = 3;
  stack.allocated_bytes = 3 * 4096;
  stack.first_alloc_ms = 5000;
  stack.last_alloc_ms = 25000;
  stack.cohorts = {{1, 1}, {1, 1}, {1, 1}, {0, 0}};
  s.stacks.push_back(stack);
  s.rss = {{1000, 1 << 20, 1 << 19}, {31000, 2 << 20, 1 << 20}};
  return s;
}

// Two stacks that differ only in how the allocator was reached: the diagnoser merges them.
HeapSnapshot MergingSnapshot() {
  HeapSnapshot s = TinySnapshot();
  SnapshotStack other = s.stacks[0];
  other.id = 2;
  other.frames[0] = Frame("operator new(unsigned long)", "/lib/libstdc++.so.6");
  other.series = {{6000, 100, 1}, {16000, 200, 2}, {26000, 300, 3}};
  s.stacks.push_back(other);
  return s;
}

std::string Proto(const HeapSnapshot& s) {
  drip::v1::HeapSnapshot proto;
  HeapSnapshotToProto(s, &proto);
  return Bytes(proto);
}

void SnapshotSeeds() {
  const std::string fuzzer = "heap_snapshot_json_fuzzer";
  Write(fuzzer, "gen-attach.json", HeapSnapshotToJson(RichSnapshot("attach")));
  Write(fuzzer, "gen-preload.json", HeapSnapshotToJson(RichSnapshot("preload")));
  Write(fuzzer, "gen-merging.json", HeapSnapshotToJson(MergingSnapshot()));
  const std::string tiny = HeapSnapshotToJson(TinySnapshot());
  Write(fuzzer, "gen-tiny.json", tiny);

  const std::string proto_fuzzer = "heap_snapshot_proto_fuzzer";
  Write(proto_fuzzer, "gen-attach.pb", Proto(RichSnapshot("attach")));
  Write(proto_fuzzer, "gen-preload.pb", Proto(RichSnapshot("preload")));
  Write(proto_fuzzer, "gen-merging.pb", Proto(MergingSnapshot()));
  Write(proto_fuzzer, "gen-tiny.pb", Proto(TinySnapshot()));
  HeapSnapshot no_duty = TinySnapshot();
  drip::v1::HeapSnapshot p;
  HeapSnapshotToProto(no_duty, &p);
  p.clear_duty_cycle();
  p.mutable_stacks(0)->mutable_series(1)->set_live_bytes(-1);  // refused by validation
  Write(proto_fuzzer, "gen-break-negative.pb", Bytes(p));

  // One rule broken per file, on the tiny snapshot (pointer, replacement value).
  const std::vector<std::pair<std::string, nlohmann::json>> breaks = {
      {"/version", 2},
      {"/mode", "ptrace"},
      {"/target/pid", 0},
      {"/window/interval_seconds", 0},
      {"/window/end_ms", 0},
      {"/sampling/mean_bytes", -1},
      {"/duty_cycle/on_fraction", 1.5},
      {"/rss/1/t_ms", 1000},
      {"/stacks/0/series/2/t_ms", 11000},
      {"/stacks/0/series/1/live_bytes", -4096},
      {"/stacks/0/frames/0/line", -1},
      {"/stacks/0/first_alloc_ms", 99999},
      {"/stacks/0/cohorts/0/live", 5},
      {"/stacks/0/sampled_allocs", 1.5},
      {"/stacks/0/allocated_bytes", 9223372036854775807LL},
      {"/stacks/0/frames/1/address", 18446744073709551615ULL},
      {"/stacks/0/frames/1/function", "f\u00e9\u4e2d\U0001F600"},
      {"/stacks/0/id", "1"},
      {"/stacks", nlohmann::json::object()},
  };
  for (size_t i = 0; i < breaks.size(); ++i) {
    nlohmann::json j = nlohmann::json::parse(tiny);
    j[nlohmann::json::json_pointer(breaks[i].first)] = breaks[i].second;
    Write(fuzzer, fmt::format("gen-break-{:02}.json", i), j.dump());
  }
  // Two stacks with one id; a stack without its required fields.
  nlohmann::json j = nlohmann::json::parse(tiny);
  j["stacks"].push_back(j["stacks"][0]);
  Write(fuzzer, "gen-break-duplicate-id.json", j.dump());
  j = nlohmann::json::parse(tiny);
  j["stacks"][0].erase("series");
  Write(fuzzer, "gen-break-missing-series.json", j.dump());
}

// ---- Snapshots in heap_diagnoser_fuzzer's tagged format ----

class TaggedWriter {
 public:
  void U8(uint8_t v) { bytes_ += static_cast<char>(v); }
  void U16(uint16_t v) {
    U8(v & 0xff);
    U8(v >> 8);
  }
  // Tag 0 (16 bits) when it fits, else tag 1 (raw 64 bits).
  void Value(int64_t v) {
    if (v >= 0 && v <= 0xffff) {
      U8(0);
      U16(static_cast<uint16_t>(v));
      return;
    }
    U8(1);
    for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
  }
  void Time(int64_t t) { Value(t - kNowMs); }  // the fuzzer's base time is the harness's
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// The palette index of a frame (heap_diagnoser_fuzzer.cc's PaletteFrame), by function.
uint8_t PaletteIndex(const StackFrame& f) {
  const std::vector<std::string> names = {"malloc",
                                          "operator new(unsigned long)",
                                          "calloc",
                                          "Session::Remember(Request const&)",
                                          "LruCache::Insert(Key const&, Value)",
                                          "main"};
  for (size_t i = 0; i < names.size(); ++i) {
    if (f.function == names[i]) return static_cast<uint8_t>(i);
  }
  return static_cast<uint8_t>(3 + f.function.size() % 3);
}

std::string Tagged(const HeapSnapshot& s) {
  TaggedWriter w;
  w.U8(s.mode == "preload" ? 1 : 0);
  w.Value(s.target.pid);
  w.Time(s.start_ms);
  w.Time(s.end_ms);
  w.Value(static_cast<int64_t>(s.interval_seconds * 1000));
  w.Value(static_cast<int64_t>(s.sampling_mean_bytes));
  const size_t rss = std::min<size_t>(s.rss.size(), 7);
  w.U8(static_cast<uint8_t>(rss));
  for (size_t i = 0; i < rss; ++i) {
    w.Time(s.rss[i].t_ms);
    w.Value(s.rss[i].rss_bytes);
    w.Value(s.rss[i].anon_bytes);
  }
  const size_t stacks = std::min<size_t>(s.stacks.size(), 63);
  w.U8(static_cast<uint8_t>(stacks));
  for (size_t i = 0; i < stacks; ++i) {
    const SnapshotStack& st = s.stacks[i];
    w.Value(static_cast<int64_t>(st.id % 0x10000));
    const size_t frames = std::min<size_t>(st.frames.size(), 4);
    w.U8(static_cast<uint8_t>(frames));
    for (size_t f = 0; f < frames; ++f) w.U8(PaletteIndex(st.frames[f]));
    // Every other point of long series: the format holds at most 23.
    const size_t step = st.series.size() > 23 ? 2 : 1;
    std::vector<LivePoint> points;
    for (size_t p = 0; p < st.series.size() && points.size() < 23; p += step) {
      points.push_back(st.series[p]);
    }
    w.U8(static_cast<uint8_t>(points.size()));
    for (const LivePoint& p : points) {
      w.Time(p.t_ms);
      w.Value(p.live_bytes);
      w.Value(p.live_allocs);
    }
    w.Value(st.sampled_allocs);
    w.Value(st.sampled_frees);
    w.Value(st.allocated_bytes);
    w.Value(st.freed_bytes);
    w.Value(st.first_alloc_ms == 0 ? 0 : 1);
    w.Value(st.last_alloc_ms == 0 ? 0 : 1);
    if (st.first_alloc_ms != 0) w.Time(st.first_alloc_ms);
    if (st.last_alloc_ms != 0) w.Time(st.last_alloc_ms);
    const size_t cohorts = std::min<size_t>(st.cohorts.size(), 8);
    w.U8(static_cast<uint8_t>(cohorts));
    for (size_t c = 0; c < cohorts; ++c) {
      w.Value(st.cohorts[c].allocs);
      w.Value(st.cohorts[c].live);
    }
  }
  return w.bytes();
}

void DiagnoserSeeds() {
  const std::string fuzzer = "heap_diagnoser_fuzzer";
  Write(fuzzer, "gen-attach.bin", Tagged(RichSnapshot("attach")));
  Write(fuzzer, "gen-preload.bin", Tagged(RichSnapshot("preload")));
  Write(fuzzer, "gen-merging.bin", Tagged(MergingSnapshot()));
  Write(fuzzer, "gen-tiny.bin", Tagged(TinySnapshot()));
}

// ---- Agent sessions (agent_message_fuzzer's step format) ----

class Session {
 public:
  Session& Raw(uint8_t kind, std::string_view payload) {
    bytes_ += static_cast<char>(kind);
    bytes_ += static_cast<char>(payload.size() & 0xff);
    bytes_ += static_cast<char>(payload.size() >> 8);
    bytes_ += payload;
    return *this;
  }
  Session& Send(const drip::v1::AgentMessage& m) { return Raw(0, Bytes(m)); }
  Session& EndStream() { return Raw(1, ""); }
  Session& Maintenance(uint32_t seconds) {
    std::string p(4, '\0');
    for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(seconds >> (8 * i));
    return Raw(2, p);
  }
  Session& Restart() { return Raw(3, ""); }
  Session& GetSeries(const std::string& host, const std::string& component, int64_t since = 0) {
    drip::v1::GetSeriesRequest r;
    r.set_host(host);
    r.set_component(component);
    r.set_since_ms(since);
    return Raw(4, Bytes(r));
  }
  Session& ListSuspects(const std::string& component) {
    drip::v1::ListSuspectsRequest r;
    r.set_component(component);
    return Raw(5, Bytes(r));
  }
  Session& Leak(const std::string& id, const std::string& state) {
    drip::v1::UpdateLeakStateRequest r;
    r.set_id(id);
    r.set_state(state);
    r.set_actor("oncall@laptop");
    r.set_note("looking");
    return Raw(6, Bytes(r));
  }
  Session& Mitigate(const std::string& id, const std::string& action, bool dry_run) {
    drip::v1::MitigateRequest r;
    r.set_id(id);
    r.set_action(action);
    r.set_dry_run(dry_run);
    r.set_actor("oncall@laptop");
    return Raw(7, Bytes(r));
  }
  Session& ListAudit(const std::string& id) {
    drip::v1::ListAuditRequest r;
    r.set_report_id(id);
    return Raw(8, Bytes(r));
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

drip::v1::AgentMessage Hello(const std::string& host) {
  drip::v1::AgentMessage m;
  drip::v1::Hello* h = m.mutable_hello();
  h->set_host(host);
  h->set_agent_version("0.1.0");
  h->set_memory_total_bytes(64ull << 30);
  h->set_boot_time_ms(kNowMs - 86'400'000);
  (*h->mutable_labels())["kernel"] = "6.1.0-18-amd64";
  (*h->mutable_labels())["rack"] = "b7";
  h->mutable_status()->set_sampler("bpf");
  return m;
}

drip::v1::Sample* AddProcess(drip::v1::SampleBatch* b, const std::string& component,
                             const std::string& instance, int64_t t_ms, uint64_t anon) {
  drip::v1::Sample* s = b->add_samples();
  s->set_component(component);
  s->set_instance(instance);
  s->set_timestamp_ms(t_ms);
  s->mutable_process()->set_anon_rss_bytes(anon);
  s->mutable_process()->set_file_rss_bytes(anon / 4);
  s->mutable_process()->set_swap_bytes(4096);
  return s;
}

// Every kind of sample, a minute ago; one names its host, as an agent may.
drip::v1::AgentMessage MixedBatch(uint64_t sequence, const std::string& host = "web-1") {
  drip::v1::AgentMessage m;
  drip::v1::SampleBatch* b = m.mutable_batch();
  b->set_sequence(sequence);
  const int64_t t = kNowMs - 60'000 + static_cast<int64_t>(sequence) * 1000;
  AddProcess(b, "svc:nginx.service", "812@1699990000", t, 120 << 20);
  AddProcess(b, "svc:nginx.service", "813@1699990000", t, 80 << 20)->set_host(host);
  drip::v1::Sample* unit = b->add_samples();
  unit->set_component("svc:nginx.service");
  unit->set_timestamp_ms(t);
  drip::v1::CgroupMemory* cg = unit->mutable_cgroup();
  cg->set_current_bytes(300 << 20);
  cg->set_anon_bytes(200 << 20);
  cg->set_kernel_bytes(8 << 20);
  cg->set_slab_unreclaimable_bytes(2 << 20);
  cg->set_sock_bytes(1 << 20);
  cg->set_shmem_bytes(1 << 20);
  drip::v1::Sample* slab = b->add_samples();
  slab->set_component("kernel:slab:kmalloc-512");
  slab->set_timestamp_ms(t);
  slab->mutable_slab()->set_active_objects(100000);
  slab->mutable_slab()->set_object_size_bytes(512);
  drip::v1::Sample* exit = b->add_samples();
  exit->set_component("proc:cron");
  exit->set_instance("9001@1699999990");
  exit->set_timestamp_ms(t);
  exit->mutable_process_exit()->set_peak_rss_bytes(3 << 20);
  exit->mutable_process_exit()->set_wait_status(1 << 8);
  b->mutable_status()->set_sampler("bpf");
  b->mutable_status()->set_processes(212);
  return m;
}

// Ten hours of a leaking service (and a steady one) every 10 minutes, in one batch: the
// detector flags it at the next maintenance.
drip::v1::AgentMessage LeakHistory(uint64_t sequence) {
  drip::v1::AgentMessage m;
  drip::v1::SampleBatch* b = m.mutable_batch();
  b->set_sequence(sequence);
  for (int i = 0; i <= 60; ++i) {
    const int64_t t = kNowMs - (60 - i) * 600'000;
    AddProcess(b, "svc:leaky.service", "4242@1699990000", t, (100ull << 20) + i * (2ull << 20));
    AddProcess(b, "svc:steady.service", "77@1699990000", t, (50ull << 20) + (i % 3) * 4096);
  }
  return m;
}

drip::v1::AgentMessage SnapshotResult(const std::string& id) {
  drip::v1::AgentMessage m;
  drip::v1::CommandResult* r = m.mutable_command_result();
  r->set_command_id(id);
  r->set_ok(true);
  drip::v1::HeapSnapshot proto;
  HeapSnapshot s = RichSnapshot("attach");
  // Fewer points keep the seed small; the verdicts stay.
  for (SnapshotStack& stack : s.stacks) {
    std::vector<LivePoint> kept;
    for (size_t i = 0; i < stack.series.size(); i += 3) kept.push_back(stack.series[i]);
    stack.series = kept;
  }
  HeapSnapshotToProto(s, &proto);
  r->set_payload(Bytes(proto));
  return m;
}

drip::v1::AgentMessage MitigationResult(const std::string& id, bool ok, bool refused) {
  drip::v1::AgentMessage m;
  drip::v1::CommandResult* r = m.mutable_command_result();
  r->set_command_id(id);
  r->set_ok(ok);
  r->set_refused(refused);
  r->set_detail(ok ? "sent SIGTERM to pid 4242 (leaky_svc)" : "");
  r->set_error(ok ? "" : "signal-process is not in mitigation.allowed_actions");
  return m;
}

void SessionSeeds() {
  const std::string fuzzer = "agent_message_fuzzer";
  Write(fuzzer, "gen-ingest.bin",
        Session()
            .Send(Hello("web-1"))
            .Send(MixedBatch(1))
            .Send(MixedBatch(2))
            .Send(MixedBatch(2))  // resent: acked, not stored again
            .GetSeries("web-1", "svc:nginx.service")
            .Maintenance(60)
            .GetSeries("web-1", "kernel:slab:kmalloc-512", kNowMs - 3'600'000)
            .bytes());

  drip::v1::AgentMessage gap = MixedBatch(7, "web-2");
  gap.mutable_batch()->set_first_dropped_sequence(4);
  Write(fuzzer, "gen-reconnect-gap.bin",
        Session()
            .Send(Hello("web-2"))
            .Send(MixedBatch(1, "web-2"))
            .EndStream()
            .Send(Hello("web-2"))
            .Send(MixedBatch(1, "web-2"))
            .Send(gap)
            .Restart()
            .Send(Hello("web-2"))
            .Send(MixedBatch(8, "web-2"))
            .GetSeries("web-2", "svc:nginx.service")
            .bytes());

  Write(fuzzer, "gen-leak-snapshot-mitigate.bin",
        Session()
            .Send(Hello("web-1"))
            .Send(LeakHistory(1))
            .Maintenance(0)
            .ListSuspects("")
            .Send(SnapshotResult("$0"))
            .Maintenance(60)
            .ListSuspects("svc:leaky.service")
            .Leak("leak-1", "acknowledged")
            .Mitigate("leak-1", "signal-process", false)
            .Send(MitigationResult("$1", true, false))
            .Maintenance(3700)  // past the policy's cool-down for the host
            .Mitigate("leak-1", "restart-unit", true)
            .Send(MitigationResult("$2", false, true))
            .Mitigate("leak-1", "recommend", false)
            .ListAudit("leak-1")
            .Restart()
            .Leak("leak-1", "resolved")
            .ListAudit("")
            .bytes());

  drip::v1::AgentMessage failed;
  failed.mutable_command_result()->set_command_id("$1");
  failed.mutable_command_result()->set_error("pid 4242 exited");
  drip::v1::AgentMessage garbage = SnapshotResult("$0");
  garbage.mutable_command_result()->set_payload("\xff\xff\xff not a snapshot");
  drip::v1::AgentMessage unknown = SnapshotResult("snapshot-1-99");
  Write(fuzzer, "gen-snapshot-failures.bin",
        Session()
            .Send(Hello("web-1"))
            .Send(LeakHistory(1))
            .Maintenance(0)
            .Send(unknown)
            .Send(garbage)
            .Maintenance(3600)  // the component's cool-down: the next round starts
            .Send(failed)
            .Maintenance(3600)
            .Send(SnapshotResult("$2"))
            .ListSuspects("")
            .bytes());

  // Refusals, one per stream (a refusal ends the stream).
  drip::v1::AgentMessage empty_host = Hello("");
  drip::v1::AgentMessage zero = MixedBatch(0);
  drip::v1::AgentMessage bad_gap = MixedBatch(3);
  bad_gap.mutable_batch()->set_first_dropped_sequence(3);
  drip::v1::AgentMessage mismatch = MixedBatch(1);
  mismatch.mutable_batch()->mutable_samples(0)->set_host("web-9");
  drip::v1::AgentMessage no_component = MixedBatch(1);
  no_component.mutable_batch()->mutable_samples(0)->clear_component();
  drip::v1::AgentMessage no_memory = MixedBatch(1);
  no_memory.mutable_batch()->mutable_samples(0)->clear_process();
  drip::v1::AgentMessage future = MixedBatch(1);
  future.mutable_batch()->mutable_samples(0)->set_timestamp_ms(kNowMs + 86'400'000);
  drip::v1::AgentMessage expired = MixedBatch(1);
  expired.mutable_batch()->mutable_samples(0)->set_timestamp_ms(0);
  drip::v1::AgentMessage nothing;
  Write(fuzzer, "gen-refusals.bin",
        Session()
            .Send(MixedBatch(1))  // before hello
            .Send(empty_host)
            .Send(Hello("web-3"))
            .Send(Hello("web-3"))  // twice
            .Send(Hello("web-3"))
            .Send(zero)
            .Send(Hello("web-3"))
            .Send(bad_gap)
            .Send(Hello("web-3"))
            .Send(mismatch)
            .Send(Hello("web-3"))
            .Send(no_component)
            .Send(Hello("web-3"))
            .Send(no_memory)
            .Send(Hello("web-3"))
            .Send(future)
            .Send(Hello("web-3"))
            .Send(expired)
            .Send(Hello("web-3"))
            .Send(nothing)
            .Raw(0, "\x0a\xff")  // does not parse
            .bytes());
}

// ---- dripctl analyze input ----

void CsvSeeds() {
  // Thirty hours of a service that leaks 2 MB every 45 minutes next to a steady one, which
  // `dripctl analyze` flags.
  std::string csv = "timestamp,host,component,instance,bytes\n";
  const int64_t t0 = 1'700'000'000;
  for (int i = 0; i <= 40; ++i) {
    csv += fmt::format("{},web-1,svc:leaky.service,4242@1,{}\n", t0 + i * 2700,
                       100'000'000 + i * 2'000'000);
    if (i % 4 == 0) {
      csv += fmt::format("{},web-1,svc:steady.service,77@1,{}\n", t0 + i * 2700, 50'000'000);
    }
  }
  Write("sample_csv_reader_fuzzer", "gen-leak.csv", csv);
}

// ---- Regressions ----

// Every snapshot that once crashed the JSON path, in the forms the collector receives:
// a bare protobuf payload (heap_snapshot_proto_fuzzer) and the answer to a snapshot
// command on an agent stream (agent_message_fuzzer), so each crasher stays fixed on
// every path a snapshot takes.
void RegressionSeeds(const std::filesystem::path& regressions) {
  root = regressions;
  for (const auto& entry :
       std::filesystem::directory_iterator(regressions / "heap_snapshot_json_fuzzer")) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    absl::StatusOr<HeapSnapshot> snapshot = ParseHeapSnapshotJson(text, entry.path().string());
    if (!snapshot.ok()) continue;  // refused by validation: no protobuf twin to keep
    const std::string name = entry.path().stem().string();
    Write("heap_snapshot_proto_fuzzer", name + ".pb", Proto(*snapshot));
    drip::v1::AgentMessage answer;
    drip::v1::CommandResult* result = answer.mutable_command_result();
    result->set_command_id("$0");
    result->set_ok(true);
    result->set_payload(Proto(*snapshot));
    Write("agent_message_fuzzer", name + ".bin",
          Session()
              .Send(Hello("web-1"))
              .Send(LeakHistory(1))
              .Maintenance(0)
              .Send(answer)
              .Maintenance(60)
              .ListSuspects("")
              .bytes());
  }
}

}  // namespace
}  // namespace drip::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FUZZ_DIR (tests/fuzz, holding corpus/ and regressions/)\n",
                 argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  drip::fuzz::root = dir / "corpus";
  drip::fuzz::SnapshotSeeds();
  drip::fuzz::DiagnoserSeeds();
  drip::fuzz::SessionSeeds();
  drip::fuzz::CsvSeeds();
  drip::fuzz::RegressionSeeds(dir / "regressions");
  return 0;
}
