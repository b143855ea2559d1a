#include "common/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

namespace scalelens {

std::string efficiency_percent(double efficiency, double threshold) {
  const double percent = 100 * efficiency, threshold_percent = 100 * threshold;
  for (int decimals = 0; decimals <= 3; ++decimals) {
    // The text itself is compared: it, not the value, is what a reader sees on one side or the other.
    const auto text = fmt::format("{:.{}f}", percent, decimals);
    const double shown = std::isfinite(percent) ? std::stod(text) : percent;
    if (!std::isfinite(percent) || ((shown < threshold_percent) == (percent < threshold_percent) &&
                                     (shown > threshold_percent) == (percent > threshold_percent)))
      return text + "%";
  }
  // Within 0.0005 points of the threshold: the arithmetic's rounding, not a difference.
  return fmt::format("{:.4g}%", threshold_percent);
}

std::string one_unit(std::string_view plural_unit) {
  return std::string(plural_unit.ends_with('s') ? plural_unit.substr(0, plural_unit.size() - 1) : plural_unit);
}

std::string count_of(long long n, std::string_view plural_unit) {
  return fmt::format("{} {}", n, n == 1 ? one_unit(plural_unit) : std::string(plural_unit));
}

std::string list_first(const std::vector<std::string>& names, std::size_t total, std::size_t shown) {
  std::string s;
  shown = std::min(names.size(), shown);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + names[i];
  if (total > shown) s += fmt::format(" and {} more", total - shown);
  return s;
}

std::string list_ranks(const std::vector<int>& ranks, std::size_t total) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < std::min<std::size_t>(ranks.size(), 10); ++i) names.push_back(std::to_string(ranks[i]));
  return list_first(names, total);
}

std::string alnum_lower(std::string_view s) {
  std::string key;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}


std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') {
    s.remove_prefix(1);
    if (s.empty() || s.front() == '-' || s.front() == '+') return std::nullopt;  // "+-5" is no number
  }
  double v = 0;
  const char* end = s.data() + s.size();
  if (scan_plain_decimal(s.data(), end, '\0', v) == end) return v;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') {
    s.remove_prefix(1);
    if (s.empty() || s.front() == '-' || s.front() == '+') return std::nullopt;  // "+-5" is no number
  }
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  if (scan_plain_uint(s.data(), end, '\0', v) == end) return v;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string one_line(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  return out;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else if (c < 0x80) out += static_cast<char>(c);
    else if (const std::size_t len = utf8_sequence_length(s, i); len == 0) {
      // A byte of no well-formed sequence: a lone 0x9b is a one-byte CSI to 8-bit terminals.
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xc2 && static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      // C1 controls (U+0080..U+009F; U+009B is a one-byte CSI to many terminals).
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[++i]));
    } else {
      out.append(s.substr(i, len));
      i += len - 1;
    }
  }
  return out;
}

bool LineCursor::next(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  const char* begin = text_.data() + pos_;
  const void* nl = std::memchr(begin, '\n', text_.size() - pos_);
  std::size_t len;
  if (nl) {
    len = static_cast<std::size_t>(static_cast<const char*>(nl) - begin);
    pos_ += len + 1;
    unterminated_ = false;
  } else {
    len = text_.size() - pos_;
    pos_ = text_.size();
    unterminated_ = true;
  }
  if (len > 0 && begin[len - 1] == '\r') --len;
  line = std::string_view(begin, len);
  ++line_no_;
  return true;
}

void split_csv(std::string_view line, std::vector<std::string_view>& out, char sep) {
  out.clear();
  const char* p = line.data();
  const char* const end = p + line.size();
  // A plain byte loop: fields are short, so memchr's set-up per field costs more than it saves.
  while (true) {
    if (p < end && *p == '"') {
      const char* close = p + 1;
      while (close < end && *close != '"') ++close;
      out.emplace_back(p + 1, static_cast<std::size_t>(close - p - 1));
      p = close;
      while (p < end && *p != sep) ++p;
    } else {
      const char* start = p;
      while (p < end && *p != sep) ++p;
      out.emplace_back(start, static_cast<std::size_t>(p - start));
    }
    if (p >= end) return;
    ++p;  // past the separator
  }
}

int find_column(const std::vector<std::string_view>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (trim(header[i]) == name) return static_cast<int>(i);
  return -1;
}

std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  // RFC 3629's well-formed sequences only: no overlong form, no UTF-16 surrogate (U+D800..DFFF),
  // nothing past U+10FFFF. JSON parsers (Python's, the browser's) refuse these, so one passed on
  // would make summary.json or the page unreadable.
  const unsigned char c1 = b(i + 1 < s.size() ? i + 1 : i);
  if (len == 2 && c < 0xC2) return 0;
  if (len == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return 0;
  if (len == 4 && (c > 0xF4 || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))) return 0;
  return len;
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string cut_text(std::string_view s, std::size_t max) {
  if (display_width(s) <= max || max == 0) return std::string(s);
  std::size_t i = 0, chars = 0;
  while (i < s.size() && chars + 1 < max) {
    const std::size_t len = utf8_sequence_length(s, i);
    i += len == 0 ? 1 : len;
    ++chars;
  }
  return std::string(s.substr(0, i)) + "\xE2\x80\xA6";  // …
}

}  // namespace scalelens
