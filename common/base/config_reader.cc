#include "common/base/config_reader.h"

#include <fstream>
#include <map>
#include <sstream>

#include "common/base/duration.h"
#include "common/base/status_macros.h"
#include "common/base/strings.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace drip {
namespace {

// Aliases make a YAML document a graph rather than a tree: `a: &a {b: *a}` contains
// itself, and a few lines of aliases of aliases stand for billions of values. Every walk
// over a config (the checks here, the Read*() calls) expects a small tree, so a document
// is refused unless it is one: at most kMaxDepth levels deep (Drip's configs have four)
// and at most kMaxValues values with every alias expanded.
constexpr int kMaxDepth = 64;
constexpr size_t kMaxValues = 100'000;

struct TreeWalk {
  const std::string& source;
  size_t values = 0;
};

// Checks the document is a small tree (above), and that no mapping sets a key twice:
// yaml-cpp keeps the last of two equal keys, and a config where an option is set twice is
// a mistake to report, not to resolve silently.
absl::Status CheckTree(const YAML::Node& node, const std::string& prefix, int depth,
                       TreeWalk* walk) {
  if (++walk->values > kMaxValues || depth > kMaxDepth) {
    const std::string where = prefix.empty() ? "top level" : prefix;
    return absl::InvalidArgumentError(fmt::format(
        "{}:{}: {}: {}", walk->source, node.Mark().line + 1, where,
        depth > kMaxDepth
            ? fmt::format("nested more than {} levels deep (an alias that contains itself?)",
                          kMaxDepth)
            : fmt::format("more than {} values once aliases are expanded", kMaxValues)));
  }
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) {
      if (absl::Status s = CheckTree(item, prefix, depth + 1, walk); !s.ok()) return s;
    }
  }
  if (!node.IsMap()) return absl::OkStatus();
  std::map<std::string, int> first_line;
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    const std::string path = prefix.empty() ? key : fmt::format("{}.{}", prefix, key);
    const int line = kv.first.Mark().line + 1;
    auto [it, inserted] = first_line.emplace(key, line);
    if (!inserted) {
      return absl::InvalidArgumentError(fmt::format("{}:{}: {}: set twice (first at line {})",
                                                    walk->source, line, path, it->second));
    }
    if (absl::Status s = CheckTree(kv.second, path, depth + 1, walk); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConfigReader> ConfigReader::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot open config file", path));
  std::stringstream text;
  text << in.rdbuf();
  return FromString(text.str(), path);
}

absl::StatusOr<ConfigReader> ConfigReader::FromString(std::string_view yaml, std::string source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    // yaml-cpp reports 0-based lines.
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: invalid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);  // an empty file is all defaults
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: top level must be a mapping of keys", source, root.Mark().line + 1));
  }
  TreeWalk walk{source};
  if (absl::Status s = CheckTree(root, "", 0, &walk); !s.ok()) return s;
  return ConfigReader(root, std::move(source));
}

absl::Status ConfigReader::ErrorAt(const YAML::Node& node, std::string_view key,
                                   std::string_view what) const {
  int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
  return absl::InvalidArgumentError(
      fmt::format("{}:{}: {}{}: {}", source_, line, key_prefix_, key, what));
}

absl::StatusOr<YAML::Node> ConfigReader::Find(std::string_view key, bool* found) {
  std::vector<std::string> parts = SplitString(key, '.');
  std::string prefix;
  for (const auto& part : parts) {
    prefix = prefix.empty() ? part : fmt::format("{}.{}", prefix, part);
    known_.insert(prefix);
  }
  *found = false;
  // YAML::Node assignment writes through to the tree; reset() rebinds, and lookups
  // go through a const reference so that absent keys are not inserted.
  YAML::Node node;
  node.reset(root_);
  std::string walked;
  for (const auto& part : parts) {
    if (!node.IsMap()) {
      return ErrorAt(node, walked, "must be a mapping");
    }
    const YAML::Node& parent = node;
    YAML::Node child = parent[part];
    if (!child.IsDefined()) return YAML::Node();
    walked = walked.empty() ? part : fmt::format("{}.{}", walked, part);
    node.reset(child);
  }
  *found = true;
  return node;
}

absl::Status ConfigReader::ReadString(std::string_view key, std::string* out) {
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  if (!found) return absl::OkStatus();
  if (!node->IsScalar()) return ErrorAt(*node, key, "must be a string");
  *out = node->Scalar();
  return absl::OkStatus();
}

absl::Status ConfigReader::ReadBool(std::string_view key, bool* out) {
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  if (!found) return absl::OkStatus();
  const std::string& s = node->IsScalar() ? node->Scalar() : "";
  if (s == "true" || s == "yes" || s == "on") {
    *out = true;
  } else if (s == "false" || s == "no" || s == "off") {
    *out = false;
  } else {
    return ErrorAt(*node, key, fmt::format("'{}' is not a boolean (true or false)", s));
  }
  return absl::OkStatus();
}

absl::Status ConfigReader::ReadUint(std::string_view key, uint64_t* out, uint64_t min,
                                    uint64_t max) {
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  if (!found) return absl::OkStatus();
  uint64_t value = 0;
  const std::string& s = node->IsScalar() ? node->Scalar() : "";
  if (s.empty() || s[0] == '-' || !ParseNumber(s, &value)) {
    return ErrorAt(*node, key, fmt::format("'{}' is not a non-negative integer", s));
  }
  if (value < min || value > max) {
    return ErrorAt(*node, key, fmt::format("{} is out of range [{}, {}]", value, min, max));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ConfigReader::ReadDouble(std::string_view key, double* out, double min, double max) {
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  if (!found) return absl::OkStatus();
  double value = 0;
  const std::string& s = node->IsScalar() ? node->Scalar() : "";
  if (!ParseNumber(s, &value)) {
    return ErrorAt(*node, key, fmt::format("'{}' is not a number", s));
  }
  if (value < min || value > max) {
    return ErrorAt(*node, key, fmt::format("{} is out of range [{}, {}]", value, min, max));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ConfigReader::ReadDuration(std::string_view key, std::chrono::milliseconds* out,
                                        std::chrono::milliseconds min) {
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  if (!found) return absl::OkStatus();
  if (!node->IsScalar()) return ErrorAt(*node, key, "must be a duration such as 10s");
  auto d = ParseDuration(node->Scalar());
  if (!d.ok()) return ErrorAt(*node, key, std::string(d.status().message()));
  if (*d < min) {
    return ErrorAt(*node, key,
                   fmt::format("{} is below the minimum {}", node->Scalar(), FormatDuration(min)));
  }
  *out = *d;
  return absl::OkStatus();
}

absl::Status ConfigReader::ReadInt(std::string_view key, int* out, int min, int max) {
  uint64_t value = static_cast<uint64_t>(*out);
  RETURN_IF_ERROR(ReadUint(key, &value, static_cast<uint64_t>(min), static_cast<uint64_t>(max)));
  *out = static_cast<int>(value);
  return absl::OkStatus();
}

absl::Status ConfigReader::ReadByteSize(std::string_view key, uint64_t* out, uint64_t min) {
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  if (!found) return absl::OkStatus();
  if (!node->IsScalar()) return ErrorAt(*node, key, "must be a size such as 64MiB");
  auto bytes = ParseByteSize(node->Scalar());
  if (!bytes.ok()) return ErrorAt(*node, key, std::string(bytes.status().message()));
  if (*bytes < min) {
    return ErrorAt(*node, key,
                   fmt::format("{} is below the minimum {} bytes", node->Scalar(), min));
  }
  *out = *bytes;
  return absl::OkStatus();
}

absl::Status ConfigReader::ReadEnum(std::string_view key, const std::vector<std::string>& allowed,
                                    std::string* out) {
  std::string value = *out;
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  if (!found) return absl::OkStatus();
  if (!node->IsScalar()) return ErrorAt(*node, key, "must be a string");
  for (const auto& a : allowed) {
    if (node->Scalar() == a) {
      *out = a;
      return absl::OkStatus();
    }
  }
  return ErrorAt(*node, key,
                 fmt::format("'{}' is not one of {}", node->Scalar(), fmt::join(allowed, ", ")));
}

absl::Status ConfigReader::ReadStringMap(std::string_view key,
                                         std::map<std::string, std::string>* out) {
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  known_trees_.insert(std::string(key));
  if (!found || node->IsNull()) return absl::OkStatus();
  if (!node->IsMap()) return ErrorAt(*node, key, "must be a mapping of strings");
  for (const auto& kv : *node) {
    if (!kv.second.IsScalar()) {
      return ErrorAt(kv.second, fmt::format("{}.{}", key, kv.first.Scalar()), "must be a string");
    }
    (*out)[kv.first.Scalar()] = kv.second.Scalar();
  }
  return absl::OkStatus();
}

absl::Status ConfigReader::ReadStringList(std::string_view key, std::vector<std::string>* out) {
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  known_trees_.insert(std::string(key));
  if (!found || node->IsNull()) return absl::OkStatus();
  if (!node->IsSequence()) return ErrorAt(*node, key, "must be a list of strings");
  out->clear();
  for (const auto& item : *node) {
    if (!item.IsScalar()) return ErrorAt(item, key, "every entry must be a string");
    out->push_back(item.Scalar());
  }
  return absl::OkStatus();
}

absl::Status ConfigReader::Error(std::string_view key, std::string_view what) {
  bool found = false;
  absl::StatusOr<YAML::Node> node = Find(key, &found);
  if (!node.ok()) return node.status();
  return ErrorAt(found ? *node : root_, key, what);
}

absl::StatusOr<std::vector<ConfigReader>> ConfigReader::ReadMappingList(std::string_view key) {
  bool found = false;
  auto node = Find(key, &found);
  if (!node.ok()) return node.status();
  known_trees_.insert(std::string(key));
  std::vector<ConfigReader> entries;
  if (!found || node->IsNull()) return entries;
  if (!node->IsSequence()) return ErrorAt(*node, key, "must be a list of mappings");
  for (size_t i = 0; i < node->size(); ++i) {
    YAML::Node item = (*node)[i];
    const std::string prefix = fmt::format("{}{}[{}].", key_prefix_, key, i);
    if (!item.IsMap()) {
      return ErrorAt(item, fmt::format("{}[{}]", key, i), "must be a mapping");
    }
    entries.push_back(ConfigReader(item, source_, prefix));
  }
  return entries;
}

absl::Status ConfigReader::CheckUnknown(const YAML::Node& node, const std::string& prefix) const {
  if (!node.IsMap()) return absl::OkStatus();
  for (const auto& kv : node) {
    std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    std::string path = prefix.empty() ? key : fmt::format("{}.{}", prefix, key);
    if (!known_.contains(path)) {
      int line = kv.first.Mark().line + 1;
      return absl::InvalidArgumentError(
          fmt::format("{}:{}: unknown key '{}{}'", source_, line, key_prefix_, path));
    }
    if (!known_trees_.contains(path)) {
      absl::Status nested = CheckUnknown(kv.second, path);
      if (!nested.ok()) return nested;
    }
  }
  return absl::OkStatus();
}

absl::Status ConfigReader::CheckNoUnknownKeys() const { return CheckUnknown(root_, ""); }

int LineOfKey(std::string_view yaml, const std::string& key) {
  try {
    YAML::Node node = YAML::Load(std::string(yaml));
    for (const std::string& part : SplitString(key, '.')) {
      if (!node.IsMap()) return 0;
      YAML::Node child = node[part];
      if (!child.IsDefined()) return 0;
      node.reset(child);
    }
    return node.Mark().line + 1;
  } catch (const YAML::Exception&) {
    return 0;  // ConfigReader already accepted this text; nothing better to report
  }
}

std::string ConfigProblem(std::string_view source, std::string_view yaml, const std::string& key,
                          std::string_view what) {
  const int line = LineOfKey(yaml, key);
  if (line == 0) return fmt::format("{}: {}: {}", source, key, what);
  return fmt::format("{}:{}: {}: {}", source, line, key, what);
}

}  // namespace drip
