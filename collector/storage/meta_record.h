// Values of the small records in the `meta` column family (keys in series_key.h): the
// names behind a series id and a recorded gap. Length-prefixed varint encodings, so
// they stay compact and any bytes are allowed in names. Decoders reject trailing or
// missing bytes: meta comes from disk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace drip::collector {

struct SeriesNames {
  std::string host;
  std::string component;
  std::string instance;
};

std::string EncodeSeriesNames(std::string_view host, std::string_view component,
                              std::string_view instance);
bool DecodeSeriesNames(std::string_view value, SeriesNames* names);

// Batches [from_sequence, to_sequence) of a host never arrived: the agent dropped them
// (or they were lost) before the batch `to_sequence` was stored at recorded_ms.
struct GapRecord {
  uint64_t from_sequence = 0;
  uint64_t to_sequence = 0;
  int64_t recorded_ms = 0;
  // The dropped samples' time span and count, as the agent reported them
  // (SampleBatch.dropped_*); 0 when unknown (records written before agents said, or
  // batches lost without the agent knowing).
  int64_t from_ms = 0;
  int64_t until_ms = 0;
  uint64_t samples = 0;

  uint64_t missing_batches() const { return to_sequence - from_sequence; }
};

// The key holds from_sequence; the value the rest. Values written before the time span
// existed (to_sequence and recorded_ms only) still decode, with the span unknown.
std::string EncodeGapValue(const GapRecord& gap);
bool DecodeGapValue(std::string_view value, GapRecord* gap);

// Fixed 8-byte values for counters and settings under "c/".
std::string EncodeUint64(uint64_t value);
bool DecodeUint64(std::string_view value, uint64_t* out);

}  // namespace drip::collector
