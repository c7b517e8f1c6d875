#include "agent/heap/dwfl_stack_unwinder.h"

#include <cxxabi.h>
#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "agent/proc_files.h"
#include "agent/proc_maps.h"
#include "common/base/status_macros.h"

namespace drip::agent {
namespace {

// A pc outside every module re-reads /proc/PID/maps (a dlopen since the last read), but at
// most this often: a JIT's code is in no module, and each of its pcs must not cost a
// re-read. The first implied re-read is never delayed.
constexpr int64_t kMinImpliedRefreshIntervalNs = 1'000'000'000;

constexpr std::string_view kDeletedSuffix = " (deleted)";

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string DwflError() { return dwfl_errmsg(-1); }

std::string FunctionName(const char* symbol) {
  // .symtab names of versioned symbols carry their version ("__libc_start_main@@GLIBC_2.34"),
  // which would keep "malloc@@GLIBC_2.2.5" from matching "malloc".
  std::string name(symbol, strcspn(symbol, "@"));
  // Only Itanium C++ names; C symbols ("qsort") pass through unchanged.
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  free(demangled);
  return result;
}

bool IsRegularFile(const char* path, struct stat* st) {
  return stat(path, st) == 0 && S_ISREG(st->st_mode);
}

}  // namespace

DwflStackUnwinder::DwflStackUnwinder(int pid, std::string proc_root)
    : pid_(pid), proc_root_(std::move(proc_root)) {}

DwflStackUnwinder::~DwflStackUnwinder() {
  // First: the [vdso] module's Elf points into vdso_image_, the process's Ebl into
  // machine_elf_.
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
  if (machine_elf_ != nullptr) elf_end(machine_elf_);
}

std::vector<DwflStackUnwinder::MappedModule> DwflStackUnwinder::ModulesFromMaps(
    std::string_view maps) {
  std::vector<MappedModule> modules;
  // The run being built: its file, and where its last mapping (file or bridging
  // anonymous one) ends.
  bool in_run = false;
  unsigned run_major = 0;
  unsigned run_minor = 0;
  uint64_t run_inode = 0;
  uint64_t run_end = 0;
  uint64_t run_offset = 0;  // file offset of the run's last file mapping
  for (const MapsEntry& entry : ParseProcMaps(maps)) {
    const uint64_t start = entry.start;
    const uint64_t end = entry.end;
    const std::string_view path = entry.path;
    if (path == "[vdso]") {
      modules.push_back({"[vdso]", start, end});
      in_run = false;
    } else if (path.starts_with("/") && entry.inode != 0) {
      // The loader maps a file's segments in order, so their offsets never go back. They
      // can stay at 0: lld starts each segment at the next byte of the file, not the next
      // page, so every segment of a small library is mapped from offset 0.
      if (in_run && start == run_end && entry.offset >= run_offset && entry.inode == run_inode &&
          entry.dev_major == run_major && entry.dev_minor == run_minor &&
          modules.back().name == path) {
        modules.back().high = end;
      } else {
        modules.push_back({std::string(path), start, end});
        in_run = true;
        run_major = entry.dev_major;
        run_minor = entry.dev_minor;
        run_inode = entry.inode;
      }
      run_end = end;
      run_offset = entry.offset;
    } else if (in_run && start == run_end) {
      run_end = end;  // .bss, or a gap between segments: the module may go on after it
    } else {
      in_run = false;
    }
  }
  return modules;
}

absl::StatusOr<std::unique_ptr<DwflStackUnwinder>> DwflStackUnwinder::Create(
    int pid, const std::string& proc_root) {
  if (pid <= 0) return absl::InvalidArgumentError(absl::StrCat("bad pid ", pid));
  std::unique_ptr<DwflStackUnwinder> unwinder(new DwflStackUnwinder(pid, proc_root));
  absl::Status status = unwinder->Init();
  if (!status.ok()) return status;
  return unwinder;
}

absl::Status DwflStackUnwinder::Init() {
  // Separate debug files are found by build-id, then .gnu_debuglink, under libdwfl's
  // default path ":.debug:/usr/lib/debug".
  static const Dwfl_Callbacks callbacks = {
      .find_elf = &DwflStackUnwinder::FindElf,
      .find_debuginfo = dwfl_standard_find_debuginfo,
      .section_address = dwfl_offline_section_address,
      .debuginfo_path = nullptr,
  };
  dwfl_ = dwfl_begin(&callbacks);
  if (dwfl_ == nullptr) return absl::InternalError("dwfl_begin: " + DwflError());

  // libdwfl would otherwise borrow the backend of the first module it can open, and keep
  // using it after that module is unmapped and dropped by a re-read of the maps.
  Elf64_Ehdr header{};
  memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_CORE;
  header.e_machine = EM_X86_64;
  header.e_version = EV_CURRENT;
  header.e_ehsize = sizeof header;
  static_assert(sizeof header == sizeof machine_header_);
  memcpy(machine_header_.data(), &header, sizeof header);
  machine_elf_ = elf_memory(machine_header_.data(), machine_header_.size());
  if (machine_elf_ == nullptr) {
    return absl::InternalError(absl::StrCat("elf_memory: ", elf_errmsg(-1)));
  }

  absl::Status status = RefreshModules();
  if (!status.ok()) return status;
  refresh_count_ = 0;
  last_refresh_ns_ = 0;

  static const Dwfl_Thread_Callbacks thread_callbacks = {
      .next_thread = &DwflStackUnwinder::NextThread,
      .get_thread = &DwflStackUnwinder::GetThread,
      .memory_read = &DwflStackUnwinder::MemoryRead,
      .set_initial_registers = &DwflStackUnwinder::SetInitialRegisters,
      .detach = nullptr,
      .thread_detach = nullptr,
  };
  if (!dwfl_attach_state(dwfl_, machine_elf_, pid_, &thread_callbacks, this)) {
    return absl::InternalError(absl::StrCat("dwfl_attach_state: ", DwflError()));
  }
  return absl::OkStatus();
}

absl::Status DwflStackUnwinder::RefreshModules() {
  std::string maps;
  if (absl::Status read = ReadProcFile(absl::StrCat(proc_root_, "/", pid_, "/maps"), &maps);
      !read.ok()) {
    return WithContext(read, absl::StrCat("pid ", pid_));
  }
  // Modules reported again with the same name and range keep their opened files.
  dwfl_report_begin(dwfl_);
  for (const MappedModule& module : ModulesFromMaps(maps)) {
    // NULL only when out of memory or overlapping a module reported before: skipped.
    dwfl_report_module(dwfl_, module.name.c_str(), module.low, module.high);
  }
  if (dwfl_report_end(dwfl_, nullptr, nullptr) != 0) {
    return absl::InternalError(absl::StrCat("pid ", pid_, ": dwfl_report_end: ", DwflError()));
  }
  TagModules();
  // A module can have been unmapped and another mapped at its addresses: every cached
  // frame may be stale. Re-symbolizing is cheap, the modules' parsed ELF/DWARF are kept.
  symbol_cache_.clear();
  compile_units_.clear();
  ++refresh_count_;
  last_refresh_ns_ = SteadyNowNs();
  return absl::OkStatus();
}

void DwflStackUnwinder::TagModules() {
  dwfl_getmodules(
      dwfl_,
      [](Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, void* arg) -> int {
        if (*userdata == nullptr) *userdata = arg;
        return DWARF_CB_OK;
      },
      this, 0);
}

Dwfl_Module* DwflStackUnwinder::ModuleAt(uint64_t address) const {
  // libdwfl 0.188 leaves out the end of a module that starts where the one below it ends
  // (no end marker in its lookup table), so addresses above such a module, up to the next
  // one, are reported in it: a library dlopened into that gap would be taken for it.
  Dwfl_Module* mod = dwfl_addrmodule(dwfl_, address);
  if (mod == nullptr) return nullptr;
  Dwarf_Addr low = 0;
  Dwarf_Addr high = 0;
  dwfl_module_info(mod, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
  return address >= low && address < high ? mod : nullptr;
}

bool DwflStackUnwinder::MaybeRefreshFor(uint64_t address) {
  if (address == 0 || ModuleAt(address) != nullptr) return false;
  if (last_refresh_ns_ != 0 && SteadyNowNs() - last_refresh_ns_ < kMinImpliedRefreshIntervalNs) {
    return false;
  }
  absl::Status status = RefreshModules();
  if (!status.ok()) {
    // The process is likely gone; the caller keeps the raw address. Not retried sooner.
    last_refresh_ns_ = SteadyNowNs();
    return false;
  }
  return ModuleAt(address) != nullptr;
}

absl::StatusOr<std::vector<uint64_t>> DwflStackUnwinder::Unwind(const UserStack& stack,
                                                                int max_frames) {
  if (max_frames < 1) return absl::InvalidArgumentError("max_frames must be at least 1");
  const uint64_t rip = stack.regs[kRip];
  if (rip == 0) return absl::InvalidArgumentError("pc is 0");
  MaybeRefreshFor(rip);

  std::vector<uint64_t> frames;
  frames.reserve(max_frames);
  const pid_t tid = stack.tid > 0 ? stack.tid : pid_;
  for (int attempt = 0; attempt < 2; ++attempt) {
    frames.clear();
    current_ = &stack;
    frames_ = &frames;
    max_frames_ = max_frames;
    // The result is not looked at: -1 is the usual outcome, unwinding stopping with an
    // error where the copied stack ends (the next return address was not copied), and the
    // frames gathered up to there are the result; 0 means the outermost frame (_start,
    // clone) said "no caller".
    dwfl_getthread_frames(dwfl_, tid, &DwflStackUnwinder::CollectFrame, this);
    current_ = nullptr;
    frames_ = nullptr;
    if (frames.empty()) {
      return absl::InternalError(absl::StrCat("tid ", tid, ": unwind: ", DwflError()));
    }
    // A caller in a module mapped since the last maps read (dlopen) had no CFI: the walk
    // stopped there, or went on from rbp and may have skipped frames. Re-read the maps
    // once and unwind again.
    if (attempt > 0 || !MaybeRefreshFor(FirstCallerInNoModule(frames))) break;
  }
  // libdwfl's first frame is the initial pc; spelled out because callers rely on it.
  if (frames.front() != rip) frames.insert(frames.begin(), rip);
  return frames;
}

uint64_t DwflStackUnwinder::FirstCallerInNoModule(const std::vector<uint64_t>& frames) const {
  for (size_t i = 1; i < frames.size(); ++i) {
    if (ModuleAt(frames[i] - 1) == nullptr) return frames[i] - 1;
  }
  return 0;
}

int DwflStackUnwinder::CollectFrame(Dwfl_Frame* frame, void* arg) {
  auto* self = static_cast<DwflStackUnwinder*>(arg);
  Dwarf_Addr pc = 0;
  bool is_activation = false;
  if (!dwfl_frame_pc(frame, &pc, &is_activation) || pc == 0) return DWARF_CB_ABORT;
  self->frames_->push_back(pc);
  return static_cast<int>(self->frames_->size()) >= self->max_frames_ ? DWARF_CB_ABORT
                                                                      : DWARF_CB_OK;
}

pid_t DwflStackUnwinder::NextThread(Dwfl*, void* arg, void** thread_arg) {
  // One thread only: the sample being unwound.
  if (*thread_arg != nullptr) return 0;
  auto* self = static_cast<DwflStackUnwinder*>(arg);
  if (self->current_ == nullptr) return 0;
  *thread_arg = arg;
  return self->current_->tid > 0 ? self->current_->tid : self->pid_;
}

bool DwflStackUnwinder::GetThread(Dwfl*, pid_t, void* arg, void** thread_arg) {
  // Whatever tid is asked for, the registers are the current sample's.
  *thread_arg = arg;
  return static_cast<DwflStackUnwinder*>(arg)->current_ != nullptr;
}

bool DwflStackUnwinder::SetInitialRegisters(Dwfl_Thread* thread, void* thread_arg) {
  auto* self = static_cast<DwflStackUnwinder*>(thread_arg);
  static_assert(sizeof(Dwarf_Word) == sizeof(uint64_t));
  // DWARF numbering 0..16 is x86_64's unwind register set, rip (16) being the return
  // address column, so the initial pc is regs[kRip].
  return dwfl_thread_state_registers(
      thread, 0, kDwarfRegCount, reinterpret_cast<const Dwarf_Word*>(self->current_->regs.data()));
}

bool DwflStackUnwinder::MemoryRead(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  uint64_t value = 0;
  if (!static_cast<DwflStackUnwinder*>(arg)->ReadWord(addr, &value)) return false;
  *result = value;
  return true;
}

bool DwflStackUnwinder::ReadWord(uint64_t address, uint64_t* value) {
  if (current_ != nullptr) {
    const uint64_t sp = current_->regs[kRsp];
    const std::span<const uint8_t> stack = current_->stack;
    if (address >= sp && stack.size() >= sizeof(uint64_t) &&
        address - sp <= stack.size() - sizeof(uint64_t)) {
      memcpy(value, stack.data() + (address - sp), sizeof(uint64_t));
      return true;
    }
  }
  // Not on the copied stack: only what the mapped file says, and only in its read-only
  // segments (code, .rodata, .eh_frame), whose bytes in memory are the file's. Writable
  // segments' file bytes are their initial values, which the process may have changed.
  Dwfl_Module* mod = ModuleAt(address);
  if (mod == nullptr) return false;
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  if (elf == nullptr) return false;
  size_t raw_size = 0;
  const char* raw = elf_rawfile(elf, &raw_size);
  size_t phnum = 0;
  if (raw == nullptr || elf_getphdrnum(elf, &phnum) != 0) return false;
  const uint64_t vaddr = address - bias;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) continue;
    if (phdr.p_type != PT_LOAD || (phdr.p_flags & PF_W) != 0) continue;
    if (vaddr < phdr.p_vaddr || phdr.p_filesz < sizeof(uint64_t) ||
        vaddr - phdr.p_vaddr > phdr.p_filesz - sizeof(uint64_t)) {
      continue;
    }
    const uint64_t offset = phdr.p_offset + (vaddr - phdr.p_vaddr);
    if (offset > raw_size || raw_size - offset < sizeof(uint64_t)) return false;
    memcpy(value, raw + offset, sizeof(uint64_t));
    return true;
  }
  return false;
}

StackFrame DwflStackUnwinder::Symbolize(uint64_t pc, bool is_return_address) {
  const std::pair<uint64_t, bool> key(pc, is_return_address);
  if (auto it = symbol_cache_.find(key); it != symbol_cache_.end()) return it->second;
  // A return address points after the call; pc - 1 is inside the call instruction, in
  // the caller's function and line even when the call is the function's last instruction.
  const uint64_t lookup = is_return_address && pc > 0 ? pc - 1 : pc;
  // May clear the cache (a re-read of the maps), so before the result is inserted.
  MaybeRefreshFor(lookup);
  StackFrame frame = SymbolizeUncached(pc, lookup);
  symbol_cache_.emplace(key, frame);
  return frame;
}

StackFrame DwflStackUnwinder::SymbolizeUncached(uint64_t pc, uint64_t lookup) {
  StackFrame frame;
  Dwfl_Module* mod = ModuleAt(lookup);
  if (mod == nullptr) {
    // JIT code, anonymous memory, or garbage: the raw pc names nothing a reader can look
    // up, and would tell anyone who reads the snapshot where the target's memory lies.
    frame.function = std::string(kUnknownFunction);
    return frame;
  }
  frame.address = pc;

  Dwarf_Addr low = 0;
  const char* name =
      dwfl_module_info(mod, nullptr, &low, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (name != nullptr) frame.module = name;

  Dwarf_Addr bias = 0;
  if (dwfl_module_getelf(mod, &bias) != nullptr) {
    // The ELF virtual address of the looked-up instruction: what `addr2line -e module`
    // and the module's symbol table use (the absolute address for a non-PIE executable).
    frame.module_offset = lookup - bias;
    const unsigned char* build_id = nullptr;
    GElf_Addr build_id_vaddr = 0;
    int length = dwfl_module_build_id(mod, &build_id, &build_id_vaddr);
    if (length > 0)
      frame.build_id = absl::BytesToHexString(
          absl::string_view(reinterpret_cast<const char*>(build_id), static_cast<size_t>(length)));
  } else {
    // The file could not be opened (gone, or not readable): the offset into the mapping,
    // which is the ELF address for the usual layout whose first segment is at 0.
    frame.module_offset = lookup - low;
  }

  GElf_Off symbol_offset = 0;
  GElf_Sym symbol;
  const char* symbol_name =
      dwfl_module_addrinfo(mod, lookup, &symbol_offset, &symbol, nullptr, nullptr, nullptr);
  if (symbol_name != nullptr) frame.function = FunctionName(symbol_name);

  if (Dwfl_Line* line = dwfl_module_getsrc(mod, lookup); line != nullptr) {
    int line_number = 0;
    const char* file = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr);
    if (file != nullptr) {
      frame.file = file;
      frame.line = line_number;
    }
  } else {
    LineFromCompileUnits(mod, lookup, &frame);
  }
  return frame;
}

bool DwflStackUnwinder::LineFromCompileUnits(Dwfl_Module* mod, uint64_t lookup, StackFrame* frame) {
  Dwarf_Addr bias = 0;
  Dwarf* dwarf = dwfl_module_getdwarf(mod, &bias);
  if (dwarf == nullptr) return false;
  auto [it, inserted] = compile_units_.try_emplace(mod);
  std::vector<CompileUnitRange>& units = it->second;
  if (inserted) {
    Dwarf_Off offset = 0;
    Dwarf_Off next = 0;
    size_t header_size = 0;
    while (dwarf_nextcu(dwarf, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die cu;
      if (dwarf_offdie(dwarf, offset + header_size, &cu) != nullptr) {
        Dwarf_Addr base = 0;
        Dwarf_Addr low = 0;
        Dwarf_Addr high = 0;
        for (ptrdiff_t at = 0; (at = dwarf_ranges(&cu, at, &base, &low, &high)) > 0;) {
          if (low < high) units.push_back({low, high, offset + header_size});
        }
      }
      offset = next;
    }
    std::sort(units.begin(), units.end(),
              [](const CompileUnitRange& a, const CompileUnitRange& b) { return a.low < b.low; });
  }
  const uint64_t address = lookup - bias;
  auto after =
      std::upper_bound(units.begin(), units.end(), address,
                       [](uint64_t a, const CompileUnitRange& unit) { return a < unit.low; });
  if (after == units.begin()) return false;
  const CompileUnitRange& unit = *std::prev(after);
  if (address >= unit.high) return false;
  Dwarf_Die cu;
  if (dwarf_offdie(dwarf, unit.die_offset, &cu) == nullptr) return false;
  Dwarf_Line* line = dwarf_getsrc_die(&cu, address);
  if (line == nullptr) return false;
  const char* file = dwarf_linesrc(line, nullptr, nullptr);
  int line_number = 0;
  if (file == nullptr || dwarf_lineno(line, &line_number) != 0) return false;
  frame->file = file;
  frame->line = line_number;
  return true;
}

int DwflStackUnwinder::FindElf(Dwfl_Module* mod, void** userdata, const char* module_name,
                               Dwarf_Addr, char** file_name, Elf** elfp) {
  // Unlike dwfl_linux_proc_find_elf, which reads the [vdso] and deleted files from
  // /proc/PID/mem: the agent never reads the target's memory.
  auto* self = static_cast<DwflStackUnwinder*>(*userdata);
  if (self == nullptr) return -1;
  const std::string_view name(module_name);
  if (name == "[vdso]") {
    *elfp = self->VdsoElf();
    return -1;
  }
  if (!name.starts_with("/")) return -1;
  Dwarf_Addr low = 0;
  dwfl_module_info(mod, nullptr, &low, nullptr, nullptr, nullptr, nullptr, nullptr);
  return self->OpenModuleFile(module_name, low, file_name);
}

int DwflStackUnwinder::OpenModuleFile(const char* module_name, uint64_t low, char** file_name) {
  std::string_view name(module_name);
  std::string opened;
  struct stat plain_st;
  struct stat root_st;
  if (name.ends_with(kDeletedSuffix)) {
    // Replaced or removed since it was mapped (a package upgrade): the mapped file itself
    // is still reachable through map_files (needs CAP_SYS_ADMIN, which the agent has).
    opened = MapFilesPath(low);
    if (opened.empty() || !IsRegularFile(opened.c_str(), &root_st)) return -1;
  } else {
    // The target may live in another mount namespace: its root is /proc/PID/root. The
    // plain path is preferred when it is the same file, for .gnu_debuglink lookups that
    // are relative to the file's directory.
    const std::string root_path = absl::StrCat(proc_root_, "/", pid_, "/root", module_name);
    const bool plain_ok = IsRegularFile(module_name, &plain_st);
    const bool root_ok = IsRegularFile(root_path.c_str(), &root_st);
    if (plain_ok &&
        (!root_ok || (plain_st.st_dev == root_st.st_dev && plain_st.st_ino == root_st.st_ino))) {
      opened = module_name;
    } else if (root_ok) {
      opened = root_path;
    } else {
      return -1;
    }
  }
  // O_NONBLOCK, and the type checked again on what was opened: the path may have been
  // swapped for a FIFO since the stat above, and opening a FIFO would block the snapshot
  // thread for as long as nobody writes to it.
  int fd = open(opened.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat opened_st;
  if (fstat(fd, &opened_st) != 0 || !S_ISREG(opened_st.st_mode)) {
    close(fd);
    return -1;
  }
  *file_name = strdup(opened.c_str());
  if (*file_name == nullptr) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string DwflStackUnwinder::MapFilesPath(uint64_t low) const {
  // The module starts at its first mapping, whose map_files entry is "start-end".
  const std::string dir_path = absl::StrCat(proc_root_, "/", pid_, "/map_files");
  DIR* dir = opendir(dir_path.c_str());
  if (dir == nullptr) return "";
  std::string path;
  while (struct dirent* entry = readdir(dir)) {
    uint64_t start = 0;
    if (sscanf(entry->d_name, "%" SCNx64 "-", &start) == 1 && start == low) {
      path = absl::StrCat(dir_path, "/", entry->d_name);
      break;
    }
  }
  closedir(dir);
  return path;
}

Elf* DwflStackUnwinder::VdsoElf() {
  // Every x86_64 process on a kernel maps the same vDSO image, so this process's copy is
  // the target's: no need to read the target's memory.
  if (vdso_image_.empty()) {
    const uint64_t base = getauxval(AT_SYSINFO_EHDR);
    std::string maps;
    if (base == 0 || !ReadProcFile("/proc/self/maps", &maps).ok()) return nullptr;
    for (const MappedModule& module : ModulesFromMaps(maps)) {
      if (module.name != "[vdso]" || module.low != base) continue;
      const char* image = reinterpret_cast<const char*>(base);
      vdso_image_.assign(image, image + (module.high - module.low));
    }
    if (vdso_image_.empty()) return nullptr;
  }
  return elf_memory(vdso_image_.data(), vdso_image_.size());
}

}  // namespace drip::agent
