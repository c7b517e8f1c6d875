// SPDX-License-Identifier: GPL-2.0
/* Drip's per-process memory monitor, in the kernel.
 *
 * dump_task_memory is a task iterator: one read() of its fd walks every task and writes a
 * drip_task_record for each thread-group leader that has an mm, straight from the mm's
 * RSS counters, so a pass costs about a microsecond per process instead of the tens of
 * microseconds of opening and parsing /proc/PID files.
 *
 * The three tracepoint programs report process lifecycle through a ring buffer, so that
 * a restart between two passes is still seen and a process shorter than one interval is
 * still reported once (its exit carries its peak RSS, and whether the OOM killer chose it). They
 * run on every fork and exit on the host, so they do as little as they can and never block: when
 * the ring buffer is full the event is counted in lost_events and dropped. */
// vmlinux.h must come first: it defines the types the rest use.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "agent/bpf/task_memory.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20); /* resized by the agent before load */
} task_events SEC(".maps");

__u64 lost_events = 0;

/* Before 6.2, mm_struct.rss_stat was a struct of atomic_long_t counters; since, it is an
 * array of percpu_counter. CO-RE picks the layout the running kernel has. */
struct mm_rss_stat___pre62 {
  atomic_long_t count[DRIP_MM_COUNTERS];
} __attribute__((preserve_access_index));
struct mm_struct___pre62 {
  struct mm_rss_stat___pre62 rss_stat;
} __attribute__((preserve_access_index));

static __always_inline void read_rss_pages(struct mm_struct* mm, __s64 pages[DRIP_MM_COUNTERS]) {
  if (bpf_core_field_size(mm->rss_stat) == sizeof(long) * DRIP_MM_COUNTERS) {
    struct mm_struct___pre62* old = (void*)mm;
    for (int i = 0; i < DRIP_MM_COUNTERS; i++)
      pages[i] = BPF_CORE_READ(old, rss_stat.count[i].counter);
  } else {
    /* percpu_counter.count is the folded value; each CPU may hold up to a batch (32 or
     * 2 × nr_cpus pages) not yet folded in, which is within what we need. */
    for (int i = 0; i < DRIP_MM_COUNTERS; i++) pages[i] = BPF_CORE_READ(mm, rss_stat[i].count);
  }
}

static __always_inline void read_exe_name(struct mm_struct* mm, char* exe) {
  const unsigned char* name = BPF_CORE_READ(mm, exe_file, f_path.dentry, d_name.name);
  if (name) bpf_probe_read_kernel_str(exe, DRIP_EXE_NAME_LEN, name);
}

static __always_inline __u64 cgroup_id_of(struct task_struct* task) {
  return BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
}

/* The memory controller's cgroup: on a hybrid host the v1 memory hierarchy's, which need
 * not be the v2 one (a process put in a v1 memory cgroup by hand). The controller's index
 * depends on the kernel's config, so CO-RE reads it. */
static __always_inline __u64 memcg_id_of(struct task_struct* task) {
  if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id)) return 0;
  const int index = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
  struct css_set* cgroups = BPF_CORE_READ(task, cgroups);
  if (!cgroups || index < 0 ||
      index >= bpf_core_field_size(cgroups->subsys) / sizeof(cgroups->subsys[0])) {
    return 0;
  }
  struct cgroup_subsys_state* css = NULL;
  if (bpf_core_read(&css, sizeof(css), &cgroups->subsys[index]) || !css) return 0;
  return BPF_CORE_READ(css, cgroup, kn, id);
}

SEC("iter/task")
int dump_task_memory(struct bpf_iter__task* ctx) {
  struct seq_file* seq = ctx->meta->seq;
  struct task_struct* task = ctx->task;
  if (!task) return 0;
  /* One record per process: threads share the leader's mm. */
  if (BPF_CORE_READ(task, pid) != BPF_CORE_READ(task, tgid)) return 0;
  struct mm_struct* mm = BPF_CORE_READ(task, mm);
  if (!mm) return 0; /* kernel threads and zombies */

  struct drip_task_record r = {};
  r.tgid = BPF_CORE_READ(task, tgid);
  r.start_boottime_ns = BPF_CORE_READ(task, start_boottime);
  r.cgroup_id = cgroup_id_of(task);
  r.memcg_id = memcg_id_of(task);
  BPF_CORE_READ_STR_INTO(&r.comm, task, comm);
  read_rss_pages(mm, r.pages);
  read_exe_name(mm, r.exe);
  bpf_seq_write(seq, &r, sizeof(r));
  return 0;
}

static __always_inline struct drip_task_event* reserve_event(__u32 kind) {
  struct drip_task_event* e = bpf_ringbuf_reserve(&task_events, sizeof(*e), 0);
  if (!e) {
    __sync_fetch_and_add(&lost_events, 1);
    return 0;
  }
  __builtin_memset(e, 0, sizeof(*e));
  e->kind = kind;
  e->timestamp_boot_ns = bpf_ktime_get_boot_ns();
  return e;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_process_fork, struct task_struct* parent, struct task_struct* child) {
  if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid)) return 0; /* a new thread */
  struct drip_task_event* e = reserve_event(DRIP_EVENT_FORK);
  if (!e) return 0;
  e->tgid = BPF_CORE_READ(child, tgid);
  e->start_boottime_ns = BPF_CORE_READ(child, start_boottime);
  e->cgroup_id = cgroup_id_of(child);
  BPF_CORE_READ_STR_INTO(&e->comm, child, comm);
  struct mm_struct* mm = BPF_CORE_READ(child, mm);
  if (mm) read_exe_name(mm, e->exe);
  bpf_ringbuf_submit(e, 0);
  return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_process_exec, struct task_struct* task) {
  struct drip_task_event* e = reserve_event(DRIP_EVENT_EXEC);
  if (!e) return 0;
  e->tgid = BPF_CORE_READ(task, tgid);
  e->start_boottime_ns = BPF_CORE_READ(task, group_leader, start_boottime);
  e->cgroup_id = cgroup_id_of(task);
  BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
  struct mm_struct* mm = BPF_CORE_READ(task, mm);
  if (mm) read_exe_name(mm, e->exe);
  bpf_ringbuf_submit(e, 0);
  return 0;
}

/* Fires for every exiting thread, after its mm is gone; the process ends with the thread
 * that brings signal->live to zero. By then do_exit has folded the process's RSS
 * high-water mark into signal->maxrss, which is what an exit can still tell. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_process_exit, struct task_struct* task) {
  if (BPF_CORE_READ(task, signal, live.counter) != 0) return 0; /* other threads live on */
  struct drip_task_event* e = reserve_event(DRIP_EVENT_EXIT);
  if (!e) return 0;
  e->tgid = BPF_CORE_READ(task, tgid);
  e->start_boottime_ns = BPF_CORE_READ(task, group_leader, start_boottime);
  e->cgroup_id = cgroup_id_of(task);
  e->peak_rss_pages = BPF_CORE_READ(task, signal, maxrss);
  int group_code = BPF_CORE_READ(task, signal, group_exit_code);
  e->exit_code = group_code ? group_code : BPF_CORE_READ(task, exit_code);
  /* mark_oom_victim() sets the victim's signal->oom_mm; nothing else does. */
  e->oom_victim = BPF_CORE_READ(task, signal, oom_mm) != NULL;
  BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm);
  bpf_ringbuf_submit(e, 0);
  return 0;
}
