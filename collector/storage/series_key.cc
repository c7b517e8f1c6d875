#include "collector/storage/series_key.h"

namespace drip::collector {
namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;

// Order-preserving, self-delimiting name encoding (see the header).
void AppendName(std::string_view name, std::string* out) {
  for (char c : name) {
    out->push_back(c);
    if (c == '\0') out->push_back('\x01');
  }
  out->push_back('\0');
  out->push_back('\0');
}

// Decodes one name from the front of *in and advances past it.
bool ConsumeName(std::string_view* in, std::string* name) {
  name->clear();
  for (size_t i = 0; i < in->size(); ++i) {
    char c = (*in)[i];
    if (c != '\0') {
      name->push_back(c);
      continue;
    }
    if (i + 1 >= in->size()) return false;
    char next = (*in)[i + 1];
    if (next == '\0') {
      in->remove_prefix(i + 2);
      return true;
    }
    if (next != '\x01') return false;
    name->push_back('\0');
    ++i;
  }
  return false;
}

}  // namespace

void AppendBigEndian64(uint64_t value, std::string* out) {
  char buf[8];
  for (int i = 7; i >= 0; --i) {
    buf[i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  out->append(buf, sizeof(buf));
}

uint64_t ReadBigEndian64(const char* data) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | static_cast<uint8_t>(data[i]);
  return value;
}

int64_t WindowStart(int64_t timestamp_ms, int64_t chunk_window_ms) {
  int64_t rem = timestamp_ms % chunk_window_ms;
  if (rem < 0) rem += chunk_window_ms;
  return timestamp_ms - rem;
}

void AppendChunkKey(uint64_t series_id, int64_t window_start_ms, std::string* out) {
  AppendBigEndian64(series_id, out);
  AppendBigEndian64(static_cast<uint64_t>(window_start_ms) ^ kSignBit, out);
}

std::string ChunkKey(uint64_t series_id, int64_t window_start_ms) {
  std::string key;
  key.reserve(kChunkKeySize);
  AppendChunkKey(series_id, window_start_ms, &key);
  return key;
}

bool ParseChunkKey(std::string_view key, uint64_t* series_id, int64_t* window_start_ms) {
  if (key.size() != kChunkKeySize) return false;
  *series_id = ReadBigEndian64(key.data());
  *window_start_ms = static_cast<int64_t>(ReadBigEndian64(key.data() + 8) ^ kSignBit);
  return true;
}

std::string SeriesIndexKey(std::string_view host, std::string_view component,
                           std::string_view instance) {
  std::string key = SeriesIndexPrefix(host, component);
  AppendName(instance, &key);
  return key;
}

std::string SeriesIndexPrefix(std::string_view host, std::string_view component) {
  std::string key(kSeriesIndexPrefix);
  key.reserve(key.size() + host.size() + component.size() + 8);
  AppendName(host, &key);
  AppendName(component, &key);
  return key;
}

std::string SeriesIndexHostPrefix(std::string_view host) {
  std::string key(kSeriesIndexPrefix);
  AppendName(host, &key);
  return key;
}

bool ParseSeriesIndexComponent(std::string_view key, std::string_view host_prefix,
                               std::string* component) {
  if (key.substr(0, host_prefix.size()) != host_prefix) return false;
  key.remove_prefix(host_prefix.size());
  return ConsumeName(&key, component);
}

bool ParseSeriesIndexInstance(std::string_view key, std::string_view prefix,
                              std::string* instance) {
  if (key.substr(0, prefix.size()) != prefix) return false;
  key.remove_prefix(prefix.size());
  return ConsumeName(&key, instance) && key.empty();
}

std::string SeriesNamesKey(uint64_t series_id) {
  std::string key(kSeriesNamesPrefix);
  AppendBigEndian64(series_id, &key);
  return key;
}

bool ParseSeriesNamesKey(std::string_view key, uint64_t* series_id) {
  if (key.size() != kSeriesNamesPrefix.size() + 8 ||
      key.substr(0, kSeriesNamesPrefix.size()) != kSeriesNamesPrefix) {
    return false;
  }
  *series_id = ReadBigEndian64(key.data() + kSeriesNamesPrefix.size());
  return true;
}

std::string HostRecordKey(std::string_view host) {
  std::string key(kHostRecordPrefix);
  key.append(host);
  return key;
}

std::string VersionRecordPrefix(std::string_view host, std::string_view component) {
  std::string key(kVersionRecordPrefix);
  AppendName(host, &key);
  AppendName(component, &key);
  return key;
}

std::string VersionRecordKey(std::string_view host, std::string_view component,
                             int64_t first_seen_ms, std::string_view instance) {
  std::string key = VersionRecordPrefix(host, component);
  AppendBigEndian64(static_cast<uint64_t>(first_seen_ms) ^ (uint64_t{1} << 63), &key);
  AppendName(instance, &key);
  return key;
}

std::string GapRecordPrefix(std::string_view host) {
  std::string key(kGapRecordPrefix);
  AppendName(host, &key);
  return key;
}

std::string GapRecordKey(std::string_view host, uint64_t from_sequence) {
  std::string key = GapRecordPrefix(host);
  AppendBigEndian64(from_sequence, &key);
  return key;
}

bool ParseGapRecordKey(std::string_view key, std::string_view prefix, uint64_t* from_sequence) {
  if (key.size() != prefix.size() + 8 || key.substr(0, prefix.size()) != prefix) return false;
  *from_sequence = ReadBigEndian64(key.data() + prefix.size());
  return true;
}

std::string StagingPrefix(std::string_view host) {
  std::string key;
  key.reserve(host.size() + 10);
  AppendName(host, &key);
  return key;
}

std::string StagingKey(std::string_view host, uint64_t sequence) {
  std::string key = StagingPrefix(host);
  AppendBigEndian64(sequence, &key);
  return key;
}

}  // namespace drip::collector
