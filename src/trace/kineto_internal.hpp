#pragma once
// Pieces of the Kineto parser shared by its two On-Demand walks (kineto.cpp: simdjson's
// portable kernel; kineto_walk_avx2.cpp: the AVX2 kernel). Not for use outside src/trace.
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "model/limits.hpp"
#include "trace/kineto.hpp"
#include "trace/roofline.hpp"
#include "trace/simdjson_fields.hpp"

namespace scalelens::trace::detail {

EventCat category_of(std::string_view cat);

enum class NumStatus { ok, not_a_number, out_of_range };
// A JSON number in µs as exact integer nanoseconds (no double rounding of 1.7e15 µs values).
NumStatus micros_to_ns(std::string_view token, std::int64_t& ns, bool& is_float);

// `error_code` is a simdjson::error_code; `where` a position in `buffer` or null.
Error json_error(int error_code, const std::string& path, std::string_view buffer, const char* where);

std::optional<std::int64_t> first_rank_text(std::string_view text);

// A raw JSON value's text without the whitespace On-Demand leaves after it.
inline std::string_view trim_json(std::string_view raw) {
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) raw.remove_suffix(1);
  return raw;
}
// The first string of a JSON array's text ("[\"float\", ...]" -> float); "" when there is none or it
// has escapes (type names have none).
inline std::string_view first_json_string(std::string_view raw) {
  auto open = raw.find('"');
  if (open == std::string_view::npos) return {};
  auto close = raw.find('"', open + 1);
  if (close == std::string_view::npos) return {};
  auto s = raw.substr(open + 1, close - open - 1);
  return s.find('\\') == std::string_view::npos ? s : std::string_view();
}

Result<ParsedTrace> parse_events_fallback(std::string_view buffer, std::size_t capacity, const std::string& path,
                                          ParsedTrace out);
Result<ParsedTrace> parse_events_avx2(std::string_view buffer, std::size_t capacity, const std::string& path,
                                      ParsedTrace out);
// One slice of a chunked parse (kineto.cpp); `text` is the file's text in memory, whose byte 0 is
// the file's byte `text_at`, for the byte offsets of messages.
bool parse_slice_fallback(std::string_view slice, std::size_t capacity, bool events_array, std::string_view text,
                          std::size_t text_at, ParsedTrace& out);
bool parse_slice_avx2(std::string_view slice, std::size_t capacity, bool events_array, std::string_view text,
                      std::size_t text_at, ParsedTrace& out);

// Event names repeat (a few thousand distinct among 10^5..10^6 events): store each once.
class Interner {
 public:
  explicit Interner(std::vector<std::string>& names) : names_(names) {
    names_.clear();
    names_.emplace_back();
    index_.emplace(std::string_view(), 0);
  }
  std::uint32_t operator()(std::string_view s) {
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    // The index keys point into heap strings that never move.
    auto& stored = store_.emplace_back(std::make_unique<std::string>(s));
    auto id = static_cast<std::uint32_t>(names_.size());
    names_.push_back(*stored);
    index_.emplace(std::string_view(*stored), id);
    return id;
  }

 private:
  std::vector<std::string>& names_;
  std::vector<std::unique_ptr<std::string>> store_;
  std::unordered_map<std::string_view, std::uint32_t> index_;
};

// Problems with single events are counted by kind; the first one's byte offset is named.
struct IssueCounter {
  std::vector<ParseIssue>& issues;
  void add(const std::string& code, std::size_t offset, std::string_view what) {
    for (auto& i : issues)
      if (i.code == code) {
        ++i.count;
        return;
      }
    issues.push_back({code, offset ? fmt::format("{} (first at byte {})", what, offset) : std::string(what), 1});
  }
};

// A "ts" or "dur" (`is_ts`) whose token `tok` is neither a number nor null: the issue that leaves
// its event out, saying why (a string, "1694…", or other text). The walk leaves the event out at
// once, since a "no dur" / "no ts" said of it after would be untrue. Out of line, in the portable
// code: rare, and inlined into the walk it slowed every event.
void not_a_time(IssueCounter& issues, std::size_t offset, bool is_ts, std::string_view tok);

// The parts of a sliced parse merged in file order: names are interned again (a few thousand per
// slice) and indices remapped. When the size of the events' text is known, each part is merged as
// soon as the parts before it are, and freed, into events reserved from the first parts' density:
// the trace's events are then held about once, not once in the parts and again in the merged
// trace (issue 17, part 3). A streamed gzip gives a guess of that size after its first slice;
// until a size is known the parts wait, and those still waiting at the end are merged then into
// events reserved exactly. The result is the same either way.
class PartsInOrder {
 public:
  // Fewer bytes than an event takes as Kineto writes it (ph, cat, name, pid, tid, ts, dur): a
  // denser hand-made trace is still read right, its events grown again as needed.
  static constexpr double kMinEventBytes = 32;

  // events_bytes: the length of the events array's text, 0 when not known (yet).
  PartsInOrder(std::string path, std::size_t events_bytes);
  // A guess of the events' text length (a gzip stream's at its ratio so far): from now on parts
  // are merged as they come. Thread-safe.
  void expect_events_bytes(std::size_t bytes);
  // Part `i` (0-based, in file order), parsed from `bytes` bytes of the events' text. Thread-safe.
  void add(std::size_t i, ParsedTrace&& part, std::size_t bytes);
  // The merged trace, with what the text before and after the events says. After every add.
  ParsedTrace finish(std::size_t size, ParsedTrace& head_part, ParsedTrace& tail_part,
                     const std::vector<std::optional<std::int64_t>>& part_rank, std::optional<std::int64_t> rank_text,
                     std::optional<std::int64_t> trailer_rank);

 private:
  struct Waiting {
    ParsedTrace part;
    std::size_t bytes = 0;
    bool parsed = false;
  };
  void merge(Waiting& waiting);

  std::size_t events_bytes_;
  std::size_t merged_bytes_ = 0, next_ = 0;
  ParsedTrace out_;
  Interner intern_;  // into out_.names: declared after it
  std::vector<std::uint32_t> remap_;
  std::vector<Waiting> waiting_;
  std::mutex mutex_;
};

}  // namespace scalelens::trace::detail
