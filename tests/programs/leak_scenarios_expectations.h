// What the heap-snapshot tests expect of each scenario of drip-leak-scenarios-{fp,nofp}
// (tests/programs/leak_scenarios.cc): the function a diagnoser must rank first, i.e. the
// innermost non-allocator frame of the leaking allocation's stack, or nullptr for a decoy
// that does not leak. Match by prefix on the demangled name ("drip_fixture::
// SessionRegistry::Remember" matches "drip_fixture::SessionRegistry::Remember(unsigned long)").
//
// CMake targets: drip-leak-scenarios-fp (frame pointers) and drip-leak-scenarios-nofp (none);
// pass $<TARGET_FILE:drip-leak-scenarios-fp> / $<TARGET_FILE:drip-leak-scenarios-nofp> to a
// test. Each loads libdrip_leak_plugin_{fp,nofp}.so from its own directory. Run
// `PROGRAM SCENARIO [--rate-kib-per-s R] [--seconds S]`, read the line `ready <pid>`, then
// snapshot; SIGTERM ends it with exit status 0.
#pragma once

#include <string_view>

namespace drip_fixture {

struct LeakScenarioExpectation {
  const char* scenario;                     // argv[1] of the program
  const char* expected_function_prefix;     // ranked first; nullptr: decoy, no leak
  const char* alternative_function_prefix;  // also accepted first, or nullptr
  // Total leak rate = leak_rate_factor x --rate-kib-per-s (0 for the decoys).
  double leak_rate_factor;
  // The leaking function lives in libdrip_leak_plugin_{fp,nofp}.so, not in the executable.
  bool leak_in_shared_library;
};

inline constexpr LeakScenarioExpectation kLeakScenarios[] = {
    {"plain", "leak_plain_record", nullptr, 1.0, false},
    {"new", "drip_fixture::SessionRegistry::Remember", nullptr, 1.0, false},
    {"rare", "handle_rare_error_path", nullptr, 1.0, false},
    {"rarekeep", "new_request_context", nullptr, 1.0, false},
    {"churn", "leak_slowly_under_churn", nullptr, 0.25, false},
    {"realloc", "grow_buffer_with_realloc", "calloc_table_entry", 1.0, false},
    {"library", "plugin_leak_event_copy", nullptr, 1.0, true},
    {"cache", nullptr, nullptr, 0.0, false},
    {"startup", nullptr, nullptr, 0.0, false},
    {"cacheleak", "leak_plain_record", nullptr, 1.0, false},
    {"startupleak", "leak_plain_record", nullptr, 0.25, false},
};

// The default --rate-kib-per-s of the program.
inline constexpr double kDefaultLeakRateKibPerS = 1024.0;

// The entry for `scenario`, or nullptr if there is no such scenario.
constexpr const LeakScenarioExpectation* FindLeakScenario(std::string_view scenario) {
  for (const auto& entry : kLeakScenarios) {
    if (scenario == entry.scenario) return &entry;
  }
  return nullptr;
}

// True if `function` (demangled) is an acceptable top-ranked function for `entry`.
constexpr bool IsExpectedLeakFunction(const LeakScenarioExpectation& entry,
                                      std::string_view function) {
  if (entry.expected_function_prefix != nullptr &&
      function.starts_with(entry.expected_function_prefix)) {
    return true;
  }
  return entry.alternative_function_prefix != nullptr &&
         function.starts_with(entry.alternative_function_prefix);
}

}  // namespace drip_fixture
