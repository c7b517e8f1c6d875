// libdrip_leak_plugin_{fp,nofp}.so: the shared library of the `library` scenario of
// drip-leak-scenarios-{fp,nofp} (see leak_scenarios.cc). The program links it (DT_NEEDED,
// found through RUNPATH $ORIGIN) and calls plugin_process_event() for each event; the
// plugin parses the event with a transient buffer (freed at once) and then — the bug —
// plugin_leak_event_copy() keeps a malloc'ed copy of every event in a list it never prunes.
//   program main loop -> dispatch_plugin_event -> plugin_process_event (.so)
//                     -> plugin_leak_event_copy (.so, leaks)
// Built with -fno-optimize-sibling-calls; the functions below are noinline/noipa so each
// keeps its own frame and symbol.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__clang__)
#define DRIP_PLUGIN_KEEP_FRAME __attribute__((noinline, visibility("default")))
#else
#define DRIP_PLUGIN_KEEP_FRAME __attribute__((noinline, noipa, visibility("default")))
#endif
// A compiler barrier after a call, so that the call is never turned into a tail call.
#define DRIP_PLUGIN_NO_TAIL_CALL() asm volatile("" ::: "memory")

namespace {

// One kept copy: a header and the event's bytes, in a single allocation.
struct EventCopy {
  EventCopy* next;
  size_t size;
  unsigned char payload[];
};

EventCopy* g_kept_events = nullptr;  // never pruned
size_t g_kept_bytes = 0;

}  // namespace

extern "C" {

// Keeps a copy of the event forever. Returns the bytes allocated for it.
DRIP_PLUGIN_KEEP_FRAME size_t plugin_leak_event_copy(const unsigned char* event, size_t size) {
  const size_t bytes = sizeof(EventCopy) + size;
  auto* copy = static_cast<EventCopy*>(std::malloc(bytes));
  if (copy == nullptr) std::abort();
  copy->size = size;
  std::memcpy(copy->payload, event, size);
  copy->next = g_kept_events;
  g_kept_events = copy;
  g_kept_bytes += bytes;
  return bytes;
}

// Processes one event of `size` bytes. Returns the bytes the plugin kept (leaked).
DRIP_PLUGIN_KEEP_FRAME size_t plugin_process_event(const unsigned char* event, size_t size) {
  // Transient parsing state, freed before returning.
  const size_t scratch_size = 256 + size / 2;
  auto* scratch = static_cast<unsigned char*>(std::malloc(scratch_size));
  if (scratch == nullptr) std::abort();
  std::memset(scratch, 0x5a, scratch_size);
  unsigned checksum = 0;
  for (size_t i = 0; i < size; i += 64) checksum += event[i] ^ scratch[i % scratch_size];
  std::free(scratch);
  const size_t kept = plugin_leak_event_copy(event, size);
  DRIP_PLUGIN_NO_TAIL_CALL();
  asm volatile("" : : "r"(checksum));
  return kept;
}

// Total bytes the plugin has kept so far.
DRIP_PLUGIN_KEEP_FRAME size_t plugin_kept_bytes() { return g_kept_bytes; }

}  // extern "C"
