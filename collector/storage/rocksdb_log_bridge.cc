#include "collector/storage/rocksdb_log_bridge.h"

#include <cstdio>
#include <string_view>

#include "common/daemon/logging.h"

namespace drip::collector {
namespace {

spdlog::level::level_enum LevelOf(rocksdb::InfoLogLevel level) {
  switch (level) {
    // RocksDB's info is a running commentary (every option at open, each flush and
    // compaction, statistics dumps): trace, so that debug stays about Drip.
    case rocksdb::InfoLogLevel::DEBUG_LEVEL:
    case rocksdb::InfoLogLevel::INFO_LEVEL:
    case rocksdb::InfoLogLevel::HEADER_LEVEL:
      return spdlog::level::trace;
    case rocksdb::InfoLogLevel::WARN_LEVEL:
      return spdlog::level::warn;
    case rocksdb::InfoLogLevel::ERROR_LEVEL:
      return spdlog::level::err;
    case rocksdb::InfoLogLevel::FATAL_LEVEL:
    case rocksdb::InfoLogLevel::NUM_INFO_LOG_LEVELS:
      break;
  }
  return spdlog::level::critical;
}

}  // namespace

// RocksDB filters below its own level before formatting; ours filters the rest, so the
// level is the lowest we could ever want and spdlog decides.
RocksDbLogBridge::RocksDbLogBridge() : rocksdb::Logger(rocksdb::InfoLogLevel::DEBUG_LEVEL) {}

void RocksDbLogBridge::Logv(const char* format, va_list ap) {
  Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
}

void RocksDbLogBridge::LogHeader(const char* format, va_list ap) {
  Logv(rocksdb::InfoLogLevel::HEADER_LEVEL, format, ap);
}

void RocksDbLogBridge::Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) {
  const spdlog::level::level_enum ours = LevelOf(level);
  auto log = drip::Logger("collector");
  if (!log->should_log(ours)) return;
  // RocksDB's lines are short; a longer one (an options dump) is cut, not lost entirely.
  char buffer[1024];
  int n = std::vsnprintf(buffer, sizeof(buffer), format, ap);
  if (n < 0) return;
  std::string_view line(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof(buffer) - 1));
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.remove_suffix(1);
  log->log(ours, "rocksdb: {}", line);
}

}  // namespace drip::collector
