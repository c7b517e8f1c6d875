#include "agent/libbpf_logging.h"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string_view>

#include "common/daemon/logging.h"

namespace drip::agent {
namespace {

int LibbpfPrint(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[1024];
  const int n = std::vsnprintf(line, sizeof(line), format, args);
  std::string_view text(line,
                        n > 0 ? std::min<size_t>(static_cast<size_t>(n), sizeof(line) - 1) : 0);
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  Logger("bpf")->debug("libbpf: {}", text);
  return 0;
}

}  // namespace

void RouteLibbpfLogs() {
  static std::once_flag once;
  std::call_once(once, [] { libbpf_set_print(LibbpfPrint); });
}

std::string LibbpfErrorText(int err) { return std::strerror(err < 0 ? -err : err); }

}  // namespace drip::agent
