// MLPerf HPC v1.0 DeepCAM logs (../shared/data): the issue's "done means" figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"

using namespace scalelens;

namespace {
// One `:::MLLOG` record as the mlperf_logging package writes it.
std::string mllog(std::int64_t t, const std::string& type, const std::string& key, const std::string& value,
                  const std::string& meta = "", const std::string& file = "train.py") {
  return fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"{}\", \"key\": \"{}\", \"value\": {}, "
                     "\"metadata\": {{\"file\": \"{}\", \"lineno\": 1{}}}}}\n",
                     t, type, key, value, file, meta);
}
}  // namespace

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
  ASSERT_EQ(study.diagnostics.size(), 2u);
  EXPECT_EQ(study.diagnostics[0].line, 7);  // the unmatched epoch_stop
  EXPECT_NE(study.diagnostics[0].message.find("2 lines skipped"), std::string::npos) << study.diagnostics[0].message;
  // The log was cut before any run_stop: said, with the run_start's line.
  EXPECT_EQ(study.diagnostics[1].code, "run-not-finished");
  EXPECT_EQ(study.diagnostics[1].line, 2);
}

// OpenFold (MLPerf HPC v3.0, e.g. mlcommons/hpc_results_v3.0 Clemson and TACC) numbers each epoch,
// an evaluation interval of val_every_iters × global_batch_size samples, by the samples trained so
// far: 5760, 11520, … Its train_samples (594595) is the dataset's size. Taken as an epoch's samples
// it made throughput 100x too high (673.6 samples/s where the log says 5760 / 882.8 s = 6.52).
// Written here in the shape of those logs (the same keys, metadata and event types).
TEST(Mlperf, EpochNumbersThatCountSamplesGiveTheEpochsSamples) {
  scalelens::testing::ScratchDir dir;
  // The log with or without val_every_iters, its epochs numbered `numbers`.
  auto openfold_log = [](bool with_val_every_iters, const std::vector<std::int64_t>& numbers) {
    std::string log;
    auto line = [&](std::int64_t t, const std::string& type, const std::string& key, const std::string& value,
                    const std::string& meta = "") {
      log += mllog(t, type, key, value, meta, "/training_rundir/train.py");
    };
    const std::int64_t t0 = 1'697'107'698'658;
    line(t0, "POINT_IN_TIME", "submission_benchmark", "\"openfold\"");
    line(t0, "POINT_IN_TIME", "number_of_nodes", "18");
    line(t0, "POINT_IN_TIME", "accelerators_per_node", "2");
    line(t0, "POINT_IN_TIME", "global_batch_size", "144");
    if (with_val_every_iters) line(t0 + 1, "POINT_IN_TIME", "val_every_iters", "40");
    line(t0 + 11'933, "INTERVAL_START", "run_start", "null");
    line(t0 + 33'455, "POINT_IN_TIME", "train_samples", "594595");
    std::int64_t t = t0 + 45'785;
    for (std::int64_t n : numbers) {
      line(t, "INTERVAL_START", "epoch_start", "null", fmt::format(", \"epoch_num\": {}", n));
      t += 882'800;
      line(t, "INTERVAL_END", "epoch_stop", "null", fmt::format(", \"epoch_num\": {}", n));
      t += 80'000;
    }
    line(t, "INTERVAL_END", "run_stop", "null", ", \"status\": \"success\"");
    return log;
  };
  dir.write("openfold/result_0.txt", openfold_log(true, {5760, 11520, 17280}));
  auto study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_TRUE(study.runs[0].samples_per_epoch);
  EXPECT_EQ(*study.runs[0].samples_per_epoch, 5760.0);
  auto note = std::find_if(study.diagnostics.begin(), study.diagnostics.end(),
                           [](const Diagnostic& d) { return d.code == "mlperf-epochs-count-samples"; });
  ASSERT_NE(note, study.diagnostics.end());
  EXPECT_EQ(note->message, "epoch_num counts the samples trained (5760, 11520, …: val_every_iters 40 × global_batch_size 144): "
                           "each epoch is an interval of 5760 samples, which throughput uses, not train_samples (594595, the "
                           "dataset's size)");
  const auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 1u);
  EXPECT_NEAR(*s.configurations[0].throughput_samples_per_s, 5760 / 882.8, 1e-9);
  // Epochs numbered 1, 2, 3 (DeepCAM, CosmoFlow); one epoch resumed at 11520; every 5760th epoch
  // of a log that states no evaluation interval: train_samples stays an epoch's samples.
  for (const auto& [with_val, numbers] : {std::pair{true, std::vector<std::int64_t>{1, 2, 3}},
                                           std::pair{true, std::vector<std::int64_t>{11520}},
                                           std::pair{false, std::vector<std::int64_t>{5760, 11520, 17280}}}) {
    dir.write("openfold/result_0.txt", openfold_log(with_val, numbers));
    auto other = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
    ASSERT_EQ(other.runs.size(), 1u);
    EXPECT_EQ(*other.runs[0].samples_per_epoch, 594595.0) << numbers.front();
  }
}

namespace {
// One MLPerf Training log of `epochs` epochs of `epoch_ms` each, its run_stop with `status`
// (training_results_v3.1's NVIDIA eos_n8 BERT result_4.txt ends "aborted": no convergence).
std::string training_log(std::int64_t t0, int epochs, std::int64_t epoch_ms, const std::string& status) {
  std::string log;
  auto line = [&](std::int64_t t, const std::string& type, const std::string& key, const std::string& value,
                  const std::string& meta = "") {
    log += mllog(t, type, key, value, meta, "train.py");
  };
  line(t0, "POINT_IN_TIME", "submission_benchmark", "\"bert\"");
  line(t0, "POINT_IN_TIME", "number_of_nodes", "1");
  line(t0, "POINT_IN_TIME", "accelerators_per_node", "8");
  line(t0, "POINT_IN_TIME", "global_batch_size", "448");
  line(t0 + 10, "INTERVAL_START", "run_start", "null");
  std::int64_t t = t0 + 100;
  for (int e = 1; e <= epochs; ++e, t += epoch_ms) {
    line(t, "INTERVAL_START", "epoch_start", "null", fmt::format(", \"epoch_num\": {}", e));
    line(t + epoch_ms, "INTERVAL_END", "epoch_stop", "null", fmt::format(", \"epoch_num\": {}", e));
  }
  line(t + 10, "INTERVAL_END", "run_stop", "null", fmt::format(", \"status\": \"{}\"", status));
  return log;
}
}  // namespace

TEST(Mlperf, AnAbortedRunHasNoRunTimeAndIsSaid) {
  // Two converged runs of 3 epochs, one aborted after 6 (it ran to its limit without converging):
  // its 6 s is no time to train, and pooled it made the run time 4.4 s rather than 3.3 s.
  scalelens::testing::ScratchDir dir;
  dir.write("bert/result_0.txt", training_log(1'700'000'000'000, 3, 1000, "success"));
  dir.write("bert/result_1.txt", training_log(1'700'000'100'000, 3, 1000, "success"));
  dir.write("bert/result_2.txt", training_log(1'700'000'200'000, 6, 1000, "aborted"));
  auto study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 3u);
  const auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 1u);
  const auto& c = s.configurations[0];
  ASSERT_TRUE(c.run_time_s);
  EXPECT_EQ(c.run_time_s->n, 2u);
  EXPECT_NEAR(c.run_time_s->mean, 3.1, 1e-9);
  ASSERT_TRUE(c.epoch_time_s);
  EXPECT_EQ(c.epoch_time_s->n, 2u + 2u + 5u) << "the aborted run's epochs were timed as any others";
  const auto failed = std::find_if(s.warnings.begin(), s.warnings.end(), [](const Diagnostic& d) { return d.code == "failed-run"; });
  ASSERT_NE(failed, s.warnings.end());
  EXPECT_NE(failed->message.find("run_stop's status \"aborted\""), std::string::npos) << failed->message;
  EXPECT_NE(failed->path.find("result_2.txt"), std::string::npos) << failed->path;
}

// A job's output holding two runs one after the other (a script that repeats the benchmark into
// one slurm-%j.out): read as one run, the first was lost and the epochs of both merged. A log cut
// before its run_stop, and the rest of a log without its run_start, are said.
TEST(Mlperf, RunsOneAfterAnotherInOneFileAreRunsOfTheirOwn) {
  scalelens::testing::ScratchDir dir;
  const std::string first = training_log(1'700'000'000'000, 3, 1000, "success");
  const std::string second = training_log(1'700'000'100'000, 2, 3000, "success");
  dir.write("slurm-4242.out", "srun: job 4242 queued\n" + first + "== next ==\n" + second);
  auto study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 2u);
  std::sort(study.runs.begin(), study.runs.end(), [](const scalelens::Run& a, const scalelens::Run& b) { return a.run_id < b.run_id; });
  EXPECT_EQ(study.runs[0].run_id, (dir / "slurm-4242.out").string() + "#1");
  EXPECT_EQ(study.runs[0].epochs.size(), 3u);
  EXPECT_EQ(study.runs[1].epochs.size(), 2u);
  EXPECT_DOUBLE_EQ(study.runs[1].epochs[0].seconds(), 3.0);
  const auto note = std::find_if(study.diagnostics.begin(), study.diagnostics.end(),
                                 [](const Diagnostic& d) { return d.code == "mlperf-runs-in-one-file"; });
  ASSERT_NE(note, study.diagnostics.end());
  const std::int64_t second_start = 1 + 5 + 2 * 3 + 1 + 1 + 5;  // the queue line, the first log, the separator, header
  EXPECT_EQ(note->line, second_start);
  EXPECT_NE(note->message.find("2 runs in one file (run_start at lines 6, " + std::to_string(second_start) + ")"),
            std::string::npos) << note->message;
  // The second run's bad lines are numbered in the file, not in its part.
  dir.write("slurm-4242.out", "srun: job 4242 queued\n" + first + "== next ==\n" + second + ":::MLLOG {\"time_ms\": 40\n");
  study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  const auto bad = std::find_if(study.diagnostics.begin(), study.diagnostics.end(), [](const Diagnostic& d) { return d.code == "bad-lines"; });
  ASSERT_NE(bad, study.diagnostics.end());
  EXPECT_EQ(bad->line, second_start + 2 * 2 + 2);
  // Cut before its run_stop; and the rest of it in a file of its own.
  const auto cut = first.substr(0, first.find("run_stop"));
  dir.write("slurm-4242.out", cut.substr(0, cut.rfind('\n') + 1));
  dir.write("slurm-4243.out", second.substr(second.rfind('\n', second.find("epoch_start")) + 1));
  study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  EXPECT_EQ(std::count_if(study.diagnostics.begin(), study.diagnostics.end(),
                          [](const Diagnostic& d) { return d.code == "run-not-finished"; }),
            2);
}

// The same job output: a warning about its second run named the file alone, so which of its runs
// it was about could not be told. Every warning about one of them names its run, FILE#2, and the
// line counted in the file: the reader's (a bad record) and the analysis's (a failed run).
TEST(Mlperf, WarningsAboutOneOfSeveralRunsInAFileNameThatRun) {
  scalelens::testing::ScratchDir dir;
  const std::string first = training_log(1'700'000'000'000, 3, 1000, "success");
  std::string second = training_log(1'700'000'100'000, 2, 3000, "aborted");
  // A record cut short after the second run's first epoch_stop, as a log written while killed.
  const auto after_stop = second.find('\n', second.find("epoch_stop")) + 1;
  second.insert(after_stop, ":::MLLOG {\"namespace\": \"\", \"time_ms\": 17\n");
  dir.write("slurm-4242.out", "srun: job 4242 queued\n" + first + "== next ==\n" + second);
  const std::string file = (dir / "slurm-4242.out").string();
  const auto study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 2u);
  // The queue line, the first log (5 header records, 3 epochs, run_stop), the separator, then the
  // second's 5 header records and its first epoch: the cut record is line 1 + 9 + 1 + 1 + 5 + 2 + 1.
  const std::int64_t cut_line = 1 + 5 + 2 * 3 + 1 + 1 + 5 + 2 + 1;
  const auto bad = std::find_if(study.diagnostics.begin(), study.diagnostics.end(), [](const Diagnostic& d) { return d.code == "bad-lines"; });
  ASSERT_NE(bad, study.diagnostics.end());
  EXPECT_EQ(bad->path, file + "#2");
  EXPECT_EQ(bad->line, cut_line);
  const auto s = analyze(study, {});
  const auto failed = std::find_if(s.warnings.begin(), s.warnings.end(), [](const Diagnostic& d) { return d.code == "failed-run"; });
  ASSERT_NE(failed, s.warnings.end());
  EXPECT_EQ(failed->path, file + "#2");
  // The note about the file as a whole names the file.
  const auto note = std::find_if(study.diagnostics.begin(), study.diagnostics.end(),
                                 [](const Diagnostic& d) { return d.code == "mlperf-runs-in-one-file"; });
  ASSERT_NE(note, study.diagnostics.end());
  EXPECT_EQ(note->path, file);
}

// One submitter's closed and open results on one system (hpc_results_v0.7 Fujitsu ABCI, v3.0
// Fujitsu Fugaku): the open division may change the model, so they were pooled as repeats of one
// configuration (21.26 and 23.37 s into 22.32 s). They are two configurations now, said.
TEST(Mlperf, ClosedAndOpenDivisionsAreNotRepeats) {
  scalelens::testing::ScratchDir dir;
  auto with_division = [](std::string log, const std::string& division) {
    const std::string record = ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", \"key\": "
                               "\"submission_division\", \"value\": \"" + division + "\", \"metadata\": {}}\n";
    return record + log;
  };
  dir.write("closed/result_0.txt", with_division(training_log(1'700'000'000'000, 3, 2000, "success"), "closed"));
  dir.write("open/result_0.txt", with_division(training_log(1'700'000'100'000, 3, 1000, "success"), "open"));
  auto study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 2u);
  const auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 2u);
  std::set<std::string> labels;
  for (const auto& c : s.configurations) labels.insert(c.label);
  EXPECT_EQ(labels, (std::set<std::string>{"bert [closed]", "bert [open]"}));
  const auto split = std::find_if(s.warnings.begin(), s.warnings.end(), [](const Diagnostic& d) { return d.code == "configuration-split"; });
  ASSERT_NE(split, s.warnings.end());
  EXPECT_NE(split->message.find("MLPerf division (closed, open)"), std::string::npos) << split->message;
}

// Fugaku's logs (hpc_results_v3.0 Fujitsu+RIKEN) state accelerators_per_node 0: a CPU-only
// system, true, which drew one implausible-value warning per log (749 for the study).
TEST(Mlperf, NoAcceleratorsPerNodeIsACpuSystemNotAnImplausibleValue) {
  scalelens::testing::ScratchDir dir;
  std::string log = training_log(1'700'000'000'000, 2, 1000, "success");
  const auto at = log.find("\"accelerators_per_node\", \"value\": 8");
  ASSERT_NE(at, std::string::npos);
  log.replace(at, 33, "\"accelerators_per_node\", \"value\": 0");
  const auto ranks = log.find(":::MLLOG", log.find("accelerators_per_node"));
  log.insert(ranks, ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1700000000000, \"event_type\": \"POINT_IN_TIME\", \"key\": "
                    "\"number_of_ranks\", \"value\": 512, \"metadata\": {}}\n");
  dir.write("cosmoflow/result_0.txt", log);
  auto study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].world_size, 512);
  EXPECT_FALSE(std::any_of(study.diagnostics.begin(), study.diagnostics.end(),
                           [](const Diagnostic& d) { return d.code == "implausible-value"; }));
}

// MLPerf HPC v3.0's NVIDIA weak-scaling logs (hpc_results_v3.0, eos_n256_ngc23.09_pytorch): each
// DeepCAM instance's log states the whole job's number_of_ranks and number_of_nodes (2048 and 256
// on the 256 × 8 system); each OpenFold instance's its own ranks (128) but the job's nodes (256).
// Summed over the instances, DeepCAM made 262,144 GPUs and OpenFold 4,096 nodes. Here in small:
// a 4 × 8 system, 3 DeepCAM instances and 1 pruned (4 in the job), 2 OpenFold instances of 16, and
// 2 CosmoFlow instances of 16 of which one states the job's size. The note is one per folder and
// sizes stated, with the number of logs: a job's 128 instance logs gave 128 notes.
TEST(Mlperf, WeakScalingInstancesThatStateTheJobsSizeShareIt) {
  scalelens::testing::ScratchDir dir;
  auto log = [](const std::string& benchmark, int ranks, int nodes, int instance, std::int64_t t0) {
    std::string text;
    auto line = [&](std::int64_t t, const std::string& type, const std::string& key, const std::string& value,
                    const std::string& meta = "") {
      text += mllog(t, type, key, value, meta, "/opt/deepCam/./train_instance_oo.py");
    };
    line(t0, "POINT_IN_TIME", "submission_benchmark", "\"" + benchmark + "\"");
    line(t0, "POINT_IN_TIME", "submission_platform", "\"4xNVIDIA DGX H100\"");
    line(t0 + 700, "POINT_IN_TIME", "number_of_ranks", std::to_string(ranks));
    line(t0 + 700, "POINT_IN_TIME", "number_of_nodes", std::to_string(nodes));
    line(t0 + 701, "POINT_IN_TIME", "accelerators_per_node", "8");
    line(t0 + 701, "POINT_IN_TIME", "instance_id", std::to_string(instance));
    line(t0 + 701, "POINT_IN_TIME", "global_batch_size", "128");
    line(t0 + 1000, "INTERVAL_START", "run_start", "null");
    line(t0 + 2000, "INTERVAL_START", "epoch_start", "null", ", \"epoch_num\": 1");
    line(t0 + 12000, "INTERVAL_END", "epoch_stop", "null", ", \"epoch_num\": 1");
    line(t0 + 12100, "INTERVAL_END", "run_stop", "null", ", \"status\": \"success\"");
    return text;
  };
  const std::string weak = "NVIDIA/results/eos_n4/weak/";
  for (int i = 0; i < 3; ++i) dir.write(weak + fmt::format("deepcam/result_{}.txt", i), log("deepcam", 32, 4, i, 1'696'494'164'418));
  dir.write(weak + "deepcam/pruned_results/result_3.txt", log("deepcam", 32, 4, 3, 1'696'494'164'418));
  for (int i = 0; i < 2; ++i) dir.write(weak + fmt::format("openfold/result_{}.txt", i), log("openfold", 16, 4, i, 1'696'600'000'000));
  dir.write(weak + "cosmoflow/result_0.txt", log("cosmoflow", 32, 4, 0, 1'696'700'000'000));
  dir.write(weak + "cosmoflow/result_1.txt", log("cosmoflow", 16, 2, 1, 1'696'700'000'000));
  dir.write("NVIDIA/systems/eos_n4.json", R"({"system_name": "eos", "number_of_nodes": "4", "accelerators_per_node": "8",
                                             "accelerator_model_name": "NVIDIA H100 80GB HBM3"})");
  auto study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 7u);
  for (const auto& run : study.runs) {
    const bool deepcam = run.path.find("deepcam") != std::string::npos;
    EXPECT_EQ(run.world_size, deepcam ? 8 : 16) << run.path;
    EXPECT_EQ(run.nodes, deepcam ? 1 : 2) << run.path;
  }
  std::map<std::string, std::string> notes;  // folder → note
  for (const auto& d : study.diagnostics)
    if (d.code == "mlperf-instance-size") {
      EXPECT_EQ(d.severity, Severity::note);
      EXPECT_TRUE(notes.emplace(d.path, d.message).second) << "a second note for " << d.path << ": " << d.message;
    }
  const auto folder = [&](const std::string& benchmark) { return (dir / (weak + benchmark)).string(); };
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[folder("deepcam")],
            "4 weak-scaling instance logs in this folder state the job's size, not the instance's: 32 GPUs, the whole job's "
            "(systems/eos_n4.json has 32), shared by the 4 instances: 8 each; number_of_nodes 4, which does not fit 8 GPUs at 8 "
            "per node: 1 node")
      << "the pruned instance's log too";
  EXPECT_EQ(notes[folder("openfold")],
            "2 weak-scaling instance logs in this folder state the job's size, not the instance's: number_of_nodes 4, which does "
            "not fit 16 GPUs at 8 per node: 2 nodes");
  EXPECT_EQ(notes[folder("cosmoflow")],
            "1 weak-scaling instance log in this folder states the job's size, not the instance's: 32 GPUs, the whole job's "
            "(systems/eos_n4.json has 32), shared by the 2 instances: 16 each; number_of_nodes 4, which does not fit 16 GPUs at "
            "8 per node: 2 nodes");
  const auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 3u);
  for (const auto& c : s.configurations) {
    // The instances kept for the score (pruned ones are not counted among them): 3 × 8 and 2 × 16.
    const bool deepcam = c.label == "deepcam";
    EXPECT_EQ(c.world_size, deepcam ? 24 : 32) << c.label << ": not instances × the job's 32 GPUs";
    EXPECT_EQ(c.nodes, deepcam ? 3 : 4) << c.label;
  }
}

// MLPerf Training results (e.g. mlcommons/training_results_v4.0, ASUSTeK ESC_N8A-E12): the layout
// <submitter>/results/<system>/<benchmark>/ has no strong|weak folder, and the logs state no size:
// the system file's number_of_nodes × accelerators_per_node (strings there) is the world size.
// Every log of such a study was refused for an unknown world size.
TEST(Mlperf, TrainingResultsTakeTheirSizeFromTheSystemFile) {
  scalelens::testing::ScratchDir dir;
  std::string log;
  auto line = [&](std::int64_t t, const std::string& key, const std::string& value, const std::string& meta = "") {
    log += mllog(t, "POINT_IN_TIME", key, value, meta);
  };
  const std::int64_t t0 = 1'712'000'000'000;
  line(t0, "submission_benchmark", "\"resnet\"");
  line(t0, "submission_platform", "\"ESC_N8A-E12\"");
  line(t0, "global_batch_size", "3264");
  line(t0, "train_samples", "1281167");
  line(t0 + 10, "run_start", "null");
  for (int e = 1; e <= 3; ++e) {
    line(t0 + 100 + (e - 1) * 22'431, "epoch_start", "null", fmt::format(", \"epoch_num\": {}", e));
    line(t0 + 100 + e * 22'431, "epoch_stop", "null", fmt::format(", \"epoch_num\": {}", e));
  }
  line(t0 + 100 + 3 * 22'431 + 10, "run_stop", "null", ", \"status\": \"success\"");
  dir.write("ASUSTeK/results/ESC_N8A-E12/resnet/result_0.txt", log);
  dir.write("ASUSTeK/systems/ESC_N8A-E12.json",
            R"({"submitter": "ASUSTeK", "division": "closed", "system_name": "ESC_N8A-E12", "number_of_nodes": "1",
                "accelerators_per_node": "8", "accelerator_model_name": "NVIDIA H100 80GB HBM3"})");
  auto study = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 1u);
  const auto& run = study.runs[0];
  EXPECT_EQ(run.world_size, 8);
  EXPECT_EQ(run.nodes, 1);
  EXPECT_EQ(run.gpus_per_node, 8);
  EXPECT_EQ(run.system, "ESC_N8A-E12");
  EXPECT_EQ(run.gpu_model, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(run.scaling);  // Training declares no scaling mode
  EXPECT_EQ(run.detected_from.at("world_size"), "number_of_nodes × accelerators_per_node in systems/ESC_N8A-E12.json");
  const auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 1u);
  EXPECT_NEAR(s.configurations[0].epoch_time_s->mean, 22.431, 1e-9);
  // A user's folder named results is no results tree without its system file: the system stays the
  // scalelens.json's, not the folder's name (gpus4 and gpus8 were two curves).
  dir.write("mine/scalelens.json", R"({"system": "mycluster"})");  // defaults for the runs below it
  std::string unnamed = log;  // without submission_platform, as a user's own logs may be
  const auto platform = unnamed.find("submission_platform"), from = unnamed.rfind(":::MLLOG", platform);
  unnamed.erase(from, unnamed.find('\n', platform) + 1 - from);
  dir.write("mine/results/gpus4/run1/result_0.txt", unnamed);
  // Another run, started later (the same log twice would be one run copied: duplicate-run).
  std::string later = unnamed;
  for (auto at = later.find("\"time_ms\": 1712"); at != std::string::npos; at = later.find("\"time_ms\": 1712", at))
    later.replace(at, 16, "\"time_ms\": 1713");
  dir.write("mine/results/gpus8/run1/result_0.txt", later);
  auto mine = ingest(IngestOptions{{(dir.path() / "mine").string()}, {}, 1, {}});
  ASSERT_EQ(mine.runs.size(), 2u);
  for (const auto& run : mine.runs) EXPECT_EQ(run.system, "mycluster") << run.path;
  std::filesystem::remove_all(dir.path() / "mine");
  // A malformed system file is no system file: the folder names the system, the size is unknown.
  dir.write("ASUSTeK/systems/ESC_N8A-E12.json", R"({"system_name": "X", "number_of_nodes": "1" "accelerators_per_node": 8)");
  auto malformed = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(malformed.runs.size(), 1u);
  EXPECT_FALSE(malformed.runs[0].world_size);
  EXPECT_EQ(malformed.runs[0].system, "ESC_N8A-E12");
  // Counts each within its limit whose product is beyond any machine (it overflowed int).
  dir.write("ASUSTeK/systems/ESC_N8A-E12.json", R"({"system_name": "ESC_N8A-E12", "number_of_nodes": "1000000", "accelerators_per_node": "4096"})");
  auto huge = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(huge.runs.size(), 1u);
  EXPECT_FALSE(huge.runs[0].world_size);
  // A system file whose size is none (0 nodes) leaves the world size unknown, as before.
  dir.write("ASUSTeK/systems/ESC_N8A-E12.json", R"({"system_name": "ESC_N8A-E12", "number_of_nodes": "0", "accelerators_per_node": "8"})");
  auto unknown = ingest(IngestOptions{{dir.path().string()}, {}, 1, {}});
  ASSERT_EQ(unknown.runs.size(), 1u);
  EXPECT_FALSE(unknown.runs[0].world_size);
}

// MLPerf Training's BERT numbers its one epoch's stop by the samples trained (epoch_start 0,
// epoch_stop 1950366; training_results_v4.0 ASUSTeK), and its GNN its evaluation points by
// fractions of an epoch (0.85): the first gave "epoch_stop without a matching epoch_start", the
// second the same, both wrong. BERT's stop ends the one open epoch, said in a note; GNN's fraction
// is named as such.
TEST(Mlperf, TrainingEpochsNumberedBySamplesOrFractionsAreReadOrNamed) {
  scalelens::testing::ScratchDir dir;
  auto record = [](std::int64_t t, const std::string& key, const std::string& epoch_num) {
    return fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"INTERVAL_START\", \"key\": \"{}\", "
                       "\"value\": null, \"metadata\": {{\"file\": \"run_pretraining.py\", \"lineno\": 1639, \"epoch_num\": {}}}}}\n",
                       t, key, epoch_num);
  };
  const std::string head = ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1714439417000, \"event_type\": \"POINT_IN_TIME\", "
                           "\"key\": \"number_of_ranks\", \"value\": 8, \"metadata\": {}}\n"
                           ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1714439417100, \"event_type\": \"INTERVAL_START\", "
                           "\"key\": \"run_start\", \"value\": null, \"metadata\": {}}\n";
  dir.write("bert/result_0.txt", head + record(1714439417148, "epoch_start", "0") + record(1714439677392, "epoch_stop", "1950366"));
  dir.write("gnn/result_0.txt", head + record(1714439417148, "epoch_start", "1") + record(1714439677392, "epoch_stop", "0.85"));
  // Dell's GNN writes epoch 1 as 1.0: a whole number.
  dir.write("gnn2/result_0.txt", head + record(1714439417148, "epoch_start", "1") + record(1714439677392, "epoch_stop", "1.0"));
  auto study = ingest(IngestOptions{{(dir.path() / "bert").string(), (dir.path() / "gnn").string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 2u);
  const auto& bert = study.runs[0].path.find("bert") != std::string::npos ? study.runs[0] : study.runs[1];
  const auto& gnn = study.runs[0].path.find("bert") != std::string::npos ? study.runs[1] : study.runs[0];
  ASSERT_EQ(bert.epochs.size(), 1u);
  EXPECT_EQ(bert.epochs[0].index, 0);
  EXPECT_EQ(bert.epochs[0].end_ns - bert.epochs[0].start_ns, (1714439677392 - 1714439417148) * 1'000'000);
  EXPECT_TRUE(gnn.epochs.empty());
  bool noted = false, named = false;
  for (const auto& d : study.diagnostics) {
    noted |= d.code == "mlperf-epoch-renumbered" && d.line == 4 &&
             d.message.find("line 4: epoch_num 1950366 where the epoch_start at line 3 has 0: taken as that epoch's end") !=
                 std::string::npos;
    named |= d.code == "bad-lines" && d.message.find("epoch_stop's epoch_num 0.85 is no whole epoch number") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  EXPECT_TRUE(named);
  auto whole = ingest(IngestOptions{{(dir.path() / "gnn2").string()}, {}, 1, {}});
  ASSERT_EQ(whole.runs.size(), 1u);
  ASSERT_EQ(whole.runs[0].epochs.size(), 1u);
  EXPECT_EQ(whole.runs[0].epochs[0].index, 1);

  // GPT-3's train_samples counts tokens: 220 steps × 2688 sequences × 2048 (max_sequence_length);
  // read as samples it made throughput 2048x the sequences/s (5,035,592 where 2,459 is right).
  auto point = [](const std::string& key, const std::string& value) {
    return ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1714439417050, \"event_type\": \"POINT_IN_TIME\", \"key\": \"" + key +
           "\", \"value\": " + value + ", \"metadata\": {}}\n";
  };
  dir.write("gpt3/result_0.txt", head + point("submission_benchmark", "\"gpt3\"") + point("global_batch_size", "2688") +
                                     point("max_sequence_length", "2048") +
                                     point("train_samples", "1211105280") + record(1714439417148, "epoch_start", "0") +
                                     record(1714439657657, "epoch_stop", "1211105280"));
  // GNMT's train_samples counts sentence pairs, though 3860480 = 2048 × 65 × 29 (training_results_v0.7,
  // Fujitsu): divided, its throughput came out 65x too low. GPT-3's alone count tokens.
  dir.write("gnmt/result_0.txt", head + point("submission_benchmark", "\"gnmt\"") + point("global_batch_size", "2048") +
                                     point("max_sequence_length", "65") + point("train_samples", "3860480") +
                                     record(1714439417148, "epoch_start", "1") + record(1714439687648, "epoch_stop", "1"));
  auto gnmt = ingest(IngestOptions{{(dir.path() / "gnmt").string()}, {}, 1, {}});
  ASSERT_EQ(gnmt.runs.size(), 1u);
  EXPECT_EQ(*gnmt.runs[0].samples_per_epoch, 3860480.0);
  auto gpt3 = ingest(IngestOptions{{(dir.path() / "gpt3").string()}, {}, 1, {}});
  ASSERT_EQ(gpt3.runs.size(), 1u);
  ASSERT_TRUE(gpt3.runs[0].samples_per_epoch);
  EXPECT_EQ(*gpt3.runs[0].samples_per_epoch, 220.0 * 2688);
  EXPECT_TRUE(std::any_of(gpt3.diagnostics.begin(), gpt3.diagnostics.end(), [](const Diagnostic& d) {
    return d.code == "mlperf-train-samples-in-tokens" &&
           d.message == "train_samples 1.21111e+09 counts tokens (a multiple of global_batch_size 2688 × max_sequence_length "
                        "2048): an epoch's samples are taken as 591360 sequences";
  }));
}
