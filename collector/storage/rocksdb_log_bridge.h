// RocksDbLogBridge: RocksDB's info log routed into the `collector` spdlog logger instead
// of the LOG file RocksDB writes beside its data by default.
//
// Why: a LOG file on the store's own disk is the first thing a full disk breaks, and the
// Debian build of RocksDB 7.8 has assertions on: the next line written after a failed one
// aborts the collector (WritableFileWriter refuses writes after an error with an
// assert). Our log goes to stderr, never to the store's disk, and RocksDB's messages land
// where the rest of the collector's are. Levels: RocksDB's debug and info are our trace
// (RocksDB is chatty: every option at open, flushes, compactions, statistics dumps);
// warn, error and fatal keep their weight.
//
// Thread-safe (spdlog loggers are).
#pragma once

#include <cstdarg>

#include "rocksdb/env.h"

namespace drip::collector {

class RocksDbLogBridge final : public rocksdb::Logger {
 public:
  RocksDbLogBridge();

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override;
  void LogHeader(const char* format, va_list ap) override;
};

}  // namespace drip::collector
