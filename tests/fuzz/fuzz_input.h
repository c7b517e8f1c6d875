// FuzzInput: a cursor over a fuzz target's bytes for targets whose input is a sequence of
// small records (kind, length, payload) rather than one document. Reading past the end
// yields zeros and empty payloads, so every byte string is a valid input and mutations
// that cut a record short still reach the code under test.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace drip::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size)
      : data_(reinterpret_cast<const char*>(data)), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return size_ - pos_; }

  uint8_t U8() { return empty() ? 0 : static_cast<uint8_t>(data_[pos_++]); }
  // Little-endian.
  uint16_t U16() { return static_cast<uint16_t>(U8() | U8() << 8); }
  uint32_t U32() { return static_cast<uint32_t>(U16() | static_cast<uint32_t>(U16()) << 16); }

  // The next `n` bytes, or as many as are left.
  std::string_view Bytes(size_t n) {
    n = std::min(n, remaining());
    std::string_view out(data_ + pos_, n);
    pos_ += n;
    return out;
  }
  // A record's payload: a 16-bit length, then that many bytes.
  std::string_view Record() { return Bytes(U16()); }
  std::string_view Rest() { return Bytes(remaining()); }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace drip::fuzz
