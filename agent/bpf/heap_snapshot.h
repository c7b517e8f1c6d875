/* Records shared by heap_snapshot.bpf.c and the agent's heap snapshotter
 * (agent/heap/heap_probe_session.cc). Plain C with fixed-width fields so that clang
 * -target bpf and the host compiler agree on the layout; every struct a multiple of 8. */
#ifndef DRIP_AGENT_BPF_HEAP_SNAPSHOT_H_
#define DRIP_AGENT_BPF_HEAP_SNAPSHOT_H_

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The most user stack copied per sampled allocation, from the stack pointer up. 16 KiB
 * is twice perf's default: deep C++ servers (gRPC, protobuf) need it. */
#define DRIP_STACK_COPY_MAX 16384
/* x86_64 registers in DWARF order, see agent/heap/user_stack.h. */
#define DRIP_HEAP_REGS 17
/* Entries of the exponential table the BPF sampler draws its byte countdowns from. */
#define DRIP_EXP_TABLE_SIZE 1024
/* Allocation probe sites with their own hit counter (`site_hits`): the agent numbers its
 * sites and passes the number in the probe's BPF cookie, above the drip_alloc_kind. */
#define DRIP_MAX_ALLOC_SITES 64
#define DRIP_COOKIE_SITE_SHIFT 8

/* How an allocator entry probe finds the size (and where the result goes), given as the
 * probe's BPF cookie so that one program serves every allocator function. */
enum drip_alloc_kind {
  DRIP_ALLOC_MALLOC = 1,         /* f(size): malloc, valloc, pvalloc, operator new */
  DRIP_ALLOC_CALLOC = 2,         /* calloc(n, size) */
  DRIP_ALLOC_REALLOC = 3,        /* realloc(ptr, size): an allocation (the free of ptr is
                                  * seen by the free probe, also attached to realloc) */
  DRIP_ALLOC_MEMALIGN = 4,       /* f(alignment, size): memalign, aligned_alloc */
  DRIP_ALLOC_POSIX_MEMALIGN = 5, /* posix_memalign(&ptr, alignment, size): result via ptr */
  DRIP_ALLOC_REALLOCARRAY = 6,   /* reallocarray(ptr, n, size) */
};

enum drip_heap_event_kind {
  DRIP_HEAP_ALLOC = 1, /* a sampled allocation: struct drip_heap_alloc_event */
  DRIP_HEAP_FREE = 2,  /* the free of a tracked allocation: struct drip_heap_free_event */
};

/* Counters the agent reads to keep the target within its CPU budget and to report what
 * it saw; indexes into the per-CPU array `heap_counters`. */
enum drip_heap_counter {
  DRIP_CTR_ALLOC_HITS = 0,  /* allocator entry probe hits */
  DRIP_CTR_RETURN_HITS = 1, /* allocator return probe hits */
  DRIP_CTR_FREE_HITS = 2,   /* free / delete probe hits */
  DRIP_CTR_SAMPLED = 3,     /* allocations chosen by the byte sampler (kept or not) */
  DRIP_CTR_FREES_MATCHED = 4,
  /* sampled allocations dropped because the ring buffer was full, short of the room kept
   * for frees */
  DRIP_CTR_RINGBUF_FULL = 5,
  DRIP_CTR_RATE_LIMITED = 6, /* sampled allocations dropped over the events/s limit */
  DRIP_CTR_TRACKED_FULL = 7, /* sampled allocations dropped because the map was full */
  DRIP_CTR_STACK_UNREADABLE = 8,
  /* allocator entry and return probe hits while a sampling window was open: the rate the
   * duty cycle plans with, apart from hits while probes are being attached or detached */
  DRIP_CTR_WINDOW_HITS = 9,
  /* bytes asked of the allocator while a sampling window was open: the allocation rate
   * the agent sizes the sampling period by */
  DRIP_CTR_WINDOW_BYTES = 10,
  /* frees lost because even the room kept for them in the ring buffer was full: their
   * objects would look leaked */
  DRIP_CTR_FREES_LOST = 11,
  /* free probe hits while a sampling window was open: the free rate the duty cycle plans
   * with once it detaches the free probes between windows too */
  DRIP_CTR_WINDOW_FREE_HITS = 12,
  /* tracked allocations found dead because the allocator handed out their address again:
   * their free fell while the free probes were detached (or went through a function not
   * probed) */
  DRIP_CTR_FREES_BY_REUSE = 13,
  DRIP_CTR_COUNT = 14,
};

struct drip_heap_alloc_event {
  __u32 kind; /* DRIP_HEAP_ALLOC */
  __u32 tid;
  __u64 timestamp_ns; /* bpf_ktime_get_boot_ns() */
  __u64 address;
  __u64 size;
  __u64 sampling_mean_bytes; /* T the allocation was sampled with (the shim's in preload) */
  __u64 regs[DRIP_HEAP_REGS];
  __u32 stack_bytes; /* how much of `stack` holds the copy (0: unreadable) */
  /* The sampling window the allocation was sampled in (its entry probe saw it open), see
   * `sampling_window` in heap_snapshot.bpf.c; 0 in preload mode (no duty cycle). */
  __u32 window;
  __u8 stack[DRIP_STACK_COPY_MAX];
};

struct drip_heap_free_event {
  __u32 kind; /* DRIP_HEAP_FREE */
  __u32 tid;
  __u64 timestamp_ns;
  __u64 address;
};

#endif /* DRIP_AGENT_BPF_HEAP_SNAPSHOT_H_ */
