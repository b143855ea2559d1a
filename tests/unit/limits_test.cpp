// Physical limits (model/limits.hpp, docs/refusals.md): each reader leaves out what cannot be, with
// a warning naming the file and the line or event, and the other configurations of the study keep
// exactly the figures they have without the bad file. Every input is built here in the shape the
// real tool writes (scalelens run folders, MLPerf logging, nvidia-smi, itwinai, Kineto).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/study_figures.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"
#include "trace/breakdown.hpp"
#include "trace/kineto.hpp"

using namespace scalelens;
using scalelens::testing::figures_by_configuration;
using scalelens::testing::report_of;
using scalelens::testing::ScratchDir;

namespace {

using scalelens::testing::read_study;

std::vector<const Diagnostic*> with_code(const std::vector<Diagnostic>& ds, const std::string& code) {
  std::vector<const Diagnostic*> out;
  for (const auto& d : ds)
    if (d.code == code) out.push_back(&d);
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

constexpr const char* kGpuHeader = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";

// A run folder as `scalelens run` writes it: 20 s run (1 s .. 21 s), `epochs` epochs of `epoch_s`
// on every rank, 100 samples per rank and epoch, one GPU per rank at 100 W, 50 % sampled at 1, 11, 21 s.
void write_run(const ScratchDir& dir, const std::string& name, int p, double epoch_s, int epochs = 3) {
  dir.write(name + "/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "ddp", "world_size": {}, "nodes": 1, )"
                        R"("gpus_per_node": {}, "start_ns": 1000000000, "end_ns": 21000000000, "status": "complete"}})",
                        name, p, p));
  std::string csv = "rank,epoch,start_ns,end_ns,samples\n";
  for (int e = 0; e < epochs; ++e)
    for (int r = 0; r < p; ++r) {
      const auto start = 1'000'000'000 + static_cast<std::int64_t>(e * epoch_s * 1e9);
      csv += fmt::format("{},{},{},{},100\n", r, e, start, start + static_cast<std::int64_t>(epoch_s * 1e9));
    }
  dir.write(name + "/epochs.csv", csv);
  std::string gpu = kGpuHeader;
  for (std::int64_t t : {1, 11, 21})
    for (int g = 0; g < p; ++g) gpu += fmt::format("{}000000000,{},GPU-{},50,10,1e9,100,,1400,60\n", t, g, g);
  dir.write(name + "/nodes/n01/gpu.csv", gpu);
}

// An itwinai MLflow store as itwinai writes it (mlruns layout): experiment 1 and its main worker's
// run w0 of strategy torch-ddp, 30 s from t0 (ms), which it returns.
std::int64_t write_mlflow_train_run(const ScratchDir& dir, const std::string& exp) {
  dir.write(exp + "/meta.yaml", "artifact_location: file:///scratch/mllogs/mlflow/1\nexperiment_id: '1'\n"
                                "lifecycle_stage: active\nname: scaling\n");
  const std::int64_t t0 = 1'700'000'000'000;
  dir.write(exp + "/w0/meta.yaml", fmt::format("artifact_uri: file:///x\nend_time: {}\nexperiment_id: '1'\nlifecycle_stage: "
                                               "active\nrun_id: w0\nrun_name: worker_0 (main)\nrun_uuid: w0\nstart_time: {}\n"
                                               "status: 3\n", t0 + 30'000, t0));
  dir.write(exp + "/w0/params/strategy", "torch-ddp");
  return t0;
}

// Two good configurations: ddp/1 (epochs of 10 s) and ddp/2 (6 s).
void write_good_study(const ScratchDir& dir) {
  write_run(dir, "ddp-1", 1, 6.0);
  write_run(dir, "ddp-2", 2, 4.0);
}

}  // namespace

// ------------------------------------------------------------------------------------ counts

// A label holding a lone surrogate escape ("\ud800") is a string simdjson cannot read: the warning
// said it "should be a string", which it is. A number written as a string is still "should be".
TEST(Limits, AManifestStringWithAnInvalidEscapeIsSaidAsSuch) {
  ScratchDir dir;
  write_run(dir, "lone", 1, 1.0);
  dir.write("lone/scalelens.json", R"({"label": "lone\ud800x", "world_size": "1", "start_ns": 1000000000, "end_ns": 21000000000})");
  auto study = read_study(dir);
  auto bad = with_code(study.diagnostics, "bad-manifest-field");
  ASSERT_EQ(bad.size(), 2u);
  std::set<std::string> said;
  for (const auto* d : bad) said.insert(d->message);
  EXPECT_TRUE(said.count("field \"label\" is a string with an invalid escape (a lone surrogate such as \\ud800, or a "
                         "malformed \\u); ignored"))
      << *said.begin();
  EXPECT_TRUE(said.count("field \"world_size\" should be a whole number from 1 to 10000000; ignored"));
}

TEST(Limits, ManifestWorldSizeZeroOrAbsurdIsRefusedAndOtherConfigurationsUnchanged) {
  ScratchDir dir;
  write_good_study(dir);
  const auto before = figures_by_configuration(report_of(dir.path().string()));
  ASSERT_EQ(before.size(), 2u);
  write_run(dir, "bad-zero", 1, 1.0);
  dir.write("bad-zero/scalelens.json", R"({"label": "ddp", "world_size": 0, "start_ns": 1000000000, "end_ns": 21000000000})");
  write_run(dir, "bad-huge", 1, 1.0);
  dir.write("bad-huge/scalelens.json", R"({"label": "ddp", "world_size": 100000000000, "nodes": -3})");
  auto study = read_study(dir);
  auto bad = with_code(study.diagnostics, "bad-manifest-field");
  ASSERT_EQ(bad.size(), 3u);
  for (const auto* d : bad) EXPECT_TRUE(ends_with(d->path, "scalelens.json")) << d->path;
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) {
    return d->path.find("bad-zero") != std::string::npos &&
           d->message == "field \"world_size\" should be a whole number from 1 to 10000000; ignored";
  }));
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) {
    return d->path.find("bad-huge") != std::string::npos && d->message.find("\"nodes\"") != std::string::npos;
  }));
  const auto after = analyze(study, {});
  // The runs of unknown world size are reported apart, never as a configuration of world size 0.
  EXPECT_EQ(figures_by_configuration(after), before);
}

// One MLPerf logging file per run, as mlcommons' mllog writes it (":::MLLOG {json}").
std::string mlperf_log(const std::string& nodes, int per_node, double epoch_s) {
  std::string log;
  auto line = [&](std::int64_t t, const std::string& key, const std::string& value, const std::string& meta = "{}") {
    log += fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"POINT_IN_TIME\", \"key\": \"{}\", "
                       "\"value\": {}, \"metadata\": {}}}\n", t, key, value, meta);
  };
  const std::int64_t t0 = 1'630'000'000'000;
  line(t0, "submission_benchmark", "\"deepcam\"");
  line(t0, "number_of_nodes", nodes);
  line(t0, "accelerators_per_node", std::to_string(per_node));
  line(t0, "global_batch_size", "1024");
  line(t0, "train_samples", "121266");
  line(t0 + 10, "run_start", "null");
  std::int64_t t = t0 + 100;
  for (int e = 1; e <= 4; ++e) {
    line(t, "epoch_start", "null", fmt::format("{{\"epoch_num\": {}}}", e));
    t += static_cast<std::int64_t>(epoch_s * 1000);
    line(t, "epoch_stop", "null", fmt::format("{{\"epoch_num\": {}}}", e));
  }
  line(t + 10, "run_stop", "null", "{\"status\": \"success\"}");
  return log;
}

TEST(Limits, MlperfNonPositiveNodeCountsAreRefusedAndOtherEfficienciesUnchanged) {
  ScratchDir dir;
  dir.write("n1/result_1.txt", mlperf_log("1", 4, 8.0));
  dir.write("n2/result_1.txt", mlperf_log("2", 4, 4.4));
  const auto good = report_of(dir.path().string());
  const auto before = figures_by_configuration(good);
  ASSERT_EQ(before.size(), 2u);
  // Strong scaling, 4 → 8 GPUs: speedup 8 / 4.4, efficiency = speedup · 4 / 8.
  EXPECT_NEAR(*good.configurations[1].efficiency, 8.0 / 4.4 * 0.5, 1e-12);
  dir.write("bad/result_zero.txt", mlperf_log("0", 4, 1.0));
  dir.write("bad/result_negative.txt", mlperf_log("-2", 4, 1.0));
  dir.write("bad/result_huge.txt", mlperf_log("1e12", 4, 1.0));
  auto study = read_study(dir);
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 3u);
  for (const auto* d : bad) {
    EXPECT_NE(d->path.find("bad/result_"), std::string::npos) << d->path;
    EXPECT_EQ(d->line, 2);  // the number_of_nodes record
  }
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) {
    return d->message == "1 value beyond physical limits left out; the first, line 2: number_of_nodes 0 is not a whole number "
                         "from 1 to 1000000";
  }));
  const auto after = analyze(study, {});
  for (const auto& c : after.configurations) EXPECT_GT(c.world_size, 0);
  EXPECT_EQ(figures_by_configuration(after), before);
}

TEST(Limits, RankRecordBeyondAnyWorldSizeIsLeftOut) {
  ScratchDir dir;
  write_run(dir, "ddp-1", 1, 6.0);
  dir.write("ddp-1/ranks/0.json", R"({"schema": "scalelens.rank/1", "rank": 0, "host": "n01", "local_rank": 0})");
  dir.write("ddp-1/ranks/7.json", R"({"schema": "scalelens.rank/1", "rank": 70000000000, "host": "n01", "local_rank": 0})");
  dir.write("ddp-1/ranks/1.json", R"({"schema": "scalelens.rank/1", "rank": 1, "host": "n01", "local_rank": -4})");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].ranks.size(), 2u);  // ranks 0 and 1; rank 1 without its local rank
  for (const auto& r : study.runs[0].ranks) EXPECT_EQ(r.local_rank.has_value(), r.rank == 0);
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) {
    return ends_with(d->path, "ranks/7.json") && d->message == "\"rank\": 70000000000 is beyond any world size (at most 9999999); left out";
  }));
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) {
    return ends_with(d->path, "ranks/1.json") && d->message == "\"local_rank\": -4 is not 0 to 4095; ignored";
  }));
}

// ------------------------------------------------------------------------------- intervals

TEST(Limits, EpochLongerThanItsRunIsLeftOutAndTheRunsFiguresKeepTheOthers) {
  ScratchDir dir;
  write_good_study(dir);
  const auto before = figures_by_configuration(report_of(dir.path().string()));
  // ddp-2's epochs.csv gains an epoch 3 of rank 0 lasting 1000 s in a run of 20 s (line 8).
  dir.write("ddp-2/epochs.csv", "rank,epoch,start_ns,end_ns,samples\n"
                                "0,0,1000000000,5000000000,100\n1,0,1000000000,5000000000,100\n"
                                "0,1,5000000000,9000000000,100\n1,1,5000000000,9000000000,100\n"
                                "0,2,9000000000,13000000000,100\n1,2,9000000000,13000000000,100\n"
                                "0,3,13000000000,1013000000000,100\n");
  auto study = read_study(dir);
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_TRUE(ends_with(bad[0]->path, "ddp-2/epochs.csv"));
  EXPECT_EQ(bad[0]->line, 8);
  EXPECT_EQ(bad[0]->message, "1 value beyond physical limits left out; the first, line 8: epoch 3 of rank 0 lasts 1000 s, "
                             "longer than its run (20 s in scalelens.json); the line is left out");
  // Epoch 3 is gone: ddp/2 has exactly the figures it had without that line.
  EXPECT_EQ(figures_by_configuration(analyze(study, {})), before);
}

TEST(Limits, StepLongerThanAnyRunIsLeftOutWhenTheRunHasNoEnd) {
  ScratchDir dir;
  dir.write("r/scalelens.json", R"({"label": "ddp", "world_size": 1, "start_ns": 1000000000, "status": "running"})");
  // 2e8 s: longer than any run lasts (1e8 s).
  dir.write("r/steps.csv", "rank,step,start_ns,end_ns,samples\n0,0,1000000000,2000000000,32\n0,1,2000000000,200000002000000000,32\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].steps.size(), 1u);
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->line, 3);
  EXPECT_NE(bad[0]->message.find("step 1 of rank 0 lasts 2e+08 s, longer than any run lasts"), std::string::npos)
      << bad[0]->message;
}

TEST(Limits, MlperfEpochLongerThanItsRunIsLeftOut) {
  ScratchDir dir;
  std::string log = mlperf_log("1", 4, 8.0);
  // An epoch 9 whose stop is a day after run_stop.
  log += ":::MLLOG {\"time_ms\": 1630000000200, \"key\": \"epoch_start\", \"value\": null, \"metadata\": {\"epoch_num\": 9}}\n"
         ":::MLLOG {\"time_ms\": 1630086400000, \"key\": \"epoch_stop\", \"value\": null, \"metadata\": {\"epoch_num\": 9}}\n";
  dir.write("result_1.txt", log);
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].epochs.size(), 4u);
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->line, 17);
  EXPECT_NE(bad[0]->message.find("epoch 9 lasts 86399.8 s, longer than its run (32.1 s)"), std::string::npos)
      << bad[0]->message;
}

// ------------------------------------------------------------------------------ no time

// An epoch, step or run lasts some time. A baseline of zero-length epochs (a logger that wrote its
// start time twice) made every other configuration of its label 0x faster, with no warning.
TEST(Limits, EpochsThatLastNoTimeAreLeftOutAndNoSpeedupIsZero) {
  ScratchDir dir;
  write_good_study(dir);
  const auto before = figures_by_configuration(report_of(dir.path().string()));
  for (int p : {1, 2}) {
    write_run(dir, fmt::format("zero-{}", p), p, 4.0);
    dir.write(fmt::format("zero-{}/scalelens.json", p),
              fmt::format(R"({{"label": "zero", "world_size": {}}})", p));  // epochs are its only time
  }
  dir.write("zero-1/epochs.csv", "rank,epoch,start_ns,end_ns,samples\n0,0,1000000000,1000000000,100\n"
                                 "0,1,5000000000,5000000000,100\n");
  dir.write("zero-2/steps.csv", "rank,step,start_ns,end_ns,samples\n0,0,1000000000,1000000000,\n0,1,1000000000,1500000000,\n");
  auto study = read_study(dir);
  auto bad = with_code(study.diagnostics, "bad-lines");
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) {
    return ends_with(d->path, "zero-1/epochs.csv") && d->line == 2 &&
           d->message == "2 lines skipped; the first, line 2: end_ns equals start_ns: the epoch lasts no time";
  }));
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) {
    return ends_with(d->path, "zero-2/steps.csv") && d->line == 2 && d->message.find("the step lasts no time") != std::string::npos;
  }));
  const Summary after = analyze(study, {});
  for (const auto& c : after.configurations) {
    if (c.label != "zero") continue;
    EXPECT_FALSE(c.speedup) << c.key();  // no time at the baseline: no speedup, never 0
    EXPECT_FALSE(c.efficiency) << c.key();
    if (c.world_size == 1) EXPECT_FALSE(c.epoch_time_s);
  }
  auto figures = figures_by_configuration(after);
  std::erase_if(figures, [](const auto& f) { return f.first.rfind("zero/", 0) == 0; });
  EXPECT_EQ(figures, before);
}

TEST(Limits, RunsThatEndWhenOrBeforeTheyStartHaveNoRunTime) {
  ScratchDir dir;
  dir.write("a/scalelens.json", R"({"label": "ddp", "world_size": 1, "start_ns": 5000000000, "end_ns": 5000000000})");
  std::string log = mlperf_log("1", 4, 8.0);
  // run_stop a millisecond before run_start (line 6).
  const auto stop = log.rfind(":::MLLOG");
  log = log.substr(0, stop) + ":::MLLOG {\"time_ms\": 1630000000009, \"key\": \"run_stop\", \"value\": null, "
                              "\"metadata\": {\"status\": \"success\"}}\n";
  dir.write("b/result_1.txt", log);
  // A manifest's start after its MLPerf log's run_stop: each file is sound, the two together are not.
  dir.write("c/scalelens.json", R"({"label": "ddp", "world_size": 4, "start_ns": 1630000001000000000})");
  dir.write("c/result_1.txt", mlperf_log("1", 4, 0.001));
  // run_stop at run_start's time; an epoch whose stop is at its start's time (lines 17-18).
  std::string same = mlperf_log("1", 4, 8.0);
  same = same.substr(0, same.rfind(":::MLLOG")) +
         ":::MLLOG {\"time_ms\": 1630000000010, \"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n"
         ":::MLLOG {\"time_ms\": 1630000000200, \"key\": \"epoch_start\", \"value\": null, \"metadata\": {\"epoch_num\": 9}}\n"
         ":::MLLOG {\"time_ms\": 1630000000200, \"key\": \"epoch_stop\", \"value\": null, \"metadata\": {\"epoch_num\": 9}}\n";
  dir.write("d/result_1.txt", same);
  // A rank record that ends when it starts, and MPI steps of no time.
  dir.write("a/ranks/0.json", R"({"schema": "scalelens.rank/1", "rank": 0, "start_ns": 6000000000, "end_ns": 6000000000})");
  dir.write("a/comm/0.csv", "rank,step,start_ns,end_ns,comm_ns,calls,bytes\n0,0,6000000000,6000000000,0,1,8\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 4u);
  auto bad_lines = with_code(study.diagnostics, "bad-lines");
  EXPECT_TRUE(std::any_of(bad_lines.begin(), bad_lines.end(), [](auto* d) {
    return ends_with(d->path, "d/result_1.txt") && d->line == 17 &&
           d->message.find("epoch_stop at the time of its epoch_start (an epoch that lasts no time)") != std::string::npos;
  }));
  EXPECT_TRUE(std::any_of(bad_lines.begin(), bad_lines.end(), [](auto* d) {
    return ends_with(d->path, "a/comm/0.csv") && d->message.find("end_ns after start_ns") != std::string::npos;
  }));
  for (const auto& run : study.runs) EXPECT_TRUE(run.breakdown.empty()) << run.path;
  auto bad_manifest = with_code(study.diagnostics, "bad-manifest-field");
  ASSERT_EQ(bad_manifest.size(), 1u);
  EXPECT_EQ(bad_manifest[0]->message, "end_ns equals start_ns (a run that lasts no time); run time is left out");
  auto implausible = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(implausible.size(), 3u);
  EXPECT_TRUE(std::any_of(implausible.begin(), implausible.end(), [](auto* d) {
    return ends_with(d->path, "b/result_1.txt") && d->line == 15 &&
           d->message == "1 value beyond physical limits left out; the first, line 15: run_stop is before run_start (line 6); it "
                         "is left out, and with it the run time";
  }));
  EXPECT_TRUE(std::any_of(implausible.begin(), implausible.end(), [](auto* d) {
    return ends_with(d->path, "d/result_1.txt") && d->line == 15 &&
           d->message.find("run_stop is at the time of run_start (line 6)") != std::string::npos;
  }));
  EXPECT_TRUE(std::any_of(implausible.begin(), implausible.end(), [](auto* d) {
    return ends_with(d->path, "a/ranks/0.json") && d->message == "end_ns equals start_ns (no time); the rank's times are ignored";
  }));
  const Summary summary = analyze(study, {});
  ASSERT_EQ(summary.runs.size(), 4u);
  for (const auto& r : summary.runs) EXPECT_FALSE(r.run_time_s) << r.path;
  EXPECT_TRUE(std::any_of(summary.warnings.begin(), summary.warnings.end(), [](const Diagnostic& d) {
    return d.code == "implausible-value" && d.path.find("/c") != std::string::npos &&
           d.message.find("the run ends (end_ns 1630000000114000000) before it starts (start_ns 1630000001000000000)") !=
               std::string::npos;
  }));
}

// A run time from today's Unix times in ns is exact to the ns: the limits' span (each time rounded
// to a double first, 256 ns apart there) moved the toy study's run times by ~85 ns.
TEST(Limits, RunTimeIsExactToTheNanosecond) {
  ScratchDir dir;
  dir.write("a/scalelens.json",
            R"({"label": "ddp", "world_size": 1, "start_ns": 1796208589198371046, "end_ns": 1796208589872032144})");
  const Summary summary = analyze(read_study(dir), {});
  ASSERT_EQ(summary.runs.size(), 1u);
  ASSERT_TRUE(summary.runs[0].run_time_s);
  EXPECT_EQ(*summary.runs[0].run_time_s, static_cast<double>(1796208589872032144 - 1796208589198371046) * 1e-9);
}

// Cut to int, an exit status of 4294967296 read as 0: a failed run counted as a success.
TEST(Limits, ExitStatusBeyondIntIsNoStatus) {
  ScratchDir dir;
  dir.write("a/scalelens.json", R"({"label": "ddp", "world_size": 1, "exit_status": 4294967296})");
  dir.write("a/ranks/0.json", R"({"schema": "scalelens.rank/1", "rank": 0, "exit_status": -4294967296})");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_FALSE(study.runs[0].exit_status);
  ASSERT_EQ(study.runs[0].ranks.size(), 1u);
  EXPECT_FALSE(study.runs[0].ranks[0].exit_status);
  auto bad = with_code(study.diagnostics, "bad-manifest-field");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0]->message.find("\"exit_status\" should be an integer exit status"), std::string::npos) << bad[0]->message;
  auto record = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(record.size(), 1u);
  EXPECT_TRUE(ends_with(record[0]->path, "a/ranks/0.json"));
  EXPECT_EQ(record[0]->message, "\"exit_status\": -4294967296 is no exit status (beyond a 32-bit integer); left out");
}

TEST(Limits, ItwinaiEpochsThatLastNoTimeAreLeftOut) {
  ScratchDir dir;
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,10,ddp,1\n2,0,ddp,1\n3,1e-300,ddp,1\n");
  const std::string exp = "mllogs/mlflow/1";
  const std::int64_t t0 = write_mlflow_train_run(dir, exp);
  dir.write(exp + "/w0/params/global_world_size", "four");
  dir.write(exp + "/w0/params/probing_interval", "1e300");
  dir.write(exp + "/w0/metrics/epoch_time_s", fmt::format("{} 10 0\n{} 0 1\n", t0 + 11'000, t0 + 12'000));
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  for (const auto& run : study.runs) EXPECT_EQ(run.epochs.size(), 1u) << run.path;
  auto implausible = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(implausible.size(), 2u);
  EXPECT_TRUE(std::any_of(implausible.begin(), implausible.end(), [](auto* d) {
    return ends_with(d->path, "w0/params/probing_interval") &&
           d->message == "param probing_interval 1e+300 s is not from 1e-06 to 86400 s; left out";
  }));
  std::erase_if(implausible, [](auto* d) { return ends_with(d->path, "probing_interval"); });
  EXPECT_EQ(implausible[0]->message, "2 values beyond physical limits left out; the first, line 3: epoch 2 lasts 0 s, no "
                                     "time once in nanoseconds; the line is left out");
  auto epoch_time = with_code(study.diagnostics, "bad-epoch-time");
  ASSERT_EQ(epoch_time.size(), 1u);
  EXPECT_EQ(epoch_time[0]->message, "epoch_time_s 0 of epoch 1 is not a duration; left out");
  auto unknown = with_code(study.diagnostics, "unknown-world-size");
  EXPECT_TRUE(std::any_of(unknown.begin(), unknown.end(), [](auto* d) {
    return d->message.rfind("MLflow run has param global_world_size 'four', not a whole number from 1 to 10000000", 0) == 0;
  }));
}

// A one-rank log (MLPerf, itwinai) giving an epoch number twice: each number counts once, with its
// longest time, and that is said (it was silent).
TEST(Limits, RepeatedEpochNumbersOfAOneRankLogAreSaid) {
  ScratchDir dir;
  std::string log = mlperf_log("1", 4, 8.0);
  // Epoch 2 again after run_stop's line is cut off, then run_stop (lines 15-17).
  log = log.substr(0, log.rfind(":::MLLOG"));
  log += ":::MLLOG {\"time_ms\": 1630000000120, \"key\": \"epoch_start\", \"value\": null, \"metadata\": {\"epoch_num\": 2}}\n"
         ":::MLLOG {\"time_ms\": 1630000000130, \"key\": \"epoch_stop\", \"value\": null, \"metadata\": {\"epoch_num\": 2}}\n"
         ":::MLLOG {\"time_ms\": 1630000040000, \"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n";
  dir.write("m/result_1.txt", log);
  dir.write("i/scalability-metrics/epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,10,ddp,1\n2,11,ddp,1\n1,12,ddp,1\n");
  auto study = read_study(dir);
  auto repeated = with_code(study.diagnostics, "repeated-epoch");
  ASSERT_EQ(repeated.size(), 2u);
  EXPECT_TRUE(std::any_of(repeated.begin(), repeated.end(), [](auto* d) {
    return ends_with(d->path, "m/result_1.txt") && d->line == 16 &&
           d->message.rfind("1 epoch logged again; the first, epoch 2 at line 10 and line 16: each epoch number counts once", 0) == 0;
  }));
  EXPECT_TRUE(std::any_of(repeated.begin(), repeated.end(), [](auto* d) {
    return ends_with(d->path, "epochtime_ddp_1N.csv") && d->line == 4 &&
           d->message.rfind("1 epoch logged again; the first, epoch 1 at line 2 and line 4", 0) == 0;
  }));
}

// Each sample of a time-less GPU log counts for its probing interval in the energy: 1e300 s a
// sample made 8e298 Wh.
TEST(Limits, SamplingIntervalsNoSamplerHasAreLeftOut) {
  ScratchDir dir;
  dir.write("scalability-metrics/gpu-energy-data/torch-ddp_1.csv",
            "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n"
            "0,90,300,0,0,1,torch-ddp,1e300\n"
            "1,90,300,0,0,1,torch-ddp,1e-300\n"
            "2,95,310,0,0,1,torch-ddp,2\n");
  dir.write("m/scalelens.json", R"({"label": "x", "world_size": 1, "sampling_interval_s": 1e300})");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  const auto& itwinai = study.runs[0].format == "itwinai-csv" ? study.runs[0] : study.runs[1];
  const auto& manifest = study.runs[0].format == "itwinai-csv" ? study.runs[1] : study.runs[0];
  ASSERT_EQ(itwinai.gpus.size(), 1u);
  EXPECT_EQ(itwinai.gpus[0].samples.size(), 1u);
  ASSERT_TRUE(itwinai.sampling_interval_s);
  EXPECT_EQ(*itwinai.sampling_interval_s, 2.0);
  EXPECT_FALSE(manifest.sampling_interval_s);
  auto implausible = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(implausible.size(), 1u);
  EXPECT_EQ(implausible[0]->message, "2 values beyond physical limits left out; the first, line 2: probing_interval 1e+300 s is "
                                     "not from 1e-06 to 86400 s; the line is left out");
  auto bad_manifest = with_code(study.diagnostics, "bad-manifest-field");
  ASSERT_EQ(bad_manifest.size(), 1u);
  EXPECT_NE(bad_manifest[0]->message.find("a number of seconds from 1e-06 to 86400"), std::string::npos) << bad_manifest[0]->message;
}

// --------------------------------------------------------------------------------- samples

TEST(Limits, SampleCountsOfZeroOrBeyond1e15AreLeftOut) {
  ScratchDir dir;
  write_run(dir, "a", 1, 6.0);
  // A share of a sample (tensor-parallel ranks) is a count; none, a negative or a denormal one is not.
  dir.write("a/epochs.csv", "rank,epoch,start_ns,end_ns,samples\n"
                            "0,0,1000000000,7000000000,100\n0,1,7000000000,13000000000,0\n0,2,13000000000,19000000000,2e15\n"
                            "0,3,19000000000,20000000000,-5\n0,4,20000000000,20500000000,1e-300\n"
                            "0,5,20500000000,20600000000,0.25\n");
  dir.write("b/scalelens.json", R"({"label": "x", "world_size": 1, "global_batch_size": 0, "samples_per_epoch": 1e16})");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  const auto& a = study.runs[0].run_id == "a" ? study.runs[0] : study.runs[1];
  const auto& b = study.runs[0].run_id == "a" ? study.runs[1] : study.runs[0];
  ASSERT_EQ(a.epochs.size(), 6u);  // the epochs stay; only their sample counts go
  EXPECT_EQ(a.epochs[0].samples, 100.0);
  EXPECT_FALSE(a.epochs[1].samples);
  EXPECT_FALSE(a.epochs[2].samples);
  EXPECT_FALSE(a.epochs[3].samples);
  EXPECT_FALSE(a.epochs[4].samples);
  EXPECT_EQ(a.epochs[5].samples, 0.25);
  EXPECT_FALSE(b.global_batch_size);
  EXPECT_FALSE(b.samples_per_epoch);
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->line, 3);
  EXPECT_EQ(bad[0]->message, "4 values beyond physical limits left out; the first, line 3: samples 0 is not from 1e-07 to 1e+15; "
                             "that value is left out");
  EXPECT_EQ(with_code(study.diagnostics, "bad-manifest-field").size(), 2u);
}

// ------------------------------------------------------------------------------ GPU readings

TEST(Limits, GpuPowerAndUtilizationBeyondLimitsAreLeftOutAndOtherEnergiesUnchanged) {
  ScratchDir dir;
  write_good_study(dir);
  const auto before = figures_by_configuration(report_of(dir.path().string()));
  // ddp-1's GPU reads 9000 W and 150 % at 11 s (line 3): those two values go, the line's time stays.
  dir.write("ddp-1/nodes/n01/gpu.csv", std::string(kGpuHeader) +
                                           "1000000000,0,GPU-0,50,10,1e9,100,,1400,60\n"
                                           "11000000000,0,GPU-0,150,10,1e9,9000,,1400,60\n"
                                           "21000000000,0,GPU-0,50,10,1e9,100,,1400,60\n");
  auto study = read_study(dir);
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_TRUE(ends_with(bad[0]->path, "ddp-1/nodes/n01/gpu.csv"));
  EXPECT_EQ(bad[0]->line, 3);
  EXPECT_EQ(bad[0]->message, "2 values beyond physical limits left out; the first, line 3: power_w 9000 is outside 0…5000 W per GPU");
  const auto after = analyze(study, {});
  auto got = figures_by_configuration(after);
  EXPECT_EQ(got.at("ddp/2"), before.at("ddp/2"));
  // ddp/1 keeps 100 W from 1 s to 21 s (the trapezoid between the two good samples): 2000 J, and
  // 50 % utilization; exactly what it had with a good middle sample.
  EXPECT_EQ(got.at("ddp/1"), before.at("ddp/1"));
  EXPECT_NEAR(*after.configurations[0].energy_wh, 2000.0 / 3600.0, 1e-12);
}

TEST(Limits, GpuMemoryBeyondSixteenTebibytesIsLeftOutAndThePeakIsTheLargestReal) {
  ScratchDir dir;
  write_good_study(dir);
  // 2 GiB, then an absurd 1e15 bytes (line 3), then 3 GiB: the peak is 3 GiB.
  dir.write("ddp-1/nodes/n01/gpu.csv", std::string(kGpuHeader) +
                                           "1000000000,0,GPU-0,50,10,2147483648,100,,1400,60\n"
                                           "11000000000,0,GPU-0,50,10,1e15,100,,1400,60\n"
                                           "21000000000,0,GPU-0,50,10,3221225472,100,,1400,60\n");
  auto study = read_study(dir);
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->line, 3);
  EXPECT_NE(bad[0]->message.find("mem_used_bytes 1e+15 is outside 0…16 TiB"), std::string::npos) << bad[0]->message;
  const auto s = analyze(study, {});
  ASSERT_TRUE(s.configurations[0].peak_gpu_memory_bytes);
  EXPECT_DOUBLE_EQ(*s.configurations[0].peak_gpu_memory_bytes, 3221225472.0);
  EXPECT_DOUBLE_EQ(*s.configurations[1].peak_gpu_memory_bytes, 1e9);  // the other study's 1e9 bytes everywhere
}

TEST(Limits, EnergyCounterJumpBeyondThePowerLimitIsNotUsedAndOtherEnergiesUnchanged) {
  ScratchDir dir;
  write_good_study(dir);
  const auto before = figures_by_configuration(report_of(dir.path().string()));
  // ddp-1's counter: 0, then +1000 J in 10 s (100 W: possible), then 1e300 mJ 10 s later.
  dir.write("ddp-1/nodes/n01/gpu.csv", std::string(kGpuHeader) +
                                           "1000000000,0,GPU-0,50,10,1e9,100,0,1400,60\n"
                                           "11000000000,0,GPU-0,50,10,1e9,100,1000000,1400,60\n"
                                           "21000000000,0,GPU-0,50,10,1e9,100,1e300,1400,60\n");
  auto study = read_study(dir);
  const auto after = analyze(study, {});
  auto jumps = with_code(after.warnings, "implausible-value");
  ASSERT_EQ(jumps.size(), 1u);
  EXPECT_TRUE(ends_with(jumps[0]->path, "ddp-1/nodes/n01/gpu.csv")) << jumps[0]->path;
  EXPECT_EQ(jumps[0]->message, "energy_mj of GPU GPU-0 of node 'n01' jumps to 1e+300 mJ at t_ns 21000000000, more than 5000 W per GPU allows "
                               "since the reading before; its energy counter is left out and its energy taken from power_w "
                               "where it has it");
  // Energy from power_w instead: 100 W × 20 s = 2000 J, as without any counter; ddp/2 unchanged.
  EXPECT_EQ(figures_by_configuration(after), before);
  EXPECT_NEAR(*after.configurations[0].energy_wh, 2000.0 / 3600.0, 1e-12);
}

TEST(Limits, EnergyCounterThatResetsIsStillUsed) {
  ScratchDir dir;
  write_run(dir, "a", 1, 6.0);
  // 5e6 → 6e6 mJ (+1000 J), reset, 500 mJ... +2e5 mJ: 1000 + 0.5 + 200 J all possible at ≤ 5 kW.
  dir.write("a/nodes/n01/gpu.csv", std::string(kGpuHeader) +
                                       "1000000000,0,GPU-0,50,10,1e9,100,5000000,1400,60\n"
                                       "11000000000,0,GPU-0,50,10,1e9,100,6000000,1400,60\n"
                                       "16000000000,0,GPU-0,50,10,1e9,100,500,1400,60\n"
                                       "21000000000,0,GPU-0,50,10,1e9,100,200500,1400,60\n");
  const auto s = report_of(dir.path().string());
  EXPECT_TRUE(with_code(s.warnings, "implausible-value").empty());
  EXPECT_NEAR(*s.configurations[0].energy_wh, (1000 + 0.5 + 200) / 3600.0, 1e-12);
}

TEST(Limits, NvidiaSmiPowerAndUtilizationBeyondLimitsAreLeftOut) {
  ScratchDir dir;
  dir.write("r/scalelens.json", R"({"label": "ddp", "world_size": 1})");
  dir.write("r/smi.csv", "timestamp, index, name, utilization.gpu [%], power.draw [W]\n"
                         "2024/01/02 03:04:05.000, 0, NVIDIA A100-SXM4-80GB, 50 %, 100.00 W\n"
                         "2024/01/02 03:04:06.000, 0, NVIDIA A100-SXM4-80GB, 101 %, 6000.00 W\n"
                         "2024/01/02 03:04:07.000, 0, NVIDIA A100-SXM4-80GB, 52 %, 102.00 W\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].gpus.size(), 1u);
  const auto& samples = study.runs[0].gpus[0].samples;
  ASSERT_EQ(samples.size(), 3u);  // the line stays, its two impossible values do not
  EXPECT_TRUE(std::isnan(samples[1].util_pct));
  EXPECT_TRUE(std::isnan(samples[1].power_w));
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_TRUE(ends_with(bad[0]->path, "r/smi.csv"));
  EXPECT_EQ(bad[0]->line, 3);
  EXPECT_EQ(bad[0]->message, "2 values beyond physical limits left out; the first, line 3: '101 %' in column "
                             "'utilization.gpu [%]' is outside 0…100 %");
}

TEST(Limits, ItwinaiEnergyCsvReadingsAndWorldSizeBeyondLimitsAreLeftOut) {
  ScratchDir dir;
  dir.write("scalability-metrics/gpu-energy-data/torch-ddp_4.csv",
            "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n"
            "0,90,300,0,0,0,torch-ddp,1\n"
            "1,120,7000,0,0,0,torch-ddp,1\n"
            "2,95,310,0,0,0,torch-ddp,1\n");
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_FALSE(study.runs[0].world_size);  // num_global_gpus 0 is not a world size
  ASSERT_EQ(study.runs[0].gpus.size(), 1u);
  ASSERT_EQ(study.runs[0].gpus[0].samples.size(), 3u);
  EXPECT_TRUE(std::isnan(study.runs[0].gpus[0].samples[1].power_w));
  EXPECT_TRUE(std::isnan(study.runs[0].gpus[0].samples[1].util_pct));
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->line, 2);
  EXPECT_EQ(bad[0]->message, "3 values beyond physical limits left out; the first, line 2: num_global_gpus 0 is not from 1 to "
                             "10000000; the world size is left unknown");
}

TEST(Limits, ItwinaiMlflowPowerAndWorldSizeBeyondLimitsAreLeftOut) {
  ScratchDir dir;
  const std::string exp = "mllogs/mlflow/1";
  const std::int64_t t0 = write_mlflow_train_run(dir, exp);
  dir.write(exp + "/w0/params/global_world_size", "99999999999");
  dir.write(exp + "/w0/metrics/gpu_power_W", fmt::format("{} 300.5 1\n{} 1000000 2\n{} 310 3\n", t0 + 1000, t0 + 2000, t0 + 3000));
  dir.write(exp + "/w0/metrics/epoch_time_s", fmt::format("{} 10 0\n{} 86400 1\n", t0 + 11'000, t0 + 29'000));
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_FALSE(study.runs[0].world_size);
  ASSERT_EQ(study.runs[0].epochs.size(), 1u);  // a day-long epoch in a 30 s run is not one of it
  ASSERT_EQ(study.runs[0].gpus.size(), 1u);
  ASSERT_EQ(study.runs[0].gpus[0].samples.size(), 3u);
  EXPECT_TRUE(std::isnan(study.runs[0].gpus[0].samples[1].power_w));
  auto bad = with_code(study.diagnostics, "implausible-value");
  ASSERT_EQ(bad.size(), 3u);
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) {
    return ends_with(d->path, "w0/metrics/gpu_power_W") &&
           d->message == "1 value beyond physical limits left out; the first, step 2: 1e+06 is outside 0…5000 W per GPU";
  }));
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) { return ends_with(d->path, "w0/params/global_world_size"); }));
  EXPECT_TRUE(std::any_of(bad.begin(), bad.end(), [](auto* d) {
    return ends_with(d->path, "w0/metrics/epoch_time_s") &&
           d->message == "epoch_time_s 86400 of epoch 1 is longer than its run (30 s); left out";
  }));
}

// ---------------------------------------------------------------------------- trace events

namespace {
// A Kineto trace of one step: profiler window 0..2 s, ProfilerStep#1 0..1 s; gemm 0.1..0.6 s,
// AllReduce 0.5..0.8 s; plus `extra` events.
std::string trace_text(const std::string& extra) {
  auto launch = [](int corr, int ts) {
    return fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": {}, "dur": 5, "args": {{"correlation": {}}}}},)"
                       "\n", ts, corr);
  };
  auto kernel = [](const char* name, int corr, long long ts, long long dur) {
    return fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "{}", "ts": {}, "dur": {}, "args": {{"stream": 7, "correlation": {}}}}},)"
                       "\n", name, ts, dur, corr);
  };
  return std::string(R"({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [)") + "\n" +
         R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 1000000},)" + "\n" +
         launch(1, 10) + launch(2, 20) + launch(3, 30) + launch(4, 40) + kernel("gemm", 1, 100000, 500000) +
         kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 2, 500000, 300000) + extra +
         R"j({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": 2000000}]})j";
}
}  // namespace

TEST(Limits, TraceKernelLongerThanTheTraceOrFarOutsideItIsLeftOut) {
  auto analysed = [](const std::string& extra, std::vector<std::string>* warnings = nullptr) {
    std::string text = trace_text(extra);
    auto t = trace::parse_kineto(text, "rank0.pt.trace.json");
    EXPECT_TRUE(t.ok());
    auto r = trace::analyse(t.value(), trace::CommMatcher());
    if (warnings) *warnings = r.warnings;
    return r;
  };
  const auto good = analysed("");
  // comp = 0.5 s, comm = 0.3 s, overlap 0.1 s: score 0.5 / (0.5 + 0.2).
  EXPECT_DOUBLE_EQ(good.total.comp_us, 500000);
  EXPECT_DOUBLE_EQ(good.computation_score(), 0.5 / 0.7);
  // A kernel of the step lasting 300 s in a trace of 2 s, and one starting 1000 s after it.
  std::vector<std::string> warnings;
  const auto bad = analysed(
      R"({"ph": "X", "cat": "kernel", "name": "gemm", "ts": 200000, "dur": 300000000, "args": {"stream": 7, "correlation": 3}},)"
      "\n"
      R"({"ph": "X", "cat": "kernel", "name": "gemm", "ts": 1000000000, "dur": 10, "args": {"stream": 7, "correlation": 4}},)"
      "\n",
      &warnings);
  EXPECT_EQ(bad.gpu_events, 2u);
  EXPECT_DOUBLE_EQ(bad.total.comp_us, good.total.comp_us);
  EXPECT_DOUBLE_EQ(bad.computation_score(), good.computation_score());
  EXPECT_DOUBLE_EQ(bad.total.step_time_us, good.total.step_time_us);
  ASSERT_FALSE(warnings.empty());
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w == "a GPU event lasts longer than the trace or starts far outside it, so it cannot be one of its events; it is "
                "left out (the first: 'gemm' at ts 200000 µs, lasting 300 s, in a trace window of 2 s from ts 0 µs) (2 events)";
  })) << warnings[0];
}

TEST(Limits, TraceInAStudyWithAnImpossibleKernelKeepsItsRunsScore) {
  ScratchDir dir;
  write_run(dir, "ddp-1", 1, 6.0);
  write_run(dir, "ddp-2", 2, 4.0);
  dir.write("ddp-2/traces/rank0.pt.trace.json", trace_text(""));
  const auto before = figures_by_configuration(report_of(dir.path().string()));
  dir.write("ddp-2/traces/rank0.pt.trace.json",
            trace_text(R"({"ph": "X", "cat": "kernel", "name": "gemm", "ts": 200000, "dur": 300000000, "args": {"stream": 7, "correlation": 3}},)"
                       "\n"));
  auto study = read_study(dir);
  auto trace_warnings = with_code(study.diagnostics, "trace");
  EXPECT_TRUE(std::any_of(trace_warnings.begin(), trace_warnings.end(), [](auto* d) {
    return ends_with(d->path, "rank0.pt.trace.json") && d->message.find("lasting 300 s") != std::string::npos;
  }));
  // The score stays 0.5 / 0.7, not 1.000.
  EXPECT_EQ(figures_by_configuration(analyze(study, {})), before);
}
