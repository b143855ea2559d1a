#include "common/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace scalelens {

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

namespace {
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Plain decimals ("-12.375", "1410") without exponent, with at most 15 significant digits: the
// value digits / 10^k is then exactly rounded (Clinger's fast path, as fast_float uses). Returns
// false for anything else, which goes to std::from_chars.
bool parse_simple_decimal(std::string_view s, double& out) {
  const char* p = s.data();
  const char* end = p + s.size();
  bool negative = false;
  if (p < end && *p == '-') {
    negative = true;
    ++p;
  }
  std::uint64_t digits = 0;
  int count = 0, fraction = 0;
  bool seen_dot = false, any = false;
  for (; p < end; ++p) {
    char c = *p;
    if (c >= '0' && c <= '9') {
      if (count == 0 && c == '0') {
        if (seen_dot) ++fraction;
        any = true;
        continue;  // leading zeros carry no significance
      }
      if (++count > 15) return false;
      digits = digits * 10 + static_cast<std::uint64_t>(c - '0');
      if (seen_dot) ++fraction;
      any = true;
    } else if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else {
      return false;
    }
  }
  if (!any || fraction > 22) return false;
  double v = static_cast<double>(digits) / kPow10[fraction];
  out = negative ? -v : v;
  return true;
}
}  // namespace

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  double v = 0;
  if (parse_simple_decimal(s, v)) return v;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  // Hand loop for the common case of up to 18 digits (cannot overflow); from_chars otherwise.
  if (s.size() <= 18 && s.front() != '-') {
    std::int64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  }
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
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

}  // namespace scalelens
