#include "cli/table_printer.h"

#include <algorithm>
#include <ctime>

#include "fmt/format.h"

namespace drip::cli {

void TablePrinter::Print(std::ostream& out) const {
  std::vector<size_t> widths(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      // The last column is not padded, so lines carry no trailing blanks.
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], widths[i]);
    }
    out << line << "\n";
  };
  print_row(header_);
  for (const auto& row : rows_) print_row(row);
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

}  // namespace drip::cli
