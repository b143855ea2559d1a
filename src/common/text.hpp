#pragma once
// Small text helpers shared by every reader: lines, fields, numbers.
#include <bit>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalelens {

std::string_view trim(std::string_view s);
bool starts_with_ci(std::string_view s, std::string_view prefix);
std::string to_lower(std::string_view s);

// The first `shown` of `total` names, "a, b, c and 5 more": one way to name a list in a message.
std::string list_first(const std::vector<std::string>& names, std::size_t total, std::size_t shown = 10);
// The first ten of `total` ranks, "0, 1, 2 and 5 more".
std::string list_ranks(const std::vector<int>& ranks, std::size_t total);

// Its letters and digits only, lower-cased: a name as one key whatever its spelling (AllReduce,
// all_reduce; "InfiniBand NDR", "infiniband-ndr").
std::string alnum_lower(std::string_view s);

// Finite decimal number (leading/trailing blanks allowed); nullopt for empty, NaN, inf or junk.
std::optional<double> parse_double(std::string_view s);
std::optional<std::int64_t> parse_int(std::string_view s);

// The fast paths of parse_double and parse_int, for parsers that convert numbers in place instead
// of splitting fields first: scan from `p` up to `end` or the first `stop` byte. They accept only
// a plain decimal ("-12.375": at most 15 significant digits, no exponent) or a plain non-negative
// integer (at most 19 digits, within int64), give the same value parse_double/parse_int would, and
// return the position of the `stop` byte (or `end`); nullptr for anything else (blanks, '+', an
// exponent, more digits), which callers hand to the general functions. An empty field returns `p`.
inline const char* scan_plain_decimal(const char* p, const char* end, char stop, double& out);
inline const char* scan_plain_uint(const char* p, const char* end, char stop, std::int64_t& out);

// Iterates the lines of a buffer without copying; tolerates "\r\n". The last line counts only if
// it ends with a newline or `accept_unterminated_last` is set: an append-only CSV cut by a crash
// is read up to its last complete line.
class LineCursor {
 public:
  // `lines_before`: lines of the file before `text` (a part of a file), counted into line_no.
  explicit LineCursor(std::string_view text, std::int64_t lines_before = 0) : text_(text), line_no_(lines_before) {}
  // Next line, or false at the end. `line_no` is 1-based.
  bool next(std::string_view& line);
  std::int64_t line_no() const { return line_no_; }
  // True when the buffer ended without a newline after the last line returned.
  bool last_was_unterminated() const { return unterminated_; }
  // Byte offset of the next line; skip_to(offset) passes over lines a caller parsed in place
  // (counted as one line: callers skip exactly one newline-terminated line at a time).
  std::size_t position() const { return pos_; }
  void skip_to(std::size_t offset) {
    pos_ = offset;
    ++line_no_;
    unterminated_ = false;
  }

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

// Text on one line: every control character (below 0x20) a space. For text written into a line
// of a file that other programs read line by line (a .dat file, a gnuplot command, a job script),
// where a line break would start a line of its own.
std::string one_line(std::string_view s);

// `s` safe to print on a terminal: control characters (C0, DEL, C1 such as ESC and CSI) shown as
// \n, \t, \x1b, \u009b, so that a label, run id or file name cannot clear the screen, move the
// cursor or forge lines. Only for terminal output; JSON keeps the text intact.
std::string printable(std::string_view s);

// Length of the valid UTF-8 sequence that starts at s[i], or 0 if there is none.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);
// `s` with every byte that is not part of valid UTF-8 replaced by U+FFFD (for XML and other
// outputs that must be valid UTF-8 whatever a label or path holds).
std::string valid_utf8(std::string_view s);
// At most `max` characters of `s`, cut at a character boundary, "…" at the end when cut.
std::string cut_text(std::string_view s, std::size_t max);

// Display width of UTF-8 text on a terminal, for aligning columns (± is two bytes, one column).
std::size_t display_width(std::string_view s);

// An efficiency (1 = linear) as a percentage: whole percents, with as many decimals (up to 3) as
// it takes not to round onto 100% from either side (1.004 → "100.4%", 0.996 → "99.6%"), so that a
// figure never contradicts a verdict of "more (or less) than 100% efficient" made on the value.
// Kept apart from another threshold in the same way (--min-efficiency 0.7: 0.6996 → "69.96%", not
// "70%" beside "left out for being under 70%").
std::string efficiency_percent(double efficiency, double threshold = 1.0);

// The unit of one of a plural unit: "GPU" of "GPUs", "rank" of "ranks" (a study's world_size_unit).
std::string one_unit(std::string_view plural_unit);
// A count in a plural unit, singular for 1: "8 GPUs", "1 GPU", "1 rank" (never "1 GPUs").
std::string count_of(long long n, std::string_view plural_unit);

// Column index by exact name (after trimming), or -1.
int find_column(const std::vector<std::string_view>& header, std::string_view name);

// Inline: they run once per field of every sample line, inside the readers' loops.
namespace detail {
inline constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                    1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16};
inline bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// Takes the eight bytes at p into `value` when all are digits: one load, a check and three
// multiplies instead of eight turns of a byte loop (a sample line's 19-digit timestamp and
// byte counts are most of its digits). Each byte is '0'…'9' when its high nibble is 3 and
// stays 3 with 6 added.
inline bool take_eight_digits(const char*& p, const char* end, std::uint64_t& value) {
  if (end - p < 8) return false;
  std::uint64_t chunk;
  std::memcpy(&chunk, p, 8);
  if constexpr (std::endian::native == std::endian::big) chunk = __builtin_bswap64(chunk);
  constexpr std::uint64_t kHigh = 0xF0F0F0F0F0F0F0F0ULL;
  if (((chunk & kHigh) | (((chunk + 0x0606060606060606ULL) & kHigh) >> 4)) != 0x3333333333333333ULL) return false;
  chunk = ((chunk & 0x0F0F0F0F0F0F0F0FULL) * 2561) >> 8;             // pairs of digits
  chunk = ((chunk & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;         // groups of four
  value = value * 100000000 + (((chunk & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32);
  p += 8;
  return true;
}
}  // namespace detail

// Whether n bytes at a and b are the same: inline, eight at a time (the last eight overlapping the
// ones before), for the short fields a reader compares on every line, where a call to memcmp costs
// more than the compare.
inline bool same_bytes(const char* a, const char* b, std::size_t n) {
  if (n < 8) return std::memcmp(a, b, n) == 0;
  std::uint64_t x, y, diff = 0;
  for (std::size_t i = 0; i + 8 < n; i += 8) {
    std::memcpy(&x, a + i, 8), std::memcpy(&y, b + i, 8);
    diff |= x ^ y;
  }
  std::memcpy(&x, a + n - 8, 8), std::memcpy(&y, b + n - 8, 8);
  return (diff | (x ^ y)) == 0;
}

// Digits, an optional '.' and more digits, 15 of them at most (leading zeros included, which keeps
// the loop simple; longer numbers go to from_chars): digits / 10^k is then exactly rounded
// (Clinger's fast path, as fast_float uses).
inline const char* scan_plain_decimal(const char* p, const char* end, char stop, double& out) {
  const char* const begin = p;
  const bool negative = p < end && *p == '-';
  p += negative;
  std::uint64_t digits = 0;
  const char* const first = p;
  detail::take_eight_digits(p, end, digits);  // one chunk at most: 15 digits in all
  while (p < end && detail::is_digit(*p)) digits = digits * 10 + static_cast<unsigned>(*p++ - '0');
  std::ptrdiff_t count = p - first, fraction = 0;
  if (p < end && *p == '.') {
    const char* const dot = ++p;
    if (count <= 7) detail::take_eight_digits(p, end, digits);
    while (p < end && detail::is_digit(*p)) digits = digits * 10 + static_cast<unsigned>(*p++ - '0');
    fraction = p - dot;
    count += fraction;
  }
  if (p < end && *p != stop) return nullptr;
  if (p == begin) return p;  // empty field
  if (count == 0 || count > 15) return nullptr;
  // No division for whole numbers (most fields): its latency held up a sample line's parse.
  const double v = fraction ? static_cast<double>(digits) / detail::kPow10[fraction] : static_cast<double>(digits);
  out = negative ? -v : v;
  return p;
}

inline const char* scan_plain_uint(const char* p, const char* end, char stop, std::int64_t& out) {
  const char* const first = p;
  std::uint64_t v = 0;
  while (p - first <= 11 && detail::take_eight_digits(p, end, v)) {}  // 19 digits at most in all
  while (p < end && detail::is_digit(*p) && p - first < 19) v = v * 10 + static_cast<unsigned>(*p++ - '0');
  if (p < end && *p != stop) return nullptr;  // not a digit, or a 20th one
  if (v > static_cast<std::uint64_t>(INT64_MAX)) return nullptr;
  out = static_cast<std::int64_t>(v);
  return p;
}

}  // namespace scalelens
