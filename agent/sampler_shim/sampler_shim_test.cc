// Tests of libdrip_sampler.so. The shim cannot run inside this (possibly sanitized) test
// binary, so each test runs shim_allocation_driver with the shim in LD_PRELOAD and checks
// what it printed; the ELF tests read the built .so itself: its USDT notes (the contract
// with the agent's BPF side), its exported symbols, its dependencies and its unwind
// tables.
//
// Statistical checks use Bernstein's inequality for a sum of independent zero-mean terms
// bounded by M with total variance V: P(|sum| >= t) <= 2 exp(-t^2 / (2 (V + M t / 3))).
// Each such check picks t so that this bound is 1e-9, and there are four. Checks that
// need a block sampled for sure use sizes far above the mean: 64 MiB at T = 512 KiB
// (missed with probability e^-128) and blocks of >= 64 bytes at T = 1 (e^-64 each, at
// most ~10^6 of them per run). So this file fails by chance with probability below
// 5e-9 per run.
#include <elf.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace drip::sampler_shim {
namespace {

constexpr char kShim[] = DRIP_SAMPLER_SO;
constexpr char kProgram[] = DRIP_SHIM_ALLOCATION_DRIVER;

struct ProbeRun {
  int exit_code = -1;
  std::string output;
  std::map<std::string, std::string> values;

  double Number(const std::string& key) const {
    auto it = values.find(key);
    if (it == values.end()) {
      ADD_FAILURE() << "shim_allocation_driver printed no " << key << "; output:\n" << output;
      return NAN;
    }
    return std::stod(it->second);
  }
};

// Runs shim_allocation_driver with the shim preloaded and DRIP_SAMPLE_BYTES set to
// `sample_bytes` (unset when nullopt). `after_shim`: a library preloaded after the shim,
// as a program's own allocator comes after LD_PRELOAD in the lookup order.
ProbeRun RunProbe(const std::string& args, std::optional<std::string> sample_bytes,
                  const std::string& after_shim = "") {
  std::string command = "env -u DRIP_SAMPLE_BYTES -u LD_PRELOAD ";
  if (sample_bytes) command += fmt::format("DRIP_SAMPLE_BYTES='{}' ", *sample_bytes);
  command += fmt::format("LD_PRELOAD='{} {}' '{}' {} 2>&1", kShim, after_shim, kProgram, args);
  ProbeRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen failed: " << command;
    return run;
  }
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  size_t start = 0;
  while (start < run.output.size()) {
    size_t end = run.output.find('\n', start);
    if (end == std::string::npos) end = run.output.size();
    const std::string line = run.output.substr(start, end - start);
    if (const size_t eq = line.find('='); eq != std::string::npos) {
      run.values[line.substr(0, eq)] = line.substr(eq + 1);
    }
    start = end + 1;
  }
  return run;
}

// The deviation t at which Bernstein's bound (see the top of the file) is 1e-9.
double BernsteinBound(double variance, double max_term) {
  const double log_term = std::log(2 / 1e-9);
  const double b = 2 * max_term * log_term / 3;
  return (b + std::sqrt(b * b + 8 * variance * log_term)) / 2;
}

TEST(SamplerShimTest, ReadsMeanFromEnvironment) {
  EXPECT_EQ(RunProbe("counters", std::nullopt).Number("mean_bytes"), 524288);
  EXPECT_EQ(RunProbe("counters", "65536").Number("mean_bytes"), 65536);
  EXPECT_EQ(RunProbe("counters", "1").Number("mean_bytes"), 1);
  // 0 and anything that is not a plain decimal number mean the default.
  for (const char* bad : {"0", "", "abc", "-5", "64k", "12 ", "99999999999999999999999"}) {
    EXPECT_EQ(RunProbe("counters", bad).Number("mean_bytes"), 524288) << "'" << bad << "'";
  }
}

// Equal sizes: the number of samples is a sum of independent Bernoulli(p), p = 1 -
// exp(-1000/65536), over 200000 blocks: ~3029 expected, Bernstein t ~ 365 (the byte
// estimate: t ~ 12% of the 200 MB; over mixed sizes below ~2%).
TEST(SamplerShimTest, SamplesEqualSizesWithPoissonProbability) {
  const ProbeRun run = RunProbe("sampling uniform", "65536");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.Number("mean_bytes"), 65536);
  const double expected = run.Number("expected_samples");
  EXPECT_NEAR(expected, 200000 * (1 - std::exp(-1000.0 / 65536)), 1e-6);
  EXPECT_NEAR(run.Number("samples"), expected, BernsteinBound(run.Number("samples_variance"), 1))
      << run.output;
  EXPECT_NEAR(run.Number("estimate"), run.Number("true_bytes"),
              BernsteinBound(run.Number("estimate_variance"), run.Number("max_weight")))
      << run.output;
  EXPECT_EQ(run.Number("worst_batch_live_mismatch"), 0) << run.output;
  EXPECT_EQ(run.Number("worst_live_after_free"), 0) << run.output;
  EXPECT_EQ(run.Number("dropped_full"), 0);
}

// Sizes log-uniform over [16, 4 T]: the per-size probabilities and the s / p(s) weights
// must hold across the range for the byte estimate to be unbiased.
TEST(SamplerShimTest, ByteEstimateIsUnbiasedOverMixedSizes) {
  const ProbeRun run = RunProbe("sampling mixed", "65536");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NEAR(run.Number("samples"), run.Number("expected_samples"),
              BernsteinBound(run.Number("samples_variance"), 1))
      << run.output;
  const double bound = BernsteinBound(run.Number("estimate_variance"), run.Number("max_weight"));
  // The bound must be tight enough to mean something: well under the true bytes.
  EXPECT_LT(bound, 0.1 * run.Number("true_bytes"));
  EXPECT_NEAR(run.Number("estimate"), run.Number("true_bytes"), bound) << run.output;
  EXPECT_EQ(run.Number("worst_batch_live_mismatch"), 0) << run.output;
  EXPECT_EQ(run.Number("worst_live_after_free"), 0) << run.output;
}

// 64 MiB at the default 512 KiB mean: sampled with probability 1 - exp(-128).
TEST(SamplerShimTest, BigNewIsSampledThroughOperatorNew) {
  const ProbeRun run = RunProbe("bignew", std::nullopt);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.Number("sampled_by_new"), 1) << run.output;
  EXPECT_EQ(run.Number("live_while_alive"), 1) << run.output;
  EXPECT_EQ(run.Number("live_after_delete"), 0) << run.output;
}

void ExpectAllChecksPass(const ProbeRun& run) {
  ASSERT_EQ(run.exit_code, 0) << run.output;
  int checks = 0;
  for (const auto& [key, value] : run.values) {
    if (key.starts_with("check.")) {
      ++checks;
      EXPECT_EQ(value, "ok") << key;
    }
  }
  EXPECT_EQ(checks, 25) << run.output;  // every check ran
  EXPECT_EQ(run.Number("failures"), 0);
  EXPECT_EQ(run.Number("live_delta"), 0) << run.output;
}

// With DRIP_SAMPLE_BYTES=1 every block is sampled, so the sampled paths of every
// function (realloc of a sampled block, ...) are the ones checked.
TEST(SamplerShimTest, AllocatorsKeepTheirContractsWhenEveryBlockIsSampled) {
  const ProbeRun run = RunProbe("standards", "1");
  ExpectAllChecksPass(run);
  EXPECT_GE(run.Number("sampled_delta"), 30);
}

TEST(SamplerShimTest, AllocatorsKeepTheirContractsAtTheDefaultMean) {
  ExpectAllChecksPass(RunProbe("standards", std::nullopt));
}

// A program linked with jemalloc or tcmalloc: the shim forwards to that allocator, so
// the allocator's own calls on the blocks work (redis-server, linked with jemalloc, calls
// jemalloc's malloc_usable_size at its first allocation, and crashed when the shim gave
// it glibc's blocks), and every block is still sampled.
TEST(SamplerShimTest, ProgramsWithJemallocOrTcmallocRunAndAreSampled) {
  for (const std::string library : {DRIP_JEMALLOC_SO, DRIP_TCMALLOC_SO}) {
    SCOPED_TRACE(library);
    ASSERT_TRUE(std::ifstream(library).good())
        << "not installed (scripts/install-deps.sh installs libjemalloc2 and "
           "libtcmalloc-minimal4)";
    const ProbeRun run = RunProbe("foreign", "1", library);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(run.values.at("allocator"), library) << run.output;
    EXPECT_EQ(run.Number("short_blocks"), 0) << run.output;
    EXPECT_EQ(run.Number("sampled_delta"), 700) << run.output;  // every allocating call
    EXPECT_EQ(run.Number("live_delta"), 0) << run.output;
  }
}

TEST(SamplerShimTest, ProgramWithGlibcAllocatorForwardsToGlibc) {
  const ProbeRun run = RunProbe("foreign", "1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(run.values.at("allocator").ends_with("/libc.so.6")) << run.output;
  EXPECT_EQ(run.Number("short_blocks"), 0) << run.output;
  EXPECT_EQ(run.Number("sampled_delta"), 700) << run.output;
  EXPECT_EQ(run.Number("live_delta"), 0) << run.output;
}

TEST(SamplerShimTest, ThreadStormEndsWithNothingSampledLive) {
  const ProbeRun run = RunProbe("storm 8 200000", "4096");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.Number("live_delta"), 0) << run.output;
  EXPECT_EQ(run.Number("dropped_delta"), 0) << run.output;
  // 1.6 M blocks of ~1 KiB at T = 4 KiB: ~360000 samples expected.
  EXPECT_GT(run.Number("sampled_delta"), 100000) << run.output;
}

TEST(SamplerShimTest, FullSetDropsAndCountsSamplesThenRecovers) {
  const ProbeRun run = RunProbe("fill 400000", "1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const double peak = run.Number("live_peak");
  EXPECT_GT(peak, 200000) << run.output;  // at least ~3/4 of the 2^18 slots fill
  EXPECT_LE(peak, 1 << 18) << run.output;
  EXPECT_EQ(run.Number("dropped_delta"), 400000 - peak) << run.output;
  EXPECT_EQ(run.Number("live_after_free"), 0) << run.output;
  EXPECT_EQ(run.Number("resampled"), 10000) << run.output;  // tombstones are reused
  EXPECT_EQ(run.Number("dropped_after_reuse"), 0) << run.output;
  EXPECT_EQ(run.Number("live_end"), 0) << run.output;
}

TEST(SamplerShimTest, ForkedChildKeepsTheParentsSampledSet) {
  const ProbeRun run = RunProbe("fork", "1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.Number("parent_live_after_alloc"), 100);
  EXPECT_EQ(run.Number("child_live_change"), -100) << run.output;
  EXPECT_EQ(run.Number("child_exit"), 0);
  EXPECT_EQ(run.Number("parent_live_after_child"), 100);
  EXPECT_EQ(run.Number("parent_live_end"), 0);
}

// --- The built .so, read as ELF. ---

class ElfFile {
 public:
  explicit ElfFile(const char* path) {
    std::ifstream in(path, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
  }

  bool Valid() const {
    return bytes_.size() > sizeof(Elf64_Ehdr) && std::memcmp(bytes_.data(), ELFMAG, SELFMAG) == 0 &&
           bytes_[EI_CLASS] == ELFCLASS64;
  }

  std::optional<Elf64_Shdr> Section(std::string_view name) const {
    const auto eh = Read<Elf64_Ehdr>(0);
    const auto names = Read<Elf64_Shdr>(eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr));
    for (int i = 0; i < eh.e_shnum; ++i) {
      const auto section = Read<Elf64_Shdr>(eh.e_shoff + i * sizeof(Elf64_Shdr));
      if (name == String(names.sh_offset + section.sh_name)) return section;
    }
    return std::nullopt;
  }

  // ELF fields need not be aligned for their type in the file (notes are 4-aligned), so
  // they are copied out rather than dereferenced in place.
  template <typename T>
  T Read(uint64_t offset) const {
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }
  const char* String(uint64_t offset) const { return bytes_.data() + offset; }

 private:
  std::vector<char> bytes_;
};

struct SdtProbe {
  std::string provider, name, args;
  uint64_t pc = 0, semaphore = 0;
};

// The NT_STAPSDT notes of .note.stapsdt, as `readelf -n` lists them: per probe site, its
// address, semaphore address (0: none), provider, name and argument locations.
std::vector<SdtProbe> ReadSdtProbes(const ElfFile& elf) {
  std::vector<SdtProbe> probes;
  const auto notes = elf.Section(".note.stapsdt");
  if (!notes) return probes;
  uint64_t offset = notes->sh_offset;
  const uint64_t end = notes->sh_offset + notes->sh_size;
  auto align4 = [](uint64_t n) { return (n + 3) & ~uint64_t{3}; };
  while (offset + sizeof(Elf64_Nhdr) <= end) {
    const auto note = elf.Read<Elf64_Nhdr>(offset);
    const uint64_t name_at = offset + sizeof(Elf64_Nhdr);
    const uint64_t desc_at = name_at + align4(note.n_namesz);
    if (note.n_type == 3 && std::string_view(elf.String(name_at)) == "stapsdt") {
      SdtProbe probe;
      probe.pc = elf.Read<uint64_t>(desc_at);
      probe.semaphore = elf.Read<uint64_t>(desc_at + 16);
      const char* text = elf.String(desc_at + 24);
      probe.provider = text;
      text += probe.provider.size() + 1;
      probe.name = text;
      text += probe.name.size() + 1;
      probe.args = text;
      probes.push_back(probe);
    }
    offset = desc_at + align4(note.n_descsz);
  }
  return probes;
}

struct DynamicSymbol {
  std::string name;
  uint64_t address = 0, size = 0;
  unsigned type = 0;
};

// Defined, exported symbols of .dynsym.
std::vector<DynamicSymbol> ReadExports(const ElfFile& elf) {
  std::vector<DynamicSymbol> exports;
  const auto dynsym = elf.Section(".dynsym");
  const auto dynstr = elf.Section(".dynstr");
  if (!dynsym || !dynstr) return exports;
  for (size_t i = 0; i < dynsym->sh_size / sizeof(Elf64_Sym); ++i) {
    const auto s = elf.Read<Elf64_Sym>(dynsym->sh_offset + i * sizeof(Elf64_Sym));
    if (s.st_shndx == SHN_UNDEF || ELF64_ST_BIND(s.st_info) == STB_LOCAL) continue;
    exports.push_back({elf.String(dynstr->sh_offset + s.st_name), s.st_value, s.st_size,
                       static_cast<unsigned>(ELF64_ST_TYPE(s.st_info))});
  }
  return exports;
}

std::vector<std::string> ReadNeeded(const ElfFile& elf) {
  std::vector<std::string> needed;
  const auto dynamic = elf.Section(".dynamic");
  const auto dynstr = elf.Section(".dynstr");
  if (!dynamic || !dynstr) return needed;
  for (size_t i = 0; i < dynamic->sh_size / sizeof(Elf64_Dyn); ++i) {
    const auto entry = elf.Read<Elf64_Dyn>(dynamic->sh_offset + i * sizeof(Elf64_Dyn));
    if (entry.d_tag == DT_NEEDED)
      needed.push_back(elf.String(dynstr->sh_offset + entry.d_un.d_val));
  }
  return needed;
}

// operator new and delete, every variant (a tcmalloc or jemalloc program's own do not go
// through malloc).
const std::set<std::string> kCxxNew = {"_Znwm",
                                       "_Znam",
                                       "_ZnwmRKSt9nothrow_t",
                                       "_ZnamRKSt9nothrow_t",
                                       "_ZnwmSt11align_val_t",
                                       "_ZnamSt11align_val_t",
                                       "_ZnwmSt11align_val_tRKSt9nothrow_t",
                                       "_ZnamSt11align_val_tRKSt9nothrow_t"};
const std::set<std::string> kCxxDelete = {"_ZdlPv",
                                          "_ZdaPv",
                                          "_ZdlPvm",
                                          "_ZdaPvm",
                                          "_ZdlPvRKSt9nothrow_t",
                                          "_ZdaPvRKSt9nothrow_t",
                                          "_ZdlPvSt11align_val_t",
                                          "_ZdaPvSt11align_val_t",
                                          "_ZdlPvmSt11align_val_t",
                                          "_ZdaPvmSt11align_val_t",
                                          "_ZdlPvSt11align_val_tRKSt9nothrow_t",
                                          "_ZdaPvSt11align_val_tRKSt9nothrow_t"};
std::set<std::string> Union(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}
const std::set<std::string> kAllocating =
    Union({"malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
           "memalign", "valloc", "pvalloc"},
          kCxxNew);
const std::set<std::string> kFreeing = Union({"free", "realloc", "reallocarray"}, kCxxDelete);
// cfree may have no probe of its own: GCC folds it into a tail call of free.
const std::set<std::string> kMayFree =
    Union({"free", "cfree", "realloc", "reallocarray"}, kCxxDelete);

// The names of the exported functions whose bytes hold `pc` (several when the compiler
// folded identical functions, such as free and cfree, into one body).
std::set<std::string> FunctionsAt(const std::vector<DynamicSymbol>& exports, uint64_t pc) {
  std::set<std::string> names;
  for (const auto& s : exports) {
    if (s.type == STT_FUNC && pc >= s.address && pc < s.address + s.size) names.insert(s.name);
  }
  return names;
}

bool AllIn(const std::set<std::string>& names, const std::set<std::string>& allowed) {
  if (names.empty()) return false;
  for (const auto& n : names) {
    if (!allowed.contains(n)) return false;
  }
  return true;
}

std::string Join(const std::set<std::string>& names) {
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
  return joined;
}

TEST(SamplerShimElfTest, NotesDeclareDripAllocAndFreeProbesInTheInterposedFunctions) {
  ElfFile elf(kShim);
  ASSERT_TRUE(elf.Valid()) << kShim;
  ASSERT_TRUE(elf.Section(".stapsdt.base").has_value());
  const auto exports = ReadExports(elf);
  std::set<std::string> alloc_sites, free_sites;
  for (const SdtProbe& probe : ReadSdtProbes(elf)) {
    SCOPED_TRACE(
        fmt::format("{}:{} at {:#x} args '{}'", probe.provider, probe.name, probe.pc, probe.args));
    EXPECT_EQ(probe.provider, "drip");
    EXPECT_EQ(probe.semaphore, 0u) << "the contract has no semaphores";
    const std::set<std::string> functions = FunctionsAt(exports, probe.pc);
    // Arguments are unsigned 64-bit ("8@<location>"): 3 for alloc, 1 for free.
    size_t args = 0;
    for (size_t at = 0; at < probe.args.size();) {
      EXPECT_EQ(probe.args.compare(at, 2, "8@"), 0);
      ++args;
      at = probe.args.find(' ', at);
      if (at == std::string::npos) break;
      ++at;
    }
    if (probe.name == "alloc") {
      EXPECT_EQ(args, 3u);
      EXPECT_TRUE(AllIn(functions, kAllocating)) << "in '" << Join(functions) << "'";
      alloc_sites.insert(functions.begin(), functions.end());
    } else if (probe.name == "free") {
      EXPECT_EQ(args, 1u);
      EXPECT_TRUE(AllIn(functions, kMayFree)) << "in '" << Join(functions) << "'";
      for (const auto& f : functions) {
        if (kFreeing.contains(f)) free_sites.insert(f);
      }
    } else {
      ADD_FAILURE() << "unexpected probe";
    }
  }
  // Every allocating function fires drip:alloc itself, every freeing one drip:free.
  EXPECT_EQ(alloc_sites, kAllocating);
  EXPECT_EQ(free_sites, kFreeing);
}

TEST(SamplerShimElfTest, ExportsTheMallocFamilyAndTheCApiOnly) {
  ElfFile elf(kShim);
  ASSERT_TRUE(elf.Valid());
  std::set<std::string> functions;
  for (const auto& s : ReadExports(elf)) {
    if (s.type == STT_FUNC) functions.insert(s.name);
  }
  std::set<std::string> expected = kAllocating;
  expected.insert(kMayFree.begin(), kMayFree.end());
  expected.insert({"drip_sampler_mean_bytes", "drip_sampler_live_sampled",
                   "drip_sampler_sampled_total", "drip_sampler_dropped_full",
                   "drip_sampler_allocator"});
  // Not malloc_usable_size: the next allocator's works on our blocks, which are its own.
  EXPECT_EQ(functions, expected);
}

TEST(SamplerShimElfTest, NeedsOnlyLibcAndLibm) {
  ElfFile elf(kShim);
  ASSERT_TRUE(elf.Valid());
  for (const std::string& lib : ReadNeeded(elf)) {
    EXPECT_TRUE(lib.starts_with("libc.so") || lib.starts_with("libm.so")) << lib;
  }
}

// Reads a DWARF pointer-encoded value (the encodings GCC emits in .eh_frame).
uint64_t ReadEncoded(const ElfFile& elf, uint64_t offset, uint64_t address, uint8_t encoding,
                     size_t* length) {
  int64_t value = 0;
  switch (encoding & 0x0f) {
    case 0x03:  // udata4
      value = elf.Read<uint32_t>(offset);
      *length = 4;
      break;
    case 0x0b:  // sdata4
      value = elf.Read<int32_t>(offset);
      *length = 4;
      break;
    default:  // absptr, udata8, sdata8
      value = elf.Read<int64_t>(offset);
      *length = 8;
  }
  if ((encoding & 0x70) == 0x10) value += static_cast<int64_t>(address);  // pcrel
  return static_cast<uint64_t>(value);
}

uint64_t ReadUleb(const ElfFile& elf, uint64_t* offset) {
  uint64_t value = 0;
  for (int shift = 0;; shift += 7) {
    const auto byte = elf.Read<uint8_t>((*offset)++);
    value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return value;
  }
}

// Whether .eh_frame has an FDE covering [start, start + size): the agent unwinds through
// the shim's frames with them. Walks every CIE/FDE of the section.
bool EhFrameCovers(const ElfFile& elf, uint64_t start, uint64_t size) {
  const auto eh_frame = elf.Section(".eh_frame");
  if (!eh_frame) return false;
  std::map<uint64_t, uint8_t> cie_encoding;  // CIE offset -> FDE pointer encoding
  uint64_t offset = eh_frame->sh_offset;
  const uint64_t end = eh_frame->sh_offset + eh_frame->sh_size;
  while (offset + 8 <= end) {
    const auto length = elf.Read<uint32_t>(offset);
    if (length == 0) break;
    const uint64_t body = offset + 4;
    const auto cie_pointer = elf.Read<uint32_t>(body);
    if (cie_pointer == 0) {  // CIE: version, augmentation, alignments, RA, augmentation data
      uint64_t at = body + 5;
      const std::string augmentation = elf.String(at);
      at += augmentation.size() + 1;
      ReadUleb(elf, &at);  // code alignment
      ReadUleb(elf, &at);  // data alignment (sleb; skipping is the same)
      ReadUleb(elf, &at);  // return address register
      uint8_t encoding = 0;
      if (augmentation.starts_with("z")) {
        ReadUleb(elf, &at);
        for (char c : augmentation.substr(1)) {
          if (c == 'R') {
            encoding = elf.Read<uint8_t>(at++);
          } else if (c == 'L') {
            ++at;
          } else if (c == 'P') {
            const auto personality = elf.Read<uint8_t>(at++);
            at += (personality & 0x0f) == 0x03 || (personality & 0x0f) == 0x0b ? 4 : 8;
          }
        }
      }
      cie_encoding[offset] = encoding;
    } else {  // FDE: pc_begin, pc_range
      const uint64_t cie = body - cie_pointer;
      const uint8_t encoding = cie_encoding.contains(cie) ? cie_encoding[cie] : 0;
      const uint64_t pc_at = body + 4;
      const uint64_t pc_address = eh_frame->sh_addr + (pc_at - eh_frame->sh_offset);
      size_t n = 0;
      const uint64_t pc_begin = ReadEncoded(elf, pc_at, pc_address, encoding, &n);
      const uint64_t pc_range = ReadEncoded(elf, pc_at + n, 0, encoding & 0x0f, &n);
      if (start >= pc_begin && start + size <= pc_begin + pc_range) return true;
    }
    offset = body + length;
  }
  return false;
}

TEST(SamplerShimElfTest, UnwindTablesCoverEveryInterposedFunction) {
  ElfFile elf(kShim);
  ASSERT_TRUE(elf.Valid());
  ASSERT_TRUE(elf.Section(".eh_frame_hdr").has_value());
  for (const auto& s : ReadExports(elf)) {
    if (s.type != STT_FUNC || !(kAllocating.contains(s.name) || kMayFree.contains(s.name))) {
      continue;
    }
    EXPECT_GT(s.size, 0u) << s.name;
    EXPECT_TRUE(EhFrameCovers(elf, s.address, s.size)) << s.name << " has no FDE";
  }
}

}  // namespace
}  // namespace drip::sampler_shim
