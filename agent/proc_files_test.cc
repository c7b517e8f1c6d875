#include "agent/proc_files.h"

#include <gtest/gtest.h>

namespace drip::agent {
namespace {

TEST(ProcFilesTest, StatCommMayContainSpacesAndParentheses) {
  auto stat = ParseProcStat(
      "4242 (my (odd) proc) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 "
      "123456 10240000 250 18446744073709551615\n");
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->comm, "my (odd) proc) name");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->utime_ticks, 7u);
  EXPECT_EQ(stat->stime_ticks, 3u);
  EXPECT_EQ(stat->start_ticks, 123456u);
}

TEST(ProcFilesTest, TruncatedStatIsAnError) {
  EXPECT_FALSE(ParseProcStat("4242 (x) S 1 2 3").ok());
  EXPECT_FALSE(ParseProcStat("4242 no comm here").ok());
  EXPECT_FALSE(ParseProcStat("").ok());
}

TEST(ProcFilesTest, StatusFiguresAreConvertedFromKilobytes) {
  auto status = ParseProcStatus(
      "Name:\tnginx\nVmRSS:\t    3000 kB\nRssAnon:\t    1000 kB\nRssFile:\t    1500 kB\n"
      "RssShmem:\t     500 kB\nVmSwap:\t      12 kB\nThreads:\t4\n");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_TRUE(status->has_mm);
  EXPECT_EQ(status->anon_rss_bytes, 1000u * 1024);
  EXPECT_EQ(status->file_rss_bytes, 1500u * 1024);
  EXPECT_EQ(status->shmem_rss_bytes, 500u * 1024);
  EXPECT_EQ(status->swap_bytes, 12u * 1024);
}

TEST(ProcFilesTest, KernelThreadStatusHasNoMm) {
  auto status =
      ParseProcStatus("Name:\tkthreadd\nUmask:\t0000\nState:\tS (sleeping)\nThreads:\t1\n");
  ASSERT_TRUE(status.ok());
  EXPECT_FALSE(status->has_mm);
}

TEST(ProcFilesTest, MalformedStatusLineIsAnErrorNamingIt) {
  auto status = ParseProcStatus("RssAnon:\tlots kB\n");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.status().message().find("RssAnon"), std::string::npos);
}

TEST(ProcFilesTest, CgroupV2LineIsPreferred) {
  EXPECT_EQ(CgroupPathFromFile("0::/system.slice/nginx.service\n"), "/system.slice/nginx.service");
  EXPECT_EQ(CgroupPathFromFile("12:name=systemd:/system.slice/old.service\n"
                               "0::/system.slice/nginx.service\n"),
            "/system.slice/nginx.service");
}

TEST(ProcFilesTest, CgroupV1FallsBackToNameSystemd) {
  EXPECT_EQ(CgroupPathFromFile("12:memory:/system.slice/nginx.service\n"
                               "1:name=systemd:/system.slice/nginx.service\n"),
            "/system.slice/nginx.service");
  // Hybrid: cgroup2 mounted but unused by systemd leaves everyone at "0::/".
  EXPECT_EQ(CgroupPathFromFile("1:name=systemd:/system.slice/cron.service\n0::/\n"),
            "/system.slice/cron.service");
  EXPECT_EQ(CgroupPathFromFile("9:name=systemd:/\n4:memory:/x\n0::/\n"), "/");
  EXPECT_EQ(CgroupPathFromFile("4:memory:/x\n"), "");
  EXPECT_EQ(CgroupPathFromFile(""), "");
}

TEST(ProcFilesTest, CgroupPathMayContainColons) {
  EXPECT_EQ(CgroupPathFromFile("0::/machine.slice/a:b.scope\n"), "/machine.slice/a:b.scope");
}

TEST(ProcFilesTest, BootTimeAndMemTotal) {
  auto btime = ParseBootTime("cpu  1 2 3\nbtime 1700000000\nprocesses 5\n");
  ASSERT_TRUE(btime.ok());
  EXPECT_EQ(*btime, 1'700'000'000);
  EXPECT_FALSE(ParseBootTime("cpu 1 2 3\n").ok());
  auto total = ParseMemTotal("MemTotal:       16384 kB\nMemFree:  1 kB\n");
  ASSERT_TRUE(total.ok());
  EXPECT_EQ(*total, 16384u * 1024);
  EXPECT_FALSE(ParseMemTotal("MemFree: 1 kB\n").ok());
}

TEST(ProcFilesTest, MissingFileIsNotFoundNamingThePath) {
  std::string text;
  absl::Status status = ReadProcFile("/proc/nonexistent-drip/status", &text);
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
  EXPECT_NE(status.message().find("/proc/nonexistent-drip/status"), std::string::npos);
}

TEST(ProcFilesTest, ReadsWholeProcFiles) {
  std::string text;
  ASSERT_TRUE(ReadProcFile("/proc/self/status", &text).ok());
  EXPECT_NE(text.find("RssAnon:"), std::string::npos);
}

}  // namespace
}  // namespace drip::agent
