#include "agent/heap/elf_function_index.h"

#include <gelf.h>

#include <string>
#include <utility>
#include <vector>

#include "agent/elf_file.h"

namespace drip::agent {
namespace {

struct LoadSegment {
  uint64_t vaddr;
  uint64_t memsz;
  uint64_t offset;
};

}  // namespace

absl::StatusOr<ElfFunctionIndex> ElfFunctionIndex::Read(const std::string& path) {
  absl::StatusOr<ElfFile> file = ElfFile::Open(path);
  if (!file.ok()) return file.status();
  Elf* elf = file->elf();
  // uprobes are placed by file offset, symbols are given as virtual addresses: the
  // PT_LOAD segment holding a symbol converts one into the other.
  std::vector<LoadSegment> segments;
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) continue;
      if (phdr.p_type == PT_LOAD) segments.push_back({phdr.p_vaddr, phdr.p_memsz, phdr.p_offset});
    }
  }
  ElfFunctionIndex index;
  // lld writes a hidden global (glibc's malloc in a static link) as a LOCAL symbol with
  // hidden visibility, where ld.bfd keeps it GLOBAL: still the program's one definition,
  // but one that a true global of the same name overrides.
  std::vector<std::pair<std::string, uint64_t>> localized;
  Elf_Scn* section = nullptr;
  while ((section = elf_nextscn(elf, section)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(section, &shdr) == nullptr) continue;
    if (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0) continue;
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      const int type = GELF_ST_TYPE(sym.st_info);
      const int binding = GELF_ST_BIND(sym.st_info);
      const bool hidden_local = binding == STB_LOCAL && shdr.sh_type == SHT_SYMTAB &&
                                GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN;
      if (binding != STB_GLOBAL && binding != STB_WEAK && !hidden_local) continue;
      // An import is an undefined FUNC, or NOTYPE as some linkers leave it.
      const bool import = shdr.sh_type == SHT_DYNSYM && sym.st_shndx == SHN_UNDEF &&
                          (type == STT_FUNC || type == STT_NOTYPE);
      // An IFUNC symbol is a resolver, not the function: probing it would miss every call.
      if (!import && (type != STT_FUNC || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)) {
        continue;
      }
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name == nullptr || *name == '\0') continue;
      std::string bare(name);
      if (size_t at = bare.find('@'); at != std::string::npos) bare.resize(at);
      if (import) {
        index.imports_.insert(std::move(bare));
        continue;
      }
      for (const LoadSegment& seg : segments) {
        if (sym.st_value >= seg.vaddr && sym.st_value < seg.vaddr + seg.memsz) {
          const uint64_t offset = sym.st_value - seg.vaddr + seg.offset;
          if (hidden_local) {
            localized.emplace_back(std::move(bare), offset);
          } else {
            index.offsets_.try_emplace(std::move(bare), offset);
          }
          break;
        }
      }
    }
  }
  for (auto& [name, offset] : localized) index.offsets_.try_emplace(std::move(name), offset);
  return index;
}

std::optional<uint64_t> ElfFunctionIndex::FunctionOffset(const std::string& name) const {
  auto it = offsets_.find(name);
  if (it == offsets_.end()) return std::nullopt;
  return it->second;
}

}  // namespace drip::agent
