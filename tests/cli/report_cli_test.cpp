// `scalelens report` as a user runs it: real binary, real folders, real exit codes.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include <fmt/format.h>

#include "common/text.hpp"
#include "support/run_binary.hpp"

using namespace scalelens::testing;

namespace {

void write_run(const ScratchDir& dir, const std::string& name, const std::string& label, int p, double epoch_s) {
  auto ns = [](double s) { return std::to_string(static_cast<long long>(s * 1e9)); };
  dir.write(name + "/scalelens.json", "{\"label\": \"" + label + "\", \"world_size\": " + std::to_string(p) +
                                          ", \"samples_per_epoch\": 1000, \"start_ns\": 0, \"end_ns\": " + ns(3 * epoch_s) + "}");
  dir.write(name + "/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0," + ns(epoch_s) + "\n0,1," + ns(epoch_s) + "," +
                                      ns(2 * epoch_s) + "\n0,2," + ns(2 * epoch_s) + "," + ns(3 * epoch_s) + "\n");
}

// A report's --format json output, parsed: `doc` points into `parser`, which lives as long as it.
struct ReportJson {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::error_code error;
  explicit ReportJson(const std::string& out) : error(parser.parse(out).get(doc)) {}
};

}  // namespace

TEST(ReportCli, MlperfDeepcamPrintsBothScalesSpeedupAndBatchWarning) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir out;
  auto r = run_scalelens("report " + quoted(data / "mlperf-hpc-v1.0-deepcam") + " -o " + quoted(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("deepcam"), std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(0, r.out.find('\n')).find(" GPUs "), std::string::npos) << r.out;  // MLPerf logs count GPUs
  EXPECT_NE(r.out.find(" 512 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 2048 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("8.84"), std::string::npos) << r.out;  // median epoch time at 512 GPUs
  EXPECT_NE(r.out.find("3.3"), std::string::npos) << r.out;   // median at 2048 GPUs
  EXPECT_NE(r.out.find("2.67x"), std::string::npos) << r.out;  // 8.8709 / 3.3248
  EXPECT_NE(r.out.find("4x"), std::string::npos) << r.out;    // ideal
  EXPECT_NE(r.out.find("[batch-changed]"), std::string::npos) << r.out;
  // Two GPU counts on the curve: the scaling model says why it has none rather than guess.
  EXPECT_NE(r.out.find("deepcam: no model: 2 measured GPU counts; a model needs at least 3"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(out / "summary.json"));
  EXPECT_TRUE(std::filesystem::exists(out / "summary.csv"));
}

// Issue 12 item 15: input folders are often someone else's or read-only; a report leaves every one
// byte-for-byte unchanged (no report, no cache) and writes ./scalelens-report by default.
TEST(ReportCli, DefaultOutputIsTheCurrentFolderAndInputsStayUnchanged) {
  ScratchDir cwd, data, home;
  write_run(data, "a", "ddp", 1, 10);
  write_run(data, "b", "ddp", 2, 6);
  data.write("b/traces/rank0.json", R"j({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 2},
"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
 {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 10, "dur": 40, "args": {"stream": 7}}]})j");
  auto snapshot = [&] {
    std::map<std::string, std::string> files;
    for (auto& e : std::filesystem::recursive_directory_iterator(data.path()))
      files[e.path().string()] = e.is_regular_file() ? slurp(e.path()) : "<dir>";
    return files;
  };
  const auto before = snapshot();
  const std::string env = "cd " + quoted(cwd.path()) + " && HOME=" + quoted(home.path()) + " XDG_CACHE_HOME= ";
  auto r = run_scalelens("report " + quoted(data.path()) + " -q", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(snapshot(), before);
  EXPECT_TRUE(std::filesystem::exists(cwd / "scalelens-report/summary.json"));
  EXPECT_TRUE(std::filesystem::exists(home / ".cache/scalelens")) << "the trace cache goes under ~/.cache";

  // A read-only input is read the same way.
  std::filesystem::permissions(data.path(), std::filesystem::perms::owner_write | std::filesystem::perms::group_write |
                                                std::filesystem::perms::others_write,
                               std::filesystem::perm_options::remove);
  auto ro = run_scalelens("report " + quoted(data.path()) + " -q -o " + quoted(cwd / "ro"), env);
  std::filesystem::permissions(data.path(), std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  ASSERT_EQ(ro.exit_code, 0) << ro.err;
  EXPECT_EQ(slurp(cwd / "ro/summary.json"), slurp(cwd / "scalelens-report/summary.json"));

  // An unwritable current folder is an error that says how to choose another.
  std::filesystem::permissions(cwd.path(), std::filesystem::perms::owner_write | std::filesystem::perms::group_write |
                                               std::filesystem::perms::others_write,
                               std::filesystem::perm_options::remove);
  std::filesystem::remove_all(cwd / "scalelens-report");
  auto denied = run_scalelens("report " + quoted(data.path()) + " -q", env);
  std::filesystem::permissions(cwd.path(), std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  if (::geteuid() != 0) {  // root writes anyway
    EXPECT_EQ(denied.exit_code, 1) << denied.err;
    EXPECT_NE(denied.err.find("-o DIR"), std::string::npos) << denied.err;
  }
}

TEST(ReportCli, JsonOnStdoutFollowsTheSummarySchema) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  write_run(dir, "b", "ddp", 4, 3);
  ScratchDir cwd;
  auto r = run_scalelens("report " + quoted(dir.path()) + " --format json", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReportJson json(r.out);
  ASSERT_EQ(json.error, simdjson::SUCCESS) << r.out;
  auto doc = json.doc;
  EXPECT_EQ(std::string_view(doc["schema"]), "scalelens.summary/2");
  auto configs = doc["configurations"].get_array();
  ASSERT_EQ(configs.size(), 2u);
  double speedup = configs.at(1)["speedup"];
  EXPECT_NEAR(speedup, 10.0 / 3, 1e-9);
  double tput = configs.at(1)["throughput_samples_per_s"];
  EXPECT_NEAR(tput, 1000.0 / 3, 1e-6);
  // The written file is the same document.
  EXPECT_EQ(slurp(cwd / "scalelens-report/summary.json"), r.out);
}

TEST(ReportCli, CsvHasOneRowPerConfiguration) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  write_run(dir, "b", "ddp", 2, 6);
  auto r = run_scalelens("report " + quoted(dir.path()) + " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3);
  EXPECT_EQ(r.out.rfind("label,world_size,", 0), 0u);
  EXPECT_NE(r.out.find("\nddp,2,"), std::string::npos);
}

TEST(ReportCli, TimingsNameThePhasesAndTheBytesRead) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  write_run(dir, "b", "ddp", 2, 6);
  auto r = run_scalelens("report " + quoted(dir.path()) + " --timings -q --format csv -o " + quoted(dir.path() / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("timings: read "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(4 files, "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", analyze "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", write "), std::string::npos) << r.err;
  EXPECT_EQ(r.out.rfind("label,world_size,", 0), 0u);  // standard output is untouched
  // The peak memory of scalelens itself (gnuplot, which draws the figures, apart): a few MiB at
  // least for a program with its libraries, far from a GiB for 2 runs.
  const auto at = r.err.find("peak memory: scalelens ");
  ASSERT_NE(at, std::string::npos) << r.err;
  double self_mib = 0;
  ASSERT_EQ(std::sscanf(r.err.c_str() + at, "peak memory: scalelens %lf MiB (itself", &self_mib), 1) << r.err;
  EXPECT_GT(self_mib, 2);
  EXPECT_LT(self_mib, 1024);
  // And the peak so far at the end of each phase, which can only grow, up to the whole peak.
  double reading = 0, analysis = 0, writing = 0;
  const auto phases = r.err.find("by the end of reading ", at);
  ASSERT_NE(phases, std::string::npos) << r.err;
  ASSERT_EQ(std::sscanf(r.err.c_str() + phases, "by the end of reading %lf, of analysis %lf, of writing %lf MiB", &reading,
                        &analysis, &writing),
            3)
      << r.err;
  EXPECT_GT(reading, 2);
  EXPECT_LE(reading, analysis);
  EXPECT_LE(analysis, writing);
  EXPECT_LE(writing, self_mib);
  auto plain = run_scalelens("report " + quoted(dir.path()) + " -q --format csv -o " + quoted(dir.path() / "out"));
  EXPECT_EQ(plain.err.find("timings:"), std::string::npos) << plain.err;
  EXPECT_EQ(plain.err.find("peak memory"), std::string::npos) << plain.err;
}

TEST(ReportCli, EmptyFolderIsNoUsableDataExitTwo) {
  ScratchDir dir;
  dir.write("notes.txt", "nothing here\n");
  auto r = run_scalelens("report " + quoted(dir.path()));
  EXPECT_EQ(r.exit_code, 2);
  // The message names the folder it found nothing in, as a missing one is named.
  EXPECT_NE(r.err.find("no usable data in " + dir.path().string() + ":"), std::string::npos) << r.err;
}

TEST(ReportCli, UsageErrorsExitOne) {
  EXPECT_EQ(run_scalelens("report").exit_code, 1);
  EXPECT_EQ(run_scalelens("report . --format yaml").exit_code, 1);
  EXPECT_EQ(run_scalelens("report . --pattern '('").exit_code, 1);
  EXPECT_EQ(run_scalelens("frobnicate").exit_code, 1);
}

TEST(ReportCli, StrictTurnsWarningsIntoExitThree) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);  // one run per configuration: few-repeats
  EXPECT_EQ(run_scalelens("report " + quoted(dir.path())).exit_code, 0);
  auto r = run_scalelens("report " + quoted(dir.path()) + " --strict");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("[few-repeats]"), std::string::npos);
}

TEST(ReportCli, HelpShowsExamples) {
  auto r = run_scalelens("report --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("--baseline"), std::string::npos);
}

TEST(ReportCli, AListOptionBeforeTheInputsTakesOnlyItsValue) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  // --predict 64 then the folder: the folder is an input, not a second GPU count.
  auto r = run_scalelens("report --predict 64 " + quoted(data / "mlperf-hpc-v1.0-deepcam") + " -q -o " + quoted(dir / "out"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("deepcam"), std::string::npos) << r.out;
}

TEST(ReportCli, BadFileIsNamedAndTheRestIsReported) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  write_run(dir, "b", "ddp", 2, 6);
  dir.write("b/nodes/h1/gpu.csv", "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
                                  "0,0,,50,,,100,,,\n1000000000,0,,NaN,,,100,,,\n");
  auto r = run_scalelens("report " + quoted(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gpu.csv:3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ddp"), std::string::npos);
}

TEST(ReportCli, ProgressBarStaysOffWhenNotATerminal) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  auto r = run_scalelens("report " + quoted(dir.path()));
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
}

TEST(ReportCli, ProgressBarIsDrawnOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "util-linux 'script' not installed";
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  // `script` gives the binary a pseudo-terminal, as a user's shell would.
  auto r = run_command("script -qfec \"" SCALELENS_BIN " report " + dir.path().string() + "\" /dev/null");
  EXPECT_NE(r.out.find("reading ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ddp"), std::string::npos) << r.out;
}

namespace {

// A minimal itwinai MLflow file store: experiment `name`, one train run with one main worker.
void write_itwinai_experiment(const ScratchDir& dir, const std::string& exp_id, const std::string& name,
                              const std::string& run_id, const std::string& run_name, const std::string& strategy) {
  const std::string exp = "mllogs/mlflow/" + exp_id + "/";
  dir.write(exp + "meta.yaml", "artifact_location: file:///x/mllogs/mlflow/" + exp_id + "\nexperiment_id: '" + exp_id +
                                   "'\nlifecycle_stage: active\nname: " + name + "\n");
  auto run = [&](const std::string& id, const std::string& rname, const std::string& parent) {
    dir.write(exp + id + "/meta.yaml", "run_id: " + id + "\nrun_name: " + rname +
                                           "\nstart_time: 1700000000000\nend_time: 1700000040000\nstatus: 3\n"
                                           "lifecycle_stage: active\n");
    dir.write(exp + id + "/tags/mlflow.runName", rname);
    if (!parent.empty()) dir.write(exp + id + "/tags/mlflow.parentRunId", parent);
  };
  run(run_id, run_name, "");
  run(run_id + "w0", "worker_0 (main)", run_id);
  dir.write(exp + run_id + "w0/params/strategy", strategy);
  dir.write(exp + run_id + "w0/params/global_world_size", "2");
  dir.write(exp + run_id + "w0/metrics/epoch_time_s", "1700000010000 10 0\n1700000020000 9 1\n");
}

}  // namespace

TEST(ReportCli, ItwinaiExperimentRunNamesAndPatternSelectMlflowRuns) {
  ScratchDir dir;
  write_itwinai_experiment(dir, "1", "mnist", "a", "mnist-ddp", "torch-ddp");
  write_itwinai_experiment(dir, "2", "virgo", "b", "virgo-ddp", "torch-ddp");
  write_itwinai_experiment(dir, "3", "virgo", "c", "virgo-hvd", "horovod");
  ScratchDir out;
  auto all = run_scalelens("report " + quoted(dir.path()) + " -q -o " + quoted(out.path()) + " --format csv");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("\nmnist/torch-ddp,2,"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("\nvirgo/torch-ddp,2,"), std::string::npos) << all.out;
  auto one = run_scalelens("report " + quoted(dir.path()) + " -q -o " + quoted(out.path()) +
                           " --format csv --experiment virgo --run-names virgo-hvd");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(count_lines(one.out), 2u) << one.out;
  EXPECT_NE(one.out.find("\nhorovod,2,"), std::string::npos) << one.out;
  // The README's example: the store's paths are numeric ids, its strategies match.
  auto pattern = run_scalelens("report " + quoted(dir.path()) + " -q -o " + quoted(out.path()) +
                               " --format csv --pattern 'ddp|deepspeed'");
  ASSERT_EQ(pattern.exit_code, 0) << pattern.err;
  EXPECT_EQ(count_lines(pattern.out), 3u) << pattern.out;
}

TEST(ReportCli, AFailedRunHasNoRunTimeAndIsNamed) {
  // Three repeats; the third was killed (137) 1 s into its second epoch: its span is no run time.
  ScratchDir dir;
  write_run(dir, "a", "ddp", 2, 10);
  write_run(dir, "b", "ddp", 2, 10);
  write_run(dir, "c", "ddp", 2, 10);
  dir.write("c/scalelens.json", R"({"label": "ddp", "world_size": 2, "samples_per_epoch": 1000, "start_ns": 0,
                                    "end_ns": 11000000000, "exit_status": 137})");
  dir.write("c/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,10000000000\n");
  ScratchDir out;
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --warmup-epochs 0 --format json -o " + quoted(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the run failed (exit status 137)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[failed-run]"), std::string::npos) << r.err;
  const auto& json = r.out;
  const auto run_time = json.find("\"run_time_s\":{\"mean\":30");  // the configuration's: a and b alone
  ASSERT_NE(run_time, std::string::npos) << json.substr(0, 1500);
  EXPECT_EQ(json.find("\"n\":2,", run_time), json.find("\"n\":", run_time)) << json.substr(run_time, 200);
  EXPECT_NE(json.find("\"epoch_time_s\":{\"mean\":10,\"median\":10,\"std\":0,\"n\":7,"), std::string::npos)
      << "c's one whole epoch counts: " << json.substr(0, 1500);
  EXPECT_NE(json.find("\"run_time_s\":null"), std::string::npos) << "c's own";
  EXPECT_NE(json.find("\"exit_status\":137"), std::string::npos);
}

TEST(ReportCli, ARunWhoseOtherRankFailedHasNoRunTime) {
  // `scalelens run` under mpirun/srun: rank 0 writes the manifest with its own status (0), while
  // rank 1's record says it died of SIGSEGV (139).
  ScratchDir dir;
  write_run(dir, "a", "ddp", 2, 10);
  write_run(dir, "b", "ddp", 2, 10);
  dir.write("b/scalelens.json", R"({"label": "ddp", "world_size": 2, "samples_per_epoch": 1000, "start_ns": 0,
                                    "end_ns": 12000000000, "exit_status": 0})");
  dir.write("b/ranks/0.json", R"({"rank": 0, "host": "n1", "start_ns": 0, "end_ns": 12000000000, "exit_status": 0})");
  dir.write("b/ranks/1.json", R"({"rank": 1, "host": "n1", "start_ns": 0, "end_ns": 11000000000, "exit_status": 139, "signal": 11})");
  ScratchDir out;
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --format json -o " + quoted(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the run failed (rank 1 exited with status 139)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("\"run_time_s\":{\"mean\":30"), std::string::npos) << "a's alone";
}

TEST(ReportCli, ItwinaiEnergyFigureWithoutSamplesCountIsDrawnNotEmpty) {
  // Flat itwinai CSVs: energy is known, J/sample is not (no samples count).
  ScratchDir dir;
  const std::string energy = "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n";
  dir.write("scalability-metrics/epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,20,ddp,1\n2,19,ddp,1\n");
  dir.write("scalability-metrics/gpu-energy-data/ddp_1.csv", energy + "0,50,250,0,0,1,ddp,1\n1,50,250,0,0,1,ddp,1\n");
  ScratchDir out;
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q -o " + quoted(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto script = slurp(out / "figures/energy.gp");
  EXPECT_EQ(script.find("y2"), std::string::npos) << script;
  EXPECT_NE(script.find("J per sample not drawn"), std::string::npos) << script;
  // Whatever gnuplot did, no figure file is left empty.
  for (const auto& e : std::filesystem::directory_iterator(out / "figures"))
    EXPECT_GT(std::filesystem::file_size(e.path()), 0u) << e.path();
  if (std::filesystem::exists(out / "figures/energy.svg"))
    EXPECT_NE(slurp(out / "figures/energy.svg").find("Wh per run"), std::string::npos);
}

// nvidia-smi --query-gpu=timestamp,name,pci.bus_id,utilization.gpu,power.draw --format=csv -l 1 as
// it writes it, of a whole 2-GPU node beside a 1-GPU run: said (gpus-beyond-world-size). The same
// log rotated into nvsmi.log and nvsmi.log.1 is the one log's energy, with no double-count warning.
TEST(ReportCli, NvSmiLogOfAWholeNodeIsSaid_AndARotatedLogIsOneLog) {
  auto log_of = [](int from, int to) {
    std::string log = "timestamp, name, pci.bus_id, utilization.gpu [%], power.draw [W]\n";
    for (int k = from; k < to; ++k)
      for (int g = 0; g < 2; ++g)
        log += fmt::format("2024/05/14 10:21:{:02d}.{:03d}, NVIDIA A100-SXM4-80GB, 00000000:{:02X}:00.0, {} %, {:.2f} W\n",
                           33 + k, 6 * g, g == 0 ? 0x07 : 0x0B, g == 0 ? 95 : 0, g == 0 ? 400.0 : 60.0);
    return log;
  };
  const std::string manifest = R"({"label": "ddp", "world_size": WS, "start_ns": 1715682093000000000, "end_ns": 1715682113000000000})";
  auto report = [](const ScratchDir& dir) {
    auto r = run_scalelens("report " + quoted(dir.path()) + " --format json -q");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  };
  ScratchDir whole;
  whole.write("r/scalelens.json", std::regex_replace(manifest, std::regex("WS"), "1"));
  whole.write("r/nodes/h1/nvsmi.log", log_of(0, 21));
  const auto beyond = report(whole);
  EXPECT_NE(beyond.out.find("\"code\":\"gpus-beyond-world-size\""), std::string::npos) << beyond.out.substr(0, 400);
  // Both GPUs, a 2-GPU run: one file, then the same rotated at 10 s.
  auto energy_of = [](const std::string& json) {
    const auto at = json.find("\"energy_wh\":");
    return std::stod(json.substr(at + 12, 24));
  };
  ScratchDir one, two;
  for (auto* d : {&one, &two}) d->write("r/scalelens.json", std::regex_replace(manifest, std::regex("WS"), "2"));
  one.write("r/nodes/h1/nvsmi.log", log_of(0, 21));
  two.write("r/nodes/h1/nvsmi.log", log_of(0, 11));
  two.write("r/nodes/h1/nvsmi.log.1", log_of(11, 21));
  const auto single = report(one), rotated = report(two);
  EXPECT_EQ(rotated.out.find("energy-double-counted"), std::string::npos) << rotated.out.substr(0, 600);
  EXPECT_EQ(rotated.out.find("gpus-beyond-world-size"), std::string::npos);
  // By hand: (400 + 60) W over the 20 s of the run = 2.5556 Wh, the same whichever way it is filed.
  EXPECT_NEAR(energy_of(single.out), 460.0 * 20 / 3600, 1e-3);
  EXPECT_NEAR(energy_of(rotated.out), energy_of(single.out), 1e-9);
}

// A node's gpu.csv, as scalelens's sampler writes it (energy_mj: NVML's total energy counter, mJ
// since the driver loaded), in two files one after the other with 10 s between them (the older
// moved to gpu.csv.1, a new one begun): the counter goes on across those 10 s, so its gain there
// is their measured energy, not a gap left out (energy-gaps) as before.
TEST(ReportCli, GpuCsvInTwoFiles_TheCounterMeasuresTheTimeBetween) {
  // 1 s samples at 400 W: the counter gains 400000 mJ a second.
  auto log_of = [](int from, int to) {
    std::string log = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
    for (int s = from; s <= to; ++s)
      log += fmt::format("{},0,GPU-6b1a0f0e-5b7c-9c33-5f0a-2a8d1c4e9f01,95,40,43402395648,400,{},1410,65\n",
                         1715682093000000000LL + s * 1000000000LL, 5123456789LL + s * 400000LL);
    return log;
  };
  ScratchDir dir;
  dir.write("r/scalelens.json", R"({"label": "ddp", "world_size": 1, "start_ns": 1715682093000000000, "end_ns": 1715682143000000000})");
  dir.write("r/nodes/h1/gpu.csv.1", log_of(0, 20));
  dir.write("r/nodes/h1/gpu.csv", log_of(30, 50));
  auto r = run_scalelens("report " + quoted(dir.path()) + " --format json -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("energy-gaps"), std::string::npos) << r.out.substr(0, 800);
  EXPECT_EQ(r.out.find("energy-double-counted"), std::string::npos);
  // By hand: 400 W over the run's 50 s = 20000 J = 5.5556 Wh (the two files alone: 40 s, 4.4444 Wh).
  const auto at = r.out.find("\"energy_wh\":");
  ASSERT_NE(at, std::string::npos) << r.out.substr(0, 800);
  EXPECT_NEAR(std::stod(r.out.substr(at + 12, 24)), 400.0 * 50 / 3600, 1e-6);
}

TEST(ReportCli, NvSmiLogWithoutIndexColumn_EnergyCountsEveryGpu_AndTheNoteSaysHow) {
  // A 2-GPU run with nvidia-smi --query-gpu=timestamp,name,utilization.gpu,power.draw --format=csv -l 1
  // beside it: one row per GPU, GPU 1 read 6 ms after GPU 0; 11 samples, 1006 ms apart.
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  dir.write("b/scalelens.json", R"({"label": "ddp", "world_size": 2, "samples_per_epoch": 1000})");
  dir.write("b/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,6000000000\n0,1,6000000000,12000000000\n");
  std::string log = "timestamp, name, utilization.gpu [%], power.draw [W]\n";
  for (int k = 0; k < 11; ++k) {
    char row[160];
    const int ms = k * 1006;  // 2024/05/14 10:21:33.000 + ms
    for (int g = 0; g < 2; ++g) {
      const int at = ms + 6 * g;
      std::snprintf(row, sizeof row, "2024/05/14 10:21:%02d.%03d, NVIDIA A100-SXM4-80GB, %d %%, %.2f W\n", 33 + at / 1000,
                    at % 1000, g == 0 ? 80 : 60, g == 0 ? 400.0 : 200.0);
      log += row;
    }
  }
  dir.write("b/nodes/h1/nvsmi.log", log);
  auto r = run_scalelens("report " + quoted(dir.path()) + " --format json -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReportJson json(r.out);
  ASSERT_EQ(json.error, simdjson::SUCCESS) << r.out;
  auto doc = json.doc;
  auto configs = doc["configurations"].get_array();
  ASSERT_EQ(configs.size(), 2u);
  // By hand: each GPU is sampled over 10 × 1.006 s = 10.06 s; (400 + 200) W × 10.06 s = 6036 J
  // = 1.676667 Wh. Utilization: (80 + 60) / 2 = 70 %.
  double energy_wh = configs.at(1)["energy_wh"];
  EXPECT_NEAR(energy_wh, 600 * 10.06 / 3600, 1e-6);
  double util = configs.at(1)["gpu_util_pct"]["mean"];
  EXPECT_NEAR(util, 70, 1e-6);
  bool noted = false;
  for (auto w : doc["warnings"].get_array()) {
    std::string_view code = w["code"];
    if (code != "nvsmi-gpus-by-position") continue;
    noted = true;
    EXPECT_EQ(std::string_view(w["severity"]), "note");
    EXPECT_NE(std::string_view(w["message"]).find("2 GPUs"), std::string_view::npos);
  }
  EXPECT_TRUE(noted) << r.out;
}

namespace {

// Every entry under `root`: path, type, mode, size, mtime and content (or link target), one line
// each, sorted. Two equal listings mean the folder is byte-for-byte what it was.
std::string listing(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  std::vector<std::string> lines;
  for (fs::recursive_directory_iterator it(root), end; it != end; ++it) {
    const auto& p = it->path();
    auto st = it->symlink_status();
    std::string line = fs::relative(p, root).string() + " type=" + std::to_string(static_cast<int>(st.type())) +
                       " mode=" + std::to_string(static_cast<int>(st.permissions()));
    if (fs::is_symlink(st)) {
      line += " -> " + fs::read_symlink(p).string();
    } else if (fs::is_regular_file(st)) {
      line += " size=" + std::to_string(fs::file_size(p)) + " mtime=" +
              std::to_string(fs::last_write_time(p).time_since_epoch().count()) +
              " hash=" + std::to_string(std::hash<std::string>{}(slurp(p)));
    }
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// A Kineto trace of rank 0 of 1: one profiler step, one compute kernel.
const char* kTrace = R"json({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1},
"deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}],
"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 10, "dur": 40, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": 100}
]})json";

}  // namespace

// Input folders are often someone else's: a report (twice, so that the second reads the trace
// cache) leaves every input byte-for-byte as it was, writes no cache beside the traces, and does
// not follow a `.scalelens-cache` link planted there by an earlier version or by someone else.
TEST(ReportCli, InputFoldersAreLeftExactlyAsTheyWere) {
  ScratchDir study, out, elsewhere, cache_home;
  write_run(study, "a", "ddp", 1, 10);
  write_run(study, "b", "ddp", 2, 6);
  study.write("a/traces/rank0.json", kTrace);
  // Where earlier versions cached the trace's summary, a link to someone else's folder.
  std::filesystem::create_directory_symlink(elsewhere.path(), study / "a/traces/.scalelens-cache");
  const auto before = listing(study.path());
  const std::string env = "XDG_CACHE_HOME=" + quoted(cache_home.path());
  for (int pass = 0; pass < 2; ++pass) {
    auto r = run_scalelens("report " + quoted(study.path()) + " -q -o " + quoted(out.path()), env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(listing(study.path()), before);
  EXPECT_TRUE(std::filesystem::is_empty(elsewhere.path())) << "the planted link was followed";
  EXPECT_FALSE(std::filesystem::is_empty(cache_home / "scalelens/traces")) << "the summary went to XDG_CACHE_HOME";
  // --cache-dir chooses the folder; --no-cache writes none.
  ScratchDir chosen, unused;
  auto r = run_scalelens("report " + quoted(study.path()) + " -q -o " + quoted(out.path()) + " --cache-dir " +
                             quoted(chosen / "c"),
                         "XDG_CACHE_HOME=" + quoted(unused.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::is_empty(chosen / "c/traces"));
  auto n = run_scalelens("report " + quoted(study.path()) + " -q -o " + quoted(out.path()) + " --no-cache",
                         "XDG_CACHE_HOME=" + quoted(unused.path()));
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_TRUE(std::filesystem::is_empty(unused.path()));
  EXPECT_EQ(listing(study.path()), before);
}

// A curve faster than linear (T = 100 s/p^1.2 on 1–8 GPUs, one run each): its efficiency above
// 100% is said, naming the configurations, and the model's self-check misses (fitted without 8
// GPUs it predicts 14.1 s, 8.25 s measured): the predictions stay, qualified by a warning, and the
// recommendation rests on measured counts only (it was "32 GPUs (predicted) … 160% efficient").
TEST(ReportCli, AFailedSelfCheckAndSuperlinearEfficiencyAreSaid) {
  ScratchDir dir, cwd;
  for (int p : {1, 2, 4, 8}) write_run(dir, "r" + std::to_string(p), "ddp", p, 100 / std::pow(p, 1.2));
  auto r = run_scalelens("report " + quoted(dir.path()) + " --format json -q", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReportJson json(r.out);
  ASSERT_EQ(json.error, simdjson::SUCCESS) << r.out;
  auto doc = json.doc;
  auto ddp = doc["curves"].at(0);
  ASSERT_FALSE(ddp["backtest"].is_null());
  EXPECT_FALSE(bool(ddp["backtest"]["inside"]));
  EXPECT_GT(ddp["predictions"].get_array().size(), 0u);
  ASSERT_FALSE(ddp["recommended"].is_null());
  EXPECT_FALSE(bool(ddp["recommended"]["predicted"]));
  EXPECT_EQ(std::int64_t(ddp["recommended"]["world_size"]), 8);
  std::map<std::string, std::string> warned;
  for (auto w : doc["warnings"]) warned[std::string(std::string_view(w["code"]))] = std::string(std::string_view(w["message"]));
  ASSERT_TRUE(warned.count("model-self-check-failed")) << r.out;
  EXPECT_NE(warned["model-self-check-failed"].find("no recommendation rests on them"), std::string::npos);
  ASSERT_TRUE(warned.count("superlinear-efficiency")) << r.out;
  EXPECT_NE(warned["superlinear-efficiency"].find("ddp/2 (115%), ddp/4 (132%), ddp/8 (152%)"), std::string::npos)
      << warned["superlinear-efficiency"];
}

// A self-check that could not be made is no pass: at 1, 2, 4 and 64 GPUs (Amdahl, serial fraction
// 0.2%) the refit without 64 GPUs may not reach it (beyond 8× 4), so nothing checks the model; its
// predictions stay, qualified by a warning, and the recommendation rests on measured counts only,
// saying why (it was "128 GPUs (predicted) … 80% efficient").
TEST(ReportCli, ASelfCheckThatCouldNotBeMadeRecommendsMeasuredCountsOnly) {
  ScratchDir dir, cwd;
  for (int p : {1, 2, 4, 64}) write_run(dir, "r" + std::to_string(p), "ddp", p, 100 * (0.002 + 0.998 / p));
  auto r = run_scalelens("report " + quoted(dir.path()) + " --format json -q", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReportJson json(r.out);
  ASSERT_EQ(json.error, simdjson::SUCCESS) << r.out;
  auto doc = json.doc;
  auto ddp = doc["curves"].at(0);
  EXPECT_TRUE(ddp["backtest"].is_null());
  EXPECT_NE(std::string_view(ddp["backtest_refused"]).find("fitted without 64 GPUs"), std::string_view::npos) << r.out;
  EXPECT_GT(ddp["predictions"].get_array().size(), 0u);
  ASSERT_FALSE(ddp["recommended"].is_null());
  EXPECT_FALSE(bool(ddp["recommended"]["predicted"]));
  EXPECT_EQ(std::int64_t(ddp["recommended"]["world_size"]), 64);
  EXPECT_NE(std::string_view(ddp["recommended"]["reason"]).find("measured counts only: the model could not check itself"),
            std::string_view::npos) << r.out;
  std::map<std::string, std::string> warned;
  for (auto w : doc["warnings"]) warned[std::string(std::string_view(w["code"]))] = std::string(std::string_view(w["message"]));
  ASSERT_TRUE(warned.count("model-self-check-failed")) << r.out;
  EXPECT_NE(warned["model-self-check-failed"].find("could not check itself"), std::string::npos);
}

// Efficiencies of 100.4% (superlinear beyond noise: two runs each, identical) and 99.6%: both read
// "100%" in the table, and the warning said "more than 100% efficient … at sup/2 (100%)".
TEST(ReportCli, AnEfficiencyNearAHundredShowsWhichSideItIsOn) {
  ScratchDir dir, cwd;
  for (auto [label, efficiency] : {std::pair{"sup", 1.004}, std::pair{"sub", 0.996}})
    for (int run : {1, 2}) {
      write_run(dir, fmt::format("{}-1-{}", label, run), label, 1, 100);
      write_run(dir, fmt::format("{}-2-{}", label, run), label, 2, 100 / 2 / efficiency);
    }
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("100.4%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("99.6%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("more than 100% efficient beyond its times' noise at sup/2 (100.4%)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("'sub' is more than 100% efficient"), std::string::npos) << r.out;
}

// A prediction's efficiency is said as the table's column says it: at 1–128 GPUs (Amdahl, serial
// fraction 0.0016%) the model predicts 99.6% at 256 GPUs, which the prediction line rounded to
// "efficiency 100% [100, 100]" under a table that shows 99.9%. And the ideal speedup, an exact
// ratio, reads "128x" as "64x" above it does, not "128.0x".
TEST(ReportCli, APredictionsEfficiencyAndTheIdealSpeedupReadAsTheTableDoes) {
  ScratchDir dir, cwd;
  const double serial = 0.004016 / 255;  // efficiency 1 / (1 + 255 · serial) = 0.996 at 256 GPUs
  for (int p = 1; p <= 128; p *= 2) write_run(dir, fmt::format("r{}", p), "ddp", p, 100 * (serial + (1 - serial) / p));
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --predict 256", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at256 = r.out.find("    at 256 GPUs: ");
  ASSERT_NE(at256, std::string::npos) << r.out;
  const std::string line = r.out.substr(at256, r.out.find('\n', at256) - at256);
  EXPECT_NE(line.find(", efficiency 99.6% [99.6%, 99.6%]"), std::string::npos) << line;
  std::regex row128(R"(\nddp +128 .* 128x +99\.8%)");
  EXPECT_TRUE(std::regex_search(r.out, row128)) << r.out;
  EXPECT_EQ(r.out.find("128.0x"), std::string::npos) << r.out;
}

// --baseline common: label a (2–8 GPUs) is measured against b at 1 GPU. summary.csv had
// baseline_world_size 1, a size a never ran, and nothing saying it is b's time.
TEST(ReportCli, SummaryCsvSaysWhoseBaselineASpeedupIsAgainst) {
  ScratchDir dir, out;
  for (auto [label, p] : {std::pair{"a", 2}, std::pair{"a", 4}, std::pair{"a", 8}, std::pair{"b", 1}, std::pair{"b", 2}})
    write_run(dir, fmt::format("{}-{}", label, p), label, p, 100.0 / p);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --baseline common -o " + quoted(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto csv = slurp(out / "summary.csv");
  std::vector<std::string_view> header, row;
  std::size_t rows = 0;
  for (std::size_t at = 0, end; (end = csv.find('\n', at)) != std::string::npos; at = end + 1) {
    const std::string_view line(csv.data() + at, end - at);
    if (at == 0) {
      scalelens::split_csv(line, header);
      continue;
    }
    scalelens::split_csv(line, row);
    ASSERT_EQ(row.size(), header.size()) << line;
    const auto cell = [&](std::string_view name) { return row[static_cast<std::size_t>(scalelens::find_column(header, name))]; };
    ASSERT_GE(scalelens::find_column(header, "baseline_label"), 0) << csv;
    ASSERT_GE(scalelens::find_column(header, "run_ids"), 0) << csv;
    EXPECT_EQ(cell("baseline_label"), "b") << line;
    EXPECT_EQ(cell("baseline_world_size"), "1") << line;
    EXPECT_EQ(cell("run_ids"), fmt::format("{}-{}", cell("label"), cell("world_size"))) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 5u) << csv;
}

// One run per GPU count, 2 epochs of which the first is warm-up (as `scalelens run` writes them):
// 100 s at 1 GPU, 49.6 s at 2 (efficiency 100.8%). One timed epoch each has no CI, so no noise
// estimate: "beyond noise" was claimed from the means alone. Nothing is claimed without one.
TEST(ReportCli, SuperlinearEfficiencyIsNotClaimedWithoutANoiseEstimate) {
  ScratchDir dir, cwd;
  for (auto [p, epoch_s] : {std::pair{1, 100.0}, std::pair{2, 49.6}}) {
    const long long start = 1700003600000000000LL + p * 3600000000000LL;
    const long long warm_end = start + 120000000000LL, end = warm_end + static_cast<long long>(epoch_s * 1e9);
    const std::string name = "ddp-" + std::to_string(p) + "gpu";
    dir.write(name + "/scalelens.json",
              fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "ddp", "world_size": {}, "nodes": 1, )"
                          R"("gpus_per_node": {}, "status": "complete", "exit_status": 0, "start_ns": {}, "global_batch_size": 256, )"
                          R"("samples_per_epoch": 100000, "scaling": "strong", "end_ns": {}}})",
                          name, p, p, start, end));
    dir.write(name + "/epochs.csv", fmt::format("rank,epoch,start_ns,end_ns,samples\n0,0,{},{},\n0,1,{},{},\n", start,
                                                warm_end, warm_end, end));
  }
  auto r = run_scalelens("report " + quoted(dir.path()) + " --format json -q", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReportJson json(r.out);
  ASSERT_EQ(json.error, simdjson::SUCCESS) << r.out;
  auto doc = json.doc;
  std::vector<double> efficiencies;
  for (auto c : doc["configurations"].get_array())
    if (!c["efficiency"].is_null()) efficiencies.push_back(double(c["efficiency"]));
  ASSERT_EQ(efficiencies.size(), 2u) << r.out;
  EXPECT_NEAR(*std::max_element(efficiencies.begin(), efficiencies.end()), 100.0 / 49.6 / 2, 1e-6);  // above 1
  for (auto w : doc["warnings"]) EXPECT_NE(std::string_view(w["code"]), "superlinear-efficiency") << r.out;
}

// Issue 14 §1 end to end: a strong-scaling study that follows Amdahl's law (serial fraction 5%) at
// 1..16 GPUs, 3 repeats within ±1%, gets its law named in the terminal and summary.json, the
// asked-for prediction with an interval that holds the law's time, the one beyond 8× refused with
// its reason, and the self-check; a curve of two GPU counts says why it has no model.
TEST(ReportCli, ScalingModelNamesTheLawAndPredicts) {
  ScratchDir dir, cwd;
  auto law = [](double p) { return 100 * (0.05 + 0.95 / p); };
  for (int p : {1, 2, 4, 8, 16})
    for (int rep = 0; rep < 3; ++rep)
      write_run(dir, "amdahl-" + std::to_string(p) + "-" + std::to_string(rep), "ddp", p, law(p) * (0.99 + 0.01 * rep));
  write_run(dir, "two-1", "fsdp", 1, 50);
  write_run(dir, "two-2", "fsdp", 2, 30);
  auto r = run_scalelens("report " + quoted(dir.path()) + " --predict 64,1024 --format json", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReportJson json(r.out);
  ASSERT_EQ(json.error, simdjson::SUCCESS) << r.out;
  auto doc = json.doc;
  std::map<std::string, simdjson::dom::element> curves;
  for (auto c : doc["curves"].get_array()) curves[std::string(std::string_view(c["label"]))] = c;
  ASSERT_EQ(curves.size(), 2u);
  auto ddp = curves["ddp"];
  EXPECT_EQ(std::string_view(ddp["model"]["law"]), "Amdahl");
  EXPECT_NEAR(double(ddp["model"]["params"]["serial_fraction"]), 0.05, 0.005);
  auto predictions = ddp["predictions"].get_array();
  ASSERT_EQ(predictions.size(), 1u);
  auto at64 = predictions.at(0);
  EXPECT_EQ(std::int64_t(at64["world_size"]), 64);
  EXPECT_LE(double(at64["lower"]), law(64));
  EXPECT_GE(double(at64["upper"]), law(64));
  EXPECT_NEAR(double(at64["speedup"]), law(1) / double(at64["time_s"]), 0.02 * law(1) / law(64));
  EXPECT_NEAR(double(at64["efficiency"]), double(at64["speedup"]) / 64, 1e-9);
  auto refused = ddp["refused_targets"].get_array();
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(std::string_view(refused.at(0)).find("1024: beyond 8"), std::string_view::npos);
  EXPECT_EQ(std::int64_t(ddp["backtest"]["world_size"]), 16);
  EXPECT_TRUE(bool(ddp["backtest"]["inside"]));
  // The recommendation (time, at least 70% efficient): 8 GPUs (74%), not 16 (57%).
  EXPECT_EQ(std::int64_t(ddp["recommended"]["world_size"]), 8);
  EXPECT_EQ(std::string_view(ddp["recommended"]["objective"]), "time");
  for (auto w : doc["warnings"])  // a model that passes its self-check, on a curve below 100% efficiency
    for (const char* code : {"model-self-check-failed", "superlinear-efficiency"}) EXPECT_NE(std::string_view(w["code"]), code);
  EXPECT_TRUE(curves["fsdp"]["model"].is_null());
  EXPECT_NE(std::string_view(curves["fsdp"]["refused"]).find("at least 3"), std::string_view::npos);

  auto table = run_scalelens("report " + quoted(dir.path()) + " -o " + quoted(cwd / "out"));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Scaling model (time per epoch vs GPUs; 90% intervals):"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("ddp: T(p) = "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(Amdahl, serial fraction"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("at 32 GPUs: "), std::string::npos) << table.out;  // default: 2× and 4× the largest
  EXPECT_NE(table.out.find("fsdp: no model: 2 measured GPU counts"), std::string::npos) << table.out;
  // The static figure: the band as a filled curve under the model, with the formula in the key.
  const auto model_gp = slurp(cwd / "out/figures/model.gp");
  EXPECT_NE(model_gp.find("filledcurves"), std::string::npos) << model_gp;
  EXPECT_NE(model_gp.find("ddp: T(p) = "), std::string::npos) << model_gp;
  EXPECT_NE(slurp(cwd / "out/figures/model.dat").find("# curve: ddp (model, time per epoch)"), std::string::npos);
  EXPECT_EQ(run_scalelens("report " + quoted(dir.path()) + " --predict 0").exit_code, 1);
  EXPECT_EQ(run_scalelens("report " + quoted(dir.path()) + " --min-efficiency 2").exit_code, 1);
  EXPECT_EQ(run_scalelens("report " + quoted(dir.path()) + " --objective fastest").exit_code, 1);
  auto capped = run_scalelens("report " + quoted(dir.path()) + " --max-gpus 4 -o " + quoted(cwd / "capped"));
  EXPECT_NE(capped.out.find("ddp: recommended 4 GPUs: the shortest time"), std::string::npos) << capped.out;
}

// Runs stating samples_per_epoch but logging no epochs (a run's start and end only), beside a
// label with epochs: the note said "no samples_per_epoch", and the heading "time per epoch" stood
// over runonly, whose model is per run.
TEST(ReportCli, CurvesOnDifferentTimeBasesAndAThroughputWithoutEpochsAreSaidTruly) {
  ScratchDir dir, cwd;
  for (int p : {1, 2, 4}) {
    write_run(dir, fmt::format("epochs-{}", p), "epochs", p, 100.0 / p);
    dir.write(fmt::format("runonly-{}/scalelens.json", p),
              fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "runonly-{}", "label": "runonly", "world_size": {}, )"
                          R"("nodes": 1, "gpus_per_node": {}, "status": "complete", "exit_status": 0, "start_ns": 0, )"
                          R"("end_ns": {}, "samples_per_epoch": 1000}})",
                          p, p, p, static_cast<long long>(500e9 / p)));
  }
  auto r = run_scalelens("report " + quoted(dir.path()), "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Scaling model (time vs GPUs; 90% intervals):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  epochs (time per epoch): T(p) = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  runonly (time per run): T(p) = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("throughput not computed for runonly/1, runonly/2, runonly/4: samples_per_epoch, but no timed epochs"),
            std::string::npos)
      << r.out;
}

// A CPU-only study (ranks with no device, no GPU sampled) counts ranks: the table said so, the
// model's heading and refusal said GPUs ("no model: 2 measured GPU counts").
namespace {

// A CPU-only run as `scalelens run` writes it (ranks with no device, no GPU sampled): 3 epochs of
// `epoch_s`, and the global batch size where one is given.
void write_cpu_run(const ScratchDir& dir, int p, double epoch_s, std::optional<int> global_batch = {}) {
  const std::string name = fmt::format("cpu-{}", p);
  const auto end = static_cast<long long>(3 * epoch_s * 1e9);
  dir.write(name + "/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "cpu", "world_size": {}, "nodes": 1, )"
                        R"("status": "complete", "exit_status": 0, "start_ns": 0, {}"end_ns": {}}})",
                        name, p, global_batch ? fmt::format(R"("global_batch_size": {}, "scaling": "strong", )", *global_batch) : "",
                        end));
  for (int rank = 0; rank < p; ++rank)
    dir.write(fmt::format("{}/ranks/{}.json", name, rank),
              fmt::format(R"({{"schema": "scalelens.rank/1", "rank": {}, "host": "vm", "local_rank": {}, "devices": [], )"
                          R"("start_ns": 0, "end_ns": {}, "exit_status": 0}})",
                          rank, rank, end));
  std::string epochs = "rank,epoch,start_ns,end_ns,samples\n";
  for (int e = 0; e < 3; ++e) epochs += fmt::format("0,{},{},{},120\n", e, e * end / 3, (e + 1) * end / 3);
  dir.write(name + "/epochs.csv", epochs);
}

}  // namespace

TEST(ReportCli, AStudyCountedInRanksSaysRanksInItsModel) {
  ScratchDir dir, cwd;
  for (int p : {1, 2}) write_cpu_run(dir, p, 10.0 / p);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -o out", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("label  ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Scaling model (time per epoch vs ranks; 90% intervals):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu: no model: 2 measured rank counts; a model needs at least 3"), std::string::npos) << r.out;
  EXPECT_NE(slurp(cwd / "out/summary.json").find(R"("refused":"2 measured rank counts)"), std::string::npos);
}

// Every count in a message is in the study's unit, singular for one: a CPU-only study's messages
// said "256 at 1 GPUs, 512 at 2 GPUs" (batch-changed), "no configuration at 3 GPUs
// (--baseline-gpus)", "recommended 1 GPUs" and "GPUs: 2 per run" (provenance).
TEST(ReportCli, CountsInMessagesAreInTheStudysUnitAndSingularForOne) {
  ScratchDir dir, cwd;
  // 10 s at 1 rank, 9 s at 2 (56% efficient), 8.5 s at 4: 1 rank is recommended.
  write_cpu_run(dir, 1, 10, 256);
  write_cpu_run(dir, 2, 9, 512);
  write_cpu_run(dir, 4, 8.5, 512);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -o out", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the global batch size changes along the strong-scaling curve of 'cpu' (256 at 1 rank, 512 at 2 ranks, "
                       "512 at 4 ranks)"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu: recommended 1 rank: the shortest time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; 2 ranks would take 9 s at 56% efficiency"), std::string::npos) << r.out;
  EXPECT_NE(slurp(cwd / "out/summary.json").find("; ranks: 2 per run ("), std::string::npos);
  auto baseline = run_scalelens("report " + quoted(dir.path()) + " -q --baseline-gpus 3 -o out", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(baseline.exit_code, 0) << baseline.err;
  EXPECT_NE(baseline.out.find("'cpu' has no configuration at 3 ranks (--baseline-gpus)"), std::string::npos) << baseline.out;
  // The same with GPUs: "1 GPU", not "1 GPUs".
  ScratchDir gpus;
  for (auto [p, epoch_s] : {std::pair{1, 10.0}, std::pair{2, 9.0}, std::pair{4, 8.5}}) write_run(gpus, fmt::format("g{}", p), "ddp", p, epoch_s);
  auto g = run_scalelens("report " + quoted(gpus.path()) + " -q -o out", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_NE(g.out.find("ddp: recommended 1 GPU: the shortest time"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("; 2 GPUs would take 9 s"), std::string::npos) << g.out;
}

// A CPU-only run whose 4 ranks' records exceed its stated world size of 2 is placed at 4 ranks:
// `ranks-beyond-world-size` said "placed at the 4 GPUs its ranks show" of a study counted in ranks.
TEST(ReportCli, RanksBeyondTheWorldSizeOfACpuOnlyRunAreCountedInRanks) {
  ScratchDir dir;
  write_cpu_run(dir, 1, 10);
  write_cpu_run(dir, 4, 2.5);
  dir.write("cpu-4/scalelens.json",
            R"({"schema": "scalelens.run/1", "run_id": "cpu-4", "label": "cpu", "world_size": 2, "nodes": 1, )"
            R"("status": "complete", "exit_status": 0, "start_ns": 0, "end_ns": 7500000000})");
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  EXPECT_EQ(std::string_view(root["world_size_unit"]), "ranks");
  std::string said;
  for (simdjson::dom::element w : root["warnings"].get_array())
    if (std::string_view(w["code"]) == "ranks-beyond-world-size") said += std::string_view(w["message"]);
  EXPECT_NE(said.find("rank records of ranks 0–3; ranks beyond it: 2, 3"), std::string::npos) << said;
  EXPECT_NE(said.find("The run is placed at the 4 ranks its ranks show, not its stated 2"), std::string::npos) << said;
  EXPECT_EQ(said.find("GPU"), std::string::npos) << said;
}

// Three GPU counts (1, 2, 4; Amdahl, serial fraction 0.2%): the self-check would refit on two,
// which a two-parameter law passes through exactly. It was skipped and counted as passed, so the
// recommendation rested on a prediction ("16 GPUs (predicted)"); it could not be made, which
// leaves measured counts only, with the warning.
TEST(ReportCli, ThreeGpuCountsRecommendMeasuredCountsOnly) {
  ScratchDir dir, cwd;
  for (int p : {1, 2, 4})
    for (int rep = 0; rep < 3; ++rep)
      write_run(dir, fmt::format("r{}-{}", p, rep), "ddp", p, 100 * (0.002 + 0.998 / p) * (0.995 + 0.005 * rep));
  auto r = run_scalelens("report " + quoted(dir.path()) + " --format json -q", "cd " + quoted(cwd.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  auto ddp = doc["curves"].at(0);
  EXPECT_GT(ddp["predictions"].get_array().size(), 0u) << r.out;
  EXPECT_TRUE(ddp["backtest"].is_null());
  EXPECT_EQ(std::string_view(ddp["backtest_refused"]),
            "fitted without 4 GPUs, the 2 GPU counts left are too few for a model, which needs at least 3");
  ASSERT_FALSE(ddp["recommended"].is_null()) << r.out;
  EXPECT_FALSE(bool(ddp["recommended"]["predicted"])) << r.out;
  EXPECT_EQ(std::int64_t(ddp["recommended"]["world_size"]), 4);
  EXPECT_NE(std::string_view(ddp["recommended"]["reason"]).find("measured counts only: the model could not check itself"),
            std::string_view::npos) << r.out;
  bool warned = false;
  for (auto w : doc["warnings"]) warned |= std::string_view(w["code"]) == "model-self-check-failed";
  EXPECT_TRUE(warned) << r.out;
}

// `report B -o out` over an earlier `report A -o out` left A's energy, utilization and Pareto
// figures (scripts, data and pictures, A's configurations in them) in out/figures beside B's, as if
// B's. A report removes the files of every figure it owns before writing its own; the user's other
// files there stay.
TEST(ReportCli, AReportOverAnEarlierOneLeavesNoneOfItsFigures) {
  ScratchDir a, b, out;
  write_run(a, "a1", "withgpu", 1, 25);
  std::string gpus = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
  for (int t = 0; t <= 75; ++t)
    gpus += fmt::format("{},0,GPU-3c1d9e0a-7b2f-4e5d-8a6c-1f0e2d3c4b5a,80,40,8589934592,100,,1410,61\n", t * 1'000'000'000LL);
  a.write("a1/nodes/n01/gpu.csv", gpus);
  for (int p : {1, 2, 4}) write_run(b, fmt::format("b{}", p), "nogpu", p, 100.0 / p);
  auto names = [&] {
    std::set<std::string> stems;
    for (const auto& e : std::filesystem::directory_iterator(out / "figures")) stems.insert(e.path().stem().string());
    return stems;
  };
  auto report = [&](const ScratchDir& study, const std::string& env) {
    auto r = run_scalelens("report " + quoted(study.path()) + " -q -o " + quoted(out.path()), env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  };
  report(a, "");
  ASSERT_TRUE(names().count("energy")) << "study A has an energy figure";
  ASSERT_TRUE(names().count("utilization"));
  out.write("figures/my-notes.txt", "mine\n");
  out.write("figures/energy-draft.svg", "<svg/>\n");
  std::filesystem::create_directories(out / "figures/lost_time.svg");  // a folder of a figure's name is none of its files
  report(b, "SCALELENS_NO_GNUPLOT=1 ");
  for (const char* gone : {"energy", "utilization", "pareto"}) EXPECT_FALSE(names().count(gone)) << gone;
  EXPECT_TRUE(std::filesystem::is_directory(out / "figures/lost_time.svg"));
  std::filesystem::remove(out / "figures/lost_time.svg");
  for (const auto& e : std::filesystem::directory_iterator(out / "figures")) {
    const auto ext = e.path().extension().string();
    EXPECT_TRUE(ext == ".gp" || ext == ".dat" || e.path().filename() == "my-notes.txt" || e.path().filename() == "energy-draft.svg")
        << e.path() << ": no picture of A's beside B's scripts, drawn without gnuplot";
  }
  EXPECT_EQ(slurp(out / "figures/my-notes.txt"), "mine\n");
  EXPECT_EQ(slurp(out / "figures/energy-draft.svg"), "<svg/>\n");
  EXPECT_EQ(slurp(out / "figures/speedup.dat").find("withgpu"), std::string::npos);
  // The same as B reported into a fresh folder, figure for figure.
  ScratchDir fresh;
  auto r = run_scalelens("report " + quoted(b.path()) + " -q -o " + quoted(fresh.path()), "SCALELENS_NO_GNUPLOT=1 ");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> alone;
  for (const auto& e : std::filesystem::directory_iterator(fresh / "figures")) alone.insert(e.path().filename().string());
  std::set<std::string> over;
  for (const auto& e : std::filesystem::directory_iterator(out / "figures")) over.insert(e.path().filename().string());
  over.erase("my-notes.txt"), over.erase("energy-draft.svg");
  EXPECT_EQ(over, alone);
}
