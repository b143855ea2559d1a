// Text held deflated (common/packed_text.hpp) comes back exactly: empty, short, repetitive like
// page series, and random bytes that do not compress; appended after what the output holds; from
// many threads at once. Bytes that are not what was packed are an error, never a short text.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/packed_text.hpp"

namespace scalelens {
namespace {

std::vector<std::string> sample_texts() {
  std::mt19937_64 rng(11);
  std::string series, noise(100000, '\0');
  for (int gpu = 0; gpu < 64; ++gpu)
    series += fmt::format(R"({{"node":"node{}","index":{},"t":[0,0.5,{}],"util":[{},{}]}},)", gpu / 8, gpu % 8,
                          rng() % 1000, rng() % 101, rng() % 101);
  for (auto& c : noise) c = static_cast<char>(rng());
  return {"", "x", std::string(1 << 20, 'a'), series, noise};
}

TEST(PackedText, EveryTextComesBackExactlyAfterWhatTheOutputHolds) {
  for (const auto& text : sample_texts()) {
    const PackedText packed = PackedText::pack(text);
    EXPECT_EQ(packed.size, text.size());
    EXPECT_EQ(packed.text(), text);
    std::string out = "before|";
    packed.unpack_to(out);
    EXPECT_EQ(out, "before|" + text);
    if (text.size() > 1000 && text[0] == '{') EXPECT_LT(packed.deflated.size() * 3, text.size());  // page series shrink
  }
}

TEST(PackedText, ManyThreadsPackAndUnpackAtOnce) {
  const auto texts = sample_texts();
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (const auto& text : texts) wrong[t] += PackedText::pack(text).text() != text;
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

TEST(PackedText, BytesThatAreNotWhatWasPackedAreAnErrorAndLeaveTheOutputAsItWas) {
  const std::string text = sample_texts()[3];
  PackedText shorter = PackedText::pack(text);
  shorter.size += 1;  // claims more than its bytes hold
  PackedText garbled = PackedText::pack(text);
  garbled.deflated.resize(garbled.deflated.size() / 2);
  for (const PackedText* bad : {&shorter, &garbled}) {
    std::string out = "kept";
    EXPECT_THROW(bad->unpack_to(out), std::logic_error);
    EXPECT_EQ(out, "kept");
  }
}

}  // namespace
}  // namespace scalelens
