// Strict YAML config reading shared by drip-agent, drip-collector and dripctl.
// Keys are dotted paths ("grpc.listen_address"). Every error names the file, the line
// and the key, and a key the program never asked for is an error rather than silently
// ignored: a typo in a production config must not fall back to a default.
//
// Usage: construct, call Read*() for every option (an absent key leaves the output
// untouched, so callers pre-fill defaults), then CheckNoUnknownKeys(). Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace drip {

// 1-based line of dotted `key` ("buffer.max_bytes") in `yaml`, or 0 when it is not there
// (the value came from a default or a flag). For errors found after reading, by checks
// across fields, that must still name the line like ConfigReader's own errors do.
int LineOfKey(std::string_view yaml, const std::string& key);

// "file:line: key: what" for a problem found after reading, or "file: key: what" when
// the key is not in the text (a required key left out).
std::string ConfigProblem(std::string_view source, std::string_view yaml, const std::string& key,
                          std::string_view what);

class ConfigReader {
 public:
  static absl::StatusOr<ConfigReader> FromFile(const std::string& path);
  // `source` names the text in error messages (a file name, "<test>").
  static absl::StatusOr<ConfigReader> FromString(std::string_view yaml, std::string source);

  absl::Status ReadString(std::string_view key, std::string* out);
  absl::Status ReadBool(std::string_view key, bool* out);
  absl::Status ReadUint(std::string_view key, uint64_t* out, uint64_t min = 0,
                        uint64_t max = UINT64_MAX);
  // A non-negative int within [min, max] (min >= 0).
  absl::Status ReadInt(std::string_view key, int* out, int min, int max);
  absl::Status ReadDouble(std::string_view key, double* out, double min, double max);
  // "10s", "5m", or a bare number of seconds.
  absl::Status ReadDuration(std::string_view key, std::chrono::milliseconds* out,
                            std::chrono::milliseconds min = std::chrono::milliseconds(0));
  // "64MiB", "1GB", or a bare number of bytes.
  absl::Status ReadByteSize(std::string_view key, uint64_t* out, uint64_t min = 0);
  // One of `allowed`.
  absl::Status ReadEnum(std::string_view key, const std::vector<std::string>& allowed,
                        std::string* out);
  absl::Status ReadStringMap(std::string_view key, std::map<std::string, std::string>* out);
  absl::Status ReadStringList(std::string_view key, std::vector<std::string>* out);
  // A list of mappings (e.g. one policy per component), one reader per entry. Each entry
  // reader names its keys "key[i].field" in errors and checks its own unknown keys;
  // call Read*() and CheckNoUnknownKeys() on each.
  absl::StatusOr<std::vector<ConfigReader>> ReadMappingList(std::string_view key);

  // An error for a check the Read*() calls cannot express (a required key, a duplicate
  // entry): "file:line: key: what", at the key's line, or the mapping's own line when the
  // key is absent.
  absl::Status Error(std::string_view key, std::string_view what);

  // Fails naming the first key present in the text that no Read*() call asked for.
  absl::Status CheckNoUnknownKeys() const;

  const std::string& source() const { return source_; }

 private:
  ConfigReader(YAML::Node root, std::string source, std::string key_prefix = "")
      : root_(std::move(root)), source_(std::move(source)), key_prefix_(std::move(key_prefix)) {}

  // Finds `key`; sets *found=false when absent. Records the key as known either way.
  absl::StatusOr<YAML::Node> Find(std::string_view key, bool* found);
  absl::Status ErrorAt(const YAML::Node& node, std::string_view key, std::string_view what) const;
  absl::Status CheckUnknown(const YAML::Node& node, const std::string& prefix) const;

  YAML::Node root_;
  std::string source_;
  std::string key_prefix_;             // "policies[2]." for an entry of a mapping list
  std::set<std::string> known_;        // keys read, and every map on their path
  std::set<std::string> known_trees_;  // keys whose whole subtree was read
};

}  // namespace drip
