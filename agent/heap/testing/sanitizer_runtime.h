// Whether this test binary carries a sanitizer runtime of its own. clang links ASan's
// runtime into the executable (GCC uses libasan.so), so there malloc, operator new and
// the interceptors (qsort among them) are the executable's, and stand between a test's
// frames and libc's or libstdc++'s. Tests that check which module a function or frame
// comes from skip those checks then, saying why.
#pragma once

namespace drip::agent::testing {

#if defined(__clang__) && defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitizerRuntimeInExecutable = true;
#else
inline constexpr bool kSanitizerRuntimeInExecutable = false;
#endif
#else
inline constexpr bool kSanitizerRuntimeInExecutable = false;
#endif

inline constexpr const char* kSanitizerRuntimeSkip =
    "clang's ASan runtime is linked into this executable: its allocator and interceptors, "
    "not libc's and libstdc++'s, are what the process calls";

}  // namespace drip::agent::testing
