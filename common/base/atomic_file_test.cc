#include "common/base/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace drip {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  AtomicFileTest() {
    char pattern[] = "/tmp/drip-atomic-file-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  ~AtomicFileTest() override { std::filesystem::remove_all(dir_); }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  size_t FilesInDir() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir_),
                                             std::filesystem::directory_iterator()));
  }

  std::string dir_;
};

TEST_F(AtomicFileTest, CommitReplacesTheOldContentsAndLeavesNoTemporaryFile) {
  const std::string path = dir_ + "/report.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new\n").ok());
  EXPECT_EQ(Read(path), "new\n");
  EXPECT_EQ(FilesInDir(), 1u);
}

TEST_F(AtomicFileTest, AbandonedWriteKeepsTheOldFileAndRemovesItsTemporary) {
  const std::string path = dir_ + "/report.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old\n").ok());
  {
    absl::StatusOr<AtomicFile> file = AtomicFile::Create(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(FilesInDir(), 2u);  // the old file and the temporary one beside it
  }
  EXPECT_EQ(Read(path), "old\n");
  EXPECT_EQ(FilesInDir(), 1u);
}

TEST_F(AtomicFileTest, MissingDirectoryFailsAtCreateNamingThePath) {
  const std::string path = dir_ + "/no/such/dir/report.json";
  absl::StatusOr<AtomicFile> file = AtomicFile::Create(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find(path), std::string::npos) << file.status();
}

TEST_F(AtomicFileTest, MovedFileCommitsOnceAndTheMovedFromOneOwnsNothing) {
  const std::string path = dir_ + "/ready";
  absl::StatusOr<AtomicFile> file = AtomicFile::Create(path);
  ASSERT_TRUE(file.ok());
  AtomicFile moved = std::move(*file);
  ASSERT_TRUE(moved.Commit("{}\n").ok());
  EXPECT_FALSE(moved.Commit("again").ok());
  EXPECT_EQ(Read(path), "{}\n");
}

}  // namespace
}  // namespace drip
