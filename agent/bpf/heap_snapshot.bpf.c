// SPDX-License-Identifier: GPL-2.0
/* Drip's live heap snapshotter, in the kernel (docs/snapshot.md).
 *
 * Attach mode: uprobes on the target's allocator entry points (one program for every
 * allocator function, told how to read the size by its BPF cookie) and return probes
 * that learn the address, plus probes on free. Every probe hit costs the target a trap
 * (about 5 µs here), so the programs themselves stay small and the agent duty-cycles the
 * allocation probes to keep the target within its CPU budget; the free probe stays on so
 * that a tracked object freed while the allocation probes are off is still seen. On a
 * target whose frees alone would spend most of the budget, the agent detaches the free
 * probes between windows too; a tracked object freed meanwhile is then found dead when the
 * allocator hands out its address again (every allocation returning inside a window is
 * checked against `tracked`), which on a busy allocator's LIFO free lists is soon.
 *
 * The duty cycle's sampling windows: allocations are sampled only while
 * `sampling_window` is non-zero. The agent attaches the allocation probes, then opens a
 * window by writing its number; it closes it (writes 0) before detaching them. Attaching
 * and detaching dozens of uprobes takes from milliseconds to seconds (each detach waits
 * for an RCU grace period), with some functions probed and others not; gating keeps those
 * phases out of the sample, so a window's on-time is exactly the time between the two
 * writes and the agent can weigh each window's allocations by it.
 *
 * Sampling is by bytes, as in tcmalloc: each CPU counts down a number of bytes drawn from
 * an exponential distribution of mean T (exp_table holds unit-mean draws in 1/65536ths,
 * scaled by T; the agent sets T from the allocation rate it measures, and may change it
 * while the probes run: each sampled event carries the T it was drawn with); the
 * allocation that takes the countdown to zero or below is sampled, so an allocation of s
 * bytes is sampled with probability 1 - exp(-s/T) whatever the sizes around it. Only a
 * sampled allocation costs more than a counter: its address goes into `tracked`, and its
 * registers and the top of its user stack go to the agent, which unwinds them with the
 * target's CFI on the host. Registers and stack are used only to unwind; no heap memory
 * is ever read.
 *
 * Preload mode: the target runs Drip's sampling shim (libdrip_sampler.so), which samples
 * in-process and fires USDT probes drip:alloc / drip:free only for sampled events; the
 * shim_alloc / shim_free programs forward those with the same records. */
// vmlinux.h must come first: it defines the types the rest use.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "agent/bpf/heap_snapshot.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Set by the agent before load. */
const volatile __u32 target_tgid = 0;
const volatile __u32 max_stack_bytes = DRIP_STACK_COPY_MAX;
const volatile __u64 max_events_per_cpu_per_s = 1000;

/* The open sampling window's number, 0 while closed. Written by the agent through the
 * mmapped .bss at any time; read once per allocator call. */
__u32 sampling_window = 0;

/* Times the target ran exec(2) since the session loaded: its address space, and every
 * allocation followed so far, are then gone. Read by the agent through the mmapped .bss. */
__u32 target_execs = 0;

/* T, the mean bytes between samples. Written by the agent through the mmapped .bss
 * before load and whenever the measured allocation rate asks for another. */
__u64 sampling_mean_bytes = 0;

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 8 << 20); /* resized by the agent before load */
} heap_events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, DRIP_CTR_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} heap_counters SEC(".maps");

/* Entry probe hits per allocation site (numbered by the agent, from the cookie): which
 * functions are hot. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, DRIP_MAX_ALLOC_SITES);
  __type(key, __u32);
  __type(value, __u64);
} site_hits SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, DRIP_EXP_TABLE_SIZE);
  __type(key, __u32);
  __type(value, __u64);
} exp_table SEC(".maps");

struct sampler_state {
  __s64 countdown;
  __u64 window_s;
  __u64 events_in_window;
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct sampler_state);
} sampler SEC(".maps");

/* An allocator call between its entry and its return, per thread. `sp` tells a nested
 * call (operator new calling malloc) from the outer one; `window` a stale entry (its
 * return probe was detached before the call returned) from a live one. */
struct inflight_call {
  __u64 sp; /* stack pointer at entry: the return address is at sp */
  __u64 size;
  __u64 out_ptr; /* posix_memalign: where the result is written */
  __u32 sampled;
  __u32 kind;
  __u32 window;     /* the sampling window the entry saw open */
  __u32 mean_bytes; /* T when sampled (0 when not) */
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, struct inflight_call);
} inflight SEC(".maps");

/* Sampled live allocations: address -> size. Sized by the agent before load. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 262144);
  __type(key, __u64);
  __type(value, __u64);
} tracked SEC(".maps");

static __always_inline void count_by(__u32 which, __u64 amount) {
  __u64* value = bpf_map_lookup_elem(&heap_counters, &which);
  if (value) *value += amount;
}

static __always_inline void count(__u32 which) { count_by(which, 1); }

static __always_inline __u32 open_window(void) { return *(volatile __u32*)&sampling_window; }

static __always_inline bool is_target(void) {
  return target_tgid == 0 || (__u32)(bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

/* The hard limit on sampled events per second, per CPU: true while this one is within it;
 * a sampled event over it is counted and dropped. */
static __always_inline bool within_event_limit(struct sampler_state* state) {
  __u64 now_s = bpf_ktime_get_boot_ns() / 1000000000ULL;
  if (state->window_s != now_s) {
    state->window_s = now_s;
    state->events_in_window = 0;
  }
  if (state->events_in_window >= max_events_per_cpu_per_s) {
    count(DRIP_CTR_RATE_LIMITED);
    return false;
  }
  state->events_in_window++;
  return true;
}

/* Takes `size` bytes off this CPU's countdown; the T the allocation is sampled with, 0
 * when it is not sampled. */
static __always_inline __u64 sample_bytes(__u64 size) {
  __u32 zero = 0;
  struct sampler_state* state = bpf_map_lookup_elem(&sampler, &zero);
  if (!state) return 0;
  state->countdown -= (__s64)size;
  if (state->countdown > 0) return 0;
  __u64 mean = *(volatile __u64*)&sampling_mean_bytes;
  if (mean == 0) mean = 1;
  __u32 index = bpf_get_prandom_u32() % DRIP_EXP_TABLE_SIZE;
  __u64* next = bpf_map_lookup_elem(&exp_table, &index);
  state->countdown = next ? (__s64)((*next * mean) >> 16) : (__s64)mean;
  count(DRIP_CTR_SAMPLED);
  return within_event_limit(state) ? mean : 0;
}

static __always_inline __u32 copy_user_stack(__u8* dst, __u64 sp) {
  /* A read fails as a whole when any page of it is unmapped (the top of a thread's
   * stack), so try smaller copies; sizes are constants for the verifier. */
  if (max_stack_bytes >= 16384 && bpf_probe_read_user(dst, 16384, (void*)sp) == 0) return 16384;
  if (max_stack_bytes >= 8192 && bpf_probe_read_user(dst, 8192, (void*)sp) == 0) return 8192;
  if (bpf_probe_read_user(dst, 4096, (void*)sp) == 0) return 4096;
  if (bpf_probe_read_user(dst, 2048, (void*)sp) == 0) return 2048;
  if (bpf_probe_read_user(dst, 1024, (void*)sp) == 0) return 1024;
  if (bpf_probe_read_user(dst, 256, (void*)sp) == 0) return 256;
  return 0;
}

/* Ring buffer room kept for free events (32 bytes each with the ring's header): about
 * 32k of them while the agent falls behind. An allocation event dropped is made up for
 * by the others' weight; a free event lost leaves its object looking leaked forever. */
#define DRIP_FREE_HEADROOM_BYTES (1 << 20)
/* bpf_ringbuf_query's and bpf_ringbuf_submit's flags (UAPI values; the fallback vmlinux.h
 * lacks the enums). */
#define DRIP_RB_AVAIL_DATA 0
#define DRIP_RB_RING_SIZE 1
#define DRIP_RB_NO_WAKEUP 1
#define DRIP_RB_FORCE_WAKEUP 2

/* The agent drains the ring every 20 ms on its own. A wakeup per event would wake it
 * thousands of times a second, each time switching a core away from the target (on a
 * busy 2-core host, from the target itself); only a ring past half full wakes it early. */
static __always_inline __u64 submit_flags(void) {
  __u64 size = bpf_ringbuf_query(&heap_events, DRIP_RB_RING_SIZE);
  __u64 used = bpf_ringbuf_query(&heap_events, DRIP_RB_AVAIL_DATA);
  return used > size / 2 ? DRIP_RB_FORCE_WAKEUP : DRIP_RB_NO_WAKEUP;
}

/* Whether an allocation event fits and still leaves the frees their room. (Unconsumed
 * data is read racily: off by a few events at worst, well within the headroom.) */
static __always_inline bool room_for_alloc_event(void) {
  __u64 size = bpf_ringbuf_query(&heap_events, DRIP_RB_RING_SIZE);
  __u64 used = bpf_ringbuf_query(&heap_events, DRIP_RB_AVAIL_DATA);
  if (used + sizeof(struct drip_heap_alloc_event) + DRIP_FREE_HEADROOM_BYTES <= size) return true;
  count(DRIP_CTR_RINGBUF_FULL);
  return false;
}

static __always_inline void emit_alloc(struct pt_regs* ctx, __u64 address, __u64 size,
                                       __u64 mean_bytes, __u32 window) {
  struct drip_heap_alloc_event* e = bpf_ringbuf_reserve(&heap_events, sizeof(*e), 0);
  if (!e) {
    count(DRIP_CTR_RINGBUF_FULL);
    bpf_map_delete_elem(&tracked, &address); /* its free needs no event */
    return;
  }
  e->kind = DRIP_HEAP_ALLOC;
  e->tid = (__u32)bpf_get_current_pid_tgid();
  e->timestamp_ns = bpf_ktime_get_boot_ns();
  e->address = address;
  e->size = size;
  e->sampling_mean_bytes = mean_bytes;
  e->regs[0] = ctx->ax;
  e->regs[1] = ctx->dx;
  e->regs[2] = ctx->cx;
  e->regs[3] = ctx->bx;
  e->regs[4] = ctx->si;
  e->regs[5] = ctx->di;
  e->regs[6] = ctx->bp;
  e->regs[7] = ctx->sp;
  e->regs[8] = ctx->r8;
  e->regs[9] = ctx->r9;
  e->regs[10] = ctx->r10;
  e->regs[11] = ctx->r11;
  e->regs[12] = ctx->r12;
  e->regs[13] = ctx->r13;
  e->regs[14] = ctx->r14;
  e->regs[15] = ctx->r15;
  e->regs[16] = ctx->ip;
  e->window = window;
  e->stack_bytes = copy_user_stack(e->stack, ctx->sp);
  if (e->stack_bytes == 0) count(DRIP_CTR_STACK_UNREADABLE);
  bpf_ringbuf_submit(e, submit_flags());
}

static __always_inline void emit_free(__u64 address) {
  struct drip_heap_free_event* e = bpf_ringbuf_reserve(&heap_events, sizeof(*e), 0);
  if (!e) {
    count(DRIP_CTR_FREES_LOST);
    return;
  }
  e->kind = DRIP_HEAP_FREE;
  e->tid = (__u32)bpf_get_current_pid_tgid();
  e->timestamp_ns = bpf_ktime_get_boot_ns();
  e->address = address;
  bpf_ringbuf_submit(e, submit_flags());
}

/* A free of `address`: reported only when it was a tracked sampled allocation. */
static __always_inline bool untrack(__u64 address) {
  if (address == 0) return false;
  if (bpf_map_delete_elem(&tracked, &address) != 0) return false;
  count(DRIP_CTR_FREES_MATCHED);
  emit_free(address);
  return true;
}

/* The allocator returned `address`: whatever tracked object had it before was freed
 * unseen, and is reported freed before the address is tracked again. */
static __always_inline void untrack_reused(__u64 address) {
  if (untrack(address)) count(DRIP_CTR_FREES_BY_REUSE);
}

/* exec(2) by any thread of the target: the tgid stays, the program does not. BTF-typed,
 * like the task monitor's: it needs no tracefs, which a sandboxed agent may not see. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(target_exec, struct task_struct* task) {
  if ((__u32)BPF_CORE_READ(task, tgid) != target_tgid) return 0;
  __sync_fetch_and_add(&target_execs, 1);
  return 0;
}

SEC("uprobe")
int alloc_enter(struct pt_regs* ctx) {
  if (!is_target()) return 0;
  count(DRIP_CTR_ALLOC_HITS);
  __u64 cookie = bpf_get_attach_cookie(ctx);
  __u32 site = (__u32)(cookie >> DRIP_COOKIE_SITE_SHIFT);
  __u64* hits = bpf_map_lookup_elem(&site_hits, &site);
  if (hits) *hits += 1;
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  __u64 sp = ctx->sp;
  struct inflight_call* outer = bpf_map_lookup_elem(&inflight, &tid);
  /* No window open (probes being attached or detached around one, or a rarely called
   * function left attached): trap, count, sample nothing. An entry of this thread at
   * this depth or above is stale (its return probe went before the call returned) and
   * would match this call's return: drop it. The old pointer of a realloc is untracked by
   * free_enter, attached to realloc for good. */
  __u32 window = open_window();
  if (window == 0) {
    if (outer && outer->sp <= sp) bpf_map_delete_elem(&inflight, &tid);
    return 0;
  }
  count(DRIP_CTR_WINDOW_HITS);
  /* Inside another allocator call of this thread (operator new -> malloc): the outer
   * call is the allocation, counted once with its caller's stack. An entry left from an
   * earlier window is stale: its return was never seen. */
  if (outer && outer->window == window && outer->sp > sp) return 0;

  __u64 kind = cookie & ((1ULL << DRIP_COOKIE_SITE_SHIFT) - 1);
  struct inflight_call call = {.sp = sp, .kind = (__u32)kind, .window = window};
  switch (kind) {
    case DRIP_ALLOC_CALLOC:
      call.size = PT_REGS_PARM1(ctx) * PT_REGS_PARM2(ctx);
      break;
    case DRIP_ALLOC_REALLOC:
      call.size = PT_REGS_PARM2(ctx);
      break;
    case DRIP_ALLOC_MEMALIGN:
      call.size = PT_REGS_PARM2(ctx);
      break;
    case DRIP_ALLOC_POSIX_MEMALIGN:
      call.out_ptr = PT_REGS_PARM1(ctx);
      call.size = PT_REGS_PARM3(ctx);
      break;
    case DRIP_ALLOC_REALLOCARRAY:
      call.size = PT_REGS_PARM2(ctx) * PT_REGS_PARM3(ctx);
      break;
    default:
      call.size = PT_REGS_PARM1(ctx);
      break;
  }
  count_by(DRIP_CTR_WINDOW_BYTES, call.size);
  __u64 mean = sample_bytes(call.size);
  call.sampled = mean != 0 ? 1 : 0;
  call.mean_bytes = mean > 0xffffffffULL ? 0xffffffffU : (__u32)mean;
  bpf_map_update_elem(&inflight, &tid, &call, BPF_ANY);
  return 0;
}

SEC("uretprobe")
int alloc_return(struct pt_regs* ctx) {
  if (!is_target()) return 0;
  count(DRIP_CTR_RETURN_HITS);
  if (open_window() != 0) count(DRIP_CTR_WINDOW_HITS);
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  struct inflight_call* call = bpf_map_lookup_elem(&inflight, &tid);
  /* Only the return of the call that made the entry: the return address was at sp. */
  if (!call || call->sp + 8 != ctx->sp) return 0;
  struct inflight_call done = *call;
  bpf_map_delete_elem(&inflight, &tid);

  __u64 address = 0;
  if (done.kind == DRIP_ALLOC_POSIX_MEMALIGN) {
    if (PT_REGS_RC(ctx) != 0) return 0; /* failed: nothing allocated */
    if (bpf_probe_read_user(&address, sizeof(address), (void*)done.out_ptr) != 0) return 0;
  } else {
    address = PT_REGS_RC(ctx);
  }
  untrack_reused(address);
  if (!done.sampled) return 0;
  if (address == 0 || !room_for_alloc_event()) return 0;
  if (bpf_map_update_elem(&tracked, &address, &done.size, BPF_ANY) != 0) {
    count(DRIP_CTR_TRACKED_FULL);
    return 0;
  }
  /* Here the registers are the caller's right after the call returned, so the agent
   * unwinds from the allocating function itself: the caller of new is never lost. The
   * allocation belongs to the window its entry was sampled in, even if that has closed. */
  emit_alloc(ctx, address, done.size, done.mean_bytes, done.window);
  return 0;
}

/* free and operator delete; also realloc and reallocarray, whose first argument is
 * freed: those stay watched while the allocation probes are off too. */
SEC("uprobe")
int free_enter(struct pt_regs* ctx) {
  if (!is_target()) return 0;
  count(DRIP_CTR_FREE_HITS);
  if (open_window() != 0) count(DRIP_CTR_WINDOW_FREE_HITS);
  untrack(PT_REGS_PARM1(ctx));
  return 0;
}

SEC("usdt")
int BPF_USDT(shim_alloc, __u64 address, __u64 size, __u64 mean_bytes) {
  if (!is_target()) return 0;
  count(DRIP_CTR_ALLOC_HITS);
  count(DRIP_CTR_SAMPLED);
  untrack_reused(address);
  __u32 zero = 0;
  struct sampler_state* state = bpf_map_lookup_elem(&sampler, &zero);
  if (state && !within_event_limit(state)) return 0;
  if (!room_for_alloc_event()) return 0;
  if (bpf_map_update_elem(&tracked, &address, &size, BPF_ANY) != 0) {
    count(DRIP_CTR_TRACKED_FULL);
    return 0;
  }
  emit_alloc(ctx, address, size, mean_bytes, 0);
  return 0;
}

SEC("usdt")
int BPF_USDT(shim_free, __u64 address) {
  if (!is_target()) return 0;
  count(DRIP_CTR_FREE_HITS);
  untrack(address);
  return 0;
}

/* Attached by the agent to a function of its own to measure what one probe hit costs on
 * this host (agent/heap/uprobe_cost.cc). */
SEC("uprobe")
int calibrate(struct pt_regs* ctx) {
  /* The trap is the cost; a lookup like the real programs' makes the rest comparable. */
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  bpf_map_lookup_elem(&inflight, &tid);
  return 0;
}
