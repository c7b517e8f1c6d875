#include "agent/instance_version_reader.h"

#include <gelf.h>
#include <sys/stat.h>

#include <cstring>

#include "absl/hash/hash.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "agent/component_namer.h"
#include "agent/elf_file.h"
#include "agent/proc_files.h"
#include "common/base/process_instance.h"
#include "common/rpc/sample_figures.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

// Executables seen by a host over a day are few; the bound only keeps a host that
// builds and runs new binaries all day (a CI runner) from growing the cache forever.
constexpr size_t kMaxCachedBuildIds = 4096;

// The GNU build-id note in the segment of [offset, offset + size), or "".
std::string BuildIdInNotes(Elf* elf, const GElf_Phdr& phdr) {
  Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz,
                                        phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
  if (data == nullptr) return "";
  size_t offset = 0;
  GElf_Nhdr note;
  size_t name_offset = 0;
  size_t desc_offset = 0;
  while (offset < data->d_size &&
         (offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
    const char* base = static_cast<const char*>(data->d_buf);
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
        std::memcmp(base + name_offset, "GNU", 4) == 0 && note.n_descsz > 0) {
      return absl::BytesToHexString(absl::string_view(base + desc_offset, note.n_descsz));
    }
  }
  return "";
}

// service.version=... in OTEL_RESOURCE_ATTRIBUTES ("key1=value1,key2=value2").
std::string OtelServiceVersion(std::string_view attributes) {
  for (absl::string_view pair :
       absl::StrSplit(absl::string_view(attributes.data(), attributes.size()), ',')) {
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    absl::string_view key = pair.substr(0, eq);
    while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
    while (!key.empty() && key.back() == ' ') key.remove_suffix(1);
    if (key == "service.version") return std::string(pair.substr(eq + 1));
  }
  return "";
}

}  // namespace

InstanceVersionReader::InstanceVersionReader(std::string proc_root)
    : proc_root_(std::move(proc_root)) {}

absl::StatusOr<std::string> InstanceVersionReader::ReadBuildId(const std::string& path) {
  absl::StatusOr<ElfFile> file = ElfFile::Open(path);
  if (!file.ok()) return file.status();
  Elf* elf = file->elf();
  std::string build_id;
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum && build_id.empty(); ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) continue;
      if (phdr.p_type == PT_NOTE) build_id = BuildIdInNotes(elf, phdr);
    }
  }
  return build_id;
}

std::string InstanceVersionReader::VersionLabelFromEnviron(std::string_view environ) {
  std::string label;
  std::string otel;
  for (absl::string_view entry :
       absl::StrSplit(absl::string_view(environ.data(), environ.size()), '\0')) {
    if (absl::ConsumePrefix(&entry, "DRIP_VERSION=")) {
      label = std::string(entry);
    } else if (absl::ConsumePrefix(&entry, "OTEL_RESOURCE_ATTRIBUTES=")) {
      otel = OtelServiceVersion(std::string_view(entry.data(), entry.size()));
    }
  }
  if (label.empty()) label = std::move(otel);
  if (label.size() > kMaxLabelBytes) label.resize(kMaxLabelBytes);
  return ComponentNamer::ToValidUtf8(label);
}

bool InstanceVersionReader::ReadVersion(int pid, drip::v1::InstanceVersion* version) {
  const std::string exe = fmt::format("{}/{}/exe", proc_root_, pid);
  struct stat st {};
  if (stat(exe.c_str(), &st) == 0) {
    const FileIdentity identity{
        static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
        static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
    if (auto it = build_ids_.find(identity); it != build_ids_.end()) {
      version->set_build_id(it->second);
    } else if (absl::StatusOr<std::string> id = ReadBuildId(exe); id.ok()) {
      if (build_ids_.size() >= kMaxCachedBuildIds) build_ids_.clear();
      build_ids_.emplace(identity, *id);
      version->set_build_id(*id);
    }
  }
  std::string environ;
  if (ReadProcFile(fmt::format("{}/{}/environ", proc_root_, pid), &environ).ok()) {
    version->set_label(VersionLabelFromEnviron(environ));
  }
  return !version->build_id().empty() || !version->label().empty();
}

std::vector<std::pair<size_t, drip::v1::InstanceVersion>> InstanceVersionReader::NewInstances(
    const std::vector<drip::v1::Sample>& samples) {
  std::vector<std::pair<size_t, drip::v1::InstanceVersion>> found;
  absl::flat_hash_set<uint64_t> seen;
  seen.reserve(samples.size());
  // Each unit's largest process of the pass: what its cgroup instance runs.
  absl::flat_hash_map<std::string, std::pair<uint64_t, int>> largest_process;
  for (const drip::v1::Sample& sample : samples) {
    if (sample.memory_case() != drip::v1::Sample::kProcess) continue;
    const int pid = PidOfInstance(sample.instance());
    if (pid <= 0) continue;
    const uint64_t bytes = UnreclaimableBytes(sample);
    auto [it, inserted] = largest_process.try_emplace(sample.component(), bytes, pid);
    if (!inserted && bytes > it->second.first) it->second = {bytes, pid};
  }
  for (size_t i = 0; i < samples.size(); ++i) {
    const drip::v1::Sample& sample = samples[i];
    int pid = 0;
    if (sample.memory_case() == drip::v1::Sample::kProcess) {
      pid = PidOfInstance(sample.instance());
    } else if (sample.memory_case() == drip::v1::Sample::kCgroup) {
      auto it = largest_process.find(sample.component());
      if (it != largest_process.end()) pid = it->second.second;
    }
    if (pid <= 0) continue;
    const uint64_t key = absl::HashOf(sample.component(), sample.instance());
    if (!seen.insert(key).second) continue;
    if (known_.contains(key)) continue;
    drip::v1::InstanceVersion version;
    if (!ReadVersion(pid, &version)) continue;
    version.set_component(sample.component());
    version.set_instance(sample.instance());
    version.set_first_seen_ms(sample.timestamp_ms());
    found.emplace_back(i, std::move(version));
  }
  known_ = std::move(seen);
  return found;
}

}  // namespace drip::agent
