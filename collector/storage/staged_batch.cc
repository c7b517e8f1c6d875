#include "collector/storage/staged_batch.h"

#include "collector/storage/chunk_codec.h"
#include "collector/storage/varint.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

constexpr char kStagedBatchFormat = 1;

// Window deltas wrap around in uint64 arithmetic, so any pair of windows round-trips.
int64_t WindowDelta(int64_t window_ms, int64_t previous_ms) {
  return static_cast<int64_t>(static_cast<uint64_t>(window_ms) -
                              static_cast<uint64_t>(previous_ms));
}

int64_t ApplyWindowDelta(int64_t previous_ms, int64_t delta) {
  return static_cast<int64_t>(static_cast<uint64_t>(previous_ms) + static_cast<uint64_t>(delta));
}

}  // namespace

StagedBatchWriter::StagedBatchWriter(std::string* staged) : staged_(staged) {
  staged_->clear();
  staged_->push_back(kStagedBatchFormat);
}

void StagedBatchWriter::Append(uint64_t series_id, int64_t window_start_ms,
                               const drip::v1::Sample& sample) {
  char buf[2 * kMaxVarint64Bytes];
  char* p = EncodeVarint64(series_id, buf);
  p = EncodeVarint64(ZigZagEncode(WindowDelta(window_start_ms, previous_window_ms_)), p);
  previous_window_ms_ = window_start_ms;
  staged_->append(buf, p - buf);
  AppendPoint(sample, window_start_ms, staged_);
}

StagedBatchReader::StagedBatchReader(std::string_view staged) : staged_(staged), in_(staged) {
  if (in_.empty()) {
    Fail("empty");
  } else if (in_.front() != kStagedBatchFormat) {
    Fail(fmt::format("unknown format {}", static_cast<int>(in_.front())));
  } else {
    in_.remove_prefix(1);
  }
}

bool StagedBatchReader::Fail(std::string_view what) {
  status_ =
      absl::DataLossError(fmt::format("corrupt staged batch: record {} at byte {} of {}: {}",
                                      index_, staged_.size() - in_.size(), staged_.size(), what));
  in_ = {};
  return false;
}

bool StagedBatchReader::Next(StagedPoint* point) {
  if (in_.empty()) return false;
  uint64_t delta = 0;
  if (!GetVarint64(&in_, &point->series_id) || !GetVarint64(&in_, &delta)) {
    return Fail("truncated record header");
  }
  const size_t length = PointLength(in_);
  if (length == 0) return Fail("truncated or unknown point");
  point->window_start_ms = ApplyWindowDelta(previous_window_ms_, ZigZagDecode(delta));
  previous_window_ms_ = point->window_start_ms;
  point->point = in_.substr(0, length);
  in_.remove_prefix(length);
  ++index_;
  return true;
}

}  // namespace drip::collector
