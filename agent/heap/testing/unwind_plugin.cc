// A shared library the StackUnwinder tests dlopen after creating the unwinder: its frames
// are in a module the unwinder has not seen yet.
#include "agent/heap/testing/stack_capture.h"

extern "C" {

volatile int drip_test_plugin_sink = 0;

// Calls `callback(out)` from a frame of this library.
__attribute__((visibility("default"), noinline)) int drip_test_plugin_call(
    int (*callback)(drip::agent::testing::CapturedStack*),
    drip::agent::testing::CapturedStack* out) {
  int result = callback(out);
  drip_test_plugin_sink = drip_test_plugin_sink + 1;
  return result + drip_test_plugin_sink;
}

}  // extern "C"
