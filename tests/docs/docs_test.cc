// The documentation that can drift from the code, checked against it: the architecture
// diagram of docs/design.md must be the one the build's targets make, and no tracked file
// may point outside the repository (the project stands alone).
#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
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
