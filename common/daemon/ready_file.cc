#include "common/daemon/ready_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/base/atomic_file.h"

namespace drip {

absl::Status WriteReadyFile(const std::string& path,
                            const std::map<std::string, std::string>& fields) {
  std::string text = "{";
  bool first = true;
  for (const auto& [k, v] : fields) {
    absl::StrAppend(&text, first ? "" : ", ", "\"", k, "\": \"", v, "\"");
    first = false;
  }
  text += "}\n";
  return WriteFileAtomically(path, text);
}

absl::StatusOr<std::map<std::string, std::string>> ReadReadyFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": no ready file yet"));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // The writer above emits only flat string fields without escapes.
  std::map<std::string, std::string> fields;
  size_t pos = 0;
  for (;;) {
    size_t k1 = text.find('"', pos);
    if (k1 == std::string::npos) break;
    size_t k2 = text.find('"', k1 + 1);
    size_t v1 = text.find('"', k2 + 1);
    size_t v2 = v1 == std::string::npos ? v1 : text.find('"', v1 + 1);
    if (k2 == std::string::npos || v2 == std::string::npos) {
      return absl::DataLossError(absl::StrCat(path, ": malformed ready file"));
    }
    fields[text.substr(k1 + 1, k2 - k1 - 1)] = text.substr(v1 + 1, v2 - v1 - 1);
    pos = v2 + 1;
  }
  return fields;
}

}  // namespace drip
