#include "agent/heap/stack_unwinder.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/heap/dwfl_stack_unwinder.h"
#include "agent/heap/testing/sanitizer_runtime.h"
#include "agent/heap/testing/stack_capture.h"
#include "agent/heap/testing/unwind_chain.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace drip::agent {
namespace {

using ::drip::agent::testing::CaptureDeepStack;
using ::drip::agent::testing::CapturedStack;
using ::drip::agent::testing::Foo;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int kMaxFrames = 128;

std::unique_ptr<StackUnwinder> UnwinderForSelf() {
  absl::StatusOr<std::unique_ptr<StackUnwinder>> unwinder = StackUnwinder::ForProcess(getpid());
  EXPECT_TRUE(unwinder.ok()) << std::string(unwinder.status().message());
  return unwinder.ok() ? std::move(unwinder).value() : nullptr;
}

std::vector<StackFrame> SymbolizeAll(StackUnwinder& unwinder, const std::vector<uint64_t>& pcs) {
  std::vector<StackFrame> frames;
  for (size_t i = 0; i < pcs.size(); ++i) frames.push_back(unwinder.Symbolize(pcs[i], i > 0));
  return frames;
}

// The whole stack, for failure messages.
std::string Describe(const std::vector<StackFrame>& frames) {
  std::string text;
  for (size_t i = 0; i < frames.size(); ++i) {
    const StackFrame& f = frames[i];
    char line[64];
    snprintf(line, sizeof line, "\n  #%-2zu 0x%016llx ", i,
             static_cast<unsigned long long>(f.address));
    text += line + (f.function.empty() ? "??" : f.function) + " in " + f.module;
    if (!f.file.empty()) text += " at " + f.file + ":" + std::to_string(f.line);
  }
  return text;
}

int IndexOf(const std::vector<StackFrame>& frames, const std::string& function) {
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i].function == function) return static_cast<int>(i);
  }
  return -1;
}

std::vector<StackFrame> UnwindAndSymbolize(StackUnwinder& unwinder, const CapturedStack& captured) {
  absl::StatusOr<std::vector<uint64_t>> pcs = unwinder.Unwind(captured.AsUserStack(), kMaxFrames);
  EXPECT_TRUE(pcs.ok()) << std::string(pcs.status().message());
  if (!pcs.ok()) return {};
  EXPECT_FALSE(pcs->empty());
  if (!pcs->empty()) {
    EXPECT_EQ(pcs->front(), captured.regs[kRip]);
  }
  return SymbolizeAll(unwinder, *pcs);
}

std::string SelfExe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

TEST(StackUnwinderTest, UnwindsChainWithoutFramePointers) {
  CapturedStack captured;
  chain_level1(&captured);
  ASSERT_THAT(captured.bytes, Not(IsEmpty()));
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);

  std::vector<StackFrame> frames = UnwindAndSymbolize(*unwinder, captured);
  ASSERT_GE(frames.size(), 5u) << Describe(frames);
  EXPECT_EQ(frames[0].function, "chain_level3") << Describe(frames);
  EXPECT_EQ(frames[1].function, "chain_level2") << Describe(frames);
  EXPECT_EQ(frames[2].function, "chain_level1") << Describe(frames);
  EXPECT_THAT(frames[3].function,
              HasSubstr("StackUnwinderTest_UnwindsChainWithoutFramePointers_Test::TestBody()"))
      << Describe(frames);
  // And on through GoogleTest's own frames.
  EXPECT_THAT(frames[4].function, HasSubstr("testing::")) << Describe(frames);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(frames[i].module, SelfExe());
    EXPECT_THAT(frames[i].build_id, Not(IsEmpty()));
  }
}

TEST(StackUnwinderTest, ReportsFileAndLineFromDwarf) {
  CapturedStack captured;
  chain_level1(&captured);
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);

  std::vector<StackFrame> frames = UnwindAndSymbolize(*unwinder, captured);
  ASSERT_GE(frames.size(), 4u) << Describe(frames);
  EXPECT_THAT(frames[0].file, EndsWith("agent/heap/testing/unwind_chain.cc"));
  EXPECT_GT(frames[0].line, 0);
  // A return address is looked up at pc - 1: the line of the call, not the one after.
  EXPECT_THAT(frames[1].file, EndsWith("agent/heap/testing/unwind_chain.cc"));
  EXPECT_EQ(frames[1].line, drip::agent::testing::ChainLevel2CallLine()) << Describe(frames);
  EXPECT_THAT(frames[3].file, EndsWith("agent/heap/stack_unwinder_test.cc"));
}

TEST(StackUnwinderTest, ModuleOffsetIsTheElfAddressOfTheLookup) {
  CapturedStack captured;
  chain_qsort_caller(&captured);
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);
  absl::StatusOr<std::vector<uint64_t>> pcs = unwinder->Unwind(captured.AsUserStack(), kMaxFrames);
  ASSERT_TRUE(pcs.ok());

  // Both the executable (PIE) and libc have their first segment at ELF address 0, so the
  // load bias is the base dladdr reports.
  for (size_t i = 0; i < pcs->size() && i < 6; ++i) {
    const uint64_t pc = (*pcs)[i];
    const uint64_t lookup = i > 0 ? pc - 1 : pc;
    Dl_info info;
    ASSERT_NE(dladdr(reinterpret_cast<void*>(lookup), &info), 0);
    StackFrame frame = unwinder->Symbolize(pc, i > 0);
    EXPECT_EQ(frame.address, pc);
    EXPECT_EQ(frame.module_offset, lookup - reinterpret_cast<uint64_t>(info.dli_fbase))
        << frame.function << " in " << frame.module;
  }
}

TEST(StackUnwinderTest, UnwindsThroughLibcQsort) {
  if (testing::kSanitizerRuntimeInExecutable) GTEST_SKIP() << testing::kSanitizerRuntimeSkip;
  CapturedStack captured;
  chain_qsort_caller(&captured);
  ASSERT_THAT(captured.bytes, Not(IsEmpty()));
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);

  std::vector<StackFrame> frames = UnwindAndSymbolize(*unwinder, captured);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames[0].function, "chain_qsort_compare") << Describe(frames);
  const int caller = IndexOf(frames, "chain_qsort_caller");
  ASSERT_GE(caller, 2) << "glibc's frames between comparator and caller" << Describe(frames);
  bool named_sort = false;
  for (int i = 1; i < caller; ++i) {
    // Under ASan its qsort interceptor (libasan.so) sits between glibc and its callers.
    if (frames[i].module.find("/libasan.so") != std::string::npos) continue;
    EXPECT_THAT(frames[i].module, EndsWith("/libc.so.6")) << Describe(frames);
    EXPECT_THAT(frames[i].build_id, Not(IsEmpty()));
    // qsort_r from .dynsym; msort_with_tmp too when libc6-dbg's symbols are installed.
    named_sort = named_sort || frames[i].function.find("sort") != std::string::npos;
  }
  EXPECT_TRUE(named_sort) << Describe(frames);
  ASSERT_GT(frames.size(), static_cast<size_t>(caller + 1));
  EXPECT_THAT(frames[caller + 1].function,
              HasSubstr("StackUnwinderTest_UnwindsThroughLibcQsort_Test::TestBody()"))
      << Describe(frames);
}

TEST(StackUnwinderTest, DemanglesCppNames) {
  CapturedStack captured;
  Foo foo(&captured);
  foo.Bar(7);
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);

  std::vector<StackFrame> frames = UnwindAndSymbolize(*unwinder, captured);
  ASSERT_GE(frames.size(), 2u);
  EXPECT_EQ(frames[0].function, "drip::agent::testing::Foo::Bar(int)") << Describe(frames);
  EXPECT_EQ(frames[1].function,
            "drip::agent::(anonymous namespace)::StackUnwinderTest_DemanglesCppNames_Test::"
            "TestBody()")
      << Describe(frames);
}

// Code in no mapped file names nothing, and its raw pc would expose the target's layout:
// the frame keeps neither.
TEST(StackUnwinderTest, AddressInNoModuleIsUnknownWithoutTheAddress) {
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);
  constexpr uint64_t kUnmapped = 0x1000;  // below vm.mmap_min_addr: never mapped

  for (bool is_return_address : {false, true}) {
    StackFrame frame = unwinder->Symbolize(kUnmapped, is_return_address);
    EXPECT_EQ(frame.address, 0u);
    EXPECT_EQ(frame.function, kUnknownFunction);
    EXPECT_THAT(frame.module, IsEmpty());
    EXPECT_THAT(frame.build_id, IsEmpty());
    EXPECT_EQ(frame.module_offset, 0u);
    EXPECT_THAT(frame.file, IsEmpty());
    EXPECT_EQ(frame.line, 0);
  }

  // A pc in no module still is the first frame; nothing can be unwound from it.
  UserStack stack;
  stack.pid = stack.tid = getpid();
  stack.regs[kRip] = kUnmapped;
  absl::StatusOr<std::vector<uint64_t>> pcs = unwinder->Unwind(stack, kMaxFrames);
  ASSERT_TRUE(pcs.ok()) << std::string(pcs.status().message());
  EXPECT_EQ(*pcs, std::vector<uint64_t>{kUnmapped});
}

// Two files mapped back to back, then a gap: an address in the gap is in no module (libdw
// 0.188's own lookup would put it in the second file).
TEST(StackUnwinderTest, AddressAfterAdjacentModulesIsInNoModule) {
  const long page = sysconf(_SC_PAGESIZE);
  char* region =
      static_cast<char*>(mmap(nullptr, 3 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(region, MAP_FAILED);
  int first = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  int second = open(DRIP_UNWIND_TEST_PLUGIN, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  ASSERT_NE(mmap(region, page, PROT_READ, MAP_PRIVATE | MAP_FIXED, first, 0), MAP_FAILED);
  ASSERT_NE(mmap(region + page, page, PROT_READ, MAP_PRIVATE | MAP_FIXED, second, 0), MAP_FAILED);
  close(first);
  close(second);
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);

  const auto address = [&](int page_index) {
    return reinterpret_cast<uint64_t>(region) + page_index * page + 16;
  };
  EXPECT_EQ(unwinder->Symbolize(address(0), false).module, SelfExe());
  EXPECT_EQ(unwinder->Symbolize(address(1), false).module,
            std::filesystem::canonical(DRIP_UNWIND_TEST_PLUGIN).string());
  EXPECT_THAT(unwinder->Symbolize(address(2), false).module, IsEmpty());
  munmap(region, 3 * page);
}

TEST(StackUnwinderTest, RejectsAZeroPcAndNoFrames) {
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);
  UserStack stack;
  EXPECT_EQ(unwinder->Unwind(stack, kMaxFrames).status().code(),
            absl::StatusCode::kInvalidArgument);
  stack.regs[kRip] = reinterpret_cast<uint64_t>(&chain_level3);
  EXPECT_EQ(unwinder->Unwind(stack, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(StackUnwinderTest, StopsAtMaxFrames) {
  CapturedStack captured;
  chain_level1(&captured);
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);
  absl::StatusOr<std::vector<uint64_t>> all = unwinder->Unwind(captured.AsUserStack(), kMaxFrames);
  ASSERT_TRUE(all.ok());
  ASSERT_GE(all->size(), 4u);

  for (int max_frames : {1, 2, 3}) {
    absl::StatusOr<std::vector<uint64_t>> some =
        unwinder->Unwind(captured.AsUserStack(), max_frames);
    ASSERT_TRUE(some.ok());
    EXPECT_EQ(*some, std::vector<uint64_t>(all->begin(), all->begin() + max_frames));
  }
}

// Only the copy is read: a shorter copy gives a prefix of the stack and no error, as when
// the kernel side copies fewer bytes than the stack holds.
TEST(StackUnwinderTest, StopsWhereTheCopiedStackEnds) {
  CapturedStack captured;
  chain_level1(&captured);
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);
  absl::StatusOr<std::vector<uint64_t>> all = unwinder->Unwind(captured.AsUserStack(), kMaxFrames);
  ASSERT_TRUE(all.ok());

  size_t previous = 0;
  for (size_t bytes : {size_t{0}, size_t{8}, size_t{64}, size_t{512}, size_t{4096}}) {
    CapturedStack truncated = captured;
    truncated.bytes.resize(std::min(bytes, captured.bytes.size()));
    absl::StatusOr<std::vector<uint64_t>> some =
        unwinder->Unwind(truncated.AsUserStack(), kMaxFrames);
    ASSERT_TRUE(some.ok()) << bytes;
    ASSERT_FALSE(some->empty());
    ASSERT_LE(some->size(), all->size());
    EXPECT_EQ(*some, std::vector<uint64_t>(all->begin(), all->begin() + some->size())) << bytes;
    EXPECT_GE(some->size(), previous);
    previous = some->size();
  }
  CapturedStack empty = captured;
  empty.bytes.clear();
  absl::StatusOr<std::vector<uint64_t>> first = unwinder->Unwind(empty.AsUserStack(), kMaxFrames);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, std::vector<uint64_t>{captured.regs[kRip]});
}

TEST(StackUnwinderTest, SymbolizesTheVdso) {
  void* vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (vdso == nullptr) GTEST_SKIP() << "no vDSO in the link map";
  void* clock_gettime_fn = dlsym(vdso, "__vdso_clock_gettime");
  dlclose(vdso);
  if (clock_gettime_fn == nullptr) GTEST_SKIP() << "no __vdso_clock_gettime";
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);

  StackFrame frame = unwinder->Symbolize(reinterpret_cast<uint64_t>(clock_gettime_fn), false);
  EXPECT_EQ(frame.module, "[vdso]");
  EXPECT_THAT(frame.function, HasSubstr("clock_gettime"));
  EXPECT_THAT(frame.build_id, Not(IsEmpty()));
}

using PluginCall = int (*)(int (*)(CapturedStack*), CapturedStack*);

TEST(StackUnwinderTest, FindsModulesMappedAfterCreation) {
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);
  void* plugin = dlopen(DRIP_UNWIND_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(plugin, nullptr) << dlerror();
  auto call = reinterpret_cast<PluginCall>(dlsym(plugin, "drip_test_plugin_call"));
  ASSERT_NE(call, nullptr);
  CapturedStack captured;
  call(&chain_level1, &captured);

  std::vector<StackFrame> frames = UnwindAndSymbolize(*unwinder, captured);
  ASSERT_GE(frames.size(), 5u) << Describe(frames);
  EXPECT_EQ(frames[2].function, "chain_level1") << Describe(frames);
  EXPECT_EQ(frames[3].function, "drip_test_plugin_call") << Describe(frames);
  EXPECT_THAT(frames[3].module, EndsWith("libdrip_unwind_test_plugin.so"));
  EXPECT_THAT(frames[4].function, HasSubstr("FindsModulesMappedAfterCreation")) << Describe(frames);
  dlclose(plugin);
}

volatile uint64_t g_writable_word = 0x1122334455667788;

// Outside the copied stack only read-only file bytes are readable: code is, a writable
// global (whose file bytes may be stale) and live stack memory are not.
TEST(StackUnwinderTest, ReadsOnlyTheCopyAndReadOnlyFileBytes) {
  absl::StatusOr<std::unique_ptr<DwflStackUnwinder>> unwinder = DwflStackUnwinder::Create(getpid());
  ASSERT_TRUE(unwinder.ok());
  uint64_t value = 0;
  const auto code = reinterpret_cast<uint64_t>(&chain_level2);
  ASSERT_TRUE((*unwinder)->ReadWord(code, &value));
  uint64_t expected = 0;
  memcpy(&expected, reinterpret_cast<const void*>(code), sizeof expected);
  EXPECT_EQ(value, expected);
  EXPECT_FALSE((*unwinder)->ReadWord(reinterpret_cast<uint64_t>(&g_writable_word), &value));
  uint64_t local = 42;
  EXPECT_FALSE((*unwinder)->ReadWord(reinterpret_cast<uint64_t>(&local), &value));
  EXPECT_FALSE((*unwinder)->ReadWord(0x1000, &value));
}

// A JIT's code is in no module: its pcs must not each cost a re-read of the maps.
TEST(StackUnwinderTest, RereadsTheMapsForUnknownPcsAtMostOncePerSecond) {
  absl::StatusOr<std::unique_ptr<DwflStackUnwinder>> unwinder = DwflStackUnwinder::Create(getpid());
  ASSERT_TRUE(unwinder.ok());
  EXPECT_EQ((*unwinder)->refresh_count(), 0);
  (*unwinder)->Symbolize(0x1000, false);
  EXPECT_EQ((*unwinder)->refresh_count(), 1);
  (*unwinder)->Symbolize(0x2000, false);
  (*unwinder)->Symbolize(0x3000, true);
  EXPECT_EQ((*unwinder)->refresh_count(), 1);
  ASSERT_TRUE((*unwinder)->RefreshModules().ok());  // explicit: not rate-limited
  EXPECT_EQ((*unwinder)->refresh_count(), 2);
}

// Whether /proc/self/map_files can be opened here (CAP_SYS_ADMIN in the initial user
// namespace, which drip-agent has).
bool MapFilesReadable() {
  DIR* dir = opendir("/proc/self/map_files");
  if (dir == nullptr) return false;
  bool readable = false;
  while (struct dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    int fd = open(("/proc/self/map_files/" + std::string(entry->d_name)).c_str(), O_RDONLY);
    readable = fd >= 0;
    if (fd >= 0) close(fd);
    break;
  }
  closedir(dir);
  return readable;
}

TEST(StackUnwinderTest, SymbolizesAModuleDeletedSinceMapped) {
  if (!MapFilesReadable()) GTEST_SKIP() << "/proc/self/map_files is not readable here";
  char dir_template[] = "/tmp/drip_unwind_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::filesystem::path copy = std::filesystem::path(dir_template) / "libreplaced.so";
  std::filesystem::copy_file(DRIP_UNWIND_TEST_PLUGIN, copy);
  void* plugin = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(plugin, nullptr) << dlerror();
  std::filesystem::remove_all(dir_template);  // as a package upgrade replaces a library
  auto call = reinterpret_cast<PluginCall>(dlsym(plugin, "drip_test_plugin_call"));
  ASSERT_NE(call, nullptr);
  CapturedStack captured;
  call(&chain_level1, &captured);

  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);
  std::vector<StackFrame> frames = UnwindAndSymbolize(*unwinder, captured);
  ASSERT_GE(frames.size(), 5u) << Describe(frames);
  EXPECT_EQ(frames[3].function, "drip_test_plugin_call") << Describe(frames);
  EXPECT_EQ(frames[3].module, copy.string() + " (deleted)");
  EXPECT_THAT(frames[3].build_id, Not(IsEmpty()));
  EXPECT_THAT(frames[4].function, HasSubstr("SymbolizesAModuleDeletedSinceMapped"))
      << Describe(frames);
  dlclose(plugin);
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= n;
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= n;
  }
  return true;
}

// The real use: another process's stack, unwound from outside while it runs on.
TEST(StackUnwinderTest, UnwindsAnotherProcess) {
  int to_parent[2];
  int to_child[2];
  ASSERT_EQ(pipe(to_parent), 0);
  ASSERT_EQ(pipe(to_child), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(to_parent[0]);
    close(to_child[1]);
    CapturedStack captured;
    chain_level1(&captured);
    const uint64_t size = captured.bytes.size();
    bool ok = WriteAll(to_parent[1], captured.regs.data(), sizeof captured.regs) &&
              WriteAll(to_parent[1], &size, sizeof size) &&
              WriteAll(to_parent[1], captured.bytes.data(), size);
    char done;
    ok = ok && read(to_child[0], &done, 1) >= 0;  // until the parent has unwound
    _exit(ok ? 0 : 1);
  }
  close(to_parent[1]);
  close(to_child[0]);
  CapturedStack captured;
  uint64_t size = 0;
  ASSERT_TRUE(ReadAll(to_parent[0], captured.regs.data(), sizeof captured.regs));
  ASSERT_TRUE(ReadAll(to_parent[0], &size, sizeof size));
  captured.bytes.resize(size);
  ASSERT_TRUE(ReadAll(to_parent[0], captured.bytes.data(), size));
  captured.pid = captured.tid = child;

  absl::StatusOr<std::unique_ptr<StackUnwinder>> unwinder = StackUnwinder::ForProcess(child);
  ASSERT_TRUE(unwinder.ok()) << std::string(unwinder.status().message());
  std::vector<StackFrame> frames = UnwindAndSymbolize(**unwinder, captured);
  close(to_child[1]);
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);

  ASSERT_GE(frames.size(), 4u) << Describe(frames);
  EXPECT_EQ(frames[0].function, "chain_level3");
  EXPECT_EQ(frames[2].function, "chain_level1");
  EXPECT_THAT(frames[3].function, HasSubstr("UnwindsAnotherProcess")) << Describe(frames);
}

TEST(StackUnwinderTest, FailsForAMissingProcess) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);  // reaped: the pid names no process now
  absl::StatusOr<std::unique_ptr<StackUnwinder>> unwinder = StackUnwinder::ForProcess(child);
  EXPECT_EQ(unwinder.status().code(), absl::StatusCode::kNotFound)
      << std::string(unwinder.status().message());
  EXPECT_EQ(StackUnwinder::ForProcess(0).status().code(), absl::StatusCode::kInvalidArgument);
}

// Through frames of libstdc++.so (std::ostream) and libc.so.6 (pthread_once) amid
// template code of this binary, all without frame pointers.
TEST(StackUnwinderTest, UnwindsADeepStackThroughLibstdcxxAndLibc) {
  if (testing::kSanitizerRuntimeInExecutable) GTEST_SKIP() << testing::kSanitizerRuntimeSkip;
  CapturedStack captured;
  CaptureDeepStack(10, &captured);
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);

  std::vector<StackFrame> frames = UnwindAndSymbolize(*unwinder, captured);
  ASSERT_GE(frames.size(), 40u) << Describe(frames);
  EXPECT_THAT(frames[0].function, HasSubstr("CaptureInComparator")) << Describe(frames);
  int libstdcxx_frames = 0;
  int libc_frames = 0;
  int invokes = 0;
  for (const StackFrame& frame : frames) {
    libstdcxx_frames += frame.module.find("/libstdc++.so.6") != std::string::npos;
    libc_frames += frame.module.ends_with("/libc.so.6");
    invokes += frame.function.starts_with("std::_Function_handler<void (int)");
  }
  EXPECT_GE(libstdcxx_frames, 1) << Describe(frames);
  EXPECT_GE(libc_frames, 1) << Describe(frames);
  EXPECT_EQ(invokes, 10) << Describe(frames);
  EXPECT_NE(IndexOf(frames,
                    "drip::agent::(anonymous namespace)::"
                    "StackUnwinderTest_UnwindsADeepStackThroughLibstdcxxAndLibc_Test::"
                    "TestBody()"),
            -1)
      << Describe(frames);
}

using Module = DwflStackUnwinder::MappedModule;

TEST(ModulesFromMapsTest, OneModulePerLoadedFileAndTheVdso) {
  const std::vector<Module> modules = DwflStackUnwinder::ModulesFromMaps(
      "55d0c0a00000-55d0c0a20000 r--p 00000000 fe:00 100  /usr/bin/app\n"
      "55d0c0a20000-55d0c0a80000 r-xp 00020000 fe:00 100  /usr/bin/app\n"
      "55d0c0a80000-55d0c0a90000 r--p 00080000 fe:00 100  /usr/bin/app\n"
      "55d0c0a90000-55d0c0a92000 rw-p 00090000 fe:00 100  /usr/bin/app\n"
      "55d0c0a92000-55d0c0a99000 rw-p 00000000 00:00 0 \n"
      "55d0c2000000-55d0c2100000 rw-p 00000000 00:00 0    [heap]\n"
      "7f0000000000-7f0000001000 r--p 00000000 fe:00 200  /usr/lib/libc.so.6\n"
      "7f0000001000-7f0000002000 r-xp 00001000 fe:00 200  /usr/lib/libc.so.6\n"
      "7f0000002000-7f0000003000 ---p 00002000 fe:00 200  /usr/lib/libc.so.6\n"
      "7f0000003000-7f0000004000 rw-p 00002000 fe:00 200  /usr/lib/libc.so.6\n"
      "7f0000004000-7f0000005000 rw-p 00000000 00:00 0 \n"
      "7f0000005000-7f0000006000 r-xp 00000000 00:1f 300  /tmp/my lib.so (deleted)\n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0    [stack]\n"
      "7ffd00100000-7ffd00104000 r--p 00000000 00:00 0    [vvar]\n"
      "7ffd00104000-7ffd00106000 r-xp 00000000 00:00 0    [vdso]\n");
  EXPECT_EQ(modules, (std::vector<Module>{
                         {"/usr/bin/app", 0x55d0c0a00000, 0x55d0c0a92000},
                         {"/usr/lib/libc.so.6", 0x7f0000000000, 0x7f0000004000},
                         {"/tmp/my lib.so (deleted)", 0x7f0000005000, 0x7f0000006000},
                         {"[vdso]", 0x7ffd00104000, 0x7ffd00106000},
                     }));
}

// A file mapped again elsewhere (libdw's own mmap when a process unwinds itself) is a
// module of its own, even right next to the loaded one, never an extension of it.
TEST(ModulesFromMapsTest, AnotherMappingOfTheSameFileIsAnotherModule) {
  const std::vector<Module> modules = DwflStackUnwinder::ModulesFromMaps(
      "55d0c0a00000-55d0c0a20000 r--p 00000000 fe:00 100  /usr/bin/app\n"
      "55d0c0a20000-55d0c0a80000 r-xp 00020000 fe:00 100  /usr/bin/app\n"
      "55d0c2000000-55d0c2100000 rw-p 00000000 00:00 0    [heap]\n"
      "7eff00000000-7eff00100000 r--p 00000000 fe:00 100  /usr/bin/app\n"
      "7eff00100000-7eff00101000 r--p 00000000 fe:00 200  /usr/lib/libc.so.6\n"
      "7eff00101000-7eff00102000 r-xp 00001000 fe:00 200  /usr/lib/libc.so.6\n"
      "7eff00102000-7eff00103000 r--p 00000000 fe:00 200  /usr/lib/libc.so.6\n");
  EXPECT_EQ(modules, (std::vector<Module>{
                         {"/usr/bin/app", 0x55d0c0a00000, 0x55d0c0a80000},
                         {"/usr/bin/app", 0x7eff00000000, 0x7eff00100000},
                         {"/usr/lib/libc.so.6", 0x7eff00100000, 0x7eff00102000},
                         {"/usr/lib/libc.so.6", 0x7eff00102000, 0x7eff00103000},
                     }));
}

// lld starts each segment at the next byte of the file rather than the next page, so
// every segment of a library smaller than a page apiece is mapped from offset 0 (here
// the layout of the test plugin linked with -fuse-ld=lld): still one module.
TEST(ModulesFromMapsTest, SegmentsOfALibraryLinkedByLldAllAtOffsetZeroAreOneModule) {
  const std::vector<Module> modules = DwflStackUnwinder::ModulesFromMaps(
      "7f1000000000-7f1000001000 r--p 00000000 fe:00 400  /opt/lib/plugin.so\n"
      "7f1000001000-7f1000002000 r-xp 00000000 fe:00 400  /opt/lib/plugin.so\n"
      "7f1000002000-7f1000003000 r--p 00000000 fe:00 400  /opt/lib/plugin.so\n"
      "7f1000003000-7f1000004000 rw-p 00000000 fe:00 400  /opt/lib/plugin.so\n"
      "7f1000004000-7f1000005000 r--p 00000000 fe:00 200  /usr/lib/libc.so.6\n"
      "7f1000005000-7f1000006000 r-xp 00001000 fe:00 200  /usr/lib/libc.so.6\n");
  EXPECT_EQ(modules, (std::vector<Module>{
                         {"/opt/lib/plugin.so", 0x7f1000000000, 0x7f1000004000},
                         {"/usr/lib/libc.so.6", 0x7f1000004000, 0x7f1000006000},
                     }));
}

double MicrosSince(std::chrono::steady_clock::time_point start, int count) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
             .count() /
         count;
}

// One Dwfl serves every sample: after the first unwind has loaded the modules' CFI, each
// further one costs only the CFI walk. Prints figures; asserts only identical results.
TEST(StackUnwinderTest, ReusesStateAcrossManyUnwinds) {
  if (testing::kSanitizerRuntimeInExecutable) GTEST_SKIP() << testing::kSanitizerRuntimeSkip;
  constexpr int kUnwinds = 10'000;
  CapturedStack captured;
  CaptureDeepStack(10, &captured);

  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<StackUnwinder> unwinder = UnwinderForSelf();
  ASSERT_NE(unwinder, nullptr);
  const double create_us = MicrosSince(start, 1);

  start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<uint64_t>> first =
      unwinder->Unwind(captured.AsUserStack(), kMaxFrames);
  const double first_us = MicrosSince(start, 1);
  ASSERT_TRUE(first.ok());
  ASSERT_GE(first->size(), 40u);

  start = std::chrono::steady_clock::now();
  for (int i = 0; i < kUnwinds; ++i) {
    absl::StatusOr<std::vector<uint64_t>> pcs =
        unwinder->Unwind(captured.AsUserStack(), kMaxFrames);
    ASSERT_TRUE(pcs.ok());
    ASSERT_EQ(*pcs, *first);
  }
  const double unwind_us = MicrosSince(start, kUnwinds);

  start = std::chrono::steady_clock::now();
  std::vector<StackFrame> frames = SymbolizeAll(*unwinder, *first);
  const double cold_us = MicrosSince(start, static_cast<int>(first->size()));
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) SymbolizeAll(*unwinder, *first);
  const double warm_us = MicrosSince(start, 100 * static_cast<int>(first->size()));
  EXPECT_THAT(frames[0].function, HasSubstr("CaptureInComparator")) << Describe(frames);

  printf(
      "[ timing ] ForProcess %.0f us; %zu-frame stack: first Unwind %.0f us, then "
      "%.2f us per Unwind (%d runs); Symbolize %.1f us per pc cold, %.3f us cached\n",
      create_us, first->size(), first_us, unwind_us, kUnwinds, cold_us, warm_us);
}

}  // namespace
}  // namespace drip::agent
