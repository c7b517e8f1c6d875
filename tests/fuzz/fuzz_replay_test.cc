// The replay driver that turns a fuzz target into a GoogleTest binary for builds without
// libFuzzer (GCC, the ASan+UBSan build): every file of the target's seed corpus and of its
// regressions directory goes through LLVMFuzzerTestOneInput once. A crash, a sanitizer
// report or a failed oracle (tests/fuzz/fuzz_check.h aborts) fails the test; the file
// being replayed is printed first, so the failing input is named in ctest's output.
// cmake/DripFuzz.cmake sets the suite name and both directories per target.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// Regular files of `dir`, sorted so that runs are repeatable; none when it does not exist.
std::vector<std::filesystem::path> InputsIn(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void Replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << file;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
  // A copy of exactly `size` bytes, so that AddressSanitizer catches a read past the end
  // as libFuzzer would.
  std::vector<uint8_t> data(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(data.data(), data.size());
}

TEST(DRIP_FUZZER_SUITE, SeedCorpusRunsWithoutCrashing) {
  const std::vector<std::filesystem::path> files = InputsIn(DRIP_FUZZ_CORPUS_DIR);
  ASSERT_FALSE(files.empty()) << "no seed corpus in " << DRIP_FUZZ_CORPUS_DIR;
  for (const auto& file : files) Replay(file);
}

TEST(DRIP_FUZZER_SUITE, RegressionInputsRunWithoutCrashing) {
  // Crashers found by fuzzing, kept after their fix, and the inputs that once broke what
  // this target reaches by another path (docs/fuzzing.md, "Regressions"). Every target
  // has some: an empty directory means they were lost, not that there is nothing to run.
  const std::vector<std::filesystem::path> files = InputsIn(DRIP_FUZZ_REGRESSIONS_DIR);
  ASSERT_FALSE(files.empty()) << "no regression inputs in " << DRIP_FUZZ_REGRESSIONS_DIR;
  for (const auto& file : files) Replay(file);
}

}  // namespace
