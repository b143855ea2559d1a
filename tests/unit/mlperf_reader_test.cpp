// MLPerf HPC v1.0 DeepCAM logs (../shared/data): the "done means" figures.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

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

// OpenFold (MLPerf HPC v3.0, e.g. mlcommons/hpc_results_v3.0 Clemson and TACC) numbers each epoch,
// an evaluation interval of val_every_iters × global_batch_size samples, by the samples trained so
// far: 5760, 11520, … Its train_samples (594595) is the dataset's size. Taken as an epoch's samples
// it made throughput 100x too high (673.6 samples/s where the log says 5760 / 882.8 s = 6.52).
// Written here in the shape of those logs (the same keys, metadata and event types).
TEST(Mlperf, EpochNumbersThatCountSamplesGiveTheEpochsSamples) {
  scalelens::testing::ScratchDir dir;
  std::string log;
  auto line = [&](std::int64_t t, const std::string& type, const std::string& key, const std::string& value,
                  const std::string& meta = "") {
    log += fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"{}\", \"key\": \"{}\", \"value\": {}, "
                       "\"metadata\": {{\"file\": \"/training_rundir/train.py\", \"lineno\": 1{}}}}}\n",
                       t, type, key, value, meta);
  };
  const std::int64_t t0 = 1'697'107'698'658;
  line(t0, "POINT_IN_TIME", "submission_benchmark", "\"openfold\"");
  line(t0, "POINT_IN_TIME", "number_of_nodes", "18");
  line(t0, "POINT_IN_TIME", "accelerators_per_node", "2");
  line(t0, "POINT_IN_TIME", "global_batch_size", "144");
  line(t0 + 1, "POINT_IN_TIME", "val_every_iters", "40");
  line(t0 + 11'933, "INTERVAL_START", "run_start", "null");
  line(t0 + 33'455, "POINT_IN_TIME", "train_samples", "594595");
  std::int64_t t = t0 + 45'785;
  for (int e = 1; e <= 3; ++e) {
    line(t, "INTERVAL_START", "epoch_start", "null", fmt::format(", \"epoch_num\": {}", 5760 * e));
    t += 882'800;
    line(t, "INTERVAL_END", "epoch_stop", "null", fmt::format(", \"epoch_num\": {}", 5760 * e));
    t += 80'000;
  }
  line(t, "INTERVAL_END", "run_stop", "null", ", \"status\": \"success\"");
  dir.write("openfold/result_0.txt", log);
  auto study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_TRUE(study.runs[0].samples_per_epoch);
  EXPECT_EQ(*study.runs[0].samples_per_epoch, 5760.0);
  auto note = std::find_if(study.diagnostics.begin(), study.diagnostics.end(),
                           [](const Diagnostic& d) { return d.code == "mlperf-epochs-count-samples"; });
  ASSERT_NE(note, study.diagnostics.end());
  EXPECT_EQ(note->message, "epoch_num counts the samples trained (5760, 11520, …, multiples of global_batch_size 144): each "
                           "epoch is an interval of 5760 samples, which throughput uses, not train_samples (594595, the "
                           "dataset's size)");
  const auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 1u);
  EXPECT_NEAR(*s.configurations[0].throughput_samples_per_s, 5760 / 882.8, 1e-9);
  // Epochs numbered 1, 2, 3 (DeepCAM, CosmoFlow) keep train_samples as an epoch's samples.
  std::string counted = log;
  for (int e = 3; e >= 1; --e) {
    const std::string from = fmt::format("\"epoch_num\": {}", 5760 * e), to = fmt::format("\"epoch_num\": {}", e);
    for (auto at = counted.find(from); at != std::string::npos; at = counted.find(from)) counted.replace(at, from.size(), to);
  }
  dir.write("openfold/result_0.txt", counted);
  auto plain = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(plain.runs.size(), 1u);
  EXPECT_EQ(*plain.runs[0].samples_per_epoch, 594595.0);
}
