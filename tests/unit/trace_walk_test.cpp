// The trace walk's own steps over simdjson's On-Demand objects (trace/simdjson_fields.hpp) must
// be simdjson's object_iterator's, on good JSON and bad; and a timestamp read a word at a time
// (micros_to_ns) must be exact for every digit count.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/test_support.hpp"
#include "trace/kineto_internal.hpp"

namespace scalelens::trace {
namespace {
namespace od = simdjson::ondemand;
using detail::micros_to_ns;
using detail::NumStatus;

// Every step of iterating each event object and its "args" object: each key (up to its
// closing quote), each other value's raw token, and the error where one stops the walk. With
// `ours`, fields come from for_each_field; else from simdjson's range-for over the object.
std::string walk_log(const std::string& text, bool ours) {
  od::parser parser;
  const simdjson::padded_string padded(text);
  std::string log;
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc)) return std::string("iterate: ") + simdjson::error_message(e);
  od::array events;
  // Kineto's object with its traceEvents, or Chrome's array format (the events alone).
  const bool array_format = text.find_first_not_of(" \t\r\n") < text.size() && text[text.find_first_not_of(" \t\r\n")] == '[';
  if (auto e = (array_format ? doc.get_array() : doc["traceEvents"].get_array()).get(events))
    return std::string("traceEvents: ") + simdjson::error_message(e);
  auto visit = [&](auto& self, od::object& object) -> simdjson::error_code {
    auto body = [&](od::raw_json_string key, od::value& value) -> simdjson::error_code {
      const std::string_view raw(key.raw());
      const std::string_view name = raw.substr(0, std::min(raw.find('"'), std::size_t{40}));
      log += std::string(name) + "=";
      if (name == "args") {
        od::object inner;
        if (!value.get_object().get(inner)) {
          log += "{";
          auto e = self(self, inner);
          log += "}";
          return e;
        }
      }
      // An array is left partly read, as the trace walk leaves "Input type": its first element only.
      od::array elements;
      if (!value.get_array().get(elements)) {
        for (auto element_r : elements) {
          od::value element;
          if (auto e = std::move(element_r).get(element)) return e;
          log += "[" + std::string(element.raw_json_token().substr(0, 40)) + "...];";
          break;
        }
        return simdjson::SUCCESS;
      }
      log += std::string(value.raw_json_token().substr(0, 40)) + ";";
      return simdjson::SUCCESS;
    };
    if (ours) return for_each_field<od::value>(object, body);
    for (auto field_r : object) {
      od::field field;
      if (auto e = std::move(field_r).get(field)) return e;
      if (auto e = body(field.key(), field.value())) return e;
    }
    return simdjson::SUCCESS;
  };
  for (auto event_r : events) {
    od::object event;
    if (auto e = event_r.get_object().get(event)) {
      log += std::string(" not an object: ") + simdjson::error_message(e) + "\n";
      if (e != simdjson::INCORRECT_TYPE) break;
      continue;
    }
    if (auto e = visit(visit, event)) {
      log += std::string(" stopped: ") + simdjson::error_message(e) + "\n";
      break;
    }
    log += "\n";
  }
  return log;
}

// Small traces in Kineto's shapes: the trace fuzzer's seeds.
std::vector<std::string> seed_traces() {
  std::vector<std::string> texts;
  const std::filesystem::path dir = std::filesystem::path(SCALELENS_SOURCE_DIR) / "fuzz/corpus/trace_reader";
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) texts.push_back(scalelens::testing::slurp(entry.path()));
  return texts;
}

TEST(TraceWalk, FieldsAreSteppedAsSimdjsonsObjectIteratorStepsThem) {
  const auto seeds = seed_traces();
  ASSERT_GE(seeds.size(), 3u);
  for (const auto& text : seeds) {
    const std::string log = walk_log(text, true);
    EXPECT_NE(log.find("ts="), std::string::npos) << text.substr(0, 200);
    EXPECT_EQ(log, walk_log(text, false));
  }
}

TEST(TraceWalk, BrokenJsonStopsTheWalkWhereSimdjsonsIteratorStops) {
  // Seeds with bytes changed, removed or repeated, mostly to JSON's structural characters, so that
  // fields lose their colon, comma, quote or closing brace at every depth of the walk.
  const auto seeds = seed_traces();
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(17);
  const std::string structural = "{}[],:\"\\ 0a-.e";
  std::size_t stopped = 0, runs = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = seeds[rng() % seeds.size()];
    if (text.size() > 6000) text = text.substr(0, 6000);  // cut: most broken inputs end early anyway
    const int changes = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < changes && !text.empty(); ++c) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[at] = structural[rng() % structural.size()]; break;
        case 1: text.erase(at, 1 + rng() % 3); break;
        default: text.insert(at, text.substr(at, std::min<std::size_t>(1 + rng() % 8, text.size() - at)));
      }
    }
    const std::string ours = walk_log(text, true);
    ASSERT_EQ(ours, walk_log(text, false)) << "input: " << text;
    stopped += ours.find("stopped:") != std::string::npos;
    runs += ours.find('\n') != std::string::npos;
  }
  // The inputs reached the walk, and many of them broke it partway.
  EXPECT_GT(runs, 1000u);
  EXPECT_GT(stopped, 300u);
}

// What micros_to_ns must give for a token of digits, '.', more digits, with `negative` and
// `digits` (the whole part) held exactly: ns rounded to the nearest at the fourth decimal, and
// out of range beyond ±4e18 ns.
void expect_exact(const std::string& token) {
  std::int64_t ns = 0;
  bool is_float = false;
  const NumStatus status = micros_to_ns(token, ns, is_float);
  std::size_t i = token[0] == '-';
  const bool negative = i == 1;
  __int128 whole = 0;
  for (; i < token.size() && token[i] != '.'; ++i) whole = std::min<__int128>(whole * 10 + (token[i] - '0'), __int128{1} << 100);
  __int128 frac = 0;
  int digits = 0;
  bool round_up = false;
  for (++i; i < token.size(); ++i, ++digits) {
    if (digits < 3) frac = frac * 10 + (token[i] - '0');
    else if (digits == 3) round_up = token[i] >= '5';
  }
  for (int d = digits; d < 3; ++d) frac *= 10;
  if (whole > 3'999'999'999'999'999) {
    EXPECT_EQ(status, NumStatus::out_of_range) << token;
    return;
  }
  ASSERT_EQ(status, NumStatus::ok) << token;
  const __int128 expected = whole * 1000 + frac + round_up;
  EXPECT_EQ(ns, static_cast<std::int64_t>(negative ? -expected : expected)) << token;
  EXPECT_EQ(is_float, token.find('.') != std::string::npos) << token;
}

TEST(TraceWalk, MicrosecondsAreExactForEveryDigitCount) {
  std::mt19937_64 rng(5);
  for (int n = 0; n < 20000; ++n) {
    std::string token = rng() % 8 == 0 ? "-" : "";
    const int whole = 1 + static_cast<int>(rng() % 22);
    for (int d = 0; d < whole; ++d) token += static_cast<char>('0' + (rng() % 5 == 0 ? 0 : rng() % 10));
    if (rng() % 2) {
      token += '.';
      const int fraction = 1 + static_cast<int>(rng() % 7);
      for (int d = 0; d < fraction; ++d) token += static_cast<char>('0' + rng() % 10);
    }
    expect_exact(token);
  }
  // The edges: the largest accepted whole part, one more, and 16 digits exactly.
  for (const char* token : {"3999999999999999", "3999999999999999.9995", "4000000000000000", "1700000000000000.123",
                            "0000000000000000001", "9999999999999999", "0", "-3999999999999999.999"})
    expect_exact(token);
  // What is not digits and a fraction: blanks after it, an exponent, junk inside the first 16
  // digits or after them, a sign or a point alone.
  std::int64_t ns = 0;
  bool is_float = false;
  EXPECT_EQ(micros_to_ns("1700000000000000 \n", ns, is_float), NumStatus::ok);
  EXPECT_EQ(ns, 1700000000000000000);
  EXPECT_EQ(micros_to_ns("1.5e3", ns, is_float), NumStatus::ok);
  EXPECT_EQ(ns, 1500000);
  EXPECT_TRUE(is_float);
  for (const char* junk : {"12345678x9", "1234567890123x45678", "12345678901234567x", "-", "1.", "-.5", ".5", "1,5", "0x10", ""})
    EXPECT_EQ(micros_to_ns(junk, ns, is_float), NumStatus::not_a_number) << junk;
  EXPECT_EQ(micros_to_ns("12345678901234567890123", ns, is_float), NumStatus::out_of_range);
  EXPECT_EQ(micros_to_ns("1e300", ns, is_float), NumStatus::out_of_range);
}

// Exponent notation names the same decimal number as the plain form: the same nanoseconds, in
// every way JSON allows writing it (Python's json reads 1.694128201435418e+15 to the double of
// 1694128201435418). Through a double the ns were 256 ns coarse and HTA's rounding moved events.
TEST(TraceWalk, ExponentFormsAreTheSameNanosecondsAsThePlainForm) {
  std::mt19937_64 rng(7);
  for (int n = 0; n < 20000; ++n) {
    // A plain time of up to 16 whole digits and up to 3 decimals: exact in ns.
    std::string digits;
    const int whole = 1 + static_cast<int>(rng() % 15), fraction = static_cast<int>(rng() % 4);
    digits += static_cast<char>('1' + rng() % 9);
    for (int d = 1; d < whole + fraction; ++d) digits += static_cast<char>('0' + rng() % 10);
    const std::string sign = rng() % 8 == 0 ? "-" : "";
    const std::string plain = sign + digits.substr(0, whole) + (fraction ? "." + digits.substr(whole) : "");
    std::int64_t want = 0, got = 0;
    bool is_float = false;
    ASSERT_EQ(micros_to_ns(plain, want, is_float), NumStatus::ok) << plain;
    // The point moved k places left (1.694e+15), right past leading zeros (0.001694e+18), or not
    // at all (1694e0), in any of e, E, e+, e-.
    const int k = static_cast<int>(rng() % 20) - 3;
    const int point = whole - k;  // places of digits before the point, ≤ 0: zeros first
    std::string mantissa = point <= 0 ? "0." + std::string(static_cast<std::size_t>(-point), '0') + digits
                           : static_cast<std::size_t>(point) >= digits.size()
                               ? digits + std::string(static_cast<std::size_t>(point) - digits.size(), '0')
                               : digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
    if (rng() % 3 == 0 && mantissa.find('.') != std::string::npos) mantissa += "000";  // trailing zeros
    const char* marks[] = {"e", "E", "e+", "E+"};
    const std::string exp_text = k < 0 ? "e-" + std::to_string(-k) : marks[rng() % 4] + std::to_string(k);
    const std::string token = sign + mantissa + exp_text;
    ASSERT_EQ(micros_to_ns(token, got, is_float), NumStatus::ok) << token;
    EXPECT_EQ(got, want) << token << " vs " << plain;
    EXPECT_TRUE(is_float) << token;
  }
  std::int64_t ns = 0;
  bool is_float = false;
  // Digits beyond a uint64 that an exponent scales back; sub-ns digits rounded half up as in the
  // plain form; tiny numbers; the limits.
  const std::pair<const char*, std::int64_t> exact[] = {
      {"1.694128201435418e+15", 1694128201435418000},       {"16941282014354180000000e-7", 1694128201435418000},
      {"1.6941282014354180005e15", 1694128201435418001},    {"1.6941282014354180004999e15", 1694128201435418000},
      {"5e-4", 1},                                          {"4e-4", 0},
      {"1e-300", 0},                                        {"0e999", 0},
      {"-3.999999999999999e15", -3999999999999999000}};
  for (const auto& [token, want] : exact) {
    ASSERT_EQ(micros_to_ns(token, ns, is_float), NumStatus::ok) << token;
    EXPECT_EQ(ns, want) << token;
  }
  EXPECT_EQ(micros_to_ns("4e15", ns, is_float), NumStatus::out_of_range);
  EXPECT_EQ(micros_to_ns("1e19", ns, is_float), NumStatus::out_of_range);
  for (const char* junk : {"1e", "1e+", "1.e5", "e5", "1e5.0", "1e5x", "1ee5", "-e5"})
    EXPECT_EQ(micros_to_ns(junk, ns, is_float), NumStatus::not_a_number) << junk;
}

}  // namespace
}  // namespace scalelens::trace
