// TablePrinter: the human form of dripctl's read commands — left-aligned columns sized
// to their widest cell, a header row, nothing else, so the output also greps and cuts.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace drip::cli {

class TablePrinter {
 public:
  explicit TablePrinter(std::vector<std::string> header) : header_(std::move(header)) {}

  // `row` must have as many cells as the header.
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// "3s ago", "5m ago", "2h ago", "4d ago"; "never" for 0.
std::string FormatAgo(int64_t then_ms, int64_t now_ms);
// "2026-11-22 20:55:48" in UTC.
std::string FormatTimestamp(int64_t unix_ms);

}  // namespace drip::cli
