/* Records shared by task_memory.bpf.c and the agent's BpfSampler: the layout the kernel
 * side writes (iterator records through bpf_seq_write, lifecycle events through the ring
 * buffer) and the user side reads. Plain C so both compilers agree on it; fixed-width
 * fields, every struct a multiple of 8 bytes so no padding differs. */
#ifndef DRIP_AGENT_BPF_TASK_MEMORY_H_
#define DRIP_AGENT_BPF_TASK_MEMORY_H_

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define DRIP_TASK_COMM_LEN 16
/* Executable basenames longer than this are cut; 48 bytes covers real binaries. */
#define DRIP_EXE_NAME_LEN 48

/* Indexes of mm_struct.rss_stat (MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES),
 * stable since 4.5. */
#define DRIP_MM_FILEPAGES 0
#define DRIP_MM_ANONPAGES 1
#define DRIP_MM_SWAPENTS 2
#define DRIP_MM_SHMEMPAGES 3
#define DRIP_MM_COUNTERS 4

/* One process (thread-group leader with an mm), written by the task iterator. */
struct drip_task_record {
  __u64 start_boottime_ns; /* task->start_boottime: what /proc/PID/stat's starttime is made of */
  __u64 cgroup_id;         /* the default (v2) hierarchy's cgroup: its kernfs inode number */
  __u64 memcg_id;          /* the memory controller's cgroup (v1 or v2), likewise; 0: none */
  __s64 pages[DRIP_MM_COUNTERS]; /* may be slightly negative: per-CPU counter drift */
  __u32 tgid;
  __u32 flags;
  char comm[DRIP_TASK_COMM_LEN];
  char exe[DRIP_EXE_NAME_LEN]; /* mm->exe_file's name; empty when there is none */
};

enum drip_task_event_kind {
  DRIP_EVENT_FORK = 1, /* a new process (not a thread) */
  DRIP_EVENT_EXEC = 2, /* a process replaced its program; exe is the new one */
  DRIP_EVENT_EXIT = 3, /* the last thread of a process exited */
};

/* A process lifecycle event, sent through the ring buffer as it happens. */
struct drip_task_event {
  __u64 timestamp_boot_ns; /* bpf_ktime_get_boot_ns() when it happened */
  __u64 start_boottime_ns; /* of the process (the group leader) */
  __u64 cgroup_id;
  __u64 peak_rss_pages; /* EXIT: signal->maxrss, the high-water mark of the process's RSS */
  __u32 kind;           /* enum drip_task_event_kind */
  __u32 tgid;
  __u32 exit_code;  /* EXIT: signal->group_exit_code or the leader's exit_code (wait status) */
  __u32 oom_victim; /* EXIT: the OOM killer chose the process (signal->oom_mm was set) */
  char comm[DRIP_TASK_COMM_LEN];
  char exe[DRIP_EXE_NAME_LEN]; /* FORK and EXEC */
};

#endif /* DRIP_AGENT_BPF_TASK_MEMORY_H_ */
