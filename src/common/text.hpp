#pragma once
// Small text helpers shared by every reader: lines, fields, numbers.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalelens {

std::string_view trim(std::string_view s);
bool starts_with_ci(std::string_view s, std::string_view prefix);
std::string to_lower(std::string_view s);

// Finite decimal number (leading/trailing blanks allowed); nullopt for empty, NaN, inf or junk.
std::optional<double> parse_double(std::string_view s);
std::optional<std::int64_t> parse_int(std::string_view s);

// Iterates the lines of a buffer without copying; tolerates "\r\n". The last line counts only if
// it ends with a newline or `accept_unterminated_last` is set: an append-only CSV cut by a crash
// is read up to its last complete line.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}
  // Next line, or false at the end. `line_no` is 1-based.
  bool next(std::string_view& line);
  std::int64_t line_no() const { return line_no_; }
  // True when the buffer ended without a newline after the last line returned.
  bool last_was_unterminated() const { return unterminated_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::int64_t line_no_ = 0;
  bool unterminated_ = false;
};

// Splits one CSV line at commas into `out` (cleared first). Double-quoted fields may hold commas;
// quotes are removed, doubled quotes unescaped into `scratch`-backed views are not supported
// (none of the formats we read produce them).
void split_csv(std::string_view line, std::vector<std::string_view>& out, char sep = ',');

// Column index by exact name (after trimming), or -1.
int find_column(const std::vector<std::string_view>& header, std::string_view name);

}  // namespace scalelens
