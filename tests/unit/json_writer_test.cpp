// The JSON writer handing its text to a sink as it goes writes the same text as one that keeps it,
// in pieces of about 64 KiB (so a large summary is never whole in memory).
#include <gtest/gtest.h>

#include <random>

#include "common/json.hpp"

using namespace scalelens;

namespace {

// A document of nested objects and arrays with every kind of value, drawn from `seed`.
void write_document(JsonWriter& w, std::uint64_t seed, int items) {
  std::mt19937_64 rng(seed);
  w.begin_object();
  w.key("runs").begin_array();
  for (int i = 0; i < items; ++i) {
    w.begin_object();
    w.key("run_id").value("run-" + std::to_string(rng() % 100000));
    w.key("label").value(std::string(rng() % 40, static_cast<char>('a' + rng() % 26)));
    w.key("epoch_times_s").begin_array();
    for (std::uint64_t k = rng() % 20; k > 0; --k) w.value(static_cast<double>(rng() % 1000) / 7);
    w.end_array();
    w.key("gpus").value(static_cast<std::int64_t>(rng() % 64));
    w.key("ok").value(rng() % 2 == 0);
    w.key("missing").null();
    w.key("raw").raw("{\"a\":[1,2]}");
    w.end_object();
  }
  w.end_array();
  w.key("warnings").begin_array().end_array();
  w.end_object();
}

TEST(JsonWriter, TextHandedToASinkIsTheTextKept) {
  for (int items : {0, 1, 10, 3000}) {
    JsonWriter kept;
    write_document(kept, 11, items);
    std::string streamed;
    std::size_t pieces = 0, largest = 0;
    JsonWriter sent([&](std::string_view piece) {
      streamed += piece, ++pieces;
      largest = std::max(largest, piece.size());
    });
    write_document(sent, 11, items);
    sent.flush();
    EXPECT_EQ(streamed, kept.str()) << items << " items";
    EXPECT_TRUE(sent.str().empty());
    if (kept.str().size() > (256u << 10)) EXPECT_GT(pieces, 3u) << "not handed on as it was written";
    EXPECT_LT(largest, (64u << 10) + 4096) << "a piece far beyond the flush size";
  }
}

}  // namespace
