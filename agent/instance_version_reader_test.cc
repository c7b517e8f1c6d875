#include "agent/instance_version_reader.h"

#include <elf.h>
#include <link.h>

#include <filesystem>
#include <string>

#include "absl/strings/escaping.h"
#include "agent/testing/fake_proc_tree.h"
#include "gtest/gtest.h"

namespace drip::agent {
namespace {

using testing::FakeProcTree;

// The test binary's own build-id, read from its notes as the loader mapped them: another
// path to the same bytes than the file the reader opens.
std::string OwnBuildIdFromMemory() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') return 0;  // the executable
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
          if (phdr.p_type != PT_NOTE) continue;
          const char* p = reinterpret_cast<const char*>(info->dlpi_addr + phdr.p_vaddr);
          const char* end = p + phdr.p_memsz;
          const size_t align = phdr.p_align == 8 ? 8 : 4;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
            const char* name = p + sizeof(ElfW(Nhdr));
            const char* desc = name + ((note->n_namesz + align - 1) & ~(align - 1));
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                std::string_view(name, 3) == "GNU") {
              *static_cast<std::string*>(out) =
                  absl::BytesToHexString(absl::string_view(desc, note->n_descsz));
              return 1;
            }
            p = desc + ((note->n_descsz + align - 1) & ~(align - 1));
          }
        }
        return 1;
      },
      &found);
  return found;
}

std::string SelfExe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

drip::v1::Sample Process(const std::string& component, const std::string& instance, uint64_t anon) {
  drip::v1::Sample s;
  s.set_component(component);
  s.set_instance(instance);
  s.set_timestamp_ms(1'700'000'000'000);
  s.mutable_process()->set_anon_rss_bytes(anon);
  return s;
}

drip::v1::Sample Unit(const std::string& component, const std::string& instance) {
  drip::v1::Sample s;
  s.set_component(component);
  s.set_instance(instance);
  s.set_timestamp_ms(1'700'000'000'000);
  s.mutable_cgroup()->set_anon_bytes(1);
  return s;
}

TEST(InstanceVersionReaderTest, BuildIdOfAnExecutableMatchesTheOneTheLoaderMapped) {
  const std::string expected = OwnBuildIdFromMemory();
  ASSERT_FALSE(expected.empty()) << "the test binary was linked without a build-id";
  absl::StatusOr<std::string> id = InstanceVersionReader::ReadBuildId(SelfExe());
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, expected);
}

TEST(InstanceVersionReaderTest, BuildIdOfAFileThatIsNotElfIsAnErrorNamingIt) {
  FakeProcTree tree;
  tree.WriteFile("script.sh", "#!/bin/sh\necho hi\n");
  absl::StatusOr<std::string> id = InstanceVersionReader::ReadBuildId(tree.root() + "/script.sh");
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("script.sh"), std::string_view::npos) << id.status();
}

TEST(InstanceVersionReaderTest, LabelIsDripVersionThenOtelServiceVersion) {
  using R = InstanceVersionReader;
  EXPECT_EQ(R::VersionLabelFromEnviron(std::string("PATH=/bin\0DRIP_VERSION=2.4.1\0", 28)),
            "2.4.1");
  const std::string otel("OTEL_RESOURCE_ATTRIBUTES=service.name=api, service.version=7.1\0", 63);
  EXPECT_EQ(R::VersionLabelFromEnviron(otel), "7.1");
  EXPECT_EQ(R::VersionLabelFromEnviron(otel + std::string("DRIP_VERSION=9\0", 15)), "9");
  EXPECT_EQ(R::VersionLabelFromEnviron(std::string("HOME=/root\0", 11)), "");
  EXPECT_EQ(R::VersionLabelFromEnviron("DRIP_VERSION=" + std::string(500, 'v')).size(),
            R::kMaxLabelBytes);
  EXPECT_EQ(R::VersionLabelFromEnviron("DRIP_VERSION=a\xff"), "a?");
}

TEST(InstanceVersionReaderTest, EachInstanceIsReportedOnceAndAUnitRunsItsLargestProcess) {
  FakeProcTree tree;
  tree.AddProcess({.pid = 10, .exe = SelfExe()});
  tree.AddProcess({.pid = 11, .exe = SelfExe()});
  tree.WriteFile("10/environ", std::string("DRIP_VERSION=1.0\0", 17));
  tree.WriteFile("11/environ", std::string("DRIP_VERSION=1.1\0", 17));
  InstanceVersionReader reader(tree.root());
  const std::vector<drip::v1::Sample> pass = {
      Process("svc:api.service", "10@1", 100), Unit("svc:api.service", "cg@5"),
      Process("svc:api.service", "11@1", 900), Process("proc:gone", "99@1", 5)};

  std::vector<std::pair<size_t, drip::v1::InstanceVersion>> first = reader.NewInstances(pass);
  ASSERT_EQ(first.size(), 3u);  // pid 99 has no directory: nothing to say about it
  EXPECT_EQ(first[0].first, 0u);
  EXPECT_EQ(first[0].second.label(), "1.0");
  EXPECT_EQ(first[0].second.build_id(), OwnBuildIdFromMemory());
  EXPECT_EQ(first[1].first, 1u);
  EXPECT_EQ(first[1].second.instance(), "cg@5");
  EXPECT_EQ(first[1].second.label(), "1.1");  // pid 11 holds the unit's most memory
  EXPECT_EQ(first[2].second.instance(), "11@1");
  EXPECT_EQ(first[2].second.first_seen_ms(), 1'700'000'000'000);

  EXPECT_TRUE(reader.NewInstances(pass).empty());

  tree.AddProcess({.pid = 12, .exe = SelfExe()});
  tree.WriteFile("12/environ", std::string("DRIP_VERSION=1.2\0", 17));
  std::vector<drip::v1::Sample> restarted = pass;
  restarted[2] = Process("svc:api.service", "12@2", 900);
  std::vector<std::pair<size_t, drip::v1::InstanceVersion>> later = reader.NewInstances(restarted);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].second.instance(), "12@2");
  EXPECT_EQ(later[0].second.label(), "1.2");
}

}  // namespace
}  // namespace drip::agent
