#include "bench/fleet_batch_encoder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string_view>

#include "fmt/format.h"

namespace drip::bench {
namespace {

// What a busy application host runs, as (component, processes): web and app workers,
// a database with its backends, queues, system daemons. Repeated when a host is asked
// for more processes than the list holds.
struct ProcessGroup {
  std::string_view component;
  int processes;
};
constexpr std::array<ProcessGroup, 36> kProcessGroups = {{
    {"svc:nginx.service", 9},
    {"svc:php-fpm.service", 33},
    {"svc:postgresql.service", 28},
    {"svc:pgbouncer.service", 2},
    {"svc:redis-server.service", 4},
    {"svc:memcached.service", 1},
    {"svc:gunicorn.service", 17},
    {"svc:celery-worker.service", 25},
    {"svc:sidekiq.service", 10},
    {"svc:java-orders.service", 1},
    {"svc:node-frontend.service", 9},
    {"svc:envoy.service", 2},
    {"svc:kafka.service", 1},
    {"svc:zookeeper.service", 1},
    {"svc:elasticsearch.service", 1},
    {"svc:containerd.service", 14},
    {"svc:kubelet.service", 1},
    {"svc:docker.service", 1},
    {"svc:prometheus-node-exporter.service", 1},
    {"svc:drip-agent.service", 1},
    {"svc:systemd-journald.service", 1},
    {"svc:systemd-logind.service", 1},
    {"svc:systemd-udevd.service", 1},
    {"svc:systemd-resolved.service", 1},
    {"svc:dbus.service", 1},
    {"svc:cron.service", 1},
    {"svc:ssh.service", 4},
    {"svc:rsyslog.service", 1},
    {"svc:chrony.service", 1},
    {"svc:postfix@-.service", 4},
    {"svc:fluent-bit.service", 2},
    {"svc:haproxy.service", 3},
    {"proc:bash", 12},
    {"proc:python3", 9},
    {"proc:sleep", 6},
    {"proc:sshd", 8},
}};

// Units beyond the services above: every host has a few dozen.
constexpr std::array<std::string_view, 12> kExtraUnits = {"getty@tty1.service",
                                                          "polkit.service",
                                                          "unattended-upgrades.service",
                                                          "networkd-dispatcher.service",
                                                          "multipathd.service",
                                                          "snapd.service",
                                                          "irqbalance.service",
                                                          "auditd.service",
                                                          "atd.service",
                                                          "user@1000.service",
                                                          "systemd-timesyncd.service",
                                                          "apparmor.service"};

struct SlabCache {
  std::string_view name;
  uint32_t object_size;
};
constexpr std::array<SlabCache, 24> kSlabCaches = {{
    {"dentry", 192},
    {"inode_cache", 600},
    {"ext4_inode_cache", 1192},
    {"buffer_head", 104},
    {"radix_tree_node", 576},
    {"kmalloc-512", 512},
    {"kmalloc-256", 256},
    {"kmalloc-128", 128},
    {"kmalloc-64", 64},
    {"kmalloc-32", 32},
    {"kmalloc-1k", 1024},
    {"kmalloc-4k", 4096},
    {"task_struct", 9792},
    {"vm_area_struct", 232},
    {"anon_vma", 88},
    {"anon_vma_chain", 64},
    {"filp", 256},
    {"sock_inode_cache", 832},
    {"TCP", 2432},
    {"skbuff_head_cache", 256},
    {"names_cache", 4096},
    {"proc_inode_cache", 712},
    {"xfs_inode", 1024},
    {"signal_cache", 1152},
}};

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser: cheap, well spread
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A level spread log-uniformly over [lo, hi), fixed by `h`.
uint64_t LogSpread(uint64_t h, uint64_t lo, uint64_t hi) {
  const double u = static_cast<double>(h >> 11) / static_cast<double>(1ULL << 53);
  const double ratio = static_cast<double>(hi) / static_cast<double>(lo);
  return static_cast<uint64_t>(static_cast<double>(lo) * std::pow(ratio, u));
}

char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

void AppendLengthDelimited(std::string* out, uint32_t field, std::string_view bytes) {
  char header[16];
  char* p = PutVarint(header, (field << 3) | 2);
  p = PutVarint(p, bytes.size());
  out->append(header, p);
  out->append(bytes);
}

constexpr uint32_t kProcessField = 10;  // Sample.memory oneof: process, cgroup, slab
constexpr uint32_t kCgroupField = 11;
constexpr uint32_t kSlabField = 12;

}  // namespace

FleetBatchEncoder::FleetBatchEncoder(int host_index, int samples)
    : host_(fmt::format("bench-host-{:04d}", host_index)),
      seed_(Mix(static_cast<uint64_t>(host_index) + 1)) {
  samples = std::max(samples, 1);
  const int slabs = samples / 20;
  const int units = samples / 10;
  const int processes = samples - slabs - units;
  // When the host's processes started (pid@start: Unix seconds), hosts booted at
  // different times over the last month.
  const int64_t boot_s = 1'760'000'000 + static_cast<int64_t>(seed_ % (30 * 86'400));
  entities_.reserve(samples);

  int group = 0, in_group = 0;
  for (int i = 0; i < processes; ++i) {
    const ProcessGroup& g = kProcessGroups[group];
    const uint64_t h = Mix(seed_ ^ (0x100000ULL + i));
    // Workers of one group sit near each other's level; groups differ a lot.
    const uint64_t group_level =
        LogSpread(Mix(seed_ ^ (0x200000ULL + group)), 4ULL << 20, 1ULL << 30);
    const uint64_t level = group_level / 2 + (h % (group_level + 1));
    const int pid = 400 + i * 37 + static_cast<int>(h % 31);
    const int64_t start = boot_s + static_cast<int64_t>(h % 86'400) + i;
    Add(Kind::kProcess, std::string(g.component), fmt::format("{}@{}", pid, start), level, 0);
    if (++in_group >= g.processes) {
      in_group = 0;
      group = (group + 1) % static_cast<int>(kProcessGroups.size());
    }
  }
  int unit = 0;
  for (int i = 0; i < units; ++i, ++unit) {
    std::string name;
    // Every service above that is a systemd unit, then the extra units, then numbered ones.
    while (unit < static_cast<int>(kProcessGroups.size()) &&
           !kProcessGroups[unit].component.starts_with("svc:")) {
      ++unit;
    }
    if (unit < static_cast<int>(kProcessGroups.size())) {
      name = std::string(kProcessGroups[unit].component);
    } else if (unit - kProcessGroups.size() < kExtraUnits.size()) {
      name = fmt::format("svc:{}", kExtraUnits[unit - kProcessGroups.size()]);
    } else {
      name = fmt::format("svc:worker@{}.service", unit);
    }
    const uint64_t level = LogSpread(Mix(seed_ ^ (0x300000ULL + i)), 8ULL << 20, 4ULL << 30);
    Add(Kind::kUnit, name, fmt::format("cg@{}", 2000 + i * 3), level, 0);
  }
  for (int i = 0; i < slabs; ++i) {
    const SlabCache& c = kSlabCaches[i % kSlabCaches.size()];
    std::string name = i < static_cast<int>(kSlabCaches.size())
                           ? fmt::format("kernel:slab:{}", c.name)
                           : fmt::format("kernel:slab:{}-{}", c.name, i / kSlabCaches.size());
    const uint64_t objects = LogSpread(Mix(seed_ ^ (0x400000ULL + i)), 1'000, 4'000'000);
    Add(Kind::kSlab, name, fmt::format("boot@{}", boot_s), objects, c.object_size);
  }
}

void FleetBatchEncoder::Add(Kind kind, const std::string& component, const std::string& instance,
                            uint64_t level, uint32_t object_size) {
  const size_t offset = static_bytes_.size();
  AppendLengthDelimited(&static_bytes_, 2, component);  // Sample.component
  AppendLengthDelimited(&static_bytes_, 3, instance);   // Sample.instance
  entities_.push_back(Entity{static_cast<uint32_t>(offset),
                             static_cast<uint16_t>(static_bytes_.size() - offset), kind,
                             std::max<uint64_t>(level, 1), object_size});
}

FleetBatchEncoder::Figures FleetBatchEncoder::FiguresOf(const Entity& e, uint32_t index,
                                                        uint64_t sequence) const {
  // ±2 % around the level, a different draw every batch.
  const uint64_t span = e.level / 25 + 1;
  const uint64_t now =
      e.level - e.level / 50 + Mix(seed_ ^ (uint64_t{index} << 32) ^ sequence) % span;
  Figures f{};
  switch (e.kind) {
    case Kind::kProcess:  // anon, file, shmem, swap
      f = {
          {now, e.level / 3, index % 7 == 0 ? e.level / 16 : 0, index % 11 == 0 ? e.level / 50 : 0},
          4};
      break;
    case Kind::kUnit:  // current, anon, kernel, slab_unreclaimable, sock, shmem, swap
      f = {{now, now / 10 * 6, e.level / 20, e.level / 40, index % 3 == 0 ? e.level / 200 : 0,
            e.level / 30, 0},
           7};
      break;
    case Kind::kSlab:  // active_objects, object_size_bytes
      f = {{now, e.object_size}, 2};
      break;
  }
  return f;
}

void FleetBatchEncoder::Encode(uint64_t sequence, int64_t timestamp_ms, std::string* out) const {
  // The SampleBatch body first (its length prefixes it in the AgentMessage).
  thread_local std::string body;
  body.clear();
  body.reserve(static_bytes_.size() + entities_.size() * 48 + 16);
  char scratch[128];
  char* p = PutVarint(scratch, (1 << 3) | 0);  // SampleBatch.sequence
  p = PutVarint(p, sequence);
  body.append(scratch, p);

  static constexpr uint32_t kMemoryField[] = {kProcessField, kCgroupField, kSlabField};
  for (uint32_t i = 0; i < entities_.size(); ++i) {
    const Entity& e = entities_[i];
    // The part after component and instance: timestamp, then the memory message.
    char memory[96];
    char* m = memory;
    const Figures f = FiguresOf(e, i, sequence);
    for (int k = 0; k < f.count; ++k) {
      if (f.values[k] == 0) continue;  // proto3 leaves zero scalars out
      m = PutVarint(m, static_cast<uint32_t>(k + 1) << 3);
      m = PutVarint(m, f.values[k]);
    }
    char dynamic[128];
    char* d = PutVarint(dynamic, (4 << 3) | 0);  // Sample.timestamp_ms
    d = PutVarint(d, static_cast<uint64_t>(timestamp_ms));
    d = PutVarint(d, (kMemoryField[static_cast<int>(e.kind)] << 3) | 2);
    d = PutVarint(d, static_cast<uint64_t>(m - memory));
    std::memcpy(d, memory, m - memory);
    d += m - memory;

    p = PutVarint(scratch, (2 << 3) | 2);  // SampleBatch.samples
    p = PutVarint(p, e.static_size + static_cast<uint64_t>(d - dynamic));
    body.append(scratch, p);
    body.append(static_bytes_, e.static_offset, e.static_size);
    body.append(dynamic, d);
  }

  out->clear();
  p = PutVarint(scratch, (2 << 3) | 2);  // AgentMessage.batch
  p = PutVarint(p, body.size());
  out->reserve((p - scratch) + body.size());
  out->append(scratch, p);
  out->append(body);
}

drip::v1::AgentMessage FleetBatchEncoder::Build(uint64_t sequence, int64_t timestamp_ms) const {
  drip::v1::AgentMessage msg;
  drip::v1::SampleBatch* batch = msg.mutable_batch();
  batch->set_sequence(sequence);
  for (uint32_t i = 0; i < entities_.size(); ++i) {
    const Entity& e = entities_[i];
    // Component and instance back from their encoded fields, which are a Sample's.
    drip::v1::Sample* s = batch->add_samples();
    s->ParseFromArray(static_bytes_.data() + e.static_offset, e.static_size);
    s->set_timestamp_ms(timestamp_ms);
    const Figures f = FiguresOf(e, i, sequence);
    switch (e.kind) {
      case Kind::kProcess: {
        auto* pm = s->mutable_process();
        pm->set_anon_rss_bytes(f.values[0]);
        pm->set_file_rss_bytes(f.values[1]);
        pm->set_shmem_rss_bytes(f.values[2]);
        pm->set_swap_bytes(f.values[3]);
        break;
      }
      case Kind::kUnit: {
        auto* cg = s->mutable_cgroup();
        cg->set_current_bytes(f.values[0]);
        cg->set_anon_bytes(f.values[1]);
        cg->set_kernel_bytes(f.values[2]);
        cg->set_slab_unreclaimable_bytes(f.values[3]);
        cg->set_sock_bytes(f.values[4]);
        cg->set_shmem_bytes(f.values[5]);
        cg->set_swap_bytes(f.values[6]);
        break;
      }
      case Kind::kSlab:
        s->mutable_slab()->set_active_objects(f.values[0]);
        s->mutable_slab()->set_object_size_bytes(f.values[1]);
        break;
    }
  }
  return msg;
}

drip::v1::AgentMessage FleetBatchEncoder::Hello() const {
  drip::v1::AgentMessage msg;
  drip::v1::Hello* hello = msg.mutable_hello();
  hello->set_host(host_);
  hello->set_agent_version("fleet_load_bench");
  hello->set_memory_total_bytes(64ULL << 30);
  (*hello->mutable_labels())["role"] = "bench";
  hello->mutable_status()->set_sampler("bpf");
  hello->mutable_status()->set_processes(static_cast<uint64_t>(entities_.size()));
  return msg;
}

}  // namespace drip::bench
