#include "agent/proc_maps.h"

#include <gtest/gtest.h>

#include <string>

#include "agent/proc_files.h"

namespace drip::agent {
namespace {

TEST(ProcMapsTest, ParsesFileAnonymousAndPseudoMappings) {
  const std::string text =
      "55d0c0a00000-55d0c0a21000 r-xp 00002000 fd:01 1835021                    /usr/bin/cat\n"
      "55d0c0a21000-55d0c0a22000 rw-p 00000000 00:00 0\n"
      "7ffd1e5f2000-7ffd1e5f4000 r-xp 00000000 00:00 0                          [vdso]\n"
      "7f1b2c000000-7f1b2c021000 r--p 00000000 08:02 42   /tmp/lib.so (deleted)\n";
  const std::vector<MapsEntry> entries = ParseProcMaps(text);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].start, 0x55d0c0a00000u);
  EXPECT_EQ(entries[0].end, 0x55d0c0a21000u);
  EXPECT_EQ(entries[0].perms, "r-xp");
  EXPECT_EQ(entries[0].offset, 0x2000u);
  EXPECT_EQ(entries[0].dev_major, 0xfdu);
  EXPECT_EQ(entries[0].dev_minor, 1u);
  EXPECT_EQ(entries[0].inode, 1835021u);
  EXPECT_EQ(entries[0].path, "/usr/bin/cat");
  EXPECT_EQ(entries[1].path, "");
  EXPECT_EQ(entries[2].path, "[vdso]");
  EXPECT_EQ(entries[3].path, "/tmp/lib.so (deleted)");  // spaces in a path are kept
}

TEST(ProcMapsTest, LinesThatDoNotParseAreSkipped) {
  const std::vector<MapsEntry> entries = ParseProcMaps(
      "garbage\n"
      "1000-2000 r-xp 00000000 00:00 0 /bin/x\n"
      "3000-2000 r-xp 00000000 00:00 0 /bin/backwards\n"
      "4000-5000 r-x");  // cut off mid-line, as a read racing a change can be
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].path, "/bin/x");
}

TEST(ProcMapsTest, OwnMapsHoldThisFunction) {
  std::string text;
  ASSERT_TRUE(ReadProcFile("/proc/self/maps", &text).ok());
  const auto address = reinterpret_cast<uint64_t>(&ParseProcMaps);
  bool found = false;
  for (const MapsEntry& e : ParseProcMaps(text)) {
    found |= address >= e.start && address < e.end && e.perms.find('x') != std::string::npos;
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace drip::agent
