#include "agent/elf_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace drip::agent {
namespace {

TEST(ElfFileTest, OpensARegularElfFile) {
  absl::StatusOr<ElfFile> file = ElfFile::Open("/proc/self/exe");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_NE(file->elf(), nullptr);
}

// A mapped path that an unprivileged process swapped for a FIFO must not block the root
// agent's snapshot thread (an open for reading waits for a writer), and a device is not
// read as a file.
TEST(ElfFileTest, AFifoOrADeviceIsRefusedWithoutBlocking) {
  char dir_template[] = "/tmp/drip-elf-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string fifo = std::string(dir_template) + "/lib.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<ElfFile> from_fifo = ElfFile::Open(fifo);
  EXPECT_EQ(from_fifo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(from_fifo.status().message().find("not a regular file"), std::string::npos)
      << from_fifo.status();
  unlink(fifo.c_str());
  rmdir(dir_template);
  EXPECT_EQ(ElfFile::Open("/dev/zero").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace drip::agent
