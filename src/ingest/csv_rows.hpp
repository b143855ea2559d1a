#pragma once
// The row loop of every CSV reader: columns found by name in the header (any order, extra columns
// ignored), blank lines skipped, lines of the wrong width counted as bad, and, for files appended
// while a job runs, a last line without its newline named and left out.
#include <array>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/reader.hpp"

namespace scalelens {

// Whether the file may have been cut while being written (run-folder CSVs are appended line by
// line) or was written whole (a last line without a newline is then still a line).
enum class LastLine { may_be_cut, complete };

// Reads the CSV `text` whose header names `columns`; calls row(fields, line_no) with fields indexed
// like `columns` (empty for absent columns); a header without one of the first `required` columns
// is an error and the file is left out. Lines of the wrong width go to `bad`. A reader may pass
// `fast(line_begin, text_end, column_of_field, line_no)`, which parses one ordinary line in place and
// returns the position after its newline, or nullptr to have that line go the general way.
struct NoFastPath {
  const char* operator()(const char*, const char*, std::span<const int>, std::int64_t) const { return nullptr; }
};

template <std::size_t N, class Row, class Fast = NoFastPath>
bool for_each_row(std::string_view text, const std::array<std::string_view, N>& columns, std::size_t required,
                  ReadOutput& out, const std::filesystem::path& path, BadLines& bad, Row&& row,
                  LastLine last_line = LastLine::may_be_cut, Fast&& fast = {}) {
  LineCursor lines(text);
  std::string_view line;
  std::vector<std::string_view> fields;
  if (!lines.next(line)) return false;
  split_csv(line, fields);
  std::array<int, N> index{};
  for (std::size_t c = 0; c < N; ++c) index[c] = find_column(fields, columns[c]);
  for (std::size_t c = 0; c < required; ++c) {
    if (index[c] < 0) {
      out.error("bad-columns", fmt::format("header lacks the column '{}'; the file is left out", columns[c]), path, 1);
      return false;
    }
  }
  const std::size_t width = fields.size();
  // field_of[i]: which of `columns` the i-th field of a line holds, -1 for none.
  std::vector<int> field_of(width, -1);
  for (std::size_t c = 0; c < N; ++c)
    if (index[c] >= 0) field_of[static_cast<std::size_t>(index[c])] = static_cast<int>(c);
  std::array<std::string_view, N> picked;
  const char* const end = text.data() + text.size();
  while (true) {
    const char* at = text.data() + lines.position();
    if (at < end) {
      if (const char* next = fast(at, end, std::span<const int>(field_of), lines.line_no() + 1)) {
        lines.skip_to(static_cast<std::size_t>(next - text.data()));
        continue;
      }
    }
    if (!lines.next(line)) break;
    if (trim(line).empty()) continue;
    if (last_line == LastLine::may_be_cut && lines.last_was_unterminated()) {
      // An append-only file cut by a crash: its last line may be half written.
      out.warn("truncated-line", "the last line has no line end (file cut while being written?); it is left out",
               path, lines.line_no());
      break;
    }
    split_csv(line, fields);
    if (fields.size() != width) {
      bad.add(lines.line_no(), fmt::format("{} fields where the header has {}", fields.size(), width));
      continue;
    }
    for (std::size_t c = 0; c < N; ++c) picked[c] = index[c] >= 0 ? fields[index[c]] : std::string_view{};
    row(picked, lines.line_no());
  }
  return true;
}

}  // namespace scalelens
