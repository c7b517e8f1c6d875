// DwflStackUnwinder: the StackUnwinder behind StackUnwinder::ForProcess, on elfutils'
// libdwfl. One Dwfl per target process, kept for the whole snapshot: the module list,
// opened ELF files, parsed .eh_frame / DWARF and symbol tables are loaded once, lazily,
// and every sample reuses them (perf's unwind-libdw.c builds a Dwfl per sample instead).
//
// libdwfl's unwinder sees the target only through the callbacks in the .cc: the one
// "thread" is the UserStack being unwound, memory is that stack's copy plus the read-only
// segments of the mapped ELF files. The live target's memory is never read; the vDSO is
// taken from this process's own copy (same kernel, same image).
//
// Not thread-safe (see StackUnwinder).
#pragma once

#include <elfutils/libdwfl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/heap/stack_unwinder.h"
#include "agent/heap/user_stack.h"
#include "common/base/heap_snapshot.h"

namespace drip::agent {

class DwflStackUnwinder final : public StackUnwinder {
 public:
  // `proc_root` is where PID directories live ("/proc", or another mount in tests).
  static absl::StatusOr<std::unique_ptr<DwflStackUnwinder>> Create(
      int pid, const std::string& proc_root = "/proc");
  ~DwflStackUnwinder() override;

  DwflStackUnwinder(const DwflStackUnwinder&) = delete;
  DwflStackUnwinder& operator=(const DwflStackUnwinder&) = delete;

  absl::StatusOr<std::vector<uint64_t>> Unwind(const UserStack& stack, int max_frames) override;
  StackFrame Symbolize(uint64_t pc, bool is_return_address) override;
  absl::Status RefreshModules() override;

  // How many times the module list was re-read (RefreshModules, explicit or implied).
  int refresh_count() const { return refresh_count_; }

  // A file (or the vDSO, "[vdso]") mapped in the target, as libdwfl is told about it.
  struct MappedModule {
    std::string name;
    uint64_t low = 0;
    uint64_t high = 0;
    bool operator==(const MappedModule&) const = default;
  };
  // The modules of a /proc/PID/maps text. A module is a run of contiguous mappings of one
  // file, anonymous ones (.bss, gaps) allowed in between, at file offsets that never go
  // back: a mapping at a lower offset than the one before starts a new module. libdwfl's own parser
  // extends a module over any later mapping of the same file, which merges the loaded executable
  // with another mmap of it (libdw's own when a process unwinds itself, a symbolizer's in the
  // target) and moves its bias.
  static std::vector<MappedModule> ModulesFromMaps(std::string_view maps);

  // What unwinding sees of the target's memory: the current sample's copied stack, else
  // the bytes of a mapped file's read-only segments; false for anything else. Public for
  // tests.
  bool ReadWord(uint64_t address, uint64_t* value);

 private:
  DwflStackUnwinder(int pid, std::string proc_root);

  absl::Status Init();
  // The module whose mapped range holds `address`, or null.
  Dwfl_Module* ModuleAt(uint64_t address) const;
  // Re-reads the maps when `address` (not 0) is in no module and the last re-read is old
  // enough; true when the address is in a module after the re-read.
  bool MaybeRefreshFor(uint64_t address);
  // The lookup address (pc - 1) of the first caller frame in no module; 0 when none.
  uint64_t FirstCallerInNoModule(const std::vector<uint64_t>& frames) const;
  // Hands every module not seen yet a pointer to this unwinder (read by FindElf).
  void TagModules();
  StackFrame SymbolizeUncached(uint64_t pc, uint64_t lookup);
  // The source line of `lookup` in `mod` found through the compile units' own address
  // ranges, for modules without .debug_aranges (clang emits none unless asked), where
  // Debian 12's libdw (0.188) finds no line; false when none holds it.
  bool LineFromCompileUnits(Dwfl_Module* mod, uint64_t lookup, StackFrame* frame);

  // Dwfl_Callbacks and Dwfl_Thread_Callbacks.
  static int FindElf(Dwfl_Module* mod, void** userdata, const char* module_name, Dwarf_Addr base,
                     char** file_name, Elf** elfp);
  static pid_t NextThread(Dwfl* dwfl, void* arg, void** thread_arg);
  static bool GetThread(Dwfl* dwfl, pid_t tid, void* arg, void** thread_arg);
  static bool MemoryRead(Dwfl* dwfl, Dwarf_Addr addr, Dwarf_Word* result, void* arg);
  static bool SetInitialRegisters(Dwfl_Thread* thread, void* thread_arg);
  static int CollectFrame(Dwfl_Frame* frame, void* arg);

  // Opens a mapped file the way the target sees it; an fd, or -1 (the module keeps no ELF).
  int OpenModuleFile(const char* module_name, uint64_t low, char** file_name);
  std::string MapFilesPath(uint64_t low) const;
  Elf* VdsoElf();

  const int pid_;
  const std::string proc_root_;
  Dwfl* dwfl_ = nullptr;
  // This process's vDSO image, which libdwfl reads the target's [vdso] module from, and
  // an ELF header that only names the machine (x86_64) for dwfl_attach_state. Both must
  // outlive the Elf made on them, so they are freed after dwfl_end.
  std::vector<char> vdso_image_;
  std::array<char, 64> machine_header_{};
  Elf* machine_elf_ = nullptr;

  // The sample being unwound, valid during Unwind only.
  const UserStack* current_ = nullptr;
  std::vector<uint64_t>* frames_ = nullptr;
  int max_frames_ = 0;

  int refresh_count_ = 0;
  int64_t last_refresh_ns_ = 0;
  absl::flat_hash_map<std::pair<uint64_t, bool>, StackFrame> symbol_cache_;
  // Per module, its compile units' address ranges (module-relative), built on the first
  // lookup that needs them; emptied with the modules on a re-read of the maps.
  struct CompileUnitRange {
    uint64_t low = 0;
    uint64_t high = 0;
    uint64_t die_offset = 0;
  };
  absl::flat_hash_map<Dwfl_Module*, std::vector<CompileUnitRange>> compile_units_;
};

}  // namespace drip::agent
