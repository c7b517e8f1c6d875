// LEB128 varints, the building block of chunk points and meta values: the numbers Drip
// stores (offsets inside a window, memory figures, sequence numbers) are mostly far
// below 2^64, so they take a few bytes instead of eight. Decoding is bounds-checked
// because the bytes come from disk and may be truncated or corrupt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace drip::collector {

// Longest encoding of a uint64_t.
inline constexpr size_t kMaxVarint64Bytes = 10;

// Writes `value` at `dst`, which must have room for kMaxVarint64Bytes; returns the end.
inline char* EncodeVarint64(uint64_t value, char* dst) {
  while (value >= 0x80) {
    *dst++ = static_cast<char>(value | 0x80);
    value >>= 7;
  }
  *dst++ = static_cast<char>(value);
  return dst;
}

inline void PutVarint64(uint64_t value, std::string* out) {
  char buf[kMaxVarint64Bytes];
  out->append(buf, EncodeVarint64(value, buf) - buf);
}

// Reads one varint from the front of *in and advances past it. Returns false, leaving
// *in unchanged, when the input ends inside the varint or it does not fit 64 bits.
inline bool GetVarint64(std::string_view* in, uint64_t* value) {
  uint64_t result = 0;
  const size_t limit = in->size() < kMaxVarint64Bytes ? in->size() : kMaxVarint64Bytes;
  for (size_t i = 0; i < limit; ++i) {
    const uint64_t byte = static_cast<uint8_t>((*in)[i]);
    // The tenth byte carries only bit 63; anything more would overflow.
    if (i == kMaxVarint64Bytes - 1 && byte > 1) return false;
    result |= (byte & 0x7f) << (7 * i);
    if (byte < 0x80) {
      in->remove_prefix(i + 1);
      *value = result;
      return true;
    }
  }
  return false;
}

// Signed values as varints: 0, -1, 1, -2, ... map to 0, 1, 2, 3, ... so that numbers
// near zero of either sign stay short.
inline uint64_t ZigZagEncode(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}
inline int64_t ZigZagDecode(uint64_t value) {
  return static_cast<int64_t>((value >> 1) ^ (~(value & 1) + 1));
}

}  // namespace drip::collector
