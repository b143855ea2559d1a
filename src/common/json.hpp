#pragma once
// Small JSON helpers over simdjson (reading) and a minimal writer with correct escaping.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/nan_optional.hpp"

namespace scalelens {

// JSON string literal for `s`, quotes included. Invalid UTF-8 bytes become U+FFFD so that the
// output is always valid JSON, whatever a user's label or path holds.
std::string json_quote(std::string_view s);

// Number as JSON: finite values with enough digits to round-trip; NaN/inf become null.
std::string json_number(double v);
// For output people read too (trace summaries): whole numbers below 1e15 exactly, others to
// `significant` digits; NaN/inf as null.
std::string json_number(double v, int significant);

// Tiny streaming writer: keeps commas right; no pretty printing beyond newlines between items.
class JsonWriter {
 public:
  JsonWriter() = default;
  // Hands the text to `sink` in pieces of about 64 KiB as it is written (and the rest at flush()),
  // so that a large document is never whole in memory; str() and take() then hold only the rest.
  explicit JsonWriter(std::function<void(std::string_view)> sink) : sink_(std::move(sink)) {}
  void flush();
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(double v);
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(std::size_t v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(bool v);
  JsonWriter& null();
  template <class T>
  JsonWriter& value(const std::optional<T>& v) {
    return v ? value(*v) : null();
  }
  JsonWriter& value(const NanOptional& v) { return v ? value(*v) : null(); }
  // Raw, already-valid JSON.
  JsonWriter& raw(std::string_view json);
  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void separate();
  std::function<void(std::string_view)> sink_;
  std::string out_;
  bool need_comma_ = false;
  int depth_ = 0;
};

}  // namespace scalelens
