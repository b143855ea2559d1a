// Hostile input and faults (issue 12) through the library: files that change under the reader.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/test_support.hpp"

using namespace scalelens;
using scalelens::testing::ScratchDir;

namespace {

std::string ns(double s) { return std::to_string(static_cast<long long>(s * 1e9)); }

void write_run(const ScratchDir& dir, const std::string& name, int p, double epoch_s, int epochs) {
  dir.write(name + "/scalelens.json", "{\"schema\": \"scalelens.run/1\", \"run_id\": \"" + name +
                                          "\", \"label\": \"ddp\", \"world_size\": " + std::to_string(p) +
                                          ", \"samples_per_epoch\": 1000, \"start_ns\": 0, \"end_ns\": " +
                                          ns(epochs * epoch_s) + "}");
  std::string csv = "rank,epoch,start_ns,end_ns\n";
  for (int e = 0; e < epochs; ++e) csv += "0," + std::to_string(e) + "," + ns(e * epoch_s) + "," + ns((e + 1) * epoch_s) + "\n";
  dir.write(name + "/epochs.csv", csv);
}

}  // namespace

// A file listed, then deleted before it is read (a job cleaning up while the report runs): named
// with the reason, and the other run's figures are what they are without it.
TEST(HostileInput, FileVanishingBetweenListingAndReadingIsNamed) {
  ScratchDir dir;
  write_run(dir, "big", 1, 10, 200);  // the larger epochs.csv is read first
  write_run(dir, "small", 2, 6, 3);
  const auto vanishing = dir / "small/epochs.csv";
  IngestOptions in{{dir.path().string()}, {}, 1, {}};
  in.progress = [&](std::size_t done, std::size_t) {
    if (done == 1) std::filesystem::remove(vanishing);
  };
  Study study = ingest(in);
  auto named = std::find_if(study.diagnostics.begin(), study.diagnostics.end(), [&](const Diagnostic& d) {
    return d.path == vanishing.string() && d.message.find("No such file") != std::string::npos;
  });
  ASSERT_NE(named, study.diagnostics.end());
  EXPECT_EQ(named->code, "unreadable-file");
  auto summary = analyze(study, {});
  auto big = std::find_if(summary.configurations.begin(), summary.configurations.end(), [](auto& c) { return c.world_size == 1; });
  ASSERT_NE(big, summary.configurations.end());
  // 200 epochs of 10 s, the first left out as warm-up: 199 values of 10 s.
  EXPECT_EQ(big->epoch_time_s->n, 199u);
  EXPECT_DOUBLE_EQ(big->epoch_time_s->mean, 10.0);
}
