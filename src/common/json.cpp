#include "common/json.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/text.hpp"

namespace scalelens {

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      std::size_t len = utf8_sequence_length(s, i);
      if (len == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      // '<' escaped so that JSON inlined into an HTML <script> can never close it.
      case '<': out += "\\u003c"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);  // shortest representation that round-trips
}

std::string json_number(double v, int significant) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<std::int64_t>(v));
  return fmt::format("{:.{}g}", v, significant);
}

void JsonWriter::separate() {
  if (sink_ && out_.size() >= (64u << 10)) flush();
  if (need_comma_) out_ += ',';
  need_comma_ = true;
}

void JsonWriter::flush() {
  if (!sink_ || out_.empty()) return;
  sink_(out_);
  out_.clear();
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  out_ += '{';
  need_comma_ = false;
  ++depth_;
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  out_ += '}';
  need_comma_ = true;
  --depth_;
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  separate();
  out_ += '[';
  need_comma_ = false;
  ++depth_;
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  out_ += ']';
  need_comma_ = true;
  --depth_;
  return *this;
}
JsonWriter& JsonWriter::key(std::string_view k) {
  separate();
  if (depth_ <= 2) out_ += '\n';
  out_ += json_quote(k);
  out_ += ':';
  need_comma_ = false;
  return *this;
}
JsonWriter& JsonWriter::value(std::string_view s) {
  separate();
  out_ += json_quote(s);
  return *this;
}
JsonWriter& JsonWriter::value(double v) {
  separate();
  out_ += json_number(v);
  return *this;
}
JsonWriter& JsonWriter::value(std::int64_t v) {
  separate();
  out_ += fmt::format("{}", v);
  return *this;
}
JsonWriter& JsonWriter::value(bool v) {
  separate();
  out_ += v ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}
JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_ += json;
  return *this;
}

}  // namespace scalelens
