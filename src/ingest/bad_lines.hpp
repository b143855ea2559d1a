#pragma once
// Counts the lines a reader had to skip, so that a file yields one warning (count and first line)
// rather than one per line: a broken log can have millions of bad lines.
#include <cstdint>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "ingest/reader.hpp"

namespace scalelens {

class BadLines {
 public:
  void add(std::int64_t line, std::string reason) {
    if (count_++ == 0) {
      first_line_ = line;
      first_reason_ = std::move(reason);
    }
  }
  std::int64_t count() const { return count_; }

  // One warning naming the file and the first bad line; nothing when every line was good.
  void report(ReadOutput& out, const std::filesystem::path& path) const {
    if (count_ == 0) return;
    out.warn("bad-lines",
             fmt::format("{} line{} skipped; the first, line {}: {}", count_, count_ == 1 ? "" : "s",
                         first_line_, first_reason_),
             path, first_line_);
  }

  // The same for values outside physical limits (model/limits.hpp), left out one by one while the
  // rest of their line is kept (or the whole line, where the reason says so).
  void report_implausible(ReadOutput& out, const std::filesystem::path& path) const {
    if (count_ == 0) return;
    out.warn("implausible-value",
             fmt::format("{} value{} beyond physical limits left out; the first, line {}: {}", count_,
                         count_ == 1 ? "" : "s", first_line_, first_reason_),
             path, first_line_);
  }

 private:
  std::int64_t count_ = 0;
  std::int64_t first_line_ = 0;
  std::string first_reason_;
};

}  // namespace scalelens
