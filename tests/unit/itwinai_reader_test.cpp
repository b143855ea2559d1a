// itwinai's scalability-metrics CSV layout and MLflow file store, read through ingest() so
// recognition by content is tested too. Files are written by hand following itwinai's column names
// (loggers.py EpochTimeTracker, torch/monitoring/monitoring.py) and MLflow's file-store layout.
#include <gtest/gtest.h>

#include <algorithm>

#include "ingest/ingest.hpp"
#include "support/test_support.hpp"

namespace scalelens {
namespace {

using testing::ScratchDir;

Study ingest_dir(const ScratchDir& dir) { return ingest(IngestOptions{{dir.path().string()}, {}, 1, {}}); }

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
  auto study = ingest_dir(dir);
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
  auto study = ingest_dir(dir);
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
  auto study = ingest_dir(dir);
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
  auto study = ingest_dir(dir);
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

TEST(ItwinaiCsvReader, ItwinaiCsv_SeveralFilesOfOneStrategyInOneFolder_AreNotPaired) {
  ScratchDir dir;
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_1N.csv", kEpochHeader + "1,20,ddp,1\n");
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_2N.csv", kEpochHeader + "1,11,ddp,2\n");
  dir.write("scalability-metrics/gpu-energy-data/ddp_4.csv", kEnergyHeader + "0,50,250,0,0,4,ddp,1\n");
  auto study = ingest_dir(dir);
  EXPECT_EQ(study.runs.size(), 3u);
  EXPECT_EQ(diagnostics(study, "unknown-world-size").size(), 2u);
}

TEST(ItwinaiCsvReader, ItwinaiCsv_FilesWrittenWhole_KeepALastLineWithoutNewlineAndSkipBlankLines) {
  // Unlike run-folder CSVs (appended while the job runs), these are written once: a last line
  // without its newline is complete, not cut.
  ScratchDir dir;
  dir.write("scalability-metrics/run-a1/epoch-time/epochtime_ddp_1N.csv", kEpochHeader + "1,20,ddp,1\n  \n2,19,ddp,1");
  dir.write("scalability-metrics/run-a1/gpu-energy-data/ddp_1.csv", kEnergyHeader + "0,50,250,0,0,1,ddp,1\n1,60,260,0,0,1,ddp,1");
  auto study = ingest_dir(dir);
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
  auto study = ingest_dir(dir);
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

// An MLflow file store written the way MLflow's FileStore lays it out.
class MlflowStore {
 public:
  MlflowStore(const ScratchDir& dir, std::string exp_id, std::string lifecycle = "active")
      : dir_(dir), exp_("mllogs/mlflow/" + exp_id) {
    dir_.write(exp_ + "/meta.yaml", "artifact_location: file:///scratch/mllogs/mlflow/" + exp_id +
                                        "\ncreation_time: 1700000000000\nexperiment_id: '" + exp_id +
                                        "'\nlast_update_time: 1700000000000\nlifecycle_stage: " + lifecycle +
                                        "\nname: scaling-test\n");
  }
  void run(const std::string& id, const std::string& name, std::int64_t start_ms, std::int64_t end_ms, int status,
           const std::string& parent = "", const std::string& lifecycle = "active") const {
    auto base = exp_ + "/" + id;
    dir_.write(base + "/meta.yaml", "artifact_uri: file:///scratch/mllogs/mlflow/x/" + id +
                                        "/artifacts\nend_time: " + std::to_string(end_ms) +
                                        "\nentry_point_name: ''\nexperiment_id: 'x'\nlifecycle_stage: " + lifecycle +
                                        "\nrun_id: " + id + "\nrun_name: " + name + "\nrun_uuid: " + id +
                                        "\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: " +
                                        std::to_string(start_ms) + "\nstatus: " + std::to_string(status) +
                                        "\ntags: []\nuser_id: someone\n");
    dir_.write(base + "/tags/mlflow.runName", name);
    if (!parent.empty()) dir_.write(base + "/tags/mlflow.parentRunId", parent);
  }
  void param(const std::string& id, const std::string& key, const std::string& value) const {
    dir_.write(exp_ + "/" + id + "/params/" + key, value);
  }
  void metric(const std::string& id, const std::string& key, const std::string& lines) const {
    dir_.write(exp_ + "/" + id + "/metrics/" + key, lines);
  }
  // A worker run of itwinai's TorchTrainer: params of the rank, GPU samples 1 s apart.
  void worker(const std::string& id, const std::string& parent, int rank, int world, std::int64_t t0_ms) const {
    run(id, rank == 0 ? "worker_0 (main)" : "worker_" + std::to_string(rank), t0_ms, t0_ms + 30'000, 3, parent);
    param(id, "strategy", "torch-ddp");
    param(id, "global_rank", std::to_string(rank));
    param(id, "global_world_size", std::to_string(world));
    param(id, "probing_interval", "1");
    auto t = [&](int dt) { return std::to_string(t0_ms + dt); };
    metric(id, "gpu_power_W", t(5000) + " 300.5 5\n" + t(6001) + " 310.0 6\n");
    metric(id, "gpu_utilization_percent", t(5002) + " 90 5\n" + t(6003) + " 95 6\n");
  }
  std::filesystem::path path(const std::string& rel) const { return dir_ / (exp_ + "/" + rel); }

 private:
  const ScratchDir& dir_;
  std::string exp_;
};

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
  auto study = ingest_dir(dir);
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
  auto study = ingest_dir(dir);
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
  auto study = ingest_dir(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_EQ(run_with_id(study, "trial1")->exit_status, 0);
  EXPECT_EQ(run_with_id(study, "trial2")->exit_status, 1);  // status 4 = FAILED
}

TEST(ItwinaiMlflowReader, ItwinaiMlflow_BadMetricLine_WarnsWithFileAndLine_RestIsRead) {
  ScratchDir dir;
  MlflowStore store(dir, "5");
  store.run("t", "r", kStartMs, kStartMs + 100, 3);
  store.worker("w0", "t", 0, 1, kStartMs);
  store.metric("w0", "epoch_time_s", std::to_string(kStartMs + 1000) + " 4.0 0\n" +
                                         std::to_string(kStartMs + 2000) + " nan 1\n" + "garbage\n" +
                                         std::to_string(kStartMs + 3000) + " 3.0 2\n");
  auto study = ingest_dir(dir);
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
  auto study = ingest_dir(dir);
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
  auto study = ingest_dir(dir);
  EXPECT_TRUE(study.runs.empty());
  EXPECT_EQ(diagnostics(study, "deleted-experiment").size(), 1u);
}

}  // namespace
}  // namespace scalelens
