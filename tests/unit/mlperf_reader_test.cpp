// MLPerf HPC v1.0 DeepCAM logs (../shared/data): the "done means" figures.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"

using namespace scalelens;

TEST(Mlperf, DeepcamRealLogsGiveTwoConfigurationsAndSpeedup) {
  SCALELENS_REQUIRE_REALDATA(data);
  auto study = ingest(IngestOptions{{(data / "mlperf-hpc-v1.0-deepcam").string()}, {}, 0, {}});
  ASSERT_EQ(study.runs.size(), 10u);
  auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 2u);
  const auto& small = s.configurations[0];
  const auto& large = s.configurations[1];
  EXPECT_EQ(small.label, "deepcam");
  EXPECT_EQ(small.world_size, 512);   // number_of_ranks
  EXPECT_EQ(large.world_size, 2048);
  EXPECT_EQ(*small.nodes, 64);
  EXPECT_EQ(*large.gpus_per_node, 8);
  EXPECT_EQ(small.runs, 5u);
  // Expected figures computed independently with Python's json + statistics over the same logs
  // (epoch_stop − epoch_start per epoch_num, first epoch of each run dropped, epochs pooled):
  // 512 GPUs: 75 epochs, mean 8.870867 s, median 8.843 s; 2048 GPUs: 114 epochs, mean 3.324833 s, median 3.300 s.
  EXPECT_EQ(small.epoch_time_s->n, 75u);
  EXPECT_NEAR(small.epoch_time_s->mean, 8.870867, 1e-5);
  EXPECT_NEAR(small.epoch_time_s->median, 8.843, 1e-9);
  EXPECT_EQ(large.epoch_time_s->n, 114u);
  EXPECT_NEAR(large.epoch_time_s->median, 3.3, 1e-9);
  EXPECT_NEAR(*large.speedup, 8.870867 / 3.324833, 1e-4);
  EXPECT_DOUBLE_EQ(*large.ideal_speedup, 4);
  // Throughput is the mean over runs of train_samples (121266) / the run's mean kept epoch time;
  // the same Python computation gives 13672.4351 samples/s.
  EXPECT_NEAR(*small.throughput_samples_per_s, 13672.4351, 1e-3);
  EXPECT_NEAR(small.run_time_s->mean, 164.9348, 1e-3);
  EXPECT_TRUE(std::any_of(s.warnings.begin(), s.warnings.end(), [](auto& d) { return d.code == "batch-changed"; }));
  // Both sizes are one machine (systems/dgxa100_n{64,256}_*.json cut before their size token), so
  // one curve: the figures above are unchanged by the system in the configuration's identity.
  EXPECT_EQ(small.system, "dgxa100");
  EXPECT_EQ(large.system, "dgxa100");
  EXPECT_EQ(small.curve, "deepcam");
  EXPECT_EQ(s.runs[0].gpu_model, "NVIDIA A100-SXM4-80GB (400W)");
  EXPECT_NE(small.provenance.find("5 inputs under"), std::string::npos) << small.provenance;
  EXPECT_NE(small.provenance.find("system dgxa100 from system_name dgxa100_n64_ngc21.09_pytorch in "
                                  "systems/dgxa100_n64_ngc21.09_pytorch.json; GPUs: 512 per run (number_of_ranks); "
                                  "excluded: 5 warm-up epochs"),
            std::string::npos)
      << small.provenance;
  EXPECT_FALSE(std::any_of(s.warnings.begin(), s.warnings.end(), [](auto& d) { return d.code == "possibly-mixed-inputs"; }));
}

TEST(Mlperf, RecordsWithoutJsonOrMatchingStartAreNamed) {
  scalelens::testing::ScratchDir dir;
  dir.write("log.txt",
            "plain output\n"
            ":::MLLOG {\"time_ms\": 1000, \"key\": \"run_start\", \"value\": null, \"metadata\": {}}\n"
            ":::MLLOG {\"time_ms\": 1000, \"key\": \"number_of_nodes\", \"value\": 2}\n"
            ":::MLLOG {\"time_ms\": 1000, \"key\": \"accelerators_per_node\", \"value\": 4}\n"
            ":::MLLOG {\"time_ms\": 1000, \"key\": \"epoch_start\", \"metadata\": {\"epoch_num\": 1}}\n"
            ":::MLLOG {\"time_ms\": 3000, \"key\": \"epoch_stop\", \"metadata\": {\"epoch_num\": 1}}\n"
            ":::MLLOG {\"time_ms\": 4000, \"key\": \"epoch_stop\", \"metadata\": {\"epoch_num\": 7}}\n"
            ":::MLLOG {\"time_ms\": 40\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(*study.runs[0].world_size, 8);  // 2 nodes × 4
  EXPECT_EQ(study.runs[0].detected_from.at("world_size"), "number_of_nodes*accelerators_per_node");
  ASSERT_EQ(study.runs[0].epochs.size(), 1u);
  EXPECT_DOUBLE_EQ(study.runs[0].epochs[0].seconds(), 2);
  ASSERT_EQ(study.diagnostics.size(), 1u);
  EXPECT_EQ(study.diagnostics[0].line, 7);  // the unmatched epoch_stop
  EXPECT_NE(study.diagnostics[0].message.find("2 lines skipped"), std::string::npos) << study.diagnostics[0].message;
}
