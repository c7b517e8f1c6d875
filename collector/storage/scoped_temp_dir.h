// ScopedTempDir: a fresh directory under testing::TempDir() for one test's store,
// removed with everything in it when the test ends. Test-only.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace drip::collector {

class ScopedTempDir {
 public:
  ScopedTempDir() {
    std::string pattern = testing::TempDir() + "drip-storage-XXXXXX";
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp " << pattern;
    path_ = pattern;
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace drip::collector
