#pragma once
// Counts the lines a reader had to skip, so that a file yields one warning (count and first line)
// rather than one per line: a broken log can have millions of bad lines.
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

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
    out.warn("bad-lines", skipped(count_, fmt::format("line {}", first_line_), first_reason_), path, first_line_);
  }
  // That warning's words: `count` lines skipped, the first (`first`: "line 7") for `reason`.
  static std::string skipped(std::int64_t count, std::string_view first, std::string_view reason) {
    return fmt::format("{} line{} skipped; the first, {}: {}", count, count == 1 ? "" : "s", first, reason);
  }
  // Of a warning in those words (ingest takes lines back from it): the count, and its first line's reason.
  static std::int64_t count_said(std::string_view message) {
    std::int64_t count = 0;
    std::from_chars(message.data(), message.data() + message.size(), count);
    return count;
  }
  static std::string_view reason_said(std::string_view message) {
    const auto at = message.find(": ");
    return at == std::string_view::npos ? std::string_view{} : message.substr(at + 2);
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

// Epoch numbers a one-rank log gives more than once (a run restarted from a checkpoint logs its
// epochs again): each number counts once, its time the longest, as for the ranks of one epoch.
// That is said, once per file (it was silent).
class RepeatedEpochs {
 public:
  // `seconds`: the epoch's time where the reader has it, so that the warning shows both values.
  void add(std::int64_t epoch, std::int64_t line, std::optional<double> seconds = std::nullopt) {
    auto [it, first] = first_of_.emplace(epoch, Logged{line, seconds});
    if (!first && repeats_++ == 0) epoch_ = epoch, first_ = it->second, again_ = {line, seconds};
  }
  void report(ReadOutput& out, const std::filesystem::path& path) const {
    if (repeats_ == 0) return;
    auto at = [](const Logged& l) { return l.seconds ? fmt::format("line {} ({:g} s)", l.line, *l.seconds) : fmt::format("line {}", l.line); };
    out.warn("repeated-epoch",
             fmt::format("{} epoch{} logged again; the first, epoch {} at {} and {}: each epoch number counts once, "
                         "its time the longest (a run restarted from a checkpoint? its repeated epochs are then merged, not added)",
                         repeats_, repeats_ == 1 ? "" : "s", epoch_, at(first_), at(again_)),
             path, again_.line);
  }

 private:
  struct Logged {
    std::int64_t line = 0;
    std::optional<double> seconds;
  };
  std::map<std::int64_t, Logged> first_of_;
  std::size_t repeats_ = 0;
  std::int64_t epoch_ = 0;
  Logged first_, again_;
};

}  // namespace scalelens
