#include "collector/storage/meta_record.h"

#include "collector/storage/series_key.h"
#include "collector/storage/varint.h"

namespace drip::collector {
namespace {

void PutLengthPrefixed(std::string_view s, std::string* out) {
  PutVarint64(s.size(), out);
  out->append(s);
}

bool GetLengthPrefixed(std::string_view* in, std::string* out) {
  uint64_t size = 0;
  if (!GetVarint64(in, &size) || size > in->size()) return false;
  out->assign(in->substr(0, size));
  in->remove_prefix(size);
  return true;
}

}  // namespace

std::string EncodeSeriesNames(std::string_view host, std::string_view component,
                              std::string_view instance) {
  std::string value;
  value.reserve(host.size() + component.size() + instance.size() + 3);
  PutLengthPrefixed(host, &value);
  PutLengthPrefixed(component, &value);
  PutLengthPrefixed(instance, &value);
  return value;
}

bool DecodeSeriesNames(std::string_view value, SeriesNames* names) {
  return GetLengthPrefixed(&value, &names->host) && GetLengthPrefixed(&value, &names->component) &&
         GetLengthPrefixed(&value, &names->instance) && value.empty();
}

std::string EncodeGapValue(const GapRecord& gap) {
  std::string value;
  PutVarint64(gap.to_sequence, &value);
  PutVarint64(static_cast<uint64_t>(gap.recorded_ms), &value);
  PutVarint64(static_cast<uint64_t>(gap.from_ms), &value);
  PutVarint64(static_cast<uint64_t>(gap.until_ms), &value);
  PutVarint64(gap.samples, &value);
  return value;
}

bool DecodeGapValue(std::string_view value, GapRecord* gap) {
  uint64_t recorded = 0;
  if (!GetVarint64(&value, &gap->to_sequence) || !GetVarint64(&value, &recorded)) return false;
  gap->recorded_ms = static_cast<int64_t>(recorded);
  if (value.empty()) return true;  // written before the time span was kept
  uint64_t from = 0;
  uint64_t until = 0;
  if (!GetVarint64(&value, &from) || !GetVarint64(&value, &until) ||
      !GetVarint64(&value, &gap->samples) || !value.empty()) {
    return false;
  }
  gap->from_ms = static_cast<int64_t>(from);
  gap->until_ms = static_cast<int64_t>(until);
  return true;
}

std::string EncodeUint64(uint64_t value) {
  std::string out;
  AppendBigEndian64(value, &out);
  return out;
}

bool DecodeUint64(std::string_view value, uint64_t* out) {
  if (value.size() != 8) return false;
  *out = ReadBigEndian64(value.data());
  return true;
}

}  // namespace drip::collector
