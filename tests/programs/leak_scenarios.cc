// drip-leak-scenarios-{fp,nofp}: leaking programs whose leaking function is known, the
// fixtures of the heap-snapshot tests. A test starts the program, waits for its one line
// `ready <pid>` on stdout (printed, and flushed, after the setup phase), snapshots the
// process for N seconds and checks that the diagnoser ranks the expected function first —
// the innermost non-allocator frame of the leaking allocation's stack — or, for a decoy,
// finds no leak. tests/programs/leak_scenarios_expectations.h holds the same table as
// constexpr data for the tests.
//
// Usage:
//   drip-leak-scenarios-{fp,nofp} SCENARIO [--rate-kib-per-s R] [--seconds S]
//                                 [--cache-mib M] [--fill-seconds F] [--churn-allocs-per-s N]
//   R: leak rate, KiB/s (default 1024). S: run time after `ready`, 0 (default) = until killed.
//   SIGTERM / SIGINT: exit 0 within a tick (10 ms). Bad input: one-line error, exit 2.
//
// clang-format off
// | scenario | expected first function (prefix)        | leak | the leaking allocation          |
// |----------|-----------------------------------------|------|---------------------------------|
// | plain    | leak_plain_record                       | R    | malloc 512..2048 B records      |
// | new      | drip_fixture::SessionRegistry::Remember | R    | new Session (1 KiB)             |
// | rare     | handle_rare_error_path                  | R    | malloc 4..16 KiB, 1 req. in 64  |
// | rarekeep | new_request_context (frees 49 of 50)    | R    | malloc 1 KiB, 1 req. in 50 kept |
// | churn    | leak_slowly_under_churn                 | R/4  | malloc 128..1024 B              |
// | realloc  | grow_buffer_with_realloc (3/4 R), or    | R    | realloc +1..4 KiB, 64 KiB max   |
// |          | calloc_table_entry (1/4 R) accepted     |      | calloc 256..1024 B entries      |
// | library  | plugin_leak_event_copy (in the .so)     | R    | malloc 272..4112 B event copies |
// | cache    | none (decoy: plateaus)                  | 0    | -                               |
// | startup  | none (decoy: flat after `ready`)        | 0    | -                               |
// | cacheleak| leak_plain_record (next to a cache still filling) | R | malloc 512..2048 B   |
// | startupleak | leak_plain_record (next to 64 MiB of startup buffers) | R/4 | as plain   |
// clang-format on
//
// The call paths (callers -> callee, the leaking allocation in the last function):
//   plain:   main loop -> serve_request -> parse_header -> leak_plain_record (extern "C");
//            the records are kept in a global list that is never pruned.
//   new:     main loop -> handle_login -> drip_fixture::SessionRegistry::Remember(unsigned
//            long), which does `new Session` and keeps it.
//   rare:    main loop -> handle_request (allocates and frees transient buffers) and, for 1
//            request in 64, -> handle_rare_error_path, which leaks a 4..16 KiB buffer; requests
//            are paced so that the rare leak still averages R KiB/s.
//   rarekeep: main loop -> handle_session_request -> new_request_context, which mallocs the
//            request's 1 KiB context; 1 request in 50 keeps it (a session that never
//            ends), the other 49 free it when they finish. One stack both leaks and churns:
//            it frees 98 % of what it allocates (the issue-31 held-out rare path).
//   churn:   main loop -> churn_step -> churn_small_object / churn_medium_object: a ring of
//            4096 live objects replaced at 30k allocs/s (--churn-allocs-per-s), about 45 MiB/s
//            of churn, >= 20x the leak; meanwhile leak_slowly_under_churn leaks at R/4 KiB/s.
//            Starved of CPU, it sheds churn (at most 1/4 s behind), never the leak's rate.
//   realloc: main loop -> grow_buffer_with_realloc grows a buffer with realloc up to 64 KiB,
//            keeps it and starts another (never freed); calloc_table_entry leaks calloc'ed
//            entries. Both leak; realloc is the larger (3/4 of R), so it ranks first.
//   library: main loop -> dispatch_plugin_event -> plugin_process_event (in
//            libdrip_leak_plugin_{fp,nofp}.so, a DT_NEEDED dependency found via RUNPATH
//            $ORIGIN) -> plugin_leak_event_copy (in the .so), which keeps event copies.
//   cache:   decoy. drip_fixture::LruCache::Insert fills an LRU cache to --cache-mib (24) over
//            the first --fill-seconds (6) after `ready`, then keeps inserting at that rate
//            while evicting (freeing) the least recently used entries: live bytes plateau.
//            --rate-kib-per-s does not apply.
//   startup: decoy. allocate_startup_buffers mallocs and writes 64 MiB before `ready`;
//            afterwards only transient churn (R KiB/s malloc'ed and freed at once).
//   cacheleak: the cache scenario (fill over --fill-seconds) and the plain leak at R.
//   startupleak: the startup scenario and the plain leak at R/4.
//
// Every leak scenario also does a little transient work (transient_scratch_work: 16 mallocs
// of 64..4096 B per tick, freed at once) so a stack tracer sees churn. All memory is written
// (memset) so RSS really grows. Work is paced by a steady clock at 100 ticks/s from `ready`
// on; between ticks the program sleeps. Leak sizes are byte-paced, so RssAnon grows at
// about R KiB/s (plus malloc's ~1-3% chunk overhead).
//
// The named functions keep their own frames: they are noinline and noipa (no clones, no
// partial inlining), the targets are built with -fno-optimize-sibling-calls, and a compiler
// barrier follows each call of a named function. The `fp` build keeps frame pointers
// (-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer), the `nofp` build omits them.
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tests/programs/leak_scenarios_expectations.h"

#if defined(__clang__)
#define DRIP_KEEP_FRAME __attribute__((noinline))
#else
#define DRIP_KEEP_FRAME __attribute__((noinline, noipa))
#endif
// A compiler barrier after a call, so that the call is never turned into a tail call.
#define DRIP_NO_TAIL_CALL() asm volatile("" ::: "memory")

// In libdrip_leak_plugin_{fp,nofp}.so (leak_plugin.cc).
extern "C" size_t plugin_process_event(const unsigned char* event, size_t size);

namespace {

constexpr double kTicksPerSecond = 100;
constexpr long kTickNanos = 1000000000L / static_cast<long>(kTicksPerSecond);

volatile sig_atomic_t g_stop = 0;

void OnStopSignal(int) { g_stop = 1; }

// splitmix64: deterministic and allocation-free.
uint64_t g_rng_state = 0x9e3779b97f4a7c15ULL;

uint64_t NextRandom() {
  uint64_t z = (g_rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [lo, hi].
size_t RandomBetween(size_t lo, size_t hi) { return lo + NextRandom() % (hi - lo + 1); }

[[noreturn]] void OutOfMemory() {
  std::fputs("drip-leak-scenarios: error: out of memory\n", stderr);
  std::_Exit(3);
}

// Writes every byte (so the pages are resident) and makes the block escape, so that the
// compiler can neither drop the stores nor elide a malloc/free pair.
void Touch(void* block, size_t bytes, uint64_t seed) {
  std::memset(block, static_cast<int>(seed % 251) + 1, bytes);
  asm volatile("" : : "r"(block) : "memory");
}

// Singly linked lists of leaked blocks: the link lives in the block itself, so keeping a
// block allocates nothing more (no vector growth on the leaking stack).
struct LeakedBlock {
  LeakedBlock* next;
};

void Keep(LeakedBlock** list, void* block) {
  auto* node = static_cast<LeakedBlock*>(block);
  node->next = *list;
  *list = node;
}

LeakedBlock* g_plain_records = nullptr;
LeakedBlock* g_rare_buffers = nullptr;
LeakedBlock* g_kept_contexts = nullptr;
LeakedBlock* g_slow_leaks = nullptr;
LeakedBlock* g_full_realloc_buffers = nullptr;
LeakedBlock* g_table_entries = nullptr;
LeakedBlock* g_startup_buffers = nullptr;

char* g_growing_buffer = nullptr;
size_t g_growing_size = 0;
constexpr size_t kGrowCapBytes = 64 * 1024;  // below malloc's mmap threshold

constexpr size_t kChurnRingSize = 4096;
void* g_churn_ring[kChurnRingSize];

}  // namespace

// ---- The named functions (they appear on the allocation stacks). ----------------------

extern "C" {

// Transient work: `count` blocks of min..max bytes, each freed at once. Returns the bytes.
DRIP_KEEP_FRAME size_t transient_scratch_work(size_t count, size_t min_bytes, size_t max_bytes) {
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t bytes = RandomBetween(min_bytes, max_bytes);
    void* block = std::malloc(bytes);
    if (block == nullptr) OutOfMemory();
    Touch(block, bytes, i);
    std::free(block);
    total += bytes;
  }
  return total;
}

// plain ------------------------------------------------------------------------------------

DRIP_KEEP_FRAME size_t leak_plain_record(uint64_t request_id) {
  const size_t bytes = RandomBetween(512, 2048);
  void* record = std::malloc(bytes);
  if (record == nullptr) OutOfMemory();
  Touch(record, bytes, request_id);
  Keep(&g_plain_records, record);
  return bytes;
}

DRIP_KEEP_FRAME size_t parse_header(uint64_t request_id) {
  // A transient copy of the header, freed before the record is stored.
  void* header = std::malloc(128);
  if (header == nullptr) OutOfMemory();
  Touch(header, 128, request_id);
  std::free(header);
  const size_t leaked = leak_plain_record(request_id);
  DRIP_NO_TAIL_CALL();
  return leaked;
}

DRIP_KEEP_FRAME size_t serve_request(uint64_t request_id) {
  const size_t leaked = parse_header(request_id);
  DRIP_NO_TAIL_CALL();
  return leaked;
}

// rare -------------------------------------------------------------------------------------

DRIP_KEEP_FRAME size_t handle_rare_error_path(uint64_t request_id) {
  const size_t bytes = RandomBetween(4096, 16384);
  void* buffer = std::malloc(bytes);
  if (buffer == nullptr) OutOfMemory();
  Touch(buffer, bytes, request_id);
  Keep(&g_rare_buffers, buffer);  // the error context is never released
  return bytes;
}

DRIP_KEEP_FRAME size_t handle_request(uint64_t request_id) {
  const size_t request_bytes = RandomBetween(256, 4096);
  void* request = std::malloc(request_bytes);
  if (request == nullptr) OutOfMemory();
  Touch(request, request_bytes, request_id);
  const size_t response_bytes = RandomBetween(128, 2048);
  void* response = std::malloc(response_bytes);
  if (response == nullptr) OutOfMemory();
  Touch(response, response_bytes, request_id);
  size_t leaked = 0;
  if (request_id % 64 == 37) {  // 1 request in 64 takes the error path
    leaked = handle_rare_error_path(request_id);
    DRIP_NO_TAIL_CALL();
  }
  std::free(response);
  std::free(request);
  return leaked;
}

// rarekeep ---------------------------------------------------------------------------------

constexpr size_t kRequestContextBytes = 1024;

DRIP_KEEP_FRAME void* new_request_context(uint64_t request_id) {
  void* context = std::malloc(kRequestContextBytes);
  if (context == nullptr) OutOfMemory();
  Touch(context, kRequestContextBytes, request_id);
  return context;
}

DRIP_KEEP_FRAME size_t handle_session_request(uint64_t request_id) {
  void* context = new_request_context(request_id);
  DRIP_NO_TAIL_CALL();
  if (request_id % 50 == 17) {  // a session that never ends keeps its context
    Keep(&g_kept_contexts, context);
    return kRequestContextBytes;
  }
  std::free(context);
  return 0;
}

// churn ------------------------------------------------------------------------------------

DRIP_KEEP_FRAME void* churn_small_object(uint64_t i) {
  const size_t bytes = RandomBetween(16, 256);
  void* object = std::malloc(bytes);
  if (object == nullptr) OutOfMemory();
  Touch(object, bytes, i);
  return object;
}

DRIP_KEEP_FRAME void* churn_medium_object(uint64_t i) {
  const size_t bytes = RandomBetween(512, 8192);
  void* object = std::malloc(bytes);
  if (object == nullptr) OutOfMemory();
  Touch(object, bytes, i);
  return object;
}

// Replaces the oldest object of the ring: two small objects for one medium one.
DRIP_KEEP_FRAME void churn_step(uint64_t i) {
  void*& slot = g_churn_ring[i % kChurnRingSize];
  std::free(slot);
  slot = (i % 3 == 2) ? churn_medium_object(i) : churn_small_object(i);
  DRIP_NO_TAIL_CALL();
}

DRIP_KEEP_FRAME size_t leak_slowly_under_churn(uint64_t i) {
  const size_t bytes = RandomBetween(128, 1024);
  void* object = std::malloc(bytes);
  if (object == nullptr) OutOfMemory();
  Touch(object, bytes, i);
  Keep(&g_slow_leaks, object);
  return bytes;
}

// realloc ----------------------------------------------------------------------------------

// Grows the current buffer by `grow_by` bytes; a full buffer (64 KiB) is kept forever and a
// new one started. Returns the bytes added.
DRIP_KEEP_FRAME size_t grow_buffer_with_realloc(size_t grow_by) {
  const size_t old_size = g_growing_size;
  const size_t new_size = old_size + grow_by;
  auto* buffer = static_cast<char*>(std::realloc(g_growing_buffer, new_size));
  if (buffer == nullptr) OutOfMemory();
  Touch(buffer + old_size, grow_by, new_size);
  g_growing_buffer = buffer;
  g_growing_size = new_size;
  if (new_size >= kGrowCapBytes) {
    Keep(&g_full_realloc_buffers, buffer);
    g_growing_buffer = nullptr;
    g_growing_size = 0;
  }
  return grow_by;
}

struct TableRow {
  uint64_t key;
  uint64_t values[3];
};

// A calloc'ed table entry of 8..32 rows (256..1024 B), never freed. Returns its bytes.
DRIP_KEEP_FRAME size_t calloc_table_entry(uint64_t key) {
  const size_t rows = RandomBetween(8, 32);
  auto* entry = static_cast<TableRow*>(std::calloc(rows, sizeof(TableRow)));
  if (entry == nullptr) OutOfMemory();
  // calloc's zeroes may be untouched fresh pages: write the rows so they are resident.
  Touch(entry, rows * sizeof(TableRow), key);
  Keep(&g_table_entries, entry);
  return rows * sizeof(TableRow);
}

// library ----------------------------------------------------------------------------------

// Hands one event (a transient buffer, freed here) to the plugin. Returns the bytes the
// plugin kept.
DRIP_KEEP_FRAME size_t dispatch_plugin_event(uint64_t event_id) {
  const size_t bytes = RandomBetween(256, 4096);
  auto* event = static_cast<unsigned char*>(std::malloc(bytes));
  if (event == nullptr) OutOfMemory();
  Touch(event, bytes, event_id);
  const size_t kept = plugin_process_event(event, bytes);
  DRIP_NO_TAIL_CALL();
  std::free(event);
  return kept;
}

// startup ----------------------------------------------------------------------------------

DRIP_KEEP_FRAME size_t allocate_startup_buffers(size_t total_bytes) {
  constexpr size_t kBufferBytes = 1024 * 1024;
  size_t allocated = 0;
  for (uint64_t i = 0; allocated < total_bytes; ++i) {
    void* buffer = std::malloc(kBufferBytes);
    if (buffer == nullptr) OutOfMemory();
    Touch(buffer, kBufferBytes, i);
    Keep(&g_startup_buffers, buffer);
    allocated += kBufferBytes;
  }
  return allocated;
}

}  // extern "C"

namespace drip_fixture {

// new --------------------------------------------------------------------------------------

struct Session {
  Session* next;
  unsigned long id;
  char token[1008];
};
static_assert(sizeof(Session) == 1024);

class SessionRegistry {
 public:
  // The leak: every session is remembered and never forgotten.
  DRIP_KEEP_FRAME void Remember(unsigned long id);
  size_t size() const { return size_; }

 private:
  Session* head_ = nullptr;
  size_t size_ = 0;
};

void SessionRegistry::Remember(unsigned long id) {
  auto* session = new Session;
  std::memset(session->token, static_cast<int>('a' + id % 26), sizeof(session->token));
  session->id = id;
  session->next = head_;
  asm volatile("" : : "r"(session) : "memory");
  head_ = session;
  ++size_;
}

// cache (decoy) ----------------------------------------------------------------------------

// A byte-bounded LRU cache: Insert evicts the least recently used entries (frees them) to
// stay within its capacity, so its live bytes plateau.
class LruCache {
 public:
  LruCache(size_t capacity_bytes, size_t expected_entries) : capacity_(capacity_bytes) {
    index_.reserve(expected_entries);  // no rehash after `ready`
  }
  LruCache(const LruCache&) = delete;
  LruCache& operator=(const LruCache&) = delete;
  ~LruCache() {
    while (tail_ != nullptr) EvictOldest();
  }

  // Inserts (or replaces) `key` with a value of `value_bytes`. Returns the bytes allocated.
  DRIP_KEEP_FRAME size_t Insert(unsigned long key, size_t value_bytes);
  // Looks `key` up; a hit makes it the most recently used.
  DRIP_KEEP_FRAME bool Lookup(unsigned long key);

  size_t bytes() const { return bytes_; }
  size_t entries() const { return index_.size(); }

 private:
  struct Entry {
    Entry* prev;
    Entry* next;
    unsigned long key;
    size_t bytes;  // the whole allocation
    unsigned char value[];
  };

  void Unlink(Entry* entry) {
    (entry->prev != nullptr ? entry->prev->next : head_) = entry->next;
    (entry->next != nullptr ? entry->next->prev : tail_) = entry->prev;
  }
  void PushFront(Entry* entry) {
    entry->prev = nullptr;
    entry->next = head_;
    (head_ != nullptr ? head_->prev : tail_) = entry;
    head_ = entry;
  }
  void Remove(Entry* entry) {
    Unlink(entry);
    index_.erase(entry->key);
    bytes_ -= entry->bytes;
    std::free(entry);
  }
  void EvictOldest() { Remove(tail_); }

  size_t capacity_;
  size_t bytes_ = 0;
  Entry* head_ = nullptr;  // most recently used
  Entry* tail_ = nullptr;  // least recently used
  std::unordered_map<unsigned long, Entry*> index_;
};

size_t LruCache::Insert(unsigned long key, size_t value_bytes) {
  if (auto it = index_.find(key); it != index_.end()) Remove(it->second);
  const size_t bytes = sizeof(Entry) + value_bytes;
  while (tail_ != nullptr && bytes_ + bytes > capacity_) EvictOldest();
  auto* entry = static_cast<Entry*>(std::malloc(bytes));
  if (entry == nullptr) OutOfMemory();
  Touch(entry->value, value_bytes, key);
  entry->key = key;
  entry->bytes = bytes;
  PushFront(entry);
  index_.emplace(key, entry);
  bytes_ += bytes;
  return bytes;
}

bool LruCache::Lookup(unsigned long key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  Unlink(it->second);
  PushFront(it->second);
  return true;
}

}  // namespace drip_fixture

extern "C" DRIP_KEEP_FRAME void handle_login(drip_fixture::SessionRegistry* registry,
                                             unsigned long id) {
  registry->Remember(id);
  DRIP_NO_TAIL_CALL();
}

namespace {

struct Options {
  std::string scenario;
  double rate_kib_per_s = drip_fixture::kDefaultLeakRateKibPerS;
  double seconds = 0;  // 0: until killed
  double cache_mib = 24;
  double fill_seconds = 6;
  double churn_allocs_per_s = 30000;
};

// Each scenario does, at each tick, the work due by `elapsed` seconds after `ready`.
class Scenario {
 public:
  explicit Scenario(const Options& options)
      : options_(options), leak_bytes_per_s_(options.rate_kib_per_s * 1024.0) {}
  virtual ~Scenario() = default;
  virtual void Setup() {}
  virtual void Tick(double elapsed) = 0;

 protected:
  const Options& options_;
  const double leak_bytes_per_s_;
};

// A little transient work per tick, as a real service would do.
void TransientTick() {
  transient_scratch_work(16, 64, 4096);
  DRIP_NO_TAIL_CALL();
}

// The plain leak (serve_request -> ... -> leak_plain_record), paced to a byte rate; the
// scenarios that put it next to something else share it.
class PlainLeak {
 public:
  void LeakUpTo(double due_bytes) {
    while (leaked_ < due_bytes && !g_stop) leaked_ += serve_request(next_id_++);
  }

 private:
  double leaked_ = 0;
  uint64_t next_id_ = 0;
};

class PlainScenario : public Scenario {
 public:
  using Scenario::Scenario;
  void Tick(double elapsed) override {
    leak_.LeakUpTo(elapsed * leak_bytes_per_s_);
    TransientTick();
  }

 private:
  PlainLeak leak_;
};

class NewScenario : public Scenario {
 public:
  using Scenario::Scenario;
  void Tick(double elapsed) override {
    const double due = elapsed * leak_bytes_per_s_;
    while (leaked_ < due && !g_stop) {
      handle_login(&registry_, next_id_++);
      leaked_ += sizeof(drip_fixture::Session);
    }
    TransientTick();
  }

 private:
  drip_fixture::SessionRegistry registry_;
  double leaked_ = 0;
  uint64_t next_id_ = 0;
};

class RareScenario : public Scenario {
 public:
  using Scenario::Scenario;
  void Tick(double elapsed) override {
    // 1 request in 64 leaks 10 KiB on average: pace requests so the leak is R KiB/s.
    constexpr double kMeanLeakBytes = (4096 + 16384) / 2.0;
    const double requests_per_s = leak_bytes_per_s_ * 64 / kMeanLeakBytes;
    const auto due = static_cast<uint64_t>(elapsed * requests_per_s);
    while (next_id_ < due && !g_stop) handle_request(next_id_++);
    TransientTick();
  }

 private:
  uint64_t next_id_ = 0;
};

class RareKeepScenario : public Scenario {
 public:
  using Scenario::Scenario;
  void Tick(double elapsed) override {
    // 1 request in 50 keeps 1 KiB: pace requests so the leak is R KiB/s.
    const double requests_per_s = leak_bytes_per_s_ * 50 / kRequestContextBytes;
    const auto due = static_cast<uint64_t>(elapsed * requests_per_s);
    while (next_id_ < due && !g_stop) handle_session_request(next_id_++);
    TransientTick();
  }

 private:
  uint64_t next_id_ = 0;
};

class ChurnScenario : public Scenario {
 public:
  using Scenario::Scenario;
  void Tick(double elapsed) override {
    const auto churn_due = static_cast<uint64_t>(elapsed * options_.churn_allocs_per_s);
    const double leak_due = elapsed * leak_bytes_per_s_ / 4;
    // A starved process (two cores shared with other tests) sheds churn it fell behind on
    // rather than catching up: catching up would hold the leak, paced within the churn,
    // below its rate, and the leak's rate is what a snapshot told the growth relies on.
    const auto most_behind = static_cast<uint64_t>(options_.churn_allocs_per_s / 4);
    if (churn_due > churned_ + most_behind) churned_ = churn_due - most_behind;
    while (churned_ < churn_due && !g_stop) {
      churn_step(churned_++);
      // Interleave the slow leak with the churn.
      while (leaked_ < leak_due * (static_cast<double>(churned_) / churn_due) && !g_stop) {
        leaked_ += leak_slowly_under_churn(churned_);
      }
    }
    while (leaked_ < leak_due && !g_stop) leaked_ += leak_slowly_under_churn(churned_);
    TransientTick();
  }

 private:
  uint64_t churned_ = 0;
  double leaked_ = 0;
};

class ReallocScenario : public Scenario {
 public:
  using Scenario::Scenario;
  void Tick(double elapsed) override {
    // realloc leaks 3/4 of the rate, calloc 1/4: the realloc leak is ranked first.
    const double realloc_due = elapsed * leak_bytes_per_s_ * 3 / 4;
    const double calloc_due = elapsed * leak_bytes_per_s_ / 4;
    while (realloc_leaked_ < realloc_due && !g_stop) {
      realloc_leaked_ += grow_buffer_with_realloc(RandomBetween(1024, 4096));
    }
    while (calloc_leaked_ < calloc_due && !g_stop) {
      calloc_leaked_ += calloc_table_entry(next_key_++);
    }
    TransientTick();
  }

 private:
  double realloc_leaked_ = 0;
  double calloc_leaked_ = 0;
  uint64_t next_key_ = 0;
};

class LibraryScenario : public Scenario {
 public:
  using Scenario::Scenario;
  void Tick(double elapsed) override {
    const double due = elapsed * leak_bytes_per_s_;
    while (leaked_ < due && !g_stop) leaked_ += dispatch_plugin_event(next_id_++);
    TransientTick();
  }

 private:
  double leaked_ = 0;
  uint64_t next_id_ = 0;
};

class CacheScenario : public Scenario {
 public:
  explicit CacheScenario(const Options& options)
      : Scenario(options),
        capacity_bytes_(options.cache_mib * 1024 * 1024),
        cache_(static_cast<size_t>(capacity_bytes_), static_cast<size_t>(capacity_bytes_ / 1024)) {}
  void Tick(double elapsed) override {
    // Fills to capacity over --fill-seconds, then keeps inserting at the same byte rate
    // while evicting the oldest entries.
    const double due = elapsed * capacity_bytes_ / options_.fill_seconds;
    while (inserted_ < due && !g_stop) {
      inserted_ += cache_.Insert(next_key_++, RandomBetween(1024, 8192));
    }
    // Some hits on recent entries reorder the LRU list.
    const size_t entries = cache_.entries();
    for (int i = 0; i < 32 && entries > 0 && next_key_ > 0; ++i) {
      const uint64_t back = NextRandom() % std::min<uint64_t>(entries, next_key_);
      cache_.Lookup(next_key_ - 1 - back);
    }
  }

 private:
  double capacity_bytes_;
  drip_fixture::LruCache cache_;
  double inserted_ = 0;
  uint64_t next_key_ = 0;
};

class StartupScenario : public Scenario {
 public:
  using Scenario::Scenario;
  void Setup() override {
    allocate_startup_buffers(64 * 1024 * 1024);
    DRIP_NO_TAIL_CALL();
  }
  void Tick(double elapsed) override {
    // Only transient churn: R KiB/s allocated and freed at once.
    const double due = elapsed * leak_bytes_per_s_;
    while (churned_ < due && !g_stop) churned_ += transient_scratch_work(8, 64, 8192);
  }

 private:
  double churned_ = 0;
};

// A cache still filling next to a leak: the LRU fills over --fill-seconds (give it about
// half the snapshot) while leak_plain_record leaks at R. Until the cache levels off it grows
// faster than the leak; it must not be ranked as the leak above the real one.
class CacheLeakScenario : public CacheScenario {
 public:
  using CacheScenario::CacheScenario;
  void Tick(double elapsed) override {
    CacheScenario::Tick(elapsed);
    leak_.LeakUpTo(elapsed * leak_bytes_per_s_);
    TransientTick();
  }

 private:
  PlainLeak leak_;
};

// 64 MiB of startup buffers next to a slow leak (R/4 through leak_plain_record) and R of
// transient churn: the buffers dwarf the leak's bytes, not its trend.
class StartupLeakScenario : public StartupScenario {
 public:
  using StartupScenario::StartupScenario;
  void Tick(double elapsed) override {
    StartupScenario::Tick(elapsed);
    leak_.LeakUpTo(elapsed * leak_bytes_per_s_ / 4);
  }

 private:
  PlainLeak leak_;
};

std::unique_ptr<Scenario> MakeScenario(const Options& options) {
  const std::string_view name = options.scenario;
  if (name == "plain") return std::make_unique<PlainScenario>(options);
  if (name == "new") return std::make_unique<NewScenario>(options);
  if (name == "rare") return std::make_unique<RareScenario>(options);
  if (name == "rarekeep") return std::make_unique<RareKeepScenario>(options);
  if (name == "churn") return std::make_unique<ChurnScenario>(options);
  if (name == "realloc") return std::make_unique<ReallocScenario>(options);
  if (name == "library") return std::make_unique<LibraryScenario>(options);
  if (name == "cache") return std::make_unique<CacheScenario>(options);
  if (name == "startup") return std::make_unique<StartupScenario>(options);
  if (name == "cacheleak") return std::make_unique<CacheLeakScenario>(options);
  if (name == "startupleak") return std::make_unique<StartupLeakScenario>(options);
  return nullptr;
}

constexpr char kUsage[] =
    "usage: drip-leak-scenarios-{fp,nofp} SCENARIO [--rate-kib-per-s R] [--seconds S]\n"
    "         [--cache-mib M] [--fill-seconds F] [--churn-allocs-per-s N]\n"
    "scenarios: plain new rare rarekeep churn realloc library cacheleak startupleak (leaks),\n"
    "           cache startup (decoys)\n"
    "prints `ready <pid>` when set up; runs S seconds (0: until SIGTERM/SIGINT)\n";

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "drip-leak-scenarios: error: %s (try --help)\n", message.c_str());
  std::exit(2);
}

double ParseNumber(const std::string& flag, const std::string& text, bool allow_zero) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || errno != 0 || !(value >= 0) ||
      (!allow_zero && value == 0) || value > 1e12) {
    UsageError("invalid value for " + flag + ": '" + text + "'");
  }
  return value;
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!options.scenario.empty()) UsageError("unexpected argument '" + arg + "'");
      options.scenario = arg;
      continue;
    }
    std::string value;
    if (const size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      UsageError("missing value for " + arg);
    }
    if (arg == "--rate-kib-per-s") {
      options.rate_kib_per_s = ParseNumber(arg, value, false);
    } else if (arg == "--seconds") {
      options.seconds = ParseNumber(arg, value, true);
    } else if (arg == "--cache-mib") {
      options.cache_mib = ParseNumber(arg, value, false);
    } else if (arg == "--fill-seconds") {
      options.fill_seconds = ParseNumber(arg, value, false);
    } else if (arg == "--churn-allocs-per-s") {
      options.churn_allocs_per_s = ParseNumber(arg, value, false);
    } else {
      UsageError("unknown option '" + arg + "'");
    }
  }
  if (options.scenario.empty()) UsageError("missing SCENARIO");
  if (drip_fixture::FindLeakScenario(options.scenario) == nullptr) {
    UsageError("unknown scenario '" + options.scenario + "'");
  }
  return options;
}

double SecondsSince(const timespec& start) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec - start.tv_sec) +
         static_cast<double>(now.tv_nsec - start.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseOptions(argc, argv);

  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a signal wakes the sleep at once
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  std::unique_ptr<Scenario> scenario = MakeScenario(options);
  if (scenario == nullptr) UsageError("unknown scenario '" + options.scenario + "'");
  scenario->Setup();
  if (g_stop) return 0;

  std::printf("ready %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);

  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (!g_stop) {
    const double elapsed = SecondsSince(start);
    if (options.seconds > 0 && elapsed >= options.seconds) break;
    scenario->Tick(elapsed);
    // Sleep until the next tick boundary (skipping ticks if the work fell behind).
    const auto next_tick = static_cast<long long>(SecondsSince(start) * kTicksPerSecond) + 1;
    const long long wake_nanos = next_tick * kTickNanos + start.tv_nsec;
    timespec wake;
    wake.tv_sec = start.tv_sec + static_cast<time_t>(wake_nanos / 1000000000LL);
    wake.tv_nsec = static_cast<long>(wake_nanos % 1000000000LL);
    while (!g_stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr) == EINTR) {
    }
  }
  std::fflush(stdout);
  return 0;
}
