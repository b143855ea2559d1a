// The header-only C++ API writes epochs.csv/steps.csv lines that the run-folder reader takes.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../../include/scalelens/scalelens.hpp"
#include "ingest/ingest.hpp"
#include "support/test_support.hpp"

using scalelens::testing::ScratchDir;
using scalelens::testing::slurp;

TEST(CppApi, TimersAppendLinesOfThisRankThatIngestReads) {
  ScratchDir d;
  d.write("run/scalelens.json", "{\"label\": \"api\", \"world_size\": 1}");
  ::setenv("SCALELENS_RUN_DIR", (d / "run").c_str(), 1);
  ::setenv("SCALELENS_RANK", "3", 1);
  ::unsetenv("RANK");
  for (int e = 0; e < 2; ++e) {
    scalelens::EpochTimer t(e);
    { scalelens::StepTimer s(e * 10, 32); }
    t.set_samples(64);
  }
  // After the timers' steps: a rank's row that starts before its row before ended is said.
  const std::int64_t now = scalelens::now_ns();
  EXPECT_TRUE(scalelens::log_step(99, now, now + 2));
  ::unsetenv("SCALELENS_RUN_DIR");
  EXPECT_FALSE(scalelens::log_epoch(9, 0, 1)) << "outside scalelens run nothing is written";
  ::unsetenv("SCALELENS_RANK");
  auto epochs = slurp(d / "run/epochs.csv");
  EXPECT_EQ(epochs.rfind("rank,epoch,start_ns,end_ns,samples\n3,0,", 0), 0u) << epochs;
  scalelens::IngestOptions in;
  in.inputs = {d.path().string()};
  auto study = scalelens::ingest(in);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].epochs.size(), 2u);
  EXPECT_EQ(study.runs[0].epochs[1].rank, 3);
  EXPECT_EQ(study.runs[0].epochs[1].samples, 64.0);
  ASSERT_EQ(study.runs[0].steps.size(), 3u);
  EXPECT_FALSE(study.runs[0].steps[2].samples);
  for (const auto& diag : study.diagnostics) ADD_FAILURE() << diag.message;
}
