// itwinai's scalability-metrics CSV layout and MLflow file store, read through ingest() so
// recognition by content is tested too. Files are written by hand following itwinai's column names
// (loggers.py EpochTimeTracker, torch/monitoring/monitoring.py) and MLflow's file-store layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "report/summary_writers.hpp"
#include "support/mlflow_store.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"

namespace scalelens {
namespace {

using scalelens::testing::read_study;

using testing::MlflowStore;
using testing::ScratchDir;

const Run* run_with_id(const Study& s, const std::string& id) {
  for (const auto& r : s.runs)
    if (r.run_id == id) return &r;
  return nullptr;
}

std::vector<const Diagnostic*> diagnostics(const Study& s, const std::string& code) {
  std::vector<const Diagnostic*> out;
  for (const auto& d : s.diagnostics)
    if (d.code == code) out.push_back(&d);
  return out;
}

const GpuSeries* series(const Run& r, const std::string& node, int index) {
  for (const auto& g : r.gpus)
    if (g.node == node && g.index == index) return &g;
  return nullptr;
}

// ---------------------------------------------------------------- scalability-metrics CSV layout

const std::string kEpochHeader = "epoch_id,time,name,nodes\n";
const std::string kEnergyHeader =
    "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n";

TEST(ItwinaiCsvReader, ItwinaiCsv_EpochTime_BecomesRankZeroEpochDurations_WorldSizeUnknownIsWarned) {
  ScratchDir dir;
  dir.write("scalability-metrics/epoch-time/epochtime_torch-ddp_2N.csv",
            kEpochHeader + "1,12.5,torch-ddp,2\n2,10.25,torch-ddp,2\n");
  auto study = read_study(dir);
  const scalelens::Run* run = run_with_id(study, "scalability-metrics/epochtime_torch-ddp_2N");
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->format, "itwinai-csv");
  EXPECT_EQ(run->label, "torch-ddp");
  EXPECT_EQ(run->nodes, 2);
  EXPECT_FALSE(run->world_size.has_value());
  ASSERT_EQ(run->epochs.size(), 2u);
  EXPECT_EQ(run->epochs[0].rank, 0);
  EXPECT_EQ(run->epochs[0].index, 1);
  EXPECT_DOUBLE_EQ(run->epochs[0].seconds(), 12.5);
  EXPECT_DOUBLE_EQ(run->epochs[1].seconds(), 10.25);
  auto warnings = diagnostics(study, "unknown-world-size");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0]->path, (dir / "scalability-metrics/epoch-time/epochtime_torch-ddp_2N.csv").string());
  EXPECT_NE(warnings[0]->message.find("speedup"), std::string::npos);
}

TEST(ItwinaiCsvReader, ItwinaiCsv_EpochTimeUnderAManifest_TakesItsWorldSize) {
  ScratchDir dir;
  dir.write("job/scalelens.json", R"({"world_size": 8})");
  dir.write("job/scalability-metrics/epoch-time/epochtime_deepspeed_2N.csv", kEpochHeader + "0,7.5,deepspeed,2\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  const auto& run = study.runs[0];
  EXPECT_EQ(run.world_size, 8);
  EXPECT_EQ(run.label, "deepspeed");
  ASSERT_EQ(run.epochs.size(), 1u);
  EXPECT_DOUBLE_EQ(run.epochs[0].seconds(), 7.5);
  EXPECT_TRUE(diagnostics(study, "unknown-world-size").empty());
}

TEST(ItwinaiCsvReader, ItwinaiCsv_EnergyData_OneNominalSeriesPerNodeAndLocalRank) {
  ScratchDir dir;
  // 2 nodes x 2 GPUs, 2 samples 2 s apart; node 0's rows first, as itwinai gathers them.
  dir.write("scalability-metrics/gpu-energy-data/horovod_4.csv",
            kEnergyHeader +
                "0,90,300.5,0,0,4,horovod,2\n0,91,301.5,1,0,4,horovod,2\n"
                "1,92,302.5,0,0,4,horovod,2\n1,93,303.5,1,0,4,horovod,2\n"
                "0,80,200,0,1,4,horovod,2\n0,81,201,1,1,4,horovod,2\n"
                "1,82,202,0,1,4,horovod,2\n1,83,203,1,1,4,horovod,2\n");
  auto study = read_study(dir);
  const scalelens::Run* run = run_with_id(study, "scalability-metrics/horovod_4");
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->label, "horovod");
  EXPECT_EQ(run->world_size, 4);
  EXPECT_EQ(run->nodes, 2);
  EXPECT_EQ(run->gpus_per_node, 2);
  EXPECT_EQ(run->sampling_interval_s, 2.0);
  ASSERT_EQ(run->gpus.size(), 4u);
  const auto* g = series(*run, "node1", 1);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->nominal_timestamps);
  ASSERT_EQ(g->samples.size(), 2u);
  // sample_idx 1 x probing_interval 2 s = 2e9 ns after the start of monitoring.
  EXPECT_EQ(g->samples[0].t_ns, 0);
  EXPECT_EQ(g->samples[1].t_ns, 2'000'000'000);
  EXPECT_FLOAT_EQ(g->samples[1].power_w, 203.0f);
  EXPECT_FLOAT_EQ(g->samples[1].util_pct, 83.0f);
}

TEST(ItwinaiCsvReader, ItwinaiCsv_EpochAndEnergyFilesOfOneRunFolder_AreOneRun) {
  ScratchDir dir;
  dir.write("scalability-metrics/run-a1/epoch-time/epochtime_torch-ddp_1N.csv", kEpochHeader + "1,20,torch-ddp,1\n");
  dir.write("scalability-metrics/run-a1/gpu-energy-data/torch-ddp_4.csv",
            kEnergyHeader + "0,50,250,0,0,4,torch-ddp,1\n0,50,250,1,0,4,torch-ddp,1\n0,50,250,2,0,4,torch-ddp,1\n"
                            "0,50,250,3,0,4,torch-ddp,1\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  const auto& run = study.runs[0];
  EXPECT_EQ(run.run_id, "run-a1/epochtime_torch-ddp_1N");
  EXPECT_EQ(run.path, (dir / "scalability-metrics/run-a1").string());
  EXPECT_EQ(run.world_size, 4);
  EXPECT_EQ(run.nodes, 1);
  EXPECT_EQ(run.gpus_per_node, 4);
  EXPECT_EQ(run.epochs.size(), 1u);
  EXPECT_EQ(run.gpus.size(), 4u);
  EXPECT_TRUE(diagnostics(study, "unknown-world-size").empty());
}

// `itwinai generate-scalability-report --do-backup` (v0.3.x, cli.py and scalability_report/reports.py)
// writes the rows of every run it read into backup-scalability-metrics/<runs>_<timestamp>/
// {epoch-time/epoch_time_data.csv, gpu-energy-data/gpu_data.csv} with pandas' to_csv, whose index
// comes first in a column without a name. Read as a run, it was a repeat holding every run's rows.
TEST(ItwinaiCsvReader, ItwinaiCsv_TheReportsBackupIsLeftOutWithANote) {
  ScratchDir dir;
  dir.write("scalability-metrics/run1/epoch-time/epochtime_ddp_1N.csv", kEpochHeader + "0,30,ddp,1\n1,20,ddp,1\n");
  dir.write("scalability-metrics/run1/gpu-energy-data/ddp_4.csv", kEnergyHeader + "0,50,250,0,0,4,ddp,1\n");
  dir.write("scalability-metrics/run2/epoch-time/epochtime_ddp_2N.csv", kEpochHeader + "0,15,ddp,2\n1,10,ddp,2\n");
  const std::string backup = "backup-scalability-metrics/scalability-metrics/run1_scalability-metrics/run2_20250101_120000/";
  dir.write(backup + "epoch-time/epoch_time_data.csv", ",epoch_id,time,name,nodes\n0,0,30,ddp,1\n1,1,20,ddp,1\n0,0,15,ddp,2\n1,1,10,ddp,2\n");
  dir.write(backup + "gpu-energy-data/gpu_data.csv",
            ",sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n0,0,50,250,0,0,4,ddp,1\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  for (const auto& run : study.runs) EXPECT_EQ(run.path.find("backup"), std::string::npos) << run.path;
  const auto notes = diagnostics(study, "itwinai-backup");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0]->severity, Severity::note);
  EXPECT_NE(notes[0]->path.find("epoch_time_data.csv"), std::string::npos);
}

TEST(ItwinaiCsvReader, ItwinaiCsv_SeveralFilesOfOneStrategyInOneFolder_PairOnlyWhereTheNodeCountsAgree) {
  // ddp_4.csv has rows of node_idx 0 only: one node, so it belongs to the 1-node epoch file; the
  // 2-node run has no energy file and no GPUs-per-node to tell its world size.
  ScratchDir dir;
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_1N.csv", kEpochHeader + "1,20,ddp,1\n");
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_2N.csv", kEpochHeader + "1,11,ddp,2\n");
  dir.write("scalability-metrics/gpu-energy-data/ddp_4.csv", kEnergyHeader + "0,50,250,0,0,4,ddp,1\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  const auto* one = run_with_id(study, "scalability-metrics/epochtime_ddp_1N");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->world_size, 4);
  EXPECT_EQ(one->gpus.size(), 1u);
  const auto* two = run_with_id(study, "scalability-metrics/epochtime_ddp_2N");
  ASSERT_NE(two, nullptr);
  EXPECT_FALSE(two->world_size.has_value());
  auto unknown = diagnostics(study, "unknown-world-size");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0]->path, (dir / "scalability-metrics/epoch-time/epochtime_ddp_2N.csv").string());
}

TEST(ItwinaiCsvReader, ItwinaiCsv_FilesWrittenWhole_KeepALastLineWithoutNewlineAndSkipBlankLines) {
  // Unlike run-folder CSVs (appended while the job runs), these are written once: a last line
  // without its newline is complete, not cut.
  ScratchDir dir;
  dir.write("scalability-metrics/run-a1/epoch-time/epochtime_ddp_1N.csv", kEpochHeader + "1,20,ddp,1\n  \n2,19,ddp,1");
  dir.write("scalability-metrics/run-a1/gpu-energy-data/ddp_1.csv", kEnergyHeader + "0,50,250,0,0,1,ddp,1\n1,60,260,0,0,1,ddp,1");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].epochs.size(), 2u);
  EXPECT_EQ(study.runs[0].epochs[1].index, 2);
  ASSERT_EQ(study.runs[0].gpus.size(), 1u);
  EXPECT_EQ(study.runs[0].gpus[0].samples.size(), 2u);
  EXPECT_TRUE(diagnostics(study, "truncated-line").empty());
  EXPECT_TRUE(diagnostics(study, "bad-lines").empty());
}

TEST(ItwinaiCsvReader, ItwinaiCsv_BadLines_OneWarningNamesFileAndFirstLine_RestIsRead) {
  ScratchDir dir;
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_1N.csv",
            kEpochHeader + "1,20,ddp,1\n2,NaN,ddp,1\n3,12\n4,-1,ddp,1\n5,19,ddp,1\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].epochs.size(), 2u);
  EXPECT_EQ(study.runs[0].epochs[1].index, 5);
  auto bad = diagnostics(study, "bad-lines");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->path, (dir / "scalability-metrics/epoch-time/epochtime_ddp_1N.csv").string());
  EXPECT_EQ(bad[0]->line, 3);
  EXPECT_NE(bad[0]->message.find("3 lines"), std::string::npos) << bad[0]->message;
}

// ---------------------------------------------------------------- MLflow file store

constexpr std::int64_t kStartMs = 1'700'000'000'000;

TEST(ItwinaiMlflowReader, ItwinaiMlflow_TrainRunWithWorkers_IsOneRunWithEpochsAndGpuSeriesPerRank) {
  ScratchDir dir;
  MlflowStore store(dir, "123");
  // itwinai ends the train run right after starting it; its workers run on.
  store.run("train1", "resnet-ddp", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "train1", 0, 2, kStartMs + 200);
  store.worker("w1", "train1", 1, 2, kStartMs + 300);
  store.metric("w0", "epoch_time_s", std::to_string(kStartMs + 10'000) + " 10.5 0\n" +
                                         std::to_string(kStartMs + 20'000) + " 9.5 1\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  const auto& run = study.runs[0];
  EXPECT_EQ(run.run_id, "train1");
  EXPECT_EQ(run.format, "itwinai-mlflow");
  EXPECT_EQ(run.label, "torch-ddp");
  EXPECT_EQ(run.world_size, 2);
  EXPECT_EQ(run.sampling_interval_s, 1.0);
  EXPECT_EQ(run.start_ns, kStartMs * 1'000'000);
  EXPECT_EQ(run.end_ns, (kStartMs + 300 + 30'000) * 1'000'000);  // the last worker's end
  EXPECT_EQ(run.exit_status, 0);
  ASSERT_EQ(run.epochs.size(), 2u);
  EXPECT_EQ(run.epochs[0].rank, 0);
  EXPECT_EQ(run.epochs[0].index, 0);
  EXPECT_DOUBLE_EQ(run.epochs[0].seconds(), 10.5);
  EXPECT_EQ(run.epochs[0].end_ns, (kStartMs + 10'000) * 1'000'000);
  EXPECT_DOUBLE_EQ(run.epochs[1].seconds(), 9.5);
  ASSERT_EQ(run.gpus.size(), 2u);
  const auto& g1 = run.gpus[1];
  EXPECT_EQ(g1.index, 1);
  EXPECT_FALSE(g1.nominal_timestamps);
  ASSERT_EQ(g1.samples.size(), 2u);
  // Power and utilization of one step are one sample, at the power reading's real time.
  EXPECT_EQ(g1.samples[0].t_ns, (kStartMs + 300 + 5000) * 1'000'000);
  EXPECT_FLOAT_EQ(g1.samples[0].power_w, 300.5f);
  EXPECT_FLOAT_EQ(g1.samples[0].util_pct, 90.0f);
  EXPECT_FLOAT_EQ(g1.samples[1].power_w, 310.0f);
  EXPECT_FLOAT_EQ(g1.samples[1].util_pct, 95.0f);
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_RepeatsWithOneRunName_AreSeparateRuns_DeletedRunsLeftOut) {
  ScratchDir dir;
  MlflowStore store(dir, "7");
  for (std::string id : {"a", "b", "c"}) {
    store.run(id, "same-name", kStartMs, kStartMs + 100, 3, "", id == "c" ? "deleted" : "active");
    store.worker(id + "-w0", id, 0, 4, kStartMs + 200);
  }
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_NE(run_with_id(study, "a"), nullptr);
  EXPECT_NE(run_with_id(study, "b"), nullptr);
  EXPECT_EQ(run_with_id(study, "b")->world_size, 4);
  EXPECT_EQ(diagnostics(study, "deleted-runs").size(), 1u);
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_RayTuneRun_EachTrialIsARun) {
  ScratchDir dir;
  MlflowStore store(dir, "9");
  store.run("tune", "hpo", kStartMs, kStartMs + 100'000, 3);
  store.run("trial1", "trial_1", kStartMs, kStartMs + 100, 3, "tune");
  store.run("trial2", "trial_2", kStartMs, kStartMs + 100, 4, "tune");
  store.worker("t1w0", "trial1", 0, 1, kStartMs);
  store.worker("t2w0", "trial2", 0, 1, kStartMs);
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_EQ(run_with_id(study, "trial1")->exit_status, 0);
  EXPECT_EQ(run_with_id(study, "trial2")->exit_status, 1);  // status 4 = FAILED
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_AFailedRunHasNoRunTimeAndARunningOneIsSaid) {
  // Three repeats of one training: one FINISHED, one whose worker was KILLED (status 5) after its
  // epochs, one still RUNNING (status 1). Only the finished one's span is a run time.
  ScratchDir dir;
  MlflowStore store(dir, "11");
  const int statuses[] = {3, 5, 1};
  for (int k = 0; k < 3; ++k) {
    const std::string id = "t" + std::to_string(k);
    store.run(id, "resnet-ddp", kStartMs, kStartMs + 100, 3);
    store.worker(id + "w0", id, 0, 1, kStartMs);
    store.run(id + "w0", "worker_0 (main)", kStartMs, kStartMs + (k == 1 ? 12'000 : 30'000), statuses[k], id);
    store.metric(id + "w0", "epoch_time_s", std::to_string(kStartMs + 10'000) + " 10.0 0\n" +
                                              std::to_string(kStartMs + 20'000) + " 10.0 1\n");
  }
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 3u);
  EXPECT_EQ(diagnostics(study, "run-not-finished").size(), 1u);
  const auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 1u);
  const auto& c = s.configurations[0];
  ASSERT_TRUE(c.run_time_s);
  EXPECT_EQ(c.run_time_s->n, 1u) << "the killed run's 12 s and the running one's open span are no run times";
  EXPECT_DOUBLE_EQ(c.run_time_s->mean, 30.0);
  ASSERT_TRUE(c.epoch_time_s);
  EXPECT_EQ(c.epoch_time_s->n, 3u) << "each run's whole epoch after the warm-up one still counts";
  std::vector<std::string> failed;
  for (const auto& w : s.warnings)
    if (w.code == "failed-run") failed.push_back(w.message);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[0].find("an MLflow run of it ended FAILED or KILLED"), std::string::npos) << failed[0];
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_BadMetricLine_WarnsWithFileAndLine_RestIsRead) {
  ScratchDir dir;
  MlflowStore store(dir, "5");
  store.run("t", "r", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "t", 0, 1, kStartMs);
  store.metric("w0", "epoch_time_s", std::to_string(kStartMs + 1000) + " 4.0 0\n" +
                                         std::to_string(kStartMs + 2000) + " nan 1\n" + "garbage\n" +
                                         std::to_string(kStartMs + 3000) + " 3.0 2\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].epochs.size(), 2u);
  EXPECT_EQ(study.runs[0].epochs[1].index, 2);
  auto bad = diagnostics(study, "bad-lines");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->path, store.path("w0/metrics/epoch_time_s").string());
  EXPECT_EQ(bad[0]->line, 2);
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_RunWithoutWorldSize_IsKeptWithAWarning) {
  ScratchDir dir;
  MlflowStore store(dir, "3");
  store.run("t", "r", kStartMs, kStartMs + 100, 3);
  store.param("t", "strategy", "horovod");
  store.metric("t", "epoch_time_s", std::to_string(kStartMs + 1000) + " 4.0 0\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].label, "horovod");
  EXPECT_FALSE(study.runs[0].world_size.has_value());
  EXPECT_EQ(diagnostics(study, "unknown-world-size").size(), 1u);
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_DeletedExperiment_IsLeftOutWithANote) {
  ScratchDir dir;
  MlflowStore store(dir, "4", "deleted");
  store.run("t", "r", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "t", 0, 1, kStartMs);
  auto study = read_study(dir);
  EXPECT_TRUE(study.runs.empty());
  EXPECT_EQ(diagnostics(study, "deleted-experiment").size(), 1u);
}


// A 2-GPU job's train run deleted and removed by `mlflow gc`: MLflow's delete_run marks that run
// only, so its worker runs stay active, nested under a run id the store no longer holds. They
// counted as two runs of 2 GPUs each (a worker's GPU timed as the job).
TEST(ItwinaiMlflowReader, ItwinaiMlflow_WorkersWhoseTrainRunIsGone_AreLeftOutAndNamed) {
  ScratchDir dir;
  MlflowStore store(dir, "123");
  store.run("train2", "resnet-ddp-2", kStartMs, kStartMs + 100, 3);
  store.worker("w2_0", "train2", 0, 2, kStartMs + 200);
  store.worker("w2_1", "train2", 1, 2, kStartMs + 201);
  store.worker("w2b_0", "train2b", 0, 2, kStartMs + 5'000'200);
  store.worker("w2b_1", "train2b", 1, 2, kStartMs + 5'000'201);
  store.metric("w2b_0", "epoch_time_s", std::to_string(kStartMs + 5'010'000) + " 25 0\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].run_id, "train2");
  EXPECT_EQ(study.runs[0].gpus.size(), 2u);
  auto orphans = diagnostics(study, "orphan-runs");
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_EQ(orphans[0]->severity, Severity::warning);
  for (const char* says : {"w2b_0 ('worker_0 (main)')", "w2b_1 ('worker_1')", "run 'train2b'", "mlflow gc", "left out"})
    EXPECT_NE(orphans[0]->message.find(says), std::string::npos) << says << " in " << orphans[0]->message;
}

// A Ray trial whose tune run is gone has workers of its own: it is a training run, read as one
// (the orphan rule left the whole trial out). Workers whose train run's meta.yaml cannot be read
// are left out, and the warning says that, not that the run was deleted.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_ATrialWhoseTuneRunIsGoneIsRead_WorkersOfAnUnreadableRunSaySo) {
  ScratchDir dir;
  MlflowStore store(dir, "123");
  store.run("trial1", "trial", kStartMs, kStartMs + 100, 3, "tune-gone");
  store.worker("t1w0", "trial1", 0, 2, kStartMs + 200);
  store.worker("t1w1", "trial1", 1, 2, kStartMs + 300);
  store.run("train3", "resnet-ddp-3", kStartMs, kStartMs + 100, 3);
  store.worker("w3_0", "train3", 0, 1, kStartMs + 200);
  dir.write("mllogs/mlflow/123/train3/meta.yaml", "");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].run_id, "trial1");
  EXPECT_EQ(study.runs[0].world_size, 2);
  EXPECT_EQ(study.runs[0].gpus.size(), 2u);
  auto orphans = diagnostics(study, "orphan-runs");
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_NE(orphans[0]->message.find("w3_0 ('worker_0 (main)') is nested under run 'train3' (tag mlflow.parentRunId), "
                                     "whose meta.yaml cannot be read (above)"),
            std::string::npos)
      << orphans[0]->message;
  EXPECT_EQ(orphans[0]->message.find("mlflow gc"), std::string::npos) << orphans[0]->message;
}

// The main worker logged epoch 2 twice (a job restarted from a checkpoint logs its epochs again);
// the first value was dropped without a word.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_AnEpochLoggedTwice_IsNamedWithBothLines_TheLongestCounts) {
  ScratchDir dir;
  MlflowStore store(dir, "123");
  store.run("train2", "resnet-ddp-2", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "train2", 0, 1, kStartMs + 200);
  store.run("w0", "worker_0 (main)", kStartMs + 200, kStartMs + 60'200, 3, "train2");
  auto at = [](int s) { return std::to_string(kStartMs + s * 1000); };
  store.metric("w0", "epoch_time_s",
               at(10) + " 12.0 0\n" + at(20) + " 10.0 1\n" + at(30) + " 10.2 2\n" + at(40) + " 9.8 3\n" + at(50) + " 20.0 2\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  auto repeated = diagnostics(study, "repeated-epoch");
  ASSERT_EQ(repeated.size(), 1u);
  EXPECT_EQ(repeated[0]->path, store.path("w0/metrics/epoch_time_s").string());
  EXPECT_EQ(repeated[0]->line, 5);
  EXPECT_NE(repeated[0]->message.find("epoch 2 at line 3 (10.2 s) and line 5 (20 s)"), std::string::npos)
      << repeated[0]->message;
  EXPECT_NE(repeated[0]->message.find("its time the longest"), std::string::npos) << repeated[0]->message;
  const auto s = analyze(study, {});
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_EQ(s.runs[0].epoch_times_s, (std::vector<double>{10.0, 20.0, 9.8})) << "after the warm-up epoch";
}

// A 0-byte worker meta.yaml (a rewrite cut short) and a train run's meta.yaml in flow style, which
// yaml.safe_load reads as the same mapping (written here by yaml.safe_dump(default_flow_style=True)).
// The first dropped the worker without a word; the second dropped the train run, its workers
// becoming runs of their own.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_MetaYaml_FlowStyleIsRead_AnEmptyOneIsNamed) {
  ScratchDir dir;
  MlflowStore store(dir, "123");
  store.run("train1", "resnet-ddp", kStartMs, kStartMs + 100, 3);
  dir.write("mllogs/mlflow/123/train1/meta.yaml",
            "{artifact_uri: 'file:///scratch/mllogs/mlflow/x/train1/artifacts', end_time: 1700000000100,\n"
            "  entry_point_name: '', experiment_id: x, lifecycle_stage: active, run_id: train1,\n"
            "  run_name: resnet-ddp, run_uuid: train1, source_name: '', source_type: 4, source_version: '',\n"
            "  start_time: 1700000000000, status: 3, tags: [], user_id: someone}\n");
  store.worker("w0", "train1", 0, 2, kStartMs + 200);
  store.worker("w1", "train1", 1, 2, kStartMs + 300);
  dir.write("mllogs/mlflow/123/w1/meta.yaml", "");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  const auto& run = study.runs[0];
  EXPECT_EQ(run.run_id, "train1");
  EXPECT_EQ(run.details().run_name, "resnet-ddp");
  EXPECT_EQ(run.start_ns, kStartMs * 1'000'000);
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_EQ(run.gpus.size(), 1u);
  auto unreadable = diagnostics(study, "unreadable-file");
  ASSERT_EQ(unreadable.size(), 1u);
  EXPECT_EQ(unreadable[0]->path, store.path("w1/meta.yaml").string());
  EXPECT_NE(unreadable[0]->message.find("it is empty"), std::string::npos) << unreadable[0]->message;
  EXPECT_NE(unreadable[0]->message.find("left out"), std::string::npos) << unreadable[0]->message;
  EXPECT_NE(unreadable[0]->message.find("run 'train1' it is nested under lacks them"), std::string::npos)
      << unreadable[0]->message;
}

// A flow mapping cut off before its '}' is named, not half read.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_MetaYaml_UnclosedFlowMappingIsNamed) {
  ScratchDir dir;
  MlflowStore store(dir, "123");
  store.run("train1", "resnet-ddp", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "train1", 0, 1, kStartMs + 200);
  dir.write("mllogs/mlflow/123/w0/meta.yaml", "{artifact_uri: 'file:///scratch/mllogs/mlflow/x/w0/artifacts', end_time: 17000000");
  auto study = read_study(dir);
  auto unreadable = diagnostics(study, "unreadable-file");
  ASSERT_EQ(unreadable.size(), 1u);
  EXPECT_EQ(unreadable[0]->path, store.path("w0/meta.yaml").string());
  EXPECT_NE(unreadable[0]->message.find("never closed"), std::string::npos) << unreadable[0]->message;
}

// The baseline's main worker left a 0-byte epoch_time_s (MLflow writes a metric file only by
// appending a line); the 4-GPU job logged its epochs.
void store_with_empty_baseline_epochs(const ScratchDir& dir) {
  MlflowStore store(dir, "123");
  store.run("train2", "resnet-ddp-2", kStartMs, kStartMs + 100, 3);
  store.worker("w2_0", "train2", 0, 2, kStartMs + 200);
  store.worker("w2_1", "train2", 1, 2, kStartMs + 201);
  store.metric("w2_0", "epoch_time_s", "");
  const std::int64_t t4 = kStartMs + 1'000'000;
  store.run("train4", "resnet-ddp-4", t4, t4 + 100, 3);
  for (int rank = 0; rank < 4; ++rank) store.worker("w4_" + std::to_string(rank), "train4", rank, 4, t4 + 200 + rank);
  store.metric("w4_0", "epoch_time_s",
               std::to_string(t4 + 10'000) + " 6.0 0\n" + std::to_string(t4 + 20'000) + " 5.2 1\n" +
                   std::to_string(t4 + 25'000) + " 5.0 2\n");
}

// The curve fell back to run time without a word about the file.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_EmptyMetricFile_IsNamed) {
  ScratchDir dir;
  store_with_empty_baseline_epochs(dir);
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_TRUE(run_with_id(study, "train2")->epochs.empty());
  auto empty = diagnostics(study, "no-epochs");
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0]->path, (dir / "mllogs/mlflow/123/w2_0/metrics/epoch_time_s").string());
  EXPECT_NE(empty[0]->message.find("metric file is empty"), std::string::npos) << empty[0]->message;
}

// ---------------------------------------------------------------- layouts across itwinai versions

Summary analyze_dir(const ScratchDir& dir, int warmup_epochs, IngestOptions in = {}) {
  in.inputs = {dir.path().string()};
  in.threads = 1;
  AnalysisOptions options;
  options.warmup_epochs = warmup_epochs;
  return analyze(ingest(in), options);
}

const ConfigurationSummary* configuration(const Summary& s, const std::string& label, int world_size) {
  for (const auto& c : s.configurations)
    if (c.label == label && c.world_size == world_size) return &c;
  return nullptr;
}

bool has_warning(const Summary& s, const std::string& code, const std::string& text) {
  return std::any_of(s.warnings.begin(), s.warnings.end(), [&](const Diagnostic& d) {
    return d.code == code && d.message.find(text) != std::string::npos;
  });
}

TEST(ItwinaiCsvReader, ItwinaiCsv_FlatVirgoLayout_PairsByStrategyAndGpuCount_ItwinaiFigures) {
  // itwinai v0.2.3-v0.3.0: every scale's files side by side. 1 node x 2 GPUs and 2 nodes x 2 GPUs.
  ScratchDir dir;
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_1N.csv", kEpochHeader + "1,30,ddp,1\n2,20,ddp,1\n3,22,ddp,1\n");
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_2N.csv", kEpochHeader + "1,16,ddp,2\n2,11,ddp,2\n3,11,ddp,2\n");
  // 3 samples 2 s apart per GPU: 100, 200, 300 W.
  dir.write("scalability-metrics/gpu-energy-data/ddp_2.csv",
            kEnergyHeader + "0,40,100,0,0,2,ddp,2\n0,40,100,1,0,2,ddp,2\n1,60,200,0,0,2,ddp,2\n1,60,200,1,0,2,ddp,2\n"
                            "2,80,300,0,0,2,ddp,2\n2,80,300,1,0,2,ddp,2\n");
  // 2 samples of 250 W per GPU, node 0's rows then node 1's.
  dir.write("scalability-metrics/gpu-energy-data/ddp_4.csv",
            kEnergyHeader + "0,50,250,0,0,4,ddp,2\n0,50,250,1,0,4,ddp,2\n1,50,250,0,0,4,ddp,2\n1,50,250,1,0,4,ddp,2\n"
                            "0,70,250,0,1,4,ddp,2\n0,70,250,1,1,4,ddp,2\n1,70,250,0,1,4,ddp,2\n1,70,250,1,1,4,ddp,2\n");
  // itwinai averages every epoch: compare with --warmup-epochs 0.
  auto s = analyze_dir(dir, 0);
  ASSERT_EQ(s.configurations.size(), 2u);
  const auto* two = configuration(s, "ddp", 2);
  const auto* four = configuration(s, "ddp", 4);
  ASSERT_NE(two, nullptr);
  ASSERT_NE(four, nullptr);
  // Mean epoch times 24 s and 38/3 s; relative speedup 24 / (38/3) = 72/38.
  EXPECT_DOUBLE_EQ(two->epoch_time_s->mean, 24.0);
  EXPECT_DOUBLE_EQ(four->epoch_time_s->mean, 38.0 / 3);
  EXPECT_NEAR(*four->speedup, 72.0 / 38, 1e-12);
  // Energy as itwinai counts it: power x probing_interval per sample, summed over GPUs:
  // 2 GPUs x (100 + 200 + 300) W x 2 s = 2400 J; 4 GPUs x 2 x 250 W x 2 s = 4000 J.
  EXPECT_NEAR(*two->energy_wh, 2400.0 / 3600, 1e-12);
  EXPECT_NEAR(*four->energy_wh, 4000.0 / 3600, 1e-12);
  // Utilization: the plain mean of the samples, (40 + 60 + 80) / 3 and (50 + 70) / 2.
  EXPECT_NEAR(two->gpu_util_pct->mean, 60.0, 1e-9);
  EXPECT_NEAR(four->gpu_util_pct->mean, 60.0, 1e-9);
  EXPECT_FALSE(four->energy_extrapolated);
}

TEST(ItwinaiCsvReader, ItwinaiCsv_V034rc1WorkersColumn_IsTheWorldSize) {
  // v0.3.4-rc1 renamed `nodes` to `workers` and filled it with the global world size.
  ScratchDir dir;
  dir.write("scalability-metrics/quantum-neutrino/epoch-time/epochtime_torch-ddp_8N.csv",
            "epoch_id,time,name,workers\n0,5.5,torch-ddp,8\n1,4.5,torch-ddp,8\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].label, "torch-ddp");
  EXPECT_EQ(study.runs[0].world_size, 8);
  EXPECT_FALSE(study.runs[0].nodes.has_value());
  ASSERT_EQ(study.runs[0].epochs.size(), 2u);
  EXPECT_DOUBLE_EQ(study.runs[0].epochs[1].seconds(), 4.5);
  EXPECT_TRUE(diagnostics(study, "unknown-world-size").empty());
}

TEST(ItwinaiCsvReader, ItwinaiCsv_ManifestAboveFlatFiles_GivesDefaults_NeverOneRun) {
  ScratchDir dir;
  dir.write("scalelens.json", R"({"gpus_per_node": 4, "samples_per_epoch": 1000})");
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_1N.csv", kEpochHeader + "1,20,ddp,1\n");
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_2N.csv", kEpochHeader + "1,11,ddp,2\n");
  dir.write("scalability-metrics/epoch-time/epochtime_horovod_1N.csv", kEpochHeader + "1,25,horovod,1\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 3u) << "the manifest above defines no run of its own";
  const auto* ddp2 = run_with_id(study, "scalability-metrics/epochtime_ddp_2N");
  ASSERT_NE(ddp2, nullptr);
  EXPECT_EQ(ddp2->label, "ddp");
  EXPECT_EQ(ddp2->world_size, 8);  // 2 nodes x gpus_per_node 4
  EXPECT_EQ(ddp2->samples_per_epoch, 1000.0);
  EXPECT_EQ(run_with_id(study, "scalability-metrics/epochtime_ddp_1N")->world_size, 4);
  EXPECT_EQ(run_with_id(study, "scalability-metrics/epochtime_horovod_1N")->label, "horovod");
}

// The same files below a scalelens.json cut short (its writer killed mid-write): its runs have no
// world size, which its `bad-manifest` error says once. Each also said `unknown-world-size` twice
// (the reader's "write a scalelens.json above it", and the analysis's), as if there were none.
TEST(ItwinaiCsvReader, ItwinaiCsv_ManifestAboveCutShort_SaysBadManifestOnceAndNoUnknownWorldSize) {
  ScratchDir dir;
  dir.write("scalelens.json", R"({"gpus_per_node": 4, "samples_per_epoch": 1000)");
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_1N.csv", kEpochHeader + "1,20,ddp,1\n");
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_2N.csv", kEpochHeader + "1,11,ddp,2\n");
  auto s = analyze_dir(dir, 0);
  std::vector<const Diagnostic*> bad, unknown;
  for (const auto& d : s.warnings) {
    if (d.code == "bad-manifest") bad.push_back(&d);
    if (d.code == "unknown-world-size") unknown.push_back(&d);
  }
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->path, (dir / "scalelens.json").string());
  EXPECT_TRUE(unknown.empty()) << unknown.front()->path << ": " << unknown.front()->message;
  EXPECT_TRUE(s.configurations.empty());
  // The manifest mended, they are placed (4 and 8 GPUs) and nothing is said of either.
  dir.write("scalelens.json", R"({"gpus_per_node": 4, "samples_per_epoch": 1000})");
  s = analyze_dir(dir, 0);
  EXPECT_EQ(s.configurations.size(), 2u);
  EXPECT_FALSE(has_warning(s, "bad-manifest", ""));
}

TEST(ItwinaiCsvReader, ItwinaiCsv_ComputationDataOfARunFolder_JoinItsRun) {
  // v0.3.1-v0.3.3 per-run folder; the profiler averages were written with pandas' index column.
  ScratchDir dir;
  const std::string run = "scalability-metrics/a1b2/";
  dir.write(run + "epoch-time/epochtime_ddp_1N.csv", kEpochHeader + "1,20,ddp,1\n");
  dir.write(run + "gpu-energy-data/ddp_2.csv", kEnergyHeader + "0,50,250,0,0,2,ddp,1\n0,50,250,1,0,2,ddp,1\n");
  const std::string header = ",name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank\n";
  for (int rank : {0, 1})
    dir.write(run + "computation-data/ddp_2_" + std::to_string(rank) + ".csv",
              header + "0,ProfilerStep*,0,100,5000,5.000ms,4,ddp,2," + std::to_string(rank) +
                  "\n1,aten::addmm,0,600,600,600.000us,40,ddp,2," + std::to_string(rank) + "\n2,nccl:all_reduce,0,300,300,300.000us,8,ddp,2," +
                  std::to_string(rank) + "\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_TRUE(study.runs[0].details().profiler_averages.has_value());
  EXPECT_EQ(study.runs[0].details().profiler_averages->files, 2);
  // Per rank: total 1000 µs, ATen 600, ProfilerStep* 100.
  EXPECT_DOUBLE_EQ(study.runs[0].details().profiler_averages->total_us, 2000);
  EXPECT_DOUBLE_EQ(study.runs[0].details().profiler_averages->aten_us, 1200);
  EXPECT_DOUBLE_EQ(study.runs[0].details().profiler_averages->profiler_step_us, 200);
}

// Training runs that log no global_world_size, below a scalelens.json that cannot be parsed:
// `bad-manifest` once, not also `unknown-world-size` for each run from the reader and the analysis.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_ManifestAboveTheStoreCutShort_SaysBadManifestOnly) {
  ScratchDir dir;
  dir.write("mllogs/scalelens.json", R"({"world_size": 4, "samples_per_epoch": 600)");
  MlflowStore store(dir, "1");
  for (const std::string t : {"t2", "t4"}) {
    store.run(t, "ddp-" + t, kStartMs, kStartMs + 100, 3);
    store.run(t + "w0", "worker_0 (main)", kStartMs, kStartMs + 30'000, 3, t);
    store.param(t + "w0", "strategy", "torch-ddp");
    store.param(t + "w0", "global_rank", "0");
    store.metric(t + "w0", "epoch_time_s", std::to_string(kStartMs + 10'000) + " 10 0\n");
  }
  auto s = analyze_dir(dir, 0);
  std::size_t bad = 0, unknown = 0;
  for (const auto& d : s.warnings) {
    bad += d.code == "bad-manifest";
    unknown += d.code == "unknown-world-size";
  }
  EXPECT_EQ(bad, 1u);
  EXPECT_EQ(unknown, 0u);
  // Without a manifest there, each run says it.
  std::filesystem::remove(dir / "mllogs/scalelens.json");
  s = analyze_dir(dir, 0);
  EXPECT_TRUE(has_warning(s, "unknown-world-size", "no param global_world_size"));
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_ManifestAboveTheStore_GivesDefaults_NeverOneRun) {
  ScratchDir dir;
  dir.write("mllogs/scalelens.json", R"({"samples_per_epoch": 60000})");
  MlflowStore store(dir, "1");
  store.run("t2", "ddp-2", kStartMs, kStartMs + 100, 3);
  store.worker("t2w0", "t2", 0, 2, kStartMs);
  store.run("t4", "ddp-4", kStartMs, kStartMs + 100, 3);
  store.worker("t4w0", "t4", 0, 4, kStartMs);
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_EQ(run_with_id(study, "t2")->world_size, 2);
  EXPECT_EQ(run_with_id(study, "t4")->world_size, 4);
  EXPECT_EQ(run_with_id(study, "t4")->samples_per_epoch, 60000.0);
  EXPECT_EQ(run_with_id(study, "t4")->details().run_name, "ddp-4");
}

void two_experiments(const ScratchDir& dir) {
  MlflowStore mnist(dir, "11", "active", "mnist");
  mnist.run("m1", "mnist-run", kStartMs, kStartMs + 100, 3);
  mnist.worker("m1w0", "m1", 0, 2, kStartMs);
  MlflowStore virgo(dir, "12", "active", "virgo");
  virgo.run("v1", "virgo-run", kStartMs, kStartMs + 100, 3);
  virgo.worker("v1w0", "v1", 0, 2, kStartMs);
  virgo.run("v2", "virgo-horovod", kStartMs, kStartMs + 100, 3);
  virgo.worker("v2w0", "v2", 0, 2, kStartMs);
  virgo.param("v2w0", "strategy", "horovod");
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_TwoExperiments_AreTwoCurves_NotRepeats) {
  ScratchDir dir;
  two_experiments(dir);
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 3u);
  EXPECT_EQ(run_with_id(study, "m1")->label, "mnist/torch-ddp");
  EXPECT_EQ(run_with_id(study, "v1")->label, "virgo/torch-ddp");
  EXPECT_EQ(run_with_id(study, "v1")->details().experiment, "virgo");
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_ExperimentAndRunNames_SelectLikeItwinai) {
  ScratchDir dir;
  two_experiments(dir);
  IngestOptions in{{dir.path().string()}, {}, 1, {}};
  in.experiment = "virgo";
  auto study = ingest(in);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_EQ(run_with_id(study, "v1")->label, "torch-ddp") << "one experiment left: no prefix";
  in.run_names = {"virgo-horovod", "no-such-run"};
  study = ingest(in);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].run_id, "v2");
  auto missing = diagnostics(study, "run-name-not-found");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0]->message.find("no-such-run"), std::string::npos);
  in.experiment = "nope";
  in.run_names.clear();
  study = ingest(in);
  EXPECT_TRUE(study.runs.empty());
  auto not_found = diagnostics(study, "experiment-not-found");
  ASSERT_EQ(not_found.size(), 1u);
  EXPECT_NE(not_found[0]->message.find("'mnist', 'virgo'"), std::string::npos) << not_found[0]->message;
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_Pattern_SelectsByStrategyRunNameOrExperiment) {
  // The store's paths are numeric ids: the README's --pattern 'ddp|deepspeed' must still find it.
  ScratchDir dir;
  two_experiments(dir);
  auto with = [&](const std::string& pattern) {
    return ingest(IngestOptions{{dir.path().string()}, pattern, 1, {}});
  };
  EXPECT_EQ(with("ddp|deepspeed").runs.size(), 2u);
  EXPECT_EQ(with("^horovod$").runs.size(), 1u);
  EXPECT_EQ(with("^virgo-run$").runs.size(), 1u);
  EXPECT_EQ(with("^mnist$").runs.size(), 1u);
  EXPECT_TRUE(with("^fsdp$").runs.empty());
}

// itwinai's training "big" (run t) of `world_size` GPUs whose rank 0 (worker w0) logs an epoch of
// 10 s and its GPU's metrics.
void training_logged_by_rank_zero(const MlflowStore& store, int world_size) {
  store.run("t", "big", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "t", 0, world_size, kStartMs);
  store.metric("w0", "epoch_time_s", std::to_string(kStartMs + 10'000) + " 10 0\n");
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_OnlyRankZeroLogged_WarnsAndExtrapolatesEnergy) {
  // itwinai's default log_on_workers=0: GPU metrics of rank 0's GPU only, in a 16-GPU job.
  ScratchDir dir;
  MlflowStore store(dir, "2");
  training_logged_by_rank_zero(store, 16);
  auto s = analyze_dir(dir, 0);
  const auto* c = configuration(s, "torch-ddp", 16);
  ASSERT_NE(c, nullptr);
  // One GPU: 300.5 W and 310 W 1.001 s apart (trapezoid over the real spacing) = 305.55525 J.
  const double per_gpu_j = 0.5 * (300.5 + 310.0) * 1.001;
  EXPECT_NEAR(*c->energy_wh_per_gpu, per_gpu_j / 3600, 1e-9);
  EXPECT_NEAR(*c->energy_wh, 16 * per_gpu_j / 3600, 1e-9);
  EXPECT_TRUE(c->energy_extrapolated);
  EXPECT_TRUE(has_warning(s, "partial-gpu-data", "GPU data for 1 of 16 GPUs"));
}

const Diagnostic* warning_with_code(const Summary& s, const std::string& code) {
  auto it = std::find_if(s.warnings.begin(), s.warnings.end(), [&](const Diagnostic& d) { return d.code == code; });
  return it == s.warnings.end() ? nullptr : &*it;
}

// A store whose params say global_world_size 4 but whose workers are ranks 0 to 7 is placed at the
// 8 GPUs its ranks show (ranks-beyond-world-size). Rank 0's GPU, the only one logged, stood for 4
// GPUs there: "GPU data for 1 of 4 GPUs", the job's energy x 4, half of it, in a configuration at 8.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_RanksBeyondItsWorldSize_EnergyExtrapolatedToThePlacedSize) {
  ScratchDir dir;
  MlflowStore store(dir, "2");
  training_logged_by_rank_zero(store, 4);
  // Rank 7 logs its epoch too; like every rank outside log_on_workers, no GPU metrics.
  store.worker("w7", "t", 7, 4, kStartMs, "torch-ddp", false);
  store.metric("w7", "epoch_time_s", std::to_string(kStartMs + 10'000) + " 10 0\n");
  auto s = analyze_dir(dir, 0);
  EXPECT_EQ(configuration(s, "torch-ddp", 4), nullptr);
  const auto* c = configuration(s, "torch-ddp", 8);
  ASSERT_NE(c, nullptr);
  const double per_gpu_j = 0.5 * (300.5 + 310.0) * 1.001;  // as above: rank 0's GPU
  EXPECT_NEAR(*c->energy_wh_per_gpu, per_gpu_j / 3600, 1e-9);
  EXPECT_NEAR(*c->energy_wh, 8 * per_gpu_j / 3600, 1e-9);
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_NEAR(*s.runs[0].energy_j, 8 * per_gpu_j, 1e-6);
  EXPECT_TRUE(s.runs[0].energy_extrapolated);
  const auto* partial = warning_with_code(s, "partial-gpu-data");
  ASSERT_NE(partial, nullptr);
  EXPECT_NE(partial->message.find("GPU data for 1 of 8 GPUs"), std::string::npos) << partial->message;
  EXPECT_NE(partial->message.find("(x 8 GPUs"), std::string::npos) << partial->message;
  // Every warning of the run names the configuration it is in.
  ASSERT_NE(warning_with_code(s, "ranks-beyond-world-size"), nullptr);
  for (const auto& d : s.warnings)
    if (!d.configuration.empty()) EXPECT_EQ(d.configuration, "torch-ddp/8") << d.code << ": " << d.message;
}

// A logger that stamps every reading with one time (a batched flush) gave an empty energy, unsaid.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_PowerReadingsAtOneInstant_GiveNoEnergyWithAReason) {
  ScratchDir dir;
  MlflowStore store(dir, "2");
  training_logged_by_rank_zero(store, 1);
  const std::string at = std::to_string(kStartMs + 5000);
  store.metric("w0", "gpu_power_W", at + " 300 5\n" + at + " 310 6\n" + at + " 320 7\n");
  auto s = analyze_dir(dir, 0);
  const auto* c = configuration(s, "torch-ddp", 1);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->energy_wh);
  EXPECT_TRUE(has_warning(s, "energy-no-time", "its power readings inside the run lie at one instant (GPU 0: 3 readings)"));
}

// A GPU monitor restarted with its job counts its steps from 0 again: steps 5 and 6 logged twice,
// 40 s apart. Pairing power and utilization by step alone wrote the later readings over the
// earlier ones (2 samples, not 4, and 3 s of readings lost without a word).
TEST(ItwinaiMlflowReader, ItwinaiMlflow_GpuStepsLoggedAgain_AreReadingsOfTheirOwn) {
  ScratchDir dir;
  MlflowStore store(dir, "7");
  store.run("t", "restarted", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "t", 0, 1, kStartMs);
  auto t = [](std::int64_t ms) { return std::to_string(kStartMs + ms); };
  store.metric("w0", "gpu_power_W", t(5000) + " 300 5\n" + t(6000) + " 310 6\n" + t(45000) + " 200 5\n" + t(46000) + " 210 6\n");
  store.metric("w0", "gpu_utilization_percent",
               t(5001) + " 90 5\n" + t(6001) + " 95 6\n" + t(45001) + " 50 5\n" + t(46001) + " 55 6\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].gpus.size(), 1u);
  const auto& g = study.runs[0].gpus[0];
  ASSERT_EQ(g.samples.size(), 4u);
  const std::int64_t want_ms[] = {5000, 6000, 45000, 46000};
  const float want_w[] = {300, 310, 200, 210}, want_pct[] = {90, 95, 50, 55};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(g.samples[i].t_ns, (kStartMs + want_ms[i]) * 1'000'000) << i;
    EXPECT_FLOAT_EQ(g.samples[i].power_w, want_w[i]) << i;
    EXPECT_FLOAT_EQ(g.samples[i].util_pct, want_pct[i]) << i;
  }
}

// The experiment's own meta.yaml cut to 0 bytes: the store was recognized by that file alone, so
// the whole experiment vanished ("no usable data", or nothing beside other data) and nothing named it.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_AnEmptyExperimentMetaYaml_IsNamedAndItsRunsRead) {
  ScratchDir dir;
  MlflowStore store(dir, "8");
  store.run("t", "cut", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "t", 0, 1, kStartMs);
  store.metric("w0", "epoch_time_s", std::to_string(kStartMs + 10'000) + " 10 0\n");
  dir.write("mllogs/mlflow/8/meta.yaml", "");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].run_id, "t");
  EXPECT_EQ(study.runs[0].epochs.size(), 1u);
  const Diagnostic* said = nullptr;
  for (const auto& d : study.diagnostics)
    if (d.code == "unreadable-file" && d.path.ends_with("mlflow/8/meta.yaml")) said = &d;
  ASSERT_NE(said, nullptr);
  EXPECT_NE(said->message.find("MLflow experiment meta.yaml: it is empty; its runs are read"), std::string::npos) << said->message;
  // A run's meta.yaml alone does not make its folder an experiment.
  dir.write("mllogs/mlflow/8/t/meta.yaml", "");
  dir.write("mllogs/mlflow/8/w0/meta.yaml", "");
  EXPECT_TRUE(read_study(dir).runs.empty());
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_ProfilingAverages_GiveItwinaisComputationFraction) {
  ScratchDir dir;
  MlflowStore store(dir, "6");
  store.run("t", "prof", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "t", 0, 2, kStartMs);
  store.worker("w1", "t", 1, 2, kStartMs);
  // torch.profiler key averages as itwinai writes them (index=False); a kernel name with commas is
  // quoted and counts as computation through its " at::" (itwinai's \sat:: pattern).
  const std::string csv =
      "name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank\n"
      "ProfilerStep*,-1,100,5000,5.000ms,4,torch-ddp,2,0\n"
      "aten::addmm,-1,600,600,600.000us,40,torch-ddp,2,0\n"
      "autograd::engine::evaluate_function: AddmmBackward0,-1,200,800,800.000us,40,torch-ddp,2,0\n"
      "nccl:all_reduce,-1,300,300,300.000us,8,torch-ddp,2,0\n"
      "\"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
      "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)\",-1,50,50,50.000us,3,torch-ddp,2,0\n"
      "cudaStreamSynchronize,-1,0,0,0.000us,2,torch-ddp,2,0\n";
  store.artifact("w0", "torch_profiling_averages/torch_profiling_averages.csv", csv);
  store.artifact("w1", "torch_profiling_averages/torch_profiling_averages.csv", csv);
  auto s = analyze_dir(dir, 0);
  const auto* c = configuration(s, "torch-ddp", 2);
  ASSERT_NE(c, nullptr);
  // Per rank: total 1250 µs, ATen/autograd 600 + 200 + 50 = 850, ProfilerStep* 100; pooled over
  // both ranks: 1700 / (2500 - 200).
  ASSERT_TRUE(c->itwinai_computation_fraction.has_value());
  EXPECT_NEAR(*c->itwinai_computation_fraction, 1700.0 / 2300.0, 1e-12);
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_ProfilerTracesOfARunName_AttachToThatRun) {
  // itwinai's tensorboard_trace_handler: profiler-traces/<run name>/torch-traces/worker_<rank>.<ns>.pt.trace.json
  ScratchDir dir;
  MlflowStore store(dir, "8");
  store.run("t", "quantum-neutrino", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "t", 0, 1, kStartMs);
  dir.write("profiler-traces/quantum-neutrino/torch-traces/worker_0.1700000000123456789.pt.trace.json",
            R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1}, "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 1000},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 5, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "ts": 20, "dur": 500, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 1000, "dur": 1000},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1010, "dur": 5, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "ts": 1020, "dur": 500, "args": {"stream": 7, "correlation": 2}}
]})");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].breakdown.size(), 1u);
  EXPECT_TRUE(diagnostics(study, "no-manifest").empty());
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_DatabaseStore_IsNamedAsNotRead) {
  ScratchDir dir;
  dir.write("mllogs/mlflow.db", std::string("SQLite format 3\0", 16) + std::string(100, '\x01'));
  auto study = read_study(dir);
  EXPECT_TRUE(study.runs.empty());
  auto d = diagnostics(study, "mlflow-database-store");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0]->message.find("file stores only"), std::string::npos);
}

// A curve timed by run time because its baseline has no epochs: the table showed "-" for the run
// time of the configurations that have epochs, while their speedup rested on it.
TEST(ItwinaiMlflowReader, ItwinaiMlflow_CurveTimedByRunTime_TableShowsTheRunTimeItsSpeedupUses) {
  ScratchDir dir;
  store_with_empty_baseline_epochs(dir);
  const auto s = analyze_dir(dir, 1);
  const auto* c4 = configuration(s, "torch-ddp", 4);
  ASSERT_NE(c4, nullptr);
  ASSERT_TRUE(c4->epoch_time_s);
  EXPECT_EQ(c4->time_from, "run");
  ASSERT_TRUE(c4->run_time_s);
  // The table's cells are set apart by two spaces or more (one inside "5.1 ± 1.27").
  const auto table = render_table(s, {});
  const std::regex gap(" {2,}");
  auto cells = [&](const std::string& line) {
    return std::vector<std::string>(std::sregex_token_iterator(line.begin(), line.end(), gap, -1), std::sregex_token_iterator());
  };
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);
  const auto titles = cells(line);
  std::vector<std::string> row;
  while (std::getline(lines, line))
    if (auto c = cells(line); c.size() > 1 && c[0] == "torch-ddp" && c[1] == "4") row = c;
  ASSERT_EQ(row.size(), titles.size()) << table;
  const auto column = std::find(titles.begin(), titles.end(), "run s (95% CI)") - titles.begin();
  ASSERT_LT(static_cast<std::size_t>(column), titles.size()) << table;
  const std::string value = row[column];
  EXPECT_EQ(value, fmt::format("{:.3g}", c4->run_time_s->mean)) << table;
}

}  // namespace
}  // namespace scalelens
