/* The kernel types Drip's BPF programs use, for build machines without kernel BTF
 * (/sys/kernel/btf/vmlinux). Normally the build generates vmlinux.h from the build
 * machine's BTF; this file stands in for it otherwise.
 *
 * Only the members the programs read are declared. That is enough because every struct
 * carries preserve_access_index: offsets are not taken from here but relocated by libbpf
 * (CO-RE) against the BTF of the kernel the agent runs on. Layouts that differ between
 * kernels (mm_struct.rss_stat before 6.2) are handled in the program itself. A test
 * loads the object built from this header into the running kernel. */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

typedef unsigned char __u8;
typedef short int __s16;
typedef short unsigned int __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long int __s64;
typedef long long unsigned int __u64;
typedef __u8 u8;
typedef __s16 s16;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
typedef int pid_t;

enum {
  false = 0,
  true = 1,
};

enum {
  BPF_ANY = 0,
  BPF_NOEXIST = 1,
  BPF_EXIST = 2,
};

enum bpf_map_type {
  BPF_MAP_TYPE_HASH = 1,
  BPF_MAP_TYPE_ARRAY = 2,
  BPF_MAP_TYPE_PERCPU_ARRAY = 6,
  BPF_MAP_TYPE_LRU_HASH = 9,
  BPF_MAP_TYPE_RINGBUF = 27,
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

typedef struct {
  int counter;
} atomic_t;

typedef struct {
  s64 counter;
} atomic64_t;

typedef atomic64_t atomic_long_t;

struct percpu_counter {
  s64 count;
};

struct qstr {
  const unsigned char* name;
};

struct dentry {
  struct qstr d_name;
};

struct path {
  struct dentry* dentry;
};

struct file {
  struct path f_path;
};

struct mm_struct {
  struct percpu_counter rss_stat[4];
  struct file* exe_file;
};

struct kernfs_node {
  u64 id;
};

struct cgroup {
  struct kernfs_node* kn;
};

struct cgroup_subsys_state {
  struct cgroup* cgroup;
};

/* The running kernel's values are relocated by CO-RE (bpf_core_enum_value); these stand
 * in for the build. */
enum cgroup_subsys_id {
  memory_cgrp_id = 4,
  CGROUP_SUBSYS_COUNT = 12,
};

struct css_set {
  struct cgroup_subsys_state* subsys[CGROUP_SUBSYS_COUNT];
  struct cgroup* dfl_cgrp;
};

struct signal_struct {
  atomic_t live;
  int group_exit_code;
  unsigned long maxrss;
  struct mm_struct* oom_mm;
};

struct task_struct {
  pid_t pid;
  pid_t tgid;
  int exit_code;
  u64 start_boottime;
  char comm[16];
  struct mm_struct* mm;
  struct task_struct* group_leader;
  struct signal_struct* signal;
  struct css_set* cgroups;
};

struct seq_file;

struct bpf_iter_meta {
  struct seq_file* seq;
  u64 session_id;
  u64 seq_num;
};

struct bpf_iter__task {
  struct bpf_iter_meta* meta;
  struct task_struct* task;
};

/* x86_64 user registers, as uprobe and USDT programs see them (heap_snapshot.bpf.c). */
struct pt_regs {
  unsigned long r15;
  unsigned long r14;
  unsigned long r13;
  unsigned long r12;
  unsigned long bp;
  unsigned long bx;
  unsigned long r11;
  unsigned long r10;
  unsigned long r9;
  unsigned long r8;
  unsigned long ax;
  unsigned long cx;
  unsigned long dx;
  unsigned long si;
  unsigned long di;
  unsigned long orig_ax;
  unsigned long ip;
  unsigned long cs;
  unsigned long flags;
  unsigned long sp;
  unsigned long ss;
};

#pragma clang attribute pop

#endif /* __VMLINUX_H__ */
