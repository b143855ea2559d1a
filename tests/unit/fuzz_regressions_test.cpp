// The input readers' fuzz harness (fuzz/reader_harness.hpp) over its seeds (fuzz/corpus/<reader>/)
// and over every input the fuzzer once crashed on (fuzz/regressions/<reader>/): each must be read
// and analysed with no value beyond the physical limits reaching the study. Here without
// sanitizers; the sanitizer build (asan preset) runs the same test with them.
#include <gtest/gtest.h>

#include <filesystem>

#include "../../fuzz/reader_harness.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

TEST(FuzzRegressions, EveryReaderReadsItsSeedsAndPastCrashesWithinLimits) {
  scalelens::testing::ScratchDir dir;
  const fs::path fuzz = fs::path(SCALELENS_SOURCE_DIR) / "fuzz";
  std::size_t inputs = 0;
  for (const auto& reader : scalelens::fuzzing::reader_names()) {
    std::size_t seeds = 0;
    for (const char* kind : {"corpus", "regressions"}) {
      std::error_code ec;
      for (fs::directory_iterator it(fuzz / kind / reader, ec), end; !ec && it != end; it.increment(ec)) {
        SCOPED_TRACE(it->path().string());
        EXPECT_EQ(scalelens::fuzzing::drive(reader, scalelens::testing::slurp(it->path()), dir / "case"), "");
        ++inputs;
        seeds += std::string(kind) == "corpus";
      }
    }
    EXPECT_GT(seeds, 0u) << "no seed for " << reader;
  }
  EXPECT_GT(inputs, 10u);
}

// The harness's own checks catch what they are for: values beyond the limits, if a reader let them in.
TEST(FuzzRegressions, TheHarnessNamesAnUnknownReader) {
  scalelens::testing::ScratchDir dir;
  EXPECT_EQ(scalelens::fuzzing::drive("nope", "", dir / "case"), "no reader named 'nope'");
}
