// TablePrinter: the human form of dripctl's read commands — left-aligned columns sized
// to their widest cell, a header row, nothing else, so the output also greps and cuts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/terminal_style.h"

namespace drip::cli {

class TablePrinter {
 public:
  explicit TablePrinter(std::vector<std::string> header) : header_(std::move(header)) {}

  // `row` must have as many cells as the header.
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Marks a cell of the last row added as an alert (bold red at a terminal).
  void AlertLastRowCell(size_t column) { alerts_.emplace(rows_.size() - 1, column); }
  // Plain text, unless `style` is enabled: then the header is bold and alert cells red.
  // Columns are sized on the plain text, so emphasis never shifts them.
  void Print(std::ostream& out, const TerminalStyle& style = TerminalStyle()) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::set<std::pair<size_t, size_t>> alerts_;  // (row, column)
};

// `text`, or "-" when it is empty: an empty cell a reader can see.
inline std::string OrDash(const std::string& text) { return text.empty() ? "-" : text; }

// "3s ago", "5m ago", "2h ago", "4d ago"; "never" for 0.
std::string FormatAgo(int64_t then_ms, int64_t now_ms);
// "2026-11-22 20:55:48" in UTC.
std::string FormatTimestamp(int64_t unix_ms);
// "2026-11-22T20:55:48Z" (ISO 8601, UTC); "-" for 0.
std::string FormatIsoTimestamp(int64_t unix_ms);

}  // namespace drip::cli
