#include "cli/table_printer.h"

#include <algorithm>
#include <ctime>

#include "fmt/format.h"

namespace drip::cli {

void TablePrinter::Print(std::ostream& out, const TerminalStyle& style) const {
  std::vector<size_t> widths(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);
  // row_index -1 is the header.
  auto print_row = [&](const std::vector<std::string>& row, int64_t row_index) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      std::string cell = row[i];
      if (row_index < 0) {
        cell = style.Bold(cell);
      } else if (alerts_.count({static_cast<size_t>(row_index), i}) != 0) {
        cell = style.Alert(cell);
      }
      line += cell;
      // The last column is not padded, so lines carry no trailing blanks.
      if (i + 1 < row.size()) {
        line += std::string(widths[i] - std::min(widths[i], row[i].size()) + 2, ' ');
      }
    }
    out << line << "\n";
  };
  print_row(header_, -1);
  for (size_t r = 0; r < rows_.size(); ++r) print_row(rows_[r], static_cast<int64_t>(r));
}

std::string FormatAgo(int64_t then_ms, int64_t now_ms) {
  if (then_ms <= 0) return "never";
  int64_t s = std::max<int64_t>(0, (now_ms - then_ms) / 1000);
  if (s < 120) return fmt::format("{}s ago", s);
  if (s < 7200) return fmt::format("{}m ago", s / 60);
  if (s < 172800) return fmt::format("{}h ago", s / 3600);
  return fmt::format("{}d ago", s / 86400);
}

std::string FormatTimestamp(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string FormatIsoTimestamp(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace drip::cli
