#include "agent/testing/fake_proc_tree.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "fmt/format.h"

namespace drip::agent::testing {

FakeProcTree::FakeProcTree() {
  std::string pattern = (std::filesystem::temp_directory_path() / "drip-fake-proc-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = pattern;
  WriteFile("stat", fmt::format("cpu  1 2 3 4 5 6 7 8 9 10\nintr 0\nctxt 1\nbtime {}\n"
                                "processes 100\nprocs_running 1\n",
                                kBootTime));
  WriteFile("meminfo", "MemTotal:        8048576 kB\nMemFree:          123456 kB\n");
  MakeDir("self");
  MakeDir("sys");  // not a PID: must be ignored
}

FakeProcTree::~FakeProcTree() {
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

void FakeProcTree::MakeDir(const std::string& relative_path) {
  std::filesystem::create_directories(std::filesystem::path(root_) / relative_path);
}

void FakeProcTree::WriteFile(const std::string& relative_path, const std::string& content) {
  std::filesystem::path path = std::filesystem::path(root_) / relative_path;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::trunc);
  out << content;
}

void FakeProcTree::AddProcess(const Process& p) {
  const std::string dir = std::to_string(p.pid);
  std::string status =
      fmt::format("Name:\t{}\nUmask:\t0022\nState:\t{} (sleeping)\nTgid:\t{}\nPid:\t{}\n",
                  p.comm.substr(0, 15), p.state, p.pid, p.pid);
  if (p.anon_kb) {
    status += fmt::format(
        "VmPeak:\t   10000 kB\nVmSize:\t   10000 kB\nVmRSS:\t{:>8} kB\nRssAnon:\t{:>8} kB\n"
        "RssFile:\t{:>8} kB\nRssShmem:\t{:>8} kB\nVmSwap:\t{:>8} kB\n",
        *p.anon_kb + p.file_kb + p.shmem_kb, *p.anon_kb, p.file_kb, p.shmem_kb, p.swap_kb);
  }
  status += "Threads:\t1\n";
  WriteFile(dir + "/status", status);
  // Fields 3..52 of proc(5); utime 14, stime 15, starttime 22.
  WriteFile(dir + "/stat",
            fmt::format("{} ({}) {} 1 {} {} 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 {} 10240000 "
                        "250 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 "
                        "0 0 0 0\n",
                        p.pid, p.comm, p.state, p.pid, p.pid, p.start_ticks));
  WriteFile(dir + "/cgroup", p.cgroup);
  if (!p.exe.empty()) {
    std::filesystem::create_symlink(p.exe, std::filesystem::path(root_) / dir / "exe");
  }
}

}  // namespace drip::agent::testing
