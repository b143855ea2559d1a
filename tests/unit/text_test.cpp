#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <optional>
#include <random>

#include <simdjson.h>

#include "common/fnv1a.hpp"
#include "common/json.hpp"
#include "common/text.hpp"

using namespace scalelens;

TEST(ParseDouble, FastPathAgreesWithFromCharsBitForBit) {
  // The hand-written fast path must round exactly as std::from_chars does.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t mantissa = rng() % 1'000'000'000'000'000ULL;
    int decimals = static_cast<int>(rng() % 10);
    std::string s = std::to_string(mantissa);
    if (decimals > 0 && decimals < static_cast<int>(s.size())) s.insert(s.size() - decimals, ".");
    if (rng() % 2) s = "-" + s;
    double expected = 0;
    std::from_chars(s.data(), s.data() + s.size(), expected);
    auto got = parse_double(s);
    ASSERT_TRUE(got) << s;
    ASSERT_EQ(*got, expected) << s;
  }
}

TEST(SameBytes, AgreesWithMemcmpWhereverTheBytesDiffer) {
  // Eight bytes at a time with the last eight overlapping: a difference at any place of any length
  // must be seen, and equal texts found equal. Exact-size buffers, one of them at an odd address,
  // so that the sanitizer build sees any read past the n bytes.
  std::mt19937_64 rng(11);
  for (std::size_t n = 0; n <= 48; ++n) {
    auto a = std::make_unique<char[]>(n), b_storage = std::make_unique<char[]>(n + 1);
    char* const b = b_storage.get() + 1;
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] = static_cast<char>('0' + rng() % 10);
    EXPECT_TRUE(same_bytes(a.get(), b, n)) << n;
    for (std::size_t at = 0; at < n; ++at) {
      const char kept = b[at];
      b[at] = static_cast<char>(kept ^ (1 << (rng() % 8)));
      EXPECT_FALSE(same_bytes(a.get(), b, n)) << "length " << n << ", differing at " << at;
      b[at] = kept;
    }
  }
}

TEST(ParseDouble, RejectsWhatIsNotAFiniteNumber) {
  EXPECT_FALSE(parse_double(""));
  EXPECT_FALSE(parse_double("nan"));
  EXPECT_FALSE(parse_double("inf"));
  EXPECT_FALSE(parse_double("1.2.3"));
  EXPECT_FALSE(parse_double("12 W"));
  EXPECT_DOUBLE_EQ(*parse_double(" 1e3 "), 1000);
  EXPECT_DOUBLE_EQ(*parse_double("+0.5"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_double(".5"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_double("0.000123456789012345678"), 0.000123456789012345678);
}

TEST(ParseInt, LongAndNegativeValuesGoThroughFromChars) {
  EXPECT_EQ(*parse_int("1796208589198371046"), 1796208589198371046LL);
  EXPECT_EQ(*parse_int("-42"), -42);
  EXPECT_FALSE(parse_int("99999999999999999999"));
  EXPECT_FALSE(parse_int("12a"));
  EXPECT_FALSE(parse_int("-"));
}

// What std::from_chars reads from the whole of `s`: the reference the scanners are held to
// (parse_double and parse_int try the scanners first, so they cannot be the reference).
std::optional<double> from_chars_double(std::string_view s) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}
std::optional<std::int64_t> from_chars_int(std::string_view s) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

TEST(ScanPlain, StopsAtTheSeparatorAndAgreesWithFromChars) {
  // The in-place scanners must give what std::from_chars gives on the field, or decline.
  std::mt19937_64 rng(11);
  const char alphabet[] = "0123456789.-+e ,x:/";  // '/' and ':' border the digits
  // Scanning [begin, scan_end): whatever a scanner accepts ends at `field_end` and is what
  // from_chars reads from [begin, field_end).
  auto agree = [](const char* begin, const char* scan_end, const char* field_end) {
    const std::string_view text(begin, static_cast<std::size_t>(field_end - begin));
    double d = -1;
    const char* at = scan_plain_decimal(begin, scan_end, ',', d);
    if (at && at != begin) {
      if (at != field_end) return ::testing::AssertionFailure() << "decimal stopped early: " << text;
      auto expected = from_chars_double(text);
      if (!expected) return ::testing::AssertionFailure() << "decimal accepted: " << text;
      if (d != *expected) return ::testing::AssertionFailure() << "decimal " << d << " for " << text;
    }
    std::int64_t v = -1;
    at = scan_plain_uint(begin, scan_end, ',', v);
    if (at && at != begin) {
      if (at != field_end) return ::testing::AssertionFailure() << "integer stopped early: " << text;
      auto expected = from_chars_int(text);
      if (!expected) return ::testing::AssertionFailure() << "integer accepted: " << text;
      if (v != *expected) return ::testing::AssertionFailure() << "integer " << v << " for " << text;
    }
    return ::testing::AssertionSuccess();
  };
  for (int i = 0; i < 200000; ++i) {
    std::string field;
    const int len = static_cast<int>(rng() % 30);  // past 8, 16 and 24: the digits go eight at a time
    for (int k = 0; k < len; ++k) field += alphabet[rng() % (rng() % 4 == 0 ? sizeof(alphabet) - 1 : 11)];
    const std::string line = field + ",rest";
    const char* end = line.data() + line.size();
    ASSERT_TRUE(agree(line.data(), end, line.data() + line.find(',')));
    double d = -1;
    std::int64_t v = -1;
    // They decline only what they must: plain digits (one '.' for decimals) within their limits.
    const auto digit_count = std::count_if(field.begin(), field.end(), [](char c) { return c >= '0' && c <= '9'; });
    const auto dots = std::count(field.begin(), field.end(), '.');
    if (!field.empty() && digit_count == static_cast<std::ptrdiff_t>(field.size())) {
      if (field.size() < 19) ASSERT_EQ(scan_plain_uint(line.data(), end, ',', v), line.data() + field.size()) << field;
      if (field.size() <= 15) ASSERT_EQ(scan_plain_decimal(line.data(), end, ',', d), line.data() + field.size()) << field;
    }
    if (dots == 1 && digit_count > 0 && digit_count + 1 == static_cast<std::ptrdiff_t>(field.size()) && digit_count <= 15)
      ASSERT_EQ(scan_plain_decimal(line.data(), end, ',', d), line.data() + field.size()) << field;
    // The field ending its buffer, exactly sized so that ASan sees any read past it.
    if (field.find(',') != std::string::npos) continue;
    auto alone = std::make_unique<char[]>(field.size());
    std::memcpy(alone.get(), field.data(), field.size());
    ASSERT_TRUE(agree(alone.get(), alone.get() + field.size(), alone.get() + field.size()));
  }
  std::int64_t v = 0;
  const std::string max = "9223372036854775807", over = "9223372036854775808";
  ASSERT_EQ(scan_plain_uint(max.data(), max.data() + max.size(), ',', v), max.data() + max.size());
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(scan_plain_uint(over.data(), over.data() + over.size(), ',', v), nullptr);
  double d = 0;
  const std::string exponent = "1e3,", blank = " 5,";
  EXPECT_EQ(scan_plain_decimal(exponent.data(), exponent.data() + exponent.size(), ',', d), nullptr);
  EXPECT_EQ(scan_plain_decimal(blank.data(), blank.data() + blank.size(), ',', d), nullptr);
  EXPECT_EQ(scan_plain_decimal(exponent.data() + 3, exponent.data() + 4, ',', d), exponent.data() + 3);  // empty
}

TEST(SplitCsv, QuotedFieldsMayHoldCommas) {
  std::vector<std::string_view> f;
  split_csv(R"(a,"b,c",,d)", f);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[1], "b,c");
  EXPECT_EQ(f[2], "");
  EXPECT_EQ(f[3], "d");
}

// A folder named with an encoded surrogate (ED A0 80) made summary.json unreadable to Python: only
// RFC 3629's sequences are UTF-8.
TEST(Utf8, OnlyWellFormedSequencesPass) {
  for (std::string_view ok : {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80", "\xF0\x90\x80\x80",
                              "\xF4\x8F\xBF\xBF"})
    EXPECT_EQ(utf8_sequence_length(ok, 0), ok.size()) << printable(ok);
  for (std::string_view bad : {"\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xE0\x9F\xBF", "\xED\xA0\x80", "\xED\xBF\xBF",
                               "\xF0\x80\x80\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xF7\xBF\xBF\xBF",
                               "\x80", "\xE2\x82"})
    EXPECT_EQ(utf8_sequence_length(bad, 0), 0u) << printable(bad);
  EXPECT_EQ(valid_utf8("a\xED\xA0\x80z"), "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz");
}

// What the JSON writer makes of any bytes is JSON that a strict parser (simdjson, which checks
// UTF-8 as RFC 3629 says) reads back; random strings of mostly high bytes, 20,000 seeds.
TEST(Utf8, QuotedTextOfAnyBytesIsValidJson) {
  simdjson::dom::parser parser;
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int> len(1, 12), byte(0, 255), high(0x80, 0xFF);
  for (int seed = 0; seed < 20000; ++seed) {
    std::string s;
    for (int k = len(rng); k > 0; --k) s += static_cast<char>(seed % 2 ? high(rng) : byte(rng));
    const std::string doc = json_quote(s);
    auto parsed = parser.parse(doc);
    ASSERT_FALSE(parsed.error()) << "seed " << seed << ": " << printable(s);
  }
}

TEST(Printable, ControlsAndBytesOfNoCharacterAreShownEscaped) {
  EXPECT_EQ(printable("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(printable("a\x9b" "2J"), "a\\x9b2J");         // a lone C1 byte: CSI to 8-bit terminals
  EXPECT_EQ(printable("a\xC2\x9b" "2J"), "a\\u009b2J");   // the same as a character
  EXPECT_EQ(printable("caf\xC3\xA9 \xE2\x80\xA6 \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE2\x80\xA6 \xF0\x9F\x98\x80");
  EXPECT_EQ(printable("\xED\xA0\x80"), "\\xed\\xa0\\x80");
}

// The one way messages name ranks (missing-ranks, ranks-beyond-world-size): the first ten, then
// how many more of all there are (a list may hold only the first of many).
// The test vectors of FNV's reference (draft-eastlake-fnv): sweep run ids are made of the 32-bit one.
TEST(Fnv1a, GivesTheReferenceHashes) {
  EXPECT_EQ(fnv1a_32(""), 0x811c9dc5u);
  EXPECT_EQ(fnv1a_32("a"), 0xe40c292cu);
  EXPECT_EQ(fnv1a_32("foobar"), 0xbf9cf968u);
  EXPECT_EQ(fnv1a_64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a_64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a_64("foobar"), 0x85944171f73967e8ULL);
}

TEST(ListRanks, NamesTheFirstTenAndCountsTheRest) {
  EXPECT_EQ(list_ranks({4, 5, 6, 7}, 4), "4, 5, 6, 7");
  std::vector<int> ranks;
  for (int r = 8; r < 20; ++r) ranks.push_back(r);
  EXPECT_EQ(list_ranks(ranks, ranks.size()), "8, 9, 10, 11, 12, 13, 14, 15, 16, 17 and 2 more");
  EXPECT_EQ(list_ranks({3}, 40), "3 and 39 more");
}

// An efficiency is shown on the side of 100% it is on: 1.004 read "100%" beside a warning that it
// is more than 100% efficient, and 0.996 read the same "100%".
TEST(EfficiencyPercent, NeverRoundsOntoAHundredFromEitherSide) {
  EXPECT_EQ(efficiency_percent(0.72), "72%");
  EXPECT_EQ(efficiency_percent(1.52), "152%");
  EXPECT_EQ(efficiency_percent(1), "100%");
  EXPECT_EQ(efficiency_percent(1.004), "100.4%");
  EXPECT_EQ(efficiency_percent(0.996), "99.6%");
  EXPECT_EQ(efficiency_percent(1.0049), "100.5%");
  EXPECT_EQ(efficiency_percent(0.99996), "99.996%");
  EXPECT_EQ(efficiency_percent(1.0005), "100.05%");  // 100.0499…, "100.0" at one decimal
  EXPECT_EQ(efficiency_percent(1.0000000000111), "100%");  // the arithmetic's rounding of an exact 1
}

// Beside --min-efficiency the same holds of its threshold: a count left out for being under 70%
// read "at 70% efficiency"; one kept at the threshold, or over it, never reads under it.
TEST(EfficiencyPercent, NeverRoundsOntoAnotherThresholdFromEitherSide) {
  EXPECT_EQ(efficiency_percent(0.6996, 0.7), "69.96%");
  EXPECT_EQ(efficiency_percent(0.7004, 0.7), "70.04%");
  EXPECT_EQ(efficiency_percent(0.7, 0.7), "70%");
  EXPECT_EQ(efficiency_percent(0.66, 0.7), "66%");
  EXPECT_EQ(efficiency_percent(0.7049, 0.705), "70%");  // whole percents where they keep the side
  EXPECT_EQ(efficiency_percent(0.70498, 0.705), "70%");
  EXPECT_EQ(efficiency_percent(0.70502, 0.705), "71%");
  EXPECT_EQ(efficiency_percent(0.7052, 0.7055), "70.5%");  // "71" would cross 70.55
  EXPECT_EQ(efficiency_percent(0.996, 0.7), "100%");        // far from this threshold: whole percents
}
