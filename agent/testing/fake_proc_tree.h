// FakeProcTree: a procfs look-alike in a temporary directory, for ProcSampler and
// ComponentNamer tests. Files hold what the kernel would write; the tree is removed on
// destruction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace drip::agent::testing {

class FakeProcTree {
 public:
  static constexpr int64_t kBootTime = 1'700'000'000;  // btime in the fake /proc/stat

  struct Process {
    int pid = 0;
    std::string comm = "sleep";
    char state = 'S';
    uint64_t start_ticks = 0;
    // nullopt writes a status without memory lines, like a kernel thread's.
    std::optional<uint64_t> anon_kb = 0;
    uint64_t file_kb = 0;
    uint64_t shmem_kb = 0;
    uint64_t swap_kb = 0;
    std::string cgroup = "0::/\n";  // the whole /proc/PID/cgroup file
    std::string exe;                // target of the exe link; "" for none
  };

  FakeProcTree();
  ~FakeProcTree();
  FakeProcTree(const FakeProcTree&) = delete;
  FakeProcTree& operator=(const FakeProcTree&) = delete;

  const std::string& root() const { return root_; }

  void AddProcess(const Process& process);
  // Writes `content` to root/relative_path, creating directories.
  void WriteFile(const std::string& relative_path, const std::string& content);
  void MakeDir(const std::string& relative_path);

 private:
  std::string root_;
};

}  // namespace drip::agent::testing
