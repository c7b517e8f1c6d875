// The documentation that can drift from the code, checked against it: the architecture
// diagram of docs/design.md must be the one the build's targets make, every folder of
// source code has its line in docs/design.md, and no tracked file may point outside the
// repository (the project stands alone).
#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first ```mermaid block after `marker` in `text`; empty when there is none.
std::string MermaidBlockAfter(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const std::string open = "```mermaid\n";
  const size_t begin = text.find(open, at);
  if (begin == std::string::npos) return "";
  const size_t end = text.find("```", begin + open.size());
  if (end == std::string::npos) return "";
  return text.substr(begin + open.size(), end - begin - open.size());
}

std::vector<std::string> TrackedFiles() {
  std::vector<std::string> files;
  const std::string command = fmt::format("git -C '{}' ls-files 2>/dev/null", DRIP_SOURCE_DIR);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return files;
  std::array<char, 4096> line;
  while (fgets(line.data(), line.size(), pipe.get()) != nullptr) {
    std::string name(line.data());
    if (!name.empty() && name.back() == '\n') name.pop_back();
    files.push_back(name);
  }
  return files;
}

TEST(DocsTest, DesignDocShowsTheArchitectureTheBuildHas) {
  const std::string built = ReadFile(DRIP_ARCHITECTURE_MMD);
  ASSERT_FALSE(built.empty()) << DRIP_ARCHITECTURE_MMD << " was not written at configure time";
  const std::string documented = MermaidBlockAfter(
      ReadFile(std::string(DRIP_SOURCE_DIR) + "/docs/design.md"), "<!-- architecture -->");
  EXPECT_EQ(documented, built)
      << "docs/design.md's architecture diagram differs from the build's targets; paste this "
         "in its ```mermaid block after <!-- architecture -->:\n"
      << built;
}

// A newcomer finds the room for a change from docs/design.md and the folder names alone, so
// a folder of code the map does not name (`folder/`, in backquotes) is a hole in it.
TEST(DocsTest, EverySourceFolderHasItsLineInTheDesignDoc) {
  const std::vector<std::string> files = TrackedFiles();
  if (files.empty()) GTEST_SKIP() << "not a git checkout: nothing to check";
  std::set<std::string> folders;
  for (const std::string& file : files) {
    const size_t slash = file.rfind('/');
    if (slash == std::string::npos) continue;
    for (const char* ext : {".cc", ".h", ".c", ".proto"}) {
      const std::string e(ext);
      if (file.size() > e.size() && file.compare(file.size() - e.size(), e.size(), e) == 0) {
        folders.insert(file.substr(0, slash));
      }
    }
  }
  ASSERT_FALSE(folders.empty());
  const std::string design = ReadFile(std::string(DRIP_SOURCE_DIR) + "/docs/design.md");
  for (const std::string& folder : folders) {
    EXPECT_NE(design.find("`" + folder + "/"), std::string::npos)
        << folder << "/ holds code but docs/design.md never names it (`" << folder
        << "/`): add it to \"Where things live\" or the collector's rooms";
  }
}

TEST(DocsTest, NoTrackedFileNamesAPathOutsideTheRepository) {
  const std::vector<std::string> files = TrackedFiles();
  if (files.empty()) GTEST_SKIP() << "not a git checkout: nothing to check";
  // Spelled in pieces so that this file does not match itself.
  const std::vector<std::string> outside = {std::string("../") + "shared",
                                            std::string("/work") + "/shared",
                                            std::string("/work") + "/build"};
  for (const std::string& file : files) {
    const std::string text = ReadFile(std::string(DRIP_SOURCE_DIR) + "/" + file);
    if (text.find('\0') != std::string::npos) continue;  // binary: a corpus input, data
    for (const std::string& path : outside) {
      EXPECT_EQ(text.find(path), std::string::npos) << file << " names " << path;
    }
  }
}

}  // namespace
