#include "collector/storage/chunk_codec.h"

#include "collector/storage/varint.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

constexpr uint8_t kKindMask = 0x0f;
constexpr uint8_t kPlainFormat = 0;    // figures only
constexpr uint8_t kLimitedFormat = 1;  // figures, then flags and the limit
constexpr uint64_t kHasLimit = 1;
constexpr uint64_t kOomKilled = 2;
constexpr int kLimitFigures = 4;  // max, high, swap, oom_kills
// Offset, tag, the most figures a kind has (cgroup: 7), flags and the limit.
constexpr size_t kMaxPointBytes =
    kMaxVarint64Bytes + 1 + (7 + 1 + kLimitFigures) * kMaxVarint64Bytes;

uint8_t Tag(PointKind kind, uint8_t format) {
  return static_cast<uint8_t>(kind) | static_cast<uint8_t>(format << 4);
}

bool KnownFormat(uint8_t tag) { return (tag >> 4) == kPlainFormat || (tag >> 4) == kLimitedFormat; }

// Figures a point of the kind in `tag` carries; -1 for a tag this code did not write.
int FigureCount(uint8_t tag) {
  if (!KnownFormat(tag)) return -1;
  switch (static_cast<PointKind>(tag & kKindMask)) {
    case PointKind::kNone:
      return 0;
    case PointKind::kProcess:
      return 4;
    case PointKind::kCgroup:
      return 7;
    case PointKind::kSlab:
      return 2;
    case PointKind::kProcessExit:
      return 2;
  }
  return -1;
}

}  // namespace

void AppendPoint(const drip::v1::Sample& sample, int64_t window_start_ms, std::string* chunk) {
  // One append of a stack buffer: this runs once per stored sample.
  char buf[kMaxPointBytes];
  char* p = EncodeVarint64(
      static_cast<uint64_t>(sample.timestamp_ms()) - static_cast<uint64_t>(window_start_ms), buf);
  const drip::v1::MemoryLimit& limit = sample.limit();
  const bool has_limit = sample.has_limit() && (limit.max_bytes() != 0 || limit.high_bytes() != 0 ||
                                                limit.swap_bytes() != 0 || limit.oom_kills() != 0);
  const bool oom_killed =
      sample.memory_case() == drip::v1::Sample::kProcessExit && sample.process_exit().oom_killed();
  const uint8_t format = has_limit || oom_killed ? kLimitedFormat : kPlainFormat;
  switch (sample.memory_case()) {
    case drip::v1::Sample::kProcess: {
      const auto& m = sample.process();
      *p++ = static_cast<char>(Tag(PointKind::kProcess, format));
      p = EncodeVarint64(m.anon_rss_bytes(), p);
      p = EncodeVarint64(m.file_rss_bytes(), p);
      p = EncodeVarint64(m.shmem_rss_bytes(), p);
      p = EncodeVarint64(m.swap_bytes(), p);
      break;
    }
    case drip::v1::Sample::kCgroup: {
      const auto& m = sample.cgroup();
      *p++ = static_cast<char>(Tag(PointKind::kCgroup, format));
      p = EncodeVarint64(m.current_bytes(), p);
      p = EncodeVarint64(m.anon_bytes(), p);
      p = EncodeVarint64(m.kernel_bytes(), p);
      p = EncodeVarint64(m.slab_unreclaimable_bytes(), p);
      p = EncodeVarint64(m.sock_bytes(), p);
      p = EncodeVarint64(m.shmem_bytes(), p);
      p = EncodeVarint64(m.swap_bytes(), p);
      break;
    }
    case drip::v1::Sample::kSlab: {
      const auto& m = sample.slab();
      *p++ = static_cast<char>(Tag(PointKind::kSlab, format));
      p = EncodeVarint64(m.active_objects(), p);
      p = EncodeVarint64(m.object_size_bytes(), p);
      break;
    }
    case drip::v1::Sample::kProcessExit: {
      const auto& m = sample.process_exit();
      *p++ = static_cast<char>(Tag(PointKind::kProcessExit, format));
      p = EncodeVarint64(m.peak_rss_bytes(), p);
      p = EncodeVarint64(m.wait_status(), p);
      break;
    }
    case drip::v1::Sample::MEMORY_NOT_SET:
      *p++ = static_cast<char>(Tag(PointKind::kNone, format));
      break;
  }
  if (format == kLimitedFormat) {
    p = EncodeVarint64((has_limit ? kHasLimit : 0) | (oom_killed ? kOomKilled : 0), p);
    if (has_limit) {
      p = EncodeVarint64(limit.max_bytes(), p);
      p = EncodeVarint64(limit.high_bytes(), p);
      p = EncodeVarint64(limit.swap_bytes(), p);
      p = EncodeVarint64(limit.oom_kills(), p);
    }
  }
  chunk->append(buf, p - buf);
}

size_t PointLength(std::string_view data) {
  std::string_view in = data;
  uint64_t value = 0;
  if (!GetVarint64(&in, &value) || in.empty()) return 0;
  const auto tag = static_cast<uint8_t>(in.front());
  const int figures = FigureCount(tag);
  if (figures < 0) return 0;
  in.remove_prefix(1);
  for (int i = 0; i < figures; ++i) {
    if (!GetVarint64(&in, &value)) return 0;
  }
  if ((tag >> 4) == kLimitedFormat) {
    uint64_t flags = 0;
    if (!GetVarint64(&in, &flags)) return 0;
    for (int i = 0; (flags & kHasLimit) != 0 && i < kLimitFigures; ++i) {
      if (!GetVarint64(&in, &value)) return 0;
    }
  }
  return data.size() - in.size();
}

absl::Status DecodeChunk(std::string_view chunk, int64_t window_start_ms,
                         std::vector<drip::v1::Sample>* out) {
  std::string_view in = chunk;
  size_t index = 0;
  // Figures of the point being decoded; the most any kind has is 7.
  uint64_t f[7];
  auto error = [&](std::string_view what) {
    return absl::DataLossError(fmt::format("corrupt chunk: point {} at byte {} of {}: {}", index,
                                           chunk.size() - in.size(), chunk.size(), what));
  };
  auto read_figures = [&](int n) {
    for (int i = 0; i < n; ++i) {
      if (!GetVarint64(&in, &f[i])) return false;
    }
    return true;
  };
  for (; !in.empty(); ++index) {
    const std::string_view point_start = in;
    uint64_t offset = 0;
    if (!GetVarint64(&in, &offset)) return error("truncated timestamp");
    int64_t timestamp_ms = 0;
    if (offset > static_cast<uint64_t>(INT64_MAX) ||
        __builtin_add_overflow(window_start_ms, static_cast<int64_t>(offset), &timestamp_ms)) {
      in = point_start;
      return error("timestamp out of range");
    }
    if (in.empty()) return error("truncated tag");
    const uint8_t tag = static_cast<uint8_t>(in.front());
    if (!KnownFormat(tag)) return error(fmt::format("unknown format in tag {:#x}", tag));
    in.remove_prefix(1);

    drip::v1::Sample sample;
    sample.set_timestamp_ms(timestamp_ms);
    switch (static_cast<PointKind>(tag & kKindMask)) {
      case PointKind::kProcess: {
        if (!read_figures(4)) return error("truncated process figures");
        auto* m = sample.mutable_process();
        m->set_anon_rss_bytes(f[0]);
        m->set_file_rss_bytes(f[1]);
        m->set_shmem_rss_bytes(f[2]);
        m->set_swap_bytes(f[3]);
        break;
      }
      case PointKind::kCgroup: {
        if (!read_figures(7)) return error("truncated cgroup figures");
        auto* m = sample.mutable_cgroup();
        m->set_current_bytes(f[0]);
        m->set_anon_bytes(f[1]);
        m->set_kernel_bytes(f[2]);
        m->set_slab_unreclaimable_bytes(f[3]);
        m->set_sock_bytes(f[4]);
        m->set_shmem_bytes(f[5]);
        m->set_swap_bytes(f[6]);
        break;
      }
      case PointKind::kSlab: {
        if (!read_figures(2)) return error("truncated slab figures");
        auto* m = sample.mutable_slab();
        m->set_active_objects(f[0]);
        m->set_object_size_bytes(f[1]);
        break;
      }
      case PointKind::kProcessExit: {
        if (!read_figures(2)) return error("truncated process exit figures");
        auto* m = sample.mutable_process_exit();
        m->set_peak_rss_bytes(f[0]);
        m->set_wait_status(static_cast<uint32_t>(f[1]));
        break;
      }
      case PointKind::kNone:
        break;
      default:
        return error(fmt::format("unknown kind in tag {:#x}", tag));
    }
    if ((tag >> 4) == kLimitedFormat) {
      uint64_t flags = 0;
      if (!GetVarint64(&in, &flags)) return error("truncated flags");
      if ((flags & kOomKilled) != 0 && sample.has_process_exit()) {
        sample.mutable_process_exit()->set_oom_killed(true);
      }
      if ((flags & kHasLimit) != 0) {
        if (!read_figures(kLimitFigures)) return error("truncated limit");
        drip::v1::MemoryLimit* limit = sample.mutable_limit();
        limit->set_max_bytes(f[0]);
        limit->set_high_bytes(f[1]);
        limit->set_swap_bytes(f[2]);
        limit->set_oom_kills(f[3]);
      }
    }
    out->push_back(std::move(sample));
  }
  return absl::OkStatus();
}

}  // namespace drip::collector
