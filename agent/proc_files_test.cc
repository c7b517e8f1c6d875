#include "agent/proc_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "agent/instance_check.h"
#include "common/base/process_instance.h"

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
  auto total = ParseMeminfoBytes("MemTotal:       16384 kB\nMemFree:  1 kB\n", "MemTotal");
  ASSERT_TRUE(total.ok());
  EXPECT_EQ(*total, 16384u * 1024);
  EXPECT_FALSE(ParseMeminfoBytes("MemFree: 1 kB\n", "MemTotal").ok());
}

// The kernel's btime moves with a step of the wall clock: instances are named by the boot
// time first read, and the check before a command acts compares with that same one, so a
// clock step (a VM's clock caught up under load did 12 s in a CI run) is not taken for a
// restarted process.
TEST(ProcFilesTest, AStepOfTheWallClockRenamesNoInstanceAndFailsNoCheck) {
  const std::string root =
      ::testing::TempDir() + "/drip-proc-clock-step-" + std::to_string(getpid());
  ASSERT_EQ(std::filesystem::create_directories(root + "/4242"), true);
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  };
  write(root + "/stat", "cpu  1 2 3\nbtime 1700000000\n");
  std::string stat = "4242 (leaky) S";
  for (int field = 4; field <= 52; ++field) stat += field == 22 ? " 0" : " 1";
  write(root + "/4242/stat", stat + "\n");
  auto first = StableBootTime(root);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, 1'700'000'000);
  const std::string instance = FormatProcessInstance(4242, *first);
  EXPECT_EQ(CheckProcessInstance(root, 4242, instance, InstanceCheck::kStrict), "");

  write(root + "/stat", "cpu  1 2 3\nbtime 1700000012\n");  // the wall clock stepped
  EXPECT_EQ(*StableBootTime(root), 1'700'000'000);
  EXPECT_EQ(CheckProcessInstance(root, 4242, instance, InstanceCheck::kStrict), "");
  // A process that really started later is still another instance.
  EXPECT_NE(CheckProcessInstance(root, 4242, FormatProcessInstance(4242, *first - 60),
                                 InstanceCheck::kStrict)
                .find("is not instance"),
            std::string::npos);
  EXPECT_EQ(StableBootTime(root + "-missing").status().code(), absl::StatusCode::kNotFound);
  std::filesystem::remove_all(root);
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
