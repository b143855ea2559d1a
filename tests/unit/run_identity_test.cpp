// Which runs of a study are one run: a run read twice (a copied folder or file, one folder under two
// spellings) counts once, and runs that only share a name are all read.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "trace/trace_set.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"

using namespace scalelens;
using scalelens::testing::read_study;
using scalelens::testing::ScratchDir;
namespace fs = std::filesystem;

namespace {

std::vector<const Diagnostic*> with_code(const std::vector<Diagnostic>& all, const std::string& code) {
  std::vector<const Diagnostic*> found;
  for (const auto& d : all)
    if (d.code == code) found.push_back(&d);
  return found;
}

std::multiset<std::string> run_ids(const Study& study) {
  std::multiset<std::string> ids;
  for (const auto& run : study.runs) ids.insert(run.run_id);
  return ids;
}

// A run that states its start and end (b-run) and a copy of it that states neither (a-copy), with
// the same epochs.csv.
void write_run_and_clockless_copy(const ScratchDir& dir) {
  const std::string epochs =
      "rank,epoch,start_ns,end_ns,samples\n0,0,1700000001000000000,1700000011000000000,2500\n"
      "1,0,1700000001000000000,1700000011500000000,2500\n0,1,1700000011500000000,1700000021000000000,2500\n"
      "1,1,1700000011500000000,1700000021000000000,2500\n";
  dir.write("a-copy/scalelens.json", R"({"schema": "scalelens.run/1", "label": "ddp", "world_size": 2})");
  dir.write("b-run/scalelens.json", R"({"schema": "scalelens.run/1", "label": "ddp", "world_size": 2, )"
                                    R"("start_ns": 1700000000000000000, "end_ns": 1700000032000000000})");
  for (const std::string folder : {"a-copy", "b-run"}) dir.write(folder + "/epochs.csv", epochs);
}

Study read_inputs(const std::vector<fs::path>& inputs) {
  IngestOptions options{{}, {}, 1, {}};
  for (const auto& input : inputs) options.inputs.push_back(input.string());
  return ingest(options);
}

// A run folder as `scalelens run` writes it under SLURM: run_id slurm-<job>.<step> (docs/collect.md).
void write_slurm_run(const ScratchDir& dir, const std::string& folder, const std::string& id, const std::string& system,
                     const std::string& label, int world_size, std::int64_t start_s) {
  const std::int64_t start = start_s * 1'000'000'000, end = start + 30'000'000'000;
  dir.write(folder + "/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "{}", "system": "{}", "world_size": {}, )"
                        R"("nodes": 1, "gpus_per_node": {}, "start_ns": {}, "end_ns": {}, "exit_status": 0, "status": "complete", )"
                        R"("scheduler": {{"kind": "slurm", "job_id": "8812", "step_id": "0", "job_key": "{}"}}, )"
                        R"("detected_from": {{"world_size": "SLURM_STEP_NUM_TASKS", "system": "SLURM_CLUSTER_NAME"}}}})",
                        id, label, system, world_size, world_size, start, end, id));
  std::string epochs = "rank,epoch,start_ns,end_ns,samples\n";
  for (int r = 0; r < world_size; ++r)
    for (int e = 0; e < 2; ++e)
      epochs += fmt::format("{},{},{},{},{}\n", r, e, start + (1 + 10 * e) * 1'000'000'000LL,
                            start + (11 + 10 * e) * 1'000'000'000LL, 5000 / world_size);
  dir.write(folder + "/epochs.csv", epochs);
}

}  // namespace

// DESIGN.md's minimal manifest names no run_id: its folder's name is no identity, and two curves
// whose folders are named alike (study/ddp/1gpu, study/fsdp/1gpu) are six runs, not three.
TEST(RunIdentity, FoldersNamedAlikeWithoutRunIdsAreAllRead) {
  ScratchDir dir;
  for (const std::string label : {"ddp", "fsdp"})
    for (int p : {1, 2, 4}) {
      const std::string folder = fmt::format("study/{}/{}gpu", label, p);
      dir.write(folder + "/scalelens.json", fmt::format(R"({{"label": "{}", "world_size": {}}})", label, p));
      dir.write(folder + "/epochs.csv", fmt::format("rank,epoch,start_ns,end_ns\n0,0,0,{}\n", 40'000'000'000LL / p));
    }
  const auto study = read_inputs({dir / "study"});
  EXPECT_TRUE(with_code(study.diagnostics, "duplicate-run-id").empty());
  EXPECT_EQ(run_ids(study), (std::multiset<std::string>{"ddp/1gpu", "ddp/2gpu", "ddp/4gpu", "fsdp/1gpu", "fsdp/2gpu", "fsdp/4gpu"}));
  const auto summary = analyze(study, {});
  EXPECT_EQ(summary.configurations.size(), 6u);

  // The same folders given one by one: still six runs with six ids (their paths, where the paths
  // below the inputs meet).
  const auto apart = read_inputs({dir / "study/ddp", dir / "study/fsdp"});
  ASSERT_EQ(apart.runs.size(), 6u);
  const auto apart_ids = run_ids(apart);
  EXPECT_EQ(std::set<std::string>(apart_ids.begin(), apart_ids.end()).size(), 6u);
  EXPECT_TRUE(with_code(apart.diagnostics, "duplicate-run-id").empty());
  // A run folder given itself keeps its folder's name.
  EXPECT_EQ(run_ids(read_inputs({dir / "study/ddp/2gpu"})), (std::multiset<std::string>{"2gpu"}));
}

// slurm-<job>.<step> repeats across clusters: runs of one written id that differ in system, label,
// world size or time are different runs, all read, with ids told apart; a copy is still a copy.
TEST(RunIdentity, OneSlurmIdOnTwoClustersIsTwoRuns) {
  ScratchDir dir;
  write_slurm_run(dir, "jureca/slurm-8812.0", "slurm-8812.0", "jureca", "ddp", 8, 1'710'000'000);
  write_slurm_run(dir, "jureca/slurm-8813.0", "slurm-8813.0", "jureca", "ddp", 2, 1'710'000'100);
  write_slurm_run(dir, "juwels/slurm-8812.0", "slurm-8812.0", "juwels", "ddp", 1, 1'700'000'000);
  write_slurm_run(dir, "juwels/slurm-8813.0", "slurm-8813.0", "juwels", "fsdp", 2, 1'700'000'100);
  write_slurm_run(dir, "backup/slurm-8812.0", "slurm-8812.0", "juwels", "ddp", 1, 1'700'000'000);  // cp -r of juwels'
  const auto study = read_study(dir);
  EXPECT_EQ(run_ids(study), (std::multiset<std::string>{"slurm-8812.0@jureca", "slurm-8812.0@juwels", "slurm-8813.0@jureca",
                                                         "slurm-8813.0@juwels"}));
  const auto copies = with_code(study.diagnostics, "duplicate-run-id");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]->path, (dir / "juwels/slurm-8812.0").string());
  EXPECT_NE(copies[0]->message.find((dir / "backup/slurm-8812.0").string()), std::string::npos) << copies[0]->message;
  const auto shared = with_code(study.diagnostics, "run-id-shared");
  ASSERT_EQ(shared.size(), 2u);
  EXPECT_NE(shared[0]->message.find("'slurm-8812.0@juwels'"), std::string::npos) << shared[0]->message;

  const auto summary = analyze(study, {});
  std::set<std::string> summary_ids;
  for (const auto& run : summary.runs) EXPECT_TRUE(summary_ids.insert(run.run_id).second) << run.run_id;
  EXPECT_EQ(summary_ids.size(), 4u);

  // Without a system that tells them apart, the ids are told apart by path.
  ScratchDir plain;
  write_slurm_run(plain, "a/slurm-1.0", "slurm-1.0", "", "ddp", 1, 1'700'000'000);
  write_slurm_run(plain, "b/slurm-1.0", "slurm-1.0", "", "ddp", 1, 1'700'005'000);
  EXPECT_EQ(run_ids(read_study(plain)), (std::multiset<std::string>{"slurm-1.0@" + (plain / "a/slurm-1.0").string(),
                                                                     "slurm-1.0@" + (plain / "b/slurm-1.0").string()}));
}

// One folder given twice under two spellings (a link to it, `x/../folder`, relative and absolute):
// its files are read once, with a note, for every kind of input (MLPerf logs, traces).
TEST(RunIdentity, OneFolderUnderTwoSpellingsIsReadOnce) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  const fs::path mlperf = data / "mlperf-hpc-v1.0-deepcam";
  fs::create_directory_symlink(mlperf, dir / "mlperf-link");
  fs::create_directories(dir / "x");
  const auto once = read_inputs({mlperf});
  ASSERT_EQ(once.runs.size(), 10u);
  for (const auto& twice : {read_inputs({mlperf, dir / "mlperf-link"}), read_inputs({dir / "x/../mlperf-link", mlperf})}) {
    EXPECT_EQ(run_ids(twice).size(), 10u);
    EXPECT_EQ(analyze(twice, {}).configurations.at(0).runs, 5u);
    const auto notes = with_code(twice.diagnostics, "file-reached-twice");
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0]->severity, Severity::note);
  }
  const fs::path traces = data / "kineto/dlrm-8rank-v100";
  fs::create_directory_symlink(traces, dir / "traces-link");
  const auto both = read_inputs({traces, dir / "traces-link"});
  ASSERT_EQ(both.runs.size(), 1u);
  EXPECT_EQ(both.runs[0].breakdown.size(), 8u);
  EXPECT_EQ(with_code(both.diagnostics, "file-reached-twice").size(), 1u);
}

// `scalelens trace` the same: a folder of traces given under two spellings (as itself, absolute,
// through a link) is 8 ranks, not 16, with the note naming the second spelling.
TEST(RunIdentity, TraceInputsUnderTwoSpellingsAreReadOnce) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  const fs::path traces = data / "kineto/dlrm-8rank-v100";
  fs::create_directory_symlink(traces, dir / "traces-link");
  std::vector<Diagnostic> diagnostics;
  const auto files = trace::find_traces({traces, dir / "traces-link", traces.parent_path() / "../kineto/dlrm-8rank-v100"}, diagnostics);
  EXPECT_EQ(files.size(), 8u);
  for (const auto& f : files) EXPECT_EQ(f.parent_path(), traces) << f;
  const auto notes = with_code(diagnostics, "file-reached-twice");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0]->path, (dir / "traces-link").string());
  EXPECT_NE(notes[0]->message.find("8 files reached here were already read"), std::string::npos) << notes[0]->message;
}

// A copy of a run without a written id (cp -r of a hand-written run folder, a copied MLPerf log, a
// copied trace folder) is one execution: counted once, with a warning naming both.
TEST(RunIdentity, CopiesOfOneExecutionCountOnceWithAWarning) {
  ScratchDir dir;
  for (const std::string folder : {"ddp-4", "ddp-4-copy"}) {
    dir.write(folder + "/scalelens.json",
              R"({"schema": "scalelens.run/1", "label": "ddp", "system": "juwels", "world_size": 4, "nodes": 1, )"
              R"("gpus_per_node": 4, "start_ns": 1700000000000000000, "end_ns": 1700000032000000000, "exit_status": 0, "status": "complete"})");
    dir.write(folder + "/epochs.csv", "rank,epoch,start_ns,end_ns,samples\n0,0,1700000001000000000,1700000011000000000,2500\n");
    std::string gpus = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
    for (int g = 0; g < 4; ++g)
      for (std::int64_t t : {1700000000000000000LL, 1700000016000000000LL, 1700000032000000000LL})
        gpus += fmt::format("{},{},GPU-5e1f{}a2c-0000,80.0,10,1000000000,300.0,,1400,60\n", t, g, g);
    dir.write(folder + "/nodes/node0/gpu.csv", gpus);
  }
  // Another run of that size on other GPUs, started at another time: a repeat, not a copy.
  dir.write("ddp-4-again/scalelens.json",
            R"({"schema": "scalelens.run/1", "label": "ddp", "system": "juwels", "world_size": 4, "start_ns": 1700000100000000000, "end_ns": 1700000132000000000})");
  dir.write("ddp-4-again/epochs.csv", "rank,epoch,start_ns,end_ns,samples\n0,0,1700000101000000000,1700000111000000000,2500\n");
  // Repeats written by hand as durations (start 0, end the length) are not instants: kept, however alike.
  for (const std::string folder : {"ddp-1-a", "ddp-1-b"}) {
    dir.write(folder + "/scalelens.json", R"({"label": "ddp", "world_size": 1, "start_ns": 0, "end_ns": 30000000000})");
    dir.write(folder + "/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,10000000000\n0,1,10000000000,20000000000\n");
  }
  const auto study = read_study(dir);
  EXPECT_EQ(run_ids(study), (std::multiset<std::string>{"ddp-4", "ddp-4-again", "ddp-1-a", "ddp-1-b"}));
  const auto copies = with_code(study.diagnostics, "duplicate-run");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]->severity, Severity::warning);
  EXPECT_EQ(copies[0]->path, (dir / "ddp-4-copy").string());
  EXPECT_NE(copies[0]->message.find((dir / "ddp-4").string() + " "), std::string::npos) << copies[0]->message;
  EXPECT_NE(copies[0]->message.find("same GPUs"), std::string::npos) << copies[0]->message;
}

// A copy whose manifest lacks start_ns (or both start_ns and end_ns) is still a copy: its other
// instant, or else its epochs' instants, tell it. It was read as a second run (2 runs of one
// execution) where it had no written id; where it had one and came first in path order, it was the
// one kept, and the run lost its run time. The copy that states its start and end is kept.
TEST(RunIdentity, ACopyWithoutItsStartIsStillACopy) {
  const std::string epochs =
      "rank,epoch,start_ns,end_ns,samples\n0,0,1700000001000000000,1700000011000000000,2500\n"
      "0,1,1700000011000000000,1700000021000000000,2500\n";
  const std::string clock = R"("start_ns": 1700000000000000000, "end_ns": 1700000032000000000)";
  for (const std::string id : {"", R"("run_id": "job-7", )"}) {
    ScratchDir dir;
    // "a-copy" lies first in path order, and lacks the start.
    dir.write("a-copy/scalelens.json", R"({"schema": "scalelens.run/1", )" + id +
                                           R"("label": "ddp", "world_size": 4, "end_ns": 1700000032000000000})");
    dir.write("b-run/scalelens.json",
              R"({"schema": "scalelens.run/1", )" + id + R"("label": "ddp", "world_size": 4, )" + clock + "}");
    for (const std::string folder : {"a-copy", "b-run"}) dir.write(folder + "/epochs.csv", epochs);
    const auto study = read_study(dir);
    ASSERT_EQ(study.runs.size(), 1u) << id;
    EXPECT_EQ(study.runs[0].path, (dir / "b-run").string()) << id;
    const auto copies = with_code(study.diagnostics, id.empty() ? "duplicate-run" : "duplicate-run-id");
    ASSERT_EQ(copies.size(), 1u) << id;
    EXPECT_EQ(copies[0]->path, (dir / "a-copy").string());
    if (id.empty())
      EXPECT_NE(copies[0]->message.find("(the same end, to the last digit; this one states no start)"), std::string::npos)
          << copies[0]->message;
    const auto s = analyze(study, {});
    ASSERT_EQ(s.configurations.size(), 1u);
    EXPECT_EQ(s.configurations[0].runs, 1u) << id;
    ASSERT_TRUE(s.configurations[0].run_time_s) << id;
    EXPECT_NEAR(s.configurations[0].run_time_s->mean, 32, 1e-9);
  }
  // Neither copy states its start or end: the epochs' instants tell them (and not repeats written
  // as durations, which the test above keeps).
  ScratchDir dir;
  for (const std::string folder : {"ddp-4", "ddp-4-copy"}) {
    dir.write(folder + "/scalelens.json", R"({"schema": "scalelens.run/1", "label": "ddp", "world_size": 4})");
    dir.write(folder + "/epochs.csv", epochs);
  }
  const auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  const auto copies = with_code(study.diagnostics, "duplicate-run");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]->path, (dir / "ddp-4-copy").string());
  EXPECT_NE(copies[0]->message.find("the same epochs' first start and last end"), std::string::npos) << copies[0]->message;
}

// A copy whose manifest states neither start_ns nor end_ns beside the run stating both: its epochs'
// instants are the run's (kept, as read by `scalelens summary`, or tabulated by `scalelens report`,
// which holds no epoch's instants): one run, the one that states its clock. It was counted twice
// (2 runs, each keyed on what it stated: the instants, the epochs). A repeat of another time is kept.
TEST(RunIdentity, ACopyStatingNoClockBesideOneStatingBothIsACopy) {
  ScratchDir dir;
  write_run_and_clockless_copy(dir);
  // A repeat an hour later, stating no clock either: its epochs' instants are its own.
  std::string later = "rank,epoch,start_ns,end_ns,samples\n";
  for (int r = 0; r < 2; ++r)
    for (int e = 0; e < 2; ++e)
      later += fmt::format("{},{},{},{},2500\n", r, e, 1700003601000000000LL + e * 10'000'000'000LL,
                           1700003611000000000LL + e * 10'000'000'000LL);
  dir.write("c-repeat/scalelens.json", R"({"schema": "scalelens.run/1", "label": "ddp", "world_size": 2})");
  dir.write("c-repeat/epochs.csv", later);
  for (const auto& study : {read_study(dir), scalelens::testing::read_study_as_report(dir)}) {
    ASSERT_EQ(study.runs.size(), 2u);
    EXPECT_EQ(study.runs[0].path, (dir / "b-run").string());
    EXPECT_EQ(study.runs[1].path, (dir / "c-repeat").string());
    const auto copies = with_code(study.diagnostics, "duplicate-run");
    ASSERT_EQ(copies.size(), 1u);
    EXPECT_EQ(copies[0]->path, (dir / "a-copy").string());
    EXPECT_NE(copies[0]->message.find("(the same epochs' first start and last end, to the last digit; this one states no "
                                      "start or end)"),
              std::string::npos)
        << copies[0]->message;
    const auto s = analyze(study, {});
    ASSERT_EQ(s.configurations.size(), 1u);
    EXPECT_EQ(s.configurations[0].runs, 2u);
    ASSERT_TRUE(s.configurations[0].run_time_s);
    EXPECT_NEAR(s.configurations[0].run_time_s->mean, 32, 1e-9);
  }
}

// The same copy and run after a folder that defines no run of its own (a manifest of defaults above
// two MLPerf logs, whose runs are theirs): the runs after it are still found by the span of their
// epochs tabulated as read, which stays with their folder (Run::folder) as that folder is dropped.
TEST(RunIdentity, ACopyStatingNoClockIsFoundAfterAFolderThatDefinesNoRun) {
  ScratchDir dir;
  dir.write("0-defaults/scalelens.json", R"({"label": "mix"})");
  for (const long long start_ms : {1600000000000LL, 1600000100000LL}) {
    std::string log;
    auto mllog = [&](long long ms, const char* event, const char* key, const std::string& metadata) {
      log += fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"{}\", \"key\": \"{}\", "
                         "\"value\": null, \"metadata\": {{{}\"file\": \"train.py\", \"lineno\": 1}}}}\n",
                         start_ms + ms, event, key, metadata);
    };
    mllog(0, "INTERVAL_START", "run_start", "");
    mllog(1000, "INTERVAL_START", "epoch_start", "\"epoch_num\": 0, ");
    mllog(11000, "INTERVAL_END", "epoch_stop", "\"epoch_num\": 0, ");
    mllog(12000, "INTERVAL_END", "run_stop", "\"status\": \"success\", ");
    dir.write(fmt::format("0-defaults/{}/result_0.txt", start_ms), log);
  }
  write_run_and_clockless_copy(dir);
  for (const auto& study : {read_study(dir), scalelens::testing::read_study_as_report(dir)}) {
    std::vector<std::string> paths;
    for (const auto& run : study.runs) paths.push_back(run.path);
    EXPECT_EQ(std::count(paths.begin(), paths.end(), (dir / "b-run").string()), 1);
    EXPECT_EQ(std::count(paths.begin(), paths.end(), (dir / "a-copy").string()), 0);
    EXPECT_EQ(std::count(paths.begin(), paths.end(), (dir / "0-defaults").string()), 0) << "a folder of defaults alone";
    const auto copies = with_code(study.diagnostics, "duplicate-run");
    ASSERT_EQ(copies.size(), 1u);
    EXPECT_EQ(copies[0]->path, (dir / "a-copy").string());
    EXPECT_NE(copies[0]->message.find("(the same epochs' first start and last end, to the last digit"), std::string::npos)
        << copies[0]->message;
  }
}

// A copy of a run that states no instant (no start_ns or end_ns, no epochs, no traces), only its
// nodes' GPU and host logs: counted twice (2 runs), since no instant found it and samples were not
// compared. The same logs, node by node, and the same configuration are one execution's: counted
// once, said. A repeat whose samples differ, and a copy stating another label, are runs of their own.
TEST(RunIdentity, ACopyStatingNoInstantIsFoundByItsSamples) {
  // Logs of 20 samples, hashed whole, and of 4,000 (over 128 KiB), fingerprinted by their edges and length.
  for (const int rows : {20, 4000}) {
    SCOPED_TRACE(rows);
    auto gpu_log = [rows](std::int64_t from_s) {
      std::string text = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
      for (int i = 0; i < rows; ++i)
        for (int g = 0; g < 2; ++g)
          text += fmt::format("{},{},GPU-{},{},40,1000000000,{},,1400,60\n", (from_s + i) * 1'000'000'000LL, g, g, 80 + g, 250 + i);
      return text;
    };
    auto host_log = [rows](std::int64_t from_s) {
      std::string text = "t_ns,cpu_util_pct,mem_used_bytes,cpu_energy_uj\n";
      for (int i = 0; i < rows; ++i) text += fmt::format("{},30,2000000000,\n", (from_s + i) * 1'000'000'000LL);
      return text;
    };
    const std::string manifest = R"({"schema": "scalelens.run/1", "label": "ddp", "world_size": 2})";
    ScratchDir dir;
    for (const std::string folder : {"ddp-2", "ddp-2-copy"}) {
      dir.write(folder + "/scalelens.json", manifest);
      dir.write(folder + "/nodes/n1/gpu.csv", gpu_log(1'700'000'000));
      dir.write(folder + "/nodes/n1/host.csv", host_log(1'700'000'000));
    }
    dir.write("ddp-2-again/scalelens.json", manifest);  // a repeat an hour later
    dir.write("ddp-2-again/nodes/n1/gpu.csv", gpu_log(1'700'003'600));
    dir.write("ddp-2-again/nodes/n1/host.csv", host_log(1'700'003'600));
    dir.write("fsdp-2/scalelens.json", R"({"schema": "scalelens.run/1", "label": "fsdp", "world_size": 2})");
    dir.write("fsdp-2/nodes/n1/gpu.csv", gpu_log(1'700'000'000));  // a copy stating another configuration
    dir.write("fsdp-2/nodes/n1/host.csv", host_log(1'700'000'000));
    for (const auto& study : {read_study(dir), scalelens::testing::read_study_as_report(dir)}) {
      std::set<std::string> paths;
      for (const auto& run : study.runs) paths.insert(run.path);
      EXPECT_EQ(paths, (std::set<std::string>{(dir / "ddp-2").string(), (dir / "ddp-2-again").string(), (dir / "fsdp-2").string()}));
      const auto copies = with_code(study.diagnostics, "duplicate-run");
      ASSERT_EQ(copies.size(), 1u);
      EXPECT_EQ(copies[0]->path, (dir / "ddp-2-copy").string());
      EXPECT_NE(copies[0]->message.find("the same run as " + (dir / "ddp-2").string() +
                                        " (GPU and host logs of the same content, node by node; neither states a start or an end"),
                std::string::npos)
          << copies[0]->message;
      const auto s = analyze(study, {});
      for (const auto& c : s.configurations) EXPECT_EQ(c.runs, c.label == "ddp" ? 2u : 1u) << c.label;
    }
  }
}

// `duplicate-run` says which copy lacks which instant truly, whichever lacks it: it said "this one
// states no end" where the kept one stated none either.
TEST(RunIdentity, ADuplicateSaysWhichCopyLacksWhichInstant) {
  const std::string epochs = "rank,epoch,start_ns,end_ns\n0,0,1700000001000000000,1700000011000000000\n";
  const std::string start = R"("start_ns": 1700000000000000000)", end = R"("end_ns": 1700000032000000000)";
  struct Case {
    std::string first, second, words;  // what "a" and "b" state of their clock; what the warning says
  };
  const std::vector<Case> cases{
      {start, start, "(the same start, to the last digit; neither states an end)"},
      {end, end, "(the same end, to the last digit; neither states a start)"},
      {"", "", "(the same epochs' first start and last end, to the last digit; neither states a start or an end)"},
      // Each states one instant, not the other's: "a" is kept (first in path order).
      {start, end, "(the same epochs' first start and last end, to the last digit; this one states no start; {} states no end)"},
      {start + ", " + end, start, "(the same start, to the last digit; this one states no end)"},
  };
  for (const auto& c : cases) {
    ScratchDir dir;
    auto manifest = [](const std::string& clock) {
      return R"({"schema": "scalelens.run/1", "label": "ddp", "world_size": 1)" + (clock.empty() ? "" : ", " + clock) + "}";
    };
    dir.write("a/scalelens.json", manifest(c.first));
    dir.write("b/scalelens.json", manifest(c.second));
    for (const std::string folder : {"a", "b"}) dir.write(folder + "/epochs.csv", epochs);
    const auto study = read_study(dir);
    ASSERT_EQ(study.runs.size(), 1u) << c.words;
    EXPECT_EQ(study.runs[0].path, (dir / "a").string());
    const auto copies = with_code(study.diagnostics, "duplicate-run");
    ASSERT_EQ(copies.size(), 1u) << c.words;
    EXPECT_EQ(copies[0]->path, (dir / "b").string());
    const auto words = fmt::format(fmt::runtime(c.words), (dir / "a").string());
    EXPECT_NE(copies[0]->message.find(words), std::string::npos) << copies[0]->message << "\nwanted " << words;
  }
}

TEST(RunIdentity, CopiedMlperfLogAndTraceFolderCountOnce) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  const fs::path results = data / "mlperf-hpc-v1.0-deepcam/NVIDIA/results/dgxa100_n64_ngc21.09_pytorch/strong/deepcam";
  fs::create_directories(dir / "mlperf/a");
  fs::create_directories(dir / "mlperf/b");
  fs::copy_file(results / "result_1.txt", dir / "mlperf/a/result_1.txt");
  fs::copy_file(results / "result_2.txt", dir / "mlperf/a/result_2.txt");
  fs::copy_file(results / "result_1.txt", dir / "mlperf/b/result_1.txt");  // the copies
  fs::create_directories(dir / "mlperf/c");  // one in a run folder of its own, whose run is read first
  fs::copy_file(results / "result_1.txt", dir / "mlperf/c/result_1.txt");
  dir.write("mlperf/c/scalelens.json", R"({"system": "dgxa100"})");
  const auto mlperf = read_inputs({dir / "mlperf"});
  ASSERT_EQ(mlperf.runs.size(), 2u);
  for (const auto& run : mlperf.runs) EXPECT_EQ(fs::path(run.path).parent_path(), dir / "mlperf/a");
  const auto logs = with_code(mlperf.diagnostics, "duplicate-run");
  ASSERT_EQ(logs.size(), 2u);
  std::set<std::string> copies;
  for (const auto* log : logs) {
    copies.insert(log->path);
    EXPECT_NE(log->message.find((dir / "mlperf/a/result_1.txt").string()), std::string::npos) << log->message;
  }
  EXPECT_EQ(copies, (std::set<std::string>{(dir / "mlperf/b/result_1.txt").string(), (dir / "mlperf/c").string()}));

  fs::create_directories(dir / "traces");
  fs::copy(data / "kineto/dlrm-8rank-v100", dir / "traces/ddp-8gpu");
  fs::copy(data / "kineto/dlrm-8rank-v100", dir / "traces/ddp-8gpu-run2");
  const auto traces = read_inputs({dir / "traces"});
  ASSERT_EQ(traces.runs.size(), 1u);
  EXPECT_EQ(traces.runs[0].path, (dir / "traces/ddp-8gpu").string());
  const auto copied = with_code(traces.diagnostics, "duplicate-run");
  ASSERT_EQ(copied.size(), 1u);
  EXPECT_EQ(copied[0]->path, (dir / "traces/ddp-8gpu-run2").string());
  EXPECT_NE(copied[0]->message.find("began profiling at the same instants"), std::string::npos) << copied[0]->message;
}
