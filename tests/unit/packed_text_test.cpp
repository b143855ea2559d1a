// Text held deflated (common/packed_text.hpp) comes back exactly: empty, short, repetitive like
// page series, and random bytes that do not compress; appended after what the output holds; from
// many threads at once; and the same set aside in a temporary file (common/text_spill.hpp). Bytes
// that are not what was packed, or cannot be read back, are an error, never a short text.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/packed_text.hpp"
#include "common/text_spill.hpp"

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

TEST(TextSpill, BytesPutFromManyThreadsComeBackFromTheirPlaces) {
  const auto spill = TextSpill::create();
  ASSERT_TRUE(spill) << "no temporary file could be made";
  const auto texts = sample_texts();
  std::vector<std::vector<TextSpill::Place>> places(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round)
        for (const auto& text : texts) places[t].push_back(spill->put(text).value_or(TextSpill::Place{~0ull, 0}));
    });
  for (auto& th : threads) th.join();
  std::uint64_t total = 0;
  for (int t = 0; t < 8; ++t)
    for (std::size_t i = 0; i < places[t].size(); ++i) {
      const std::string& text = texts[i % texts.size()];
      ASSERT_EQ(places[t][i].size, text.size());
      ASSERT_NE(places[t][i].offset, ~0ull);
      std::string out = "kept|";
      spill->get(places[t][i], out);
      EXPECT_EQ(out, "kept|" + text) << "thread " << t << ", text " << i;
      total += text.size();
    }
  // Ranges never overlap: every byte put has its own place.
  EXPECT_EQ(total, 80 * (texts[0].size() + texts[1].size() + texts[2].size() + texts[3].size() + texts[4].size()));
}

TEST(TextSpill, APlaceBeyondWhatWasPutIsAnErrorAndLeavesTheOutputAsItWas) {
  const auto spill = TextSpill::create();
  ASSERT_TRUE(spill);
  const auto place = spill->put("0123456789");
  ASSERT_TRUE(place);
  std::string out = "kept";
  EXPECT_THROW(spill->get({place->offset + 5, 10}, out), std::runtime_error);  // runs past the end
  EXPECT_EQ(out, "kept");
}

TEST(PackedText, SpilledTextComesBackAndHoldsNoBytesInMemory) {
  const auto spill = TextSpill::create();
  ASSERT_TRUE(spill);
  for (const auto& text : sample_texts()) {
    PackedText packed = PackedText::pack(text);
    const std::string deflated = packed.deflated;
    packed.spill_to(spill);
    EXPECT_TRUE(packed.deflated.empty());
    EXPECT_EQ(packed.place.size, deflated.size());
    EXPECT_EQ(packed.text(), text);
    const PackedText copy = packed;  // copies share the file
    EXPECT_EQ(copy.text(), text);
  }
  PackedText kept = PackedText::pack("no spill");
  kept.spill_to(nullptr);  // where no file could be made the bytes stay
  EXPECT_EQ(kept.text(), "no spill");
  EXPECT_FALSE(kept.deflated.empty());
  PackedText lost = PackedText::pack(sample_texts()[3]);
  lost.spill_to(spill);
  PackedText spoiled = lost;
  lost.place.offset += 1u << 30;  // as if the file had lost its bytes
  spoiled.place.offset -= 1;      // as if they had been spoiled there: other bytes of the file
  for (const PackedText* bad : {&lost, &spoiled}) {
    std::string out = "kept";
    EXPECT_THROW(bad->unpack_to(out), std::runtime_error);  // an error to report, not this program's fault
    EXPECT_EQ(out, "kept");
  }
}

}  // namespace
}  // namespace scalelens
