#include "cli/sample_csv_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <string_view>
#include <thread>
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

// True for UTF-8 as RFC 3629 has it (no overlong forms, no surrogates, nothing past
// U+10FFFF) without a NUL: names become report fields and terminal text.
bool IsUtf8WithoutNul(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == 0) return false;
      ++i;
      continue;
    }
    size_t more = 0;
    uint32_t code = 0;
    uint32_t min = 0;
    if ((c & 0xe0) == 0xc0) {
      more = 1;
      code = c & 0x1f;
      min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      more = 2;
      code = c & 0x0f;
      min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      more = 3;
      code = c & 0x07;
      min = 0x10000;
    } else {
      return false;
    }
    if (i + more >= text.size()) return false;  // cut short
    for (size_t k = 1; k <= more; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += more + 1;
  }
  return true;
}

// A field of decimal digits: what std::from_chars reads for an unsigned integer, in a
// loop tight enough for tens of millions of rows.
struct Decimal {
  uint64_t value = 0;
  bool digits = false;    // the field is one or more digits and nothing else
  bool overflow = false;  // ... too many to fit 64 bits
};
Decimal ParseDecimal(std::string_view text) {
  Decimal d;
  if (text.empty()) return d;
  // 19 digits cannot overflow 64 bits: only longer fields check each step.
  if (text.size() <= 19) {
    for (const char c : text) {
      const auto digit = static_cast<unsigned>(c - '0');
      if (digit > 9) return d;
      d.value = d.value * 10 + digit;
    }
    d.digits = true;
    return d;
  }
  for (const char c : text) {
    const auto digit = static_cast<unsigned>(c - '0');
    if (digit > 9) return d;
    d.overflow = d.overflow || __builtin_mul_overflow(d.value, 10, &d.value) ||
                 __builtin_add_overflow(d.value, digit, &d.value);
  }
  d.digits = true;
  return d;
}

// A value as an error message shows it: quoted, control characters and every byte past
// ASCII escaped (a C1 control is an escape to an 8-bit terminal), long values cut, so that
// one bad line cannot flood or drive the terminal.
std::string Quote(std::string_view value) {
  constexpr size_t kMaxShown = 60;
  std::string out = "\"";
  for (size_t i = 0; i < value.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
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
  bool has_header() const { return have_header_; }
  // For a parser of a later part of the file: the columns `header` read from the header.
  void CopyHeaderFrom(const Parser& header) {
    have_header_ = true;
    col_of_ = header.col_of_;
    last_needed_ = header.last_needed_;
  }
  // Appends the rows of a later part of the file, read by a parser of its own, to this
  // parser's table, its names interned here: as if this parser had read them.
  void Absorb(const SampleTable& part);

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

  // Interning. Rows of one track usually come in runs, so the previous row's fields are
  // compared first and the hash map is only consulted when the track changes.
  std::string key_;
  std::string last_host_;
  std::string last_component_;
  std::string last_instance_;
  uint64_t last_limit_ = 0;
  uint64_t last_kills_ = 0;
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
      // Fields are short: a plain scan beats a call per field.
      const char* comma = p;
      while (comma < end && *comma != ',') ++comma;
      if (comma == end) {
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

  const Decimal ts = ParseDecimal(ts_text);
  if (!ts.digits || ts.overflow || ts.value > UINT32_MAX) {
    // 13 digits is the usual mistake: milliseconds.
    return Problem(fmt::format(
        "field 'timestamp': {} is not Unix seconds (an integer from 0 to {}){}", Quote(ts_text),
        UINT32_MAX, ts.digits && ts_text.size() >= 12 ? "; milliseconds?" : ""));
  }
  if (host.empty()) return Problem("field 'host' is empty");
  if (component.empty()) return Problem("field 'component' is empty");
  // Checked when they change from the row before: rows of one track come in runs.
  if (host != last_host_ || component != last_component_ || instance != last_instance_) {
    for (const auto& [name, text] : {std::pair{"host", host}, std::pair{"component", component},
                                     std::pair{"instance", instance}}) {
      if (!IsUtf8WithoutNul(text)) {
        return Problem(fmt::format("field '{}': {} is not UTF-8 text (or holds a NUL byte)", name,
                                   Quote(text)));
      }
    }
  }
  if (!version.empty() && !IsUtf8WithoutNul(version)) {
    return Problem(
        fmt::format("field 'version': {} is not UTF-8 text (or holds a NUL byte)", Quote(version)));
  }
  const Decimal bytes_field = ParseDecimal(bytes_text);
  if (bytes_field.digits && bytes_field.overflow) {
    return Problem(fmt::format("field 'bytes': {} is too large", Quote(bytes_text)));
  }
  if (!bytes_field.digits) {
    return Problem(
        fmt::format("field 'bytes': {} is not a non-negative integer", Quote(bytes_text)));
  }
  const uint64_t bytes = bytes_field.value;

  const auto timestamp = static_cast<uint32_t>(ts.value);
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
  const Decimal d = ParseDecimal(text);
  if (!d.digits || d.overflow) {
    return Problem(fmt::format("field '{}': {} is not a non-negative integer (or empty)",
                               kColumnNames[column], Quote(text)));
  }
  *out = d.value;
  return true;
}

void Parser::Absorb(const SampleTable& part) {
  SampleTable& t = *table_;
  std::vector<uint32_t> remap(part.tracks.size());
  for (uint32_t i = 0; i < part.tracks.size(); ++i) {
    const SampleTrack& from = part.tracks[i];
    const SampleSeries& series = part.series[from.series];
    remap[i] = Track(part.hosts[series.host], part.components[series.component], from.instance,
                     from.limit_bytes, from.oom_kills);
    if (from.instance_track != i) continue;
    // The instance's version and first row are kept on its first track, here as there.
    SampleTrack& first = t.tracks[t.tracks[remap[i]].instance_track];
    first.first_timestamp = std::min(first.first_timestamp, from.first_timestamp);
    if (first.version.empty() && !from.version.empty()) {
      first.version = from.version;
      t.has_versions = true;
    }
  }
  if (!part.rows.empty()) {
    if (t.rows.empty()) {
      t.min_timestamp = part.min_timestamp;
      t.max_timestamp = part.max_timestamp;
    } else {
      t.sorted = t.sorted && part.sorted && part.rows.front().timestamp >= t.rows.back().timestamp;
      t.min_timestamp = std::min(t.min_timestamp, part.min_timestamp);
      t.max_timestamp = std::max(t.max_timestamp, part.max_timestamp);
    }
    t.sorted = t.sorted && part.sorted;
  }
  for (const SampleRow& row : part.rows)
    t.rows.push_back({row.timestamp, remap[row.track], row.bytes});
  t.lines += part.lines;
}

uint32_t Parser::Track(std::string_view host, std::string_view component, std::string_view instance,
                       uint64_t limit_bytes, std::optional<uint64_t> oom_kills) {
  // Rows of one track usually come in runs: the fields are compared with the previous
  // row's before any key is built.
  const uint64_t kills = oom_kills ? *oom_kills : UINT64_MAX;
  if (last_track_ != kNoTrack && limit_bytes == last_limit_ && kills == last_kills_ &&
      instance == last_instance_ && component == last_component_ && host == last_host_) {
    return last_track_;
  }
  // Fixed-size fields and lengths first, so that no choice of characters makes two
  // tuples share a key.
  key_.clear();
  key_.append(reinterpret_cast<const char*>(&limit_bytes), sizeof(limit_bytes));
  key_.append(reinterpret_cast<const char*>(&kills), sizeof(kills));
  AppendLength(&key_, host.size());
  AppendLength(&key_, component.size());
  key_.append(host);
  key_.append(component);
  key_.append(instance);
  uint32_t track;
  if (auto it = track_ids_.find(key_); it != track_ids_.end()) {
    track = it->second;
  } else {
    track = NewTrack(host, component, instance, limit_bytes, oom_kills);
    track_ids_.emplace(key_, track);
  }
  last_host_.assign(host);
  last_component_.assign(component);
  last_instance_.assign(instance);
  last_limit_ = limit_bytes;
  last_kills_ = kills;
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
  if (!sorted) SortRowsByTime(rows, min_timestamp, max_timestamp);
  sorted = true;
}

void SortRowsByTime(std::vector<SampleRow>& rows, uint32_t min_timestamp, uint32_t max_timestamp) {
  if (rows.size() < 2) return;
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
}

namespace {

// Reads the lines of [begin, end) (`end` 0: to the end) through `read(buffer, capacity,
// offset)` into `parser`, in chunks of options.chunk_bytes. `file_size` (0: unknown) sizes
// the table's rows from the first chunk's bytes per row, so that they do not pass through
// doublings (each copies everything and briefly holds two copies); reserved but untouched
// pages cost no memory if the estimate is high.
template <typename Read>
absl::Status ParseRange(const Read& read, uint64_t begin, uint64_t end, uint64_t file_size,
                        const std::string& source, const SampleCsvOptions& options, Parser& parser,
                        SampleTable& table) {
  std::vector<char> buffer(std::max<size_t>(options.chunk_bytes, 1));
  size_t carry = 0;  // bytes of an unfinished line at the front of buffer
  uint64_t offset = begin;
  uint64_t consumed = 0;
  bool reserved = false;
  for (;;) {
    size_t room = buffer.size() - carry;
    if (end > 0) room = static_cast<size_t>(std::min<uint64_t>(room, end - offset));
    ASSIGN_OR_RETURN(const size_t n, read(buffer.data() + carry, room, offset));
    offset += n;
    const char* p = buffer.data();
    if (n == 0) {
      // The last line may lack its newline.
      if (carry > 0) RETURN_IF_ERROR(parser.Line(std::string_view(p, carry)));
      return absl::OkStatus();
    }
    const char* const stop = p + carry + n;
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', stop - p));
      if (nl == nullptr) break;
      RETURN_IF_ERROR(parser.Line(std::string_view(p, nl - p)));
      p = nl + 1;
    }
    consumed += p - buffer.data();
    carry = stop - p;
    // The unfinished line is already too long: no need to buffer the rest of it.
    if (carry > options.max_line_bytes) {
      return LineTooLong(source, parser.line_number() + 1, options.max_line_bytes);
    }
    std::memmove(buffer.data(), p, carry);
    if (carry == buffer.size()) buffer.resize(buffer.size() * 2);
    if (!reserved && file_size > 0 && table.rows.size() >= 1000) {
      reserved = true;
      const double bytes_per_row = static_cast<double>(consumed) / table.rows.size();
      const auto estimate = static_cast<size_t>(file_size / bytes_per_row * 1.05) + 1024;
      table.rows.reserve(std::min<size_t>(estimate, file_size / 8 + 1024));
    }
  }
}

}  // namespace

absl::StatusOr<SampleTable> SampleCsvReader::ReadFile(const std::string& path) {
  ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path));
  const std::string& source = file.name();
  const uint64_t file_size = file.size();
  const int threads =
      options_.parts > 0
          ? options_.parts
          : static_cast<int>(std::min(4u, std::max(1u, std::thread::hardware_concurrency())));
  if (threads > 1 && file_size > 0 && file_size >= options_.parallel_min_bytes &&
      !options_.skip_bad_rows) {
    absl::StatusOr<SampleTable> table = ReadInParts(file, threads);
    if (table.ok()) return table;
    // A later part's error does not know its line: the file is read again, in one part,
    // for the first error with its line.
  }
  SampleTable table;
  Parser parser(source, options_, &table);
  if (file_size > 0) {
    RETURN_IF_ERROR(ParseRange([&](char* buffer, size_t room,
                                   uint64_t offset) { return file.ReadAt(offset, buffer, room); },
                               0, 0, file_size, source, options_, parser, table));
  } else {
    RETURN_IF_ERROR(
        ParseRange([&](char* buffer, size_t room, uint64_t) { return file.Read(buffer, room); }, 0,
                   0, 0, source, options_, parser, table));
  }
  RETURN_IF_ERROR(parser.Finish());
  table.lines = parser.line_number();
  return table;
}

absl::StatusOr<SampleTable> SampleCsvReader::ReadInParts(const InputFile& file, int parts) const {
  const std::string& source = file.name();
  const uint64_t size = file.size();
  auto read_at = [&](char* buffer, size_t room, uint64_t offset) {
    return file.ReadAt(offset, buffer, room);
  };
  // Part boundaries just after a newline, so every part holds whole lines.
  std::vector<uint64_t> starts = {0};
  std::vector<char> probe(std::max<size_t>(options_.max_line_bytes, 1) + 1);
  for (int k = 1; k < parts; ++k) {
    const uint64_t at = std::max(starts.back(), size * k / parts);
    ASSIGN_OR_RETURN(const size_t n, file.ReadAt(at, probe.data(), probe.size()));
    const char* nl = static_cast<const char*>(std::memchr(probe.data(), '\n', n));
    if (nl == nullptr) break;
    starts.push_back(at + (nl - probe.data()) + 1);
  }
  starts.push_back(size);
  // The header first: every part's parser needs its columns. The first part's parser
  // reads it, and goes on after it.
  SampleTable table;
  Parser first(source, options_, &table);
  uint64_t header_end = 0;
  {
    std::vector<char> head(std::min<uint64_t>(size, options_.max_line_bytes + 1));
    ASSIGN_OR_RETURN(const size_t n, file.ReadAt(0, head.data(), head.size()));
    while (!first.has_header()) {
      const char* nl =
          static_cast<const char*>(std::memchr(head.data() + header_end, '\n', n - header_end));
      if (nl == nullptr) return absl::InvalidArgumentError("no header in the first chunk");
      RETURN_IF_ERROR(
          first.Line(std::string_view(head.data() + header_end, nl - head.data() - header_end)));
      header_end = nl - head.data() + 1;
    }
  }
  if (header_end >= starts[1]) return absl::InvalidArgumentError("a header longer than a part");
  struct Part {
    SampleTable table;
    std::unique_ptr<Parser> parser;
    absl::Status status;
  };
  std::vector<Part> later(starts.size() - 2);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < later.size(); ++k) {
    later[k].parser = std::make_unique<Parser>(source, options_, &later[k].table);
    later[k].parser->CopyHeaderFrom(first);
    threads.emplace_back([&, k] {
      Part& part = later[k];
      part.status = ParseRange(read_at, starts[k + 1], starts[k + 2], starts[k + 2] - starts[k + 1],
                               source, options_, *part.parser, part.table);
      part.table.lines = part.parser->line_number();
    });
  }
  // The first part on this thread, its rows sized for the whole file.
  absl::Status status =
      ParseRange(read_at, header_end, starts[1], size, source, options_, first, table);
  for (std::thread& t : threads) t.join();
  RETURN_IF_ERROR(status);
  table.lines = first.line_number();
  for (Part& part : later) {
    RETURN_IF_ERROR(part.status);
    first.Absorb(part.table);
    part.table = SampleTable();
  }
  RETURN_IF_ERROR(first.Finish());
  return table;
}

}  // namespace drip::cli
