#include "cli/sample_csv_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "cli/input_file.h"
#include "common/base/status_macros.h"
#include "fmt/format.h"

namespace drip::cli {
namespace {

// The contract's five columns, then the optional ones.
enum Column : int {
  kTimestamp,
  kHost,
  kComponent,
  kInstance,
  kBytes,
  kVersion,
  kLimitBytes,
  kOomKills,
  kNumColumns
};
constexpr int kNumRequiredColumns = kVersion;
constexpr std::array<std::string_view, kNumColumns> kColumnNames = {
    "timestamp", "host", "component", "instance", "bytes", "version", "limit_bytes", "oom_kills"};
constexpr std::string_view kHeaderHint = "timestamp,host,component,instance,bytes";

constexpr uint32_t kNoTrack = UINT32_MAX;

// A value as an error message shows it: quoted, control characters escaped, long values
// cut, so that one bad line cannot flood the terminal.
std::string Quote(std::string_view value) {
  constexpr size_t kMaxShown = 60;
  std::string out = "\"";
  for (size_t i = 0; i < value.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (value.size() > kMaxShown) out += "...";
  out += '"';
  return out;
}

absl::Status LineTooLong(std::string_view source, uint64_t line, size_t max_line_bytes) {
  return absl::InvalidArgumentError(fmt::format(
      "{}:{}: line longer than {} bytes; is this a CSV file?", source, line, max_line_bytes));
}

void AppendLength(std::string* key, size_t n) {
  uint32_t n32 = static_cast<uint32_t>(n);
  key->append(reinterpret_cast<const char*>(&n32), sizeof(n32));
}

// Turns lines into rows of a SampleTable. Lives for one file; not thread-safe.
class Parser {
 public:
  Parser(std::string source, const SampleCsvOptions& options, SampleTable* table)
      : source_(std::move(source)), options_(options), table_(table) {}

  // One line without its '\n'.
  absl::Status Line(std::string_view line);
  absl::Status Finish() const;
  uint64_t line_number() const { return line_; }

 private:
  absl::Status Header(std::string_view line);
  // Fills fields_ with the first `max_fields` fields of `line`; false (error_ set) when
  // the quoting is broken.
  bool Split(std::string_view line, size_t max_fields);
  // Appends the row to the table; false (error_ set) when it is malformed.
  bool Row(std::string_view line);
  bool Problem(std::string message) {
    error_ = std::move(message);
    return false;
  }
  std::string FieldName(size_t col) const;
  uint32_t Track(std::string_view host, std::string_view component, std::string_view instance,
                 uint64_t limit_bytes, std::optional<uint64_t> oom_kills);
  uint32_t NewTrack(std::string_view host, std::string_view component, std::string_view instance,
                    uint64_t limit_bytes, std::optional<uint64_t> oom_kills);
  // An optional non-negative integer field (`limit_bytes`, `oom_kills`): nullopt when the
  // column is absent or the field empty; false (error_ set) when it is not a number.
  bool OptionalNumber(Column column, std::optional<uint64_t>* out);

  const std::string source_;
  const SampleCsvOptions options_;
  SampleTable* const table_;
  uint64_t line_ = 0;
  bool have_header_ = false;
  std::array<size_t, kNumColumns> col_of_{};  // CSV column of each Column
  size_t last_needed_ = 0;                    // the highest of col_of_

  std::vector<std::string_view> fields_;  // reused by every row, so rows do not allocate
  // Unescaped quoted fields, by column; a deque so that growing it (in the header, which
  // may be long) does not move the strings fields_ points into.
  std::deque<std::string> scratch_;
  std::string error_;

  // Interning. Rows of one track usually come in runs, so the previous row's key is
  // compared first and the hash map is only consulted when the track changes.
  std::string key_;
  std::string last_key_;
  uint32_t last_track_ = kNoTrack;
  absl::flat_hash_map<std::string, uint32_t> track_ids_;
  absl::flat_hash_map<std::string, uint32_t> host_ids_;
  absl::flat_hash_map<std::string, uint32_t> component_ids_;
  absl::flat_hash_map<uint64_t, uint32_t> series_ids_;
  // Each (series, instance)'s first track.
  absl::flat_hash_map<std::string, uint32_t> instance_tracks_;
};

absl::Status Parser::Line(std::string_view line) {
  ++line_;
  // Checked here, for every line, and not only for a line still unfinished at the end of a
  // read: otherwise a long line would pass or fail depending on where reads happen to end.
  if (line.size() > options_.max_line_bytes) {
    return LineTooLong(source_, line_, options_.max_line_bytes);
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return absl::OkStatus();
  if (!have_header_) return Header(line);
  if (Row(line)) return absl::OkStatus();
  std::string message = fmt::format("{}:{}: {}", source_, line_, error_);
  if (!options_.skip_bad_rows) return absl::InvalidArgumentError(message);
  if (table_->rows_skipped++ == 0) table_->first_skipped = std::move(message);
  return absl::OkStatus();
}

absl::Status Parser::Finish() const {
  if (!have_header_) {
    return absl::InvalidArgumentError(
        fmt::format("{}: no header row (the file is empty); expected {}", source_, kHeaderHint));
  }
  return absl::OkStatus();
}

absl::Status Parser::Header(std::string_view line) {
  // A UTF-8 byte order mark, as spreadsheet exports write it.
  if (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
  if (!Split(line, SIZE_MAX)) {
    return absl::InvalidArgumentError(fmt::format("{}:{}: header: {}", source_, line_, error_));
  }
  constexpr size_t kAbsent = SIZE_MAX;
  col_of_.fill(kAbsent);
  for (size_t col = 0; col < fields_.size(); ++col) {
    std::string_view name = fields_[col];
    while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.remove_prefix(1);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
    for (int c = 0; c < kNumColumns; ++c) {
      if (name != kColumnNames[c]) continue;
      if (col_of_[c] != kAbsent) {
        return absl::InvalidArgumentError(
            fmt::format("{}:{}: header names column '{}' twice (fields {} and {})", source_, line_,
                        kColumnNames[c], col_of_[c] + 1, col + 1));
      }
      col_of_[c] = col;
    }
  }
  std::string missing;
  for (int c = 0; c < kNumRequiredColumns; ++c) {
    if (col_of_[c] != kAbsent) continue;
    missing += fmt::format("{}'{}'", missing.empty() ? "" : ", ", kColumnNames[c]);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: header {} lacks column{} {} (the first line must be a header "
                    "naming {})",
                    source_, line_, Quote(line), missing.find(',') == std::string::npos ? "" : "s",
                    missing, kHeaderHint));
  }
  last_needed_ = 0;
  for (size_t col : col_of_) {
    if (col != kAbsent) last_needed_ = std::max(last_needed_, col);
  }
  have_header_ = true;
  return absl::OkStatus();
}

bool Parser::Split(std::string_view line, size_t max_fields) {
  fields_.clear();
  const char* p = line.data();
  const char* const end = p + line.size();
  for (;;) {
    const size_t col = fields_.size();
    if (p < end && *p == '"') {
      // RFC 4180: "" inside quotes is one quote. Quoted fields cannot span lines here.
      const char* s = p + 1;
      const char* close = nullptr;
      bool escaped = false;
      for (;;) {
        const char* q = static_cast<const char*>(std::memchr(s, '"', end - s));
        if (q == nullptr) {
          return Problem(fmt::format(
              "{}: unterminated quoted field (quoted fields cannot span lines)", FieldName(col)));
        }
        if (q + 1 < end && q[1] == '"') {
          escaped = true;
          s = q + 2;
          continue;
        }
        close = q;
        break;
      }
      std::string_view value(p + 1, close - p - 1);
      if (escaped) {
        if (scratch_.size() <= col) scratch_.resize(col + 1);
        std::string& unescaped = scratch_[col];
        unescaped.clear();
        for (size_t i = 0; i < value.size(); ++i) {
          unescaped += value[i];
          if (value[i] == '"') ++i;  // the second quote of a ""
        }
        value = unescaped;
      }
      fields_.push_back(value);
      p = close + 1;
      if (p == end) return true;
      if (*p != ',') {
        return Problem(fmt::format("{}: unexpected {} after the closing quote", FieldName(col),
                                   Quote(std::string_view(p, 1))));
      }
      ++p;
    } else {
      const char* comma = static_cast<const char*>(std::memchr(p, ',', end - p));
      if (comma == nullptr) {
        fields_.emplace_back(p, end - p);
        return true;
      }
      fields_.emplace_back(p, comma - p);
      p = comma + 1;
    }
    if (fields_.size() >= max_fields) return true;
  }
}

std::string Parser::FieldName(size_t col) const {
  if (have_header_) {
    for (int c = 0; c < kNumColumns; ++c) {
      if (col_of_[c] == col) return fmt::format("field '{}'", kColumnNames[c]);
    }
  }
  return fmt::format("field {}", col + 1);
}

bool Parser::Row(std::string_view line) {
  if (!Split(line, last_needed_ + 1)) return false;
  if (fields_.size() <= last_needed_) {
    for (int c = 0; c < kNumColumns; ++c) {
      if (col_of_[c] != last_needed_) continue;
      return Problem(fmt::format("row has {} field{}, but column '{}' is field {} of the header",
                                 fields_.size(), fields_.size() == 1 ? "" : "s", kColumnNames[c],
                                 last_needed_ + 1));
    }
  }
  const std::string_view ts_text = fields_[col_of_[kTimestamp]];
  const std::string_view host = fields_[col_of_[kHost]];
  const std::string_view component = fields_[col_of_[kComponent]];
  const std::string_view instance = fields_[col_of_[kInstance]];
  const std::string_view bytes_text = fields_[col_of_[kBytes]];
  const std::string_view version =
      col_of_[kVersion] != SIZE_MAX ? fields_[col_of_[kVersion]] : std::string_view();
  std::optional<uint64_t> limit_bytes;
  std::optional<uint64_t> oom_kills;
  if (!OptionalNumber(kLimitBytes, &limit_bytes) || !OptionalNumber(kOomKills, &oom_kills)) {
    return false;
  }

  uint64_t ts = 0;
  {
    const char* end = ts_text.data() + ts_text.size();
    auto [ptr, ec] = std::from_chars(ts_text.data(), end, ts);
    if (ts_text.empty() || ptr != end || ec != std::errc() || ts > UINT32_MAX) {
      // 13 digits is the usual mistake: milliseconds.
      const bool digits_only = ptr == end && !ts_text.empty();
      return Problem(fmt::format(
          "field 'timestamp': {} is not Unix seconds (an integer from 0 to {}){}", Quote(ts_text),
          UINT32_MAX, digits_only && ts_text.size() >= 12 ? "; milliseconds?" : ""));
    }
  }
  if (host.empty()) return Problem("field 'host' is empty");
  if (component.empty()) return Problem("field 'component' is empty");
  uint64_t bytes = 0;
  {
    const char* end = bytes_text.data() + bytes_text.size();
    auto [ptr, ec] = std::from_chars(bytes_text.data(), end, bytes);
    if (ec == std::errc::result_out_of_range && ptr == end) {
      return Problem(fmt::format("field 'bytes': {} is too large", Quote(bytes_text)));
    }
    if (bytes_text.empty() || ptr != end || ec != std::errc()) {
      return Problem(
          fmt::format("field 'bytes': {} is not a non-negative integer", Quote(bytes_text)));
    }
  }

  const auto timestamp = static_cast<uint32_t>(ts);
  SampleTable& t = *table_;
  if (t.rows.empty()) {
    t.min_timestamp = t.max_timestamp = timestamp;
  } else {
    if (timestamp < t.rows.back().timestamp) t.sorted = false;
    t.min_timestamp = std::min(t.min_timestamp, timestamp);
    t.max_timestamp = std::max(t.max_timestamp, timestamp);
  }
  const uint32_t track_id = Track(host, component, instance, limit_bytes.value_or(0), oom_kills);
  SampleTrack& track = t.tracks[t.tracks[track_id].instance_track];
  track.first_timestamp = std::min(track.first_timestamp, timestamp);
  if (!version.empty() && track.version.empty()) {
    track.version = std::string(version);
    t.has_versions = true;
  }
  t.rows.push_back(SampleRow{timestamp, track_id, bytes});
  return true;
}

bool Parser::OptionalNumber(Column column, std::optional<uint64_t>* out) {
  if (col_of_[column] == SIZE_MAX) return true;
  const std::string_view text = fields_[col_of_[column]];
  if (text.empty()) return true;
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ptr != end || ec != std::errc()) {
    return Problem(fmt::format("field '{}': {} is not a non-negative integer (or empty)",
                               kColumnNames[column], Quote(text)));
  }
  *out = value;
  return true;
}

uint32_t Parser::Track(std::string_view host, std::string_view component, std::string_view instance,
                       uint64_t limit_bytes, std::optional<uint64_t> oom_kills) {
  // Fixed-size fields and lengths first, so that no choice of characters makes two
  // tuples share a key.
  key_.clear();
  const uint64_t kills = oom_kills ? *oom_kills : UINT64_MAX;
  key_.append(reinterpret_cast<const char*>(&limit_bytes), sizeof(limit_bytes));
  key_.append(reinterpret_cast<const char*>(&kills), sizeof(kills));
  AppendLength(&key_, host.size());
  AppendLength(&key_, component.size());
  key_.append(host);
  key_.append(component);
  key_.append(instance);
  if (last_track_ != kNoTrack && key_ == last_key_) return last_track_;
  uint32_t track;
  if (auto it = track_ids_.find(key_); it != track_ids_.end()) {
    track = it->second;
  } else {
    track = NewTrack(host, component, instance, limit_bytes, oom_kills);
    track_ids_.emplace(key_, track);
  }
  last_key_ = key_;
  last_track_ = track;
  return track;
}

uint32_t Parser::NewTrack(std::string_view host, std::string_view component,
                          std::string_view instance, uint64_t limit_bytes,
                          std::optional<uint64_t> oom_kills) {
  SampleTable& t = *table_;
  auto intern = [](absl::flat_hash_map<std::string, uint32_t>& ids, std::vector<std::string>& names,
                   std::string_view name) {
    auto [it, inserted] = ids.try_emplace(std::string(name), static_cast<uint32_t>(names.size()));
    if (inserted) names.emplace_back(name);
    return it->second;
  };
  const uint32_t host_id = intern(host_ids_, t.hosts, host);
  const uint32_t component_id = intern(component_ids_, t.components, component);
  auto [it, inserted] = series_ids_.try_emplace(uint64_t{host_id} << 32 | component_id,
                                                static_cast<uint32_t>(t.series.size()));
  if (inserted) t.series.push_back(SampleSeries{host_id, component_id});
  const auto id = static_cast<uint32_t>(t.tracks.size());
  // The instance's first track, by the key's names part (after the limit and the kills).
  const auto first = instance_tracks_.try_emplace(key_.substr(2 * sizeof(uint64_t)), id).first;
  t.tracks.push_back(SampleTrack{it->second, std::string(instance), "", UINT32_MAX, limit_bytes,
                                 oom_kills, first->second});
  return id;
}

}  // namespace

void SampleTable::SortByTime() {
  if (sorted || rows.size() < 2) {
    sorted = true;
    return;
  }
  // LSD radix sort on (timestamp - min_timestamp): stable, linear, and its small digit
  // tables stay in cache. A replay covers days to months, so two passes are typical.
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  const uint32_t range = max_timestamp - min_timestamp;
  int passes = 0;
  for (uint64_t r = range; r > 0; r >>= kDigitBits) ++passes;
  std::vector<std::array<size_t, kBuckets>> offsets(passes);
  for (auto& o : offsets) o.fill(0);
  for (const SampleRow& row : rows) {
    const uint32_t key = row.timestamp - min_timestamp;
    for (int pass = 0; pass < passes; ++pass) {
      ++offsets[pass][(key >> (pass * kDigitBits)) & (kBuckets - 1)];
    }
  }
  const size_t n = rows.size();
  // Not a vector: its zero-filling of hundreds of MB would be wasted work.
  std::unique_ptr<SampleRow[]> buffer(new SampleRow[n]);
  SampleRow* src = rows.data();
  SampleRow* dst = buffer.get();
  for (int pass = 0; pass < passes; ++pass) {
    auto& offset = offsets[pass];
    const int shift = pass * kDigitBits;
    const uint32_t first_digit = ((src[0].timestamp - min_timestamp) >> shift) & (kBuckets - 1);
    if (offset[first_digit] == n) continue;  // every row has the same digit here
    size_t sum = 0;
    for (size_t& o : offset) sum += std::exchange(o, sum);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t digit = ((src[i].timestamp - min_timestamp) >> shift) & (kBuckets - 1);
      dst[offset[digit]++] = src[i];
    }
    std::swap(src, dst);
  }
  if (src != rows.data()) std::memcpy(rows.data(), src, n * sizeof(SampleRow));
  sorted = true;
}

absl::StatusOr<SampleTable> SampleCsvReader::ReadFile(const std::string& path) {
  ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path));
  const std::string& source = file.name();
  const uint64_t file_size = file.size();

  SampleTable table;
  Parser parser(source, options_, &table);
  std::vector<char> buffer(std::max<size_t>(options_.chunk_bytes, 1));
  size_t carry = 0;  // bytes of an unfinished line at the front of buffer
  uint64_t consumed = 0;
  bool reserved = false;
  for (;;) {
    ASSIGN_OR_RETURN(const size_t n, file.Read(buffer.data() + carry, buffer.size() - carry));
    const char* p = buffer.data();
    if (n == 0) {
      // The last line may lack its newline.
      if (carry > 0) RETURN_IF_ERROR(parser.Line(std::string_view(p, carry)));
      break;
    }
    const char* const end = p + carry + n;
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
      if (nl == nullptr) break;
      RETURN_IF_ERROR(parser.Line(std::string_view(p, nl - p)));
      p = nl + 1;
    }
    consumed += p - buffer.data();
    carry = end - p;
    // The unfinished line is already too long: no need to buffer the rest of it.
    if (carry > options_.max_line_bytes) {
      return LineTooLong(source, parser.line_number() + 1, options_.max_line_bytes);
    }
    std::memmove(buffer.data(), p, carry);
    if (carry == buffer.size()) buffer.resize(buffer.size() * 2);
    if (!reserved && file_size > 0 && table.rows.size() >= 1000) {
      // Sized from the first chunk's bytes per row, so that the rows vector does not
      // pass through doublings (each copies everything and briefly holds two copies).
      // Reserved but untouched pages cost no memory if the estimate is high.
      reserved = true;
      const double bytes_per_row = static_cast<double>(consumed) / table.rows.size();
      const auto estimate = static_cast<size_t>(file_size / bytes_per_row * 1.05) + 1024;
      table.rows.reserve(std::min<size_t>(estimate, file_size / 8 + 1024));
    }
  }
  RETURN_IF_ERROR(parser.Finish());
  table.lines = parser.line_number();
  return table;
}

}  // namespace drip::cli
