#include "agent/heap/shim_sampling_control.h"

#include <gelf.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>

#include "agent/elf_file.h"
#include "agent/proc_files.h"
#include "agent/proc_maps.h"
#include "agent/sampler_shim/drip_sampler.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

constexpr const char* kSymbol = "drip_sampler_control";

struct SymbolPlace {
  uint64_t value = 0;      // st_value: the object's address before relocation
  uint64_t min_vaddr = 0;  // of the file's PT_LOAD segments, page-aligned
};

absl::StatusOr<SymbolPlace> FindSymbol(const std::string& path) {
  absl::StatusOr<ElfFile> file = ElfFile::Open(path);
  if (!file.ok()) return file.status();
  Elf* elf = file->elf();
  SymbolPlace place;
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) {
    return absl::InvalidArgumentError(fmt::format("{}: no program headers", path));
  }
  place.min_vaddr = std::numeric_limits<uint64_t>::max();
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD) {
      place.min_vaddr = std::min<uint64_t>(place.min_vaddr, ph.p_vaddr & ~uint64_t{0xfff});
    }
  }
  if (place.min_vaddr == std::numeric_limits<uint64_t>::max()) {
    return absl::InvalidArgumentError(fmt::format("{}: no loadable segment", path));
  }
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0) {
      continue;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    const size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      if (GELF_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF ||
          sym.st_size != sizeof(drip_sampler_control)) {
        continue;
      }
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name != nullptr && std::strcmp(name, kSymbol) == 0) {
        place.value = sym.st_value;
        return place;
      }
    }
  }
  return absl::NotFoundError(
      fmt::format("{}: no {} (a shim from before Drip could ask for another T)", path, kSymbol));
}

absl::Status Transfer(int pid, uint64_t address, void* local, size_t size, bool write) {
  iovec here{local, size};
  iovec there{reinterpret_cast<void*>(address), size};
  const ssize_t done = write ? process_vm_writev(pid, &here, 1, &there, 1, 0)
                             : process_vm_readv(pid, &here, 1, &there, 1, 0);
  if (done != static_cast<ssize_t>(size)) {
    return absl::UnavailableError(fmt::format("process {}: cannot {} its shim's {}: {}", pid,
                                              write ? "write" : "read", kSymbol,
                                              done < 0 ? std::strerror(errno) : "short transfer"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ShimSamplingControl> ShimSamplingControl::Find(int pid, const std::string& proc_root,
                                                              const std::string& shim_path) {
  absl::StatusOr<SymbolPlace> place = FindSymbol(shim_path);
  if (!place.ok()) return place.status();
  // The shim's file as the target mapped it: its base is the mapping of file offset 0.
  const std::string prefix = fmt::format("{}/{}/root", proc_root, pid);
  const std::string mapped =
      shim_path.rfind(prefix, 0) == 0 ? shim_path.substr(prefix.size()) : shim_path;
  std::string maps;
  if (absl::Status s = ReadProcFile(fmt::format("{}/{}/maps", proc_root, pid), &maps); !s.ok()) {
    return s;
  }
  for (const MapsEntry& m : ParseProcMaps(maps)) {
    if (m.path != mapped || m.offset != 0) continue;
    ShimSamplingControl control(pid, m.start - place->min_vaddr + place->value);
    if (absl::Status s = control.CheckMagic(); !s.ok()) return s;
    return control;
  }
  return absl::NotFoundError(fmt::format("process {}: {} is not mapped", pid, mapped));
}

absl::Status ShimSamplingControl::CheckMagic() const {
  uint64_t magic = 0;
  if (absl::Status s = Transfer(pid_, address_, &magic, sizeof(magic), false); !s.ok()) return s;
  if (magic != DRIP_SAMPLER_CONTROL_MAGIC) {
    return absl::FailedPreconditionError(fmt::format(
        "process {}: the shim's {} does not carry its magic; left alone", pid_, kSymbol));
  }
  return absl::OkStatus();
}

absl::Status ShimSamplingControl::Request(uint64_t mean_bytes) const {
  if (absl::Status s = CheckMagic(); !s.ok()) return s;
  return Transfer(pid_, address_ + offsetof(struct drip_sampler_control, requested_mean_bytes),
                  &mean_bytes, sizeof(mean_bytes), true);
}

absl::StatusOr<uint64_t> ShimSamplingControl::Requested() const {
  uint64_t value = 0;
  if (absl::Status s =
          Transfer(pid_, address_ + offsetof(struct drip_sampler_control, requested_mean_bytes),
                   &value, sizeof(value), false);
      !s.ok()) {
    return s;
  }
  return value;
}

}  // namespace drip::agent
