// Hostile input and faults (issue 12), through the real binary: each bad input is named, and the
// rest of the study keeps exactly the figures it has without it.
#include <gtest/gtest.h>

#include <simdjson.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <map>
#include <string>

#include "common/file_io.hpp"
#include "support/run_binary.hpp"

using namespace scalelens::testing;

namespace {

std::string ns(double s) { return std::to_string(static_cast<long long>(s * 1e9)); }

// A scalelens run folder as `scalelens run` writes it: manifest and three one-rank epochs.
void write_run(const ScratchDir& dir, const std::string& name, const std::string& label, int p, double epoch_s) {
  dir.write(name + "/scalelens.json", "{\"schema\": \"scalelens.run/1\", \"run_id\": \"" + name + "\", \"label\": \"" + label +
                                          "\", \"world_size\": " + std::to_string(p) +
                                          ", \"samples_per_epoch\": 1000, \"start_ns\": 0, \"end_ns\": " + ns(3 * epoch_s) +
                                          ", \"status\": \"complete\"}");
  dir.write(name + "/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0," + ns(epoch_s) + "\n0,1," + ns(epoch_s) + "," +
                                      ns(2 * epoch_s) + "\n0,2," + ns(2 * epoch_s) + "," + ns(3 * epoch_s) + "\n");
}

// label/p → epoch time mean, throughput, speedup: the figures a hostile file must not move.
std::map<std::string, std::string> figures(const std::string& summary_json) {
  std::map<std::string, std::string> out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(summary_json).get(doc)) return out;
  for (auto c : doc["configurations"].get_array()) {
    std::string key = std::string(std::string_view(c["label"])) + "/" + std::to_string(int64_t(c["world_size"]));
    out[key] = simdjson::minify(c["epoch_time_s"]) + " " + simdjson::minify(c["throughput_samples_per_s"]) + " " +
               simdjson::minify(c["speedup"]);
  }
  return out;
}

std::map<std::string, std::string> report_figures(const std::filesystem::path& study, const std::string& extra = {}) {
  ScratchDir out;
  auto r = run_scalelens("report --format json -q -o " + quoted(out.path()) + " " + extra + " " + quoted(study));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return figures(r.out);
}

// Kineto trace: one step, a gemm and a kernel called `comm_name` (40 µs each, overlapping 20 µs).
std::string trace_with_kernel(const std::string& comm_name, int rank = 0) {
  return R"j({"schemaVersion": 1, "distributedInfo": {"rank": )j" + std::to_string(rank) + R"j(, "world_size": 2},
"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 4, "dur": 2, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 10, "dur": 40, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": ")j" + comm_name + R"j(", "ts": 30, "dur": 40, "args": {"stream": 20, "correlation": 2}},
 {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": 300}
]})j";
}

}  // namespace

// std::regex recursed once per character and overflowed the stack on a long kernel name; RE2 does not.
TEST(HostileInput, LongKernelNameUnderCommKernelRegexIsMatchedNotACrash) {
  ScratchDir dir;
  const std::string long_name = std::string(300000, 'a') + "_my_allreduce";
  auto trace = dir.write("rank0.json", trace_with_kernel(long_name));
  auto r = run_scalelens("trace --no-cache --format json --comm-kernel-regex '^(a|b)*_my_allreduce$' " + quoted(trace));
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc));
  auto rank = doc["ranks"].at(0);
  // comm = the 40 µs kernel; comp = gemm 40 µs; overlap = [30, 50) = 20 µs.
  EXPECT_DOUBLE_EQ(double(rank["comm_us"]), 40.0);
  EXPECT_DOUBLE_EQ(double(rank["comp_us"]), 40.0);
  EXPECT_DOUBLE_EQ(double(rank["overlap_us"]), 20.0);
}

TEST(HostileInput, InvalidRegexIsAUsageErrorEverywhere) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  auto trace = dir.write("t/rank0.json", trace_with_kernel("ncclKernel_AllReduce"));
  auto t = run_scalelens("trace --comm-kernel-regex '(ab' " + quoted(trace));
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find("--comm-kernel-regex '(ab' is not a valid regular expression"), std::string::npos) << t.err;
  // Backreferences are ECMAScript but not RE2: refused by name, not silently read another way.
  auto r = run_scalelens("report -q " + quoted(dir.path()) + " --pattern '(a)\\1'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE((r.out + r.err).find("--pattern '(a)\\1' is not a valid regular expression"), std::string::npos) << r.out << r.err;
  auto s = run_scalelens("serve --port 0 -q " + quoted(dir.path()) + " --pattern '[z-a]'");
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_NE(s.err.find("--pattern '[z-a]' is not a valid regular expression"), std::string::npos) << s.err;
}

// Every floating-point option refuses NaN and infinities by name: CLI11's ranges let NaN through
// (no comparison with it is true), and an option's value, unlike a file's, has no reader to check it.
TEST(HostileInput, NonFiniteNumbersOnTheCommandLineAreUsageErrors) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  auto trace = dir.write("t/rank0.json", trace_with_kernel("ncclKernel_AllReduce"));
  const std::string study = quoted(dir.path()), out = quoted(dir.path() / "out");
  const std::vector<std::string> commands{
      "report -q " + study + " -o " + out + " --global-batch-size ",
      "report -q " + study + " -o " + out + " --batch-per-gpu ",
      "report -q " + study + " -o " + out + " --min-efficiency ",
      "report -q " + study + " -o " + out + " --carbon-intensity ",
      "serve -q --port 0 " + study + " --poll ",
      "trace " + quoted(trace) + " --peak-tflops ",
      "trace " + quoted(trace) + " --peak-tbps ",
      "trace " + quoted(trace) + " --link-gbps ",
      "run -q -o " + out + " --global-batch-size ",
      "run -q -o " + out + " --samples-per-epoch ",
      "run -q -o " + out + " --interval ",
      "run -q -o " + out + " --flush ",
      "run -q -o " + out + " --kill-after ",
  };
  std::size_t checked = 0;
  for (const auto& command : commands)
    for (const char* value : {"nan", "NaN", "inf", "-inf"}) {
      const std::string line = command + value + (command.rfind("run ", 0) == 0 ? " -- true" : "");
      SCOPED_TRACE(line);
      auto r = run_scalelens(line);
      EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
      EXPECT_NE(r.err.find(std::string("not a finite number: ") + value), std::string::npos) << r.err;
      ++checked;
    }
  EXPECT_EQ(checked, 52u);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));  // nothing ran
}

// The analysis options keep one table of rules with the Python API (analysis/option_rules.hpp):
// --warmup-epochs was capped at 1,000,000 here and nowhere in Python. Each of report, serve and
// compare refuses a value out of its rule, the flag named, before it reads anything.
TEST(HostileInput, AnalysisOptionsOutOfTheirRulesAreUsageErrorsNamingTheFlag) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  const std::string study = quoted(dir.path()), out = quoted(dir.path() / "out");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"report -q " + study + " -o " + out + " --warmup-epochs 1000001",
       "--warmup-epochs: must be a number of epochs from 0 to 1000000, not 1000001"},
      {"report -q " + study + " -o " + out + " --warmup-epochs=-1", "--warmup-epochs: must be a number of epochs from 0 to 1000000, not -1"},
      {"report -q " + study + " -o " + out + " --warmup-steps 1099511627776",
       "--warmup-steps: must be a number of steps from 0 to 1000000, not 1099511627776"},
      {"report -q " + study + " -o " + out + " --baseline-gpus 0", "--baseline-gpus: must be a GPU count from 1 to 16777216, not 0"},
      {"report -q " + study + " -o " + out + " --carbon-intensity=-1",
       "--carbon-intensity: must be grams of CO2e per kWh from 0 to 100000, not -1"},
      {"report -q " + study + " -o " + out + " --min-efficiency nan", "--min-efficiency: not a finite number: nan"},
      {"report -q " + study + " -o " + out + " --baseline fastest", "--baseline: must be 'per-label' or 'common', not 'fastest'"},
      {"report -q " + study + " -o " + out + " --scaling both", "--scaling: must be 'auto', 'strong' or 'weak', not 'both'"},
      {"report -q " + study + " -o " + out + " --objective cost", "--objective: must be 'time', 'energy' or 'edp', not 'cost'"},
      {"serve -q --port 0 " + study + " --warmup-epochs 5000000", "--warmup-epochs: must be a number of epochs from 0 to 1000000, not 5000000"},
      {"serve -q --port 0 " + study + " --scaling both", "--scaling: must be 'auto', 'strong' or 'weak', not 'both'"},
      {"compare -q " + study + " " + study + " --warmup-epochs=-2", "--warmup-epochs: must be a number of epochs from 0 to 1000000, not -2"},
  };
  for (const auto& [line, said] : cases) {
    SCOPED_TRACE(line);
    auto r = run_scalelens(line);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));  // nothing ran
  // Within the rules, the report is written.
  auto ok = run_scalelens("report -q " + study + " -o " + out + " --warmup-epochs 1000000 --baseline-gpus 1 --scaling strong");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// A batch or epoch size on the command line keeps the rule a manifest's keeps (model/limits.hpp), so
// `run` never writes a scalelens.json that `report` then refuses.
TEST(HostileInput, SampleCountsOnTheCommandLineKeepTheManifestsRule) {
  ScratchDir dir;
  write_run(dir, "a", "ddp", 1, 10);
  const std::string study = quoted(dir.path()), out = quoted(dir.path() / "out");
  const std::vector<std::string> commands{
      "report -q " + study + " -o " + out + " --global-batch-size ",
      "report -q " + study + " -o " + out + " --batch-per-gpu ",
      "run -q -o " + out + " --global-batch-size ",
      "run -q -o " + out + " --samples-per-epoch ",
  };
  for (const auto& command : commands) {
    for (const char* value : {"0", "-3", "2e15", "1e-300"}) {
      const std::string line = command + value + (command.rfind("run ", 0) == 0 ? " -- true" : "");
      SCOPED_TRACE(line);
      auto r = run_scalelens(line);
      EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
      EXPECT_NE(r.err.find(std::string("not a number of samples from 1e-07 to 1e+15: ") + value), std::string::npos) << r.err;
    }
    // The largest count a manifest takes, and a fraction of a sample (a batch averaged over steps), pass.
    if (command.rfind("report ", 0) == 0)
      for (const char* value : {"1e15", "0.5"}) {
        SCOPED_TRACE(command + value);
        EXPECT_EQ(run_scalelens(command + value).exit_code, 0);
      }
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "ddp"));
}

// What `run` is told of the job keeps the manifest's limits, and a GPU source it cannot name is
// refused before the command starts (a misspelt one ran the whole job without GPU samples).
TEST(HostileInput, RunRefusesCountsAndSourcesBeforeTheJobStarts) {
  ScratchDir dir;
  const std::string out = quoted(dir.path() / "out");
  const std::filesystem::path ran = dir.path() / "ran";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--world-size 20000000", "--world-size: Value 20000000 not in range 1 to 10000000"},
      {"--world-size 0", "--world-size: Value 0 not in range 1 to 10000000"},
      {"--nodes 2000000", "--nodes: Value 2000000 not in range 1 to 1000000"},
      {"--gpus-per-node 5000", "--gpus-per-node: Value 5000 not in range 1 to 4096"},
      {"--gpu-source nvlm", "--gpu-source: not one of auto, nvml, amdsmi, none, replay:FILE: nvlm"},
      {"--gpu-source replay:/no/such.csv", "--gpu-source: no such file: /no/such.csv"},
  };
  for (const auto& [option, message] : cases) {
    SCOPED_TRACE(option);
    auto r = run_scalelens("run -q --study " + out + " " + option + " -- touch " + quoted(ran));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(ran));  // no command ran
  // A source named that cannot open: the job runs, and the reason is said when it starts.
  dir.write("not-a-recording.csv", "hello\n");
  auto replay = run_scalelens("run -q --study " + out + " --run-id replay --gpu-source replay:" + quoted(dir.path() / "not-a-recording.csv") +
                              " -- true");
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_NE(replay.err.find("warning: --gpu-source replay:"), std::string::npos) << replay.err;
  EXPECT_NE(replay.err.find("; GPUs are not sampled"), std::string::npos) << replay.err;
  // A launcher's count beyond any machine: the job runs, its world size is left unknown, and it says so.
  dir.write("bin/mpirun", "#!/bin/sh\nexit 0\n");
  std::filesystem::permissions(dir.path() / "bin/mpirun", std::filesystem::perms::owner_all);
  auto r = run_scalelens("run -q --study " + out + " --run-id big -- " + quoted(dir.path() / "bin/mpirun") + " -n 4294967296 ./x");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the command's mpirun -n 4294967296 is beyond any machine (at most 10000000); the run's "
                       "world size is left unknown (give --world-size)"),
            std::string::npos)
      << r.err;
  const std::string manifest = scalelens::read_file(dir.path() / "out/big/scalelens.json").value();
  EXPECT_EQ(manifest.find("\"world_size\""), std::string::npos) << manifest;
}

TEST(HostileInput, PatternStillSearchesAnywhereInTheRelativePath) {
  ScratchDir dir;
  write_run(dir, "ddp-1", "ddp", 1, 10);
  write_run(dir, "ddp-2", "ddp", 2, 6);
  write_run(dir, "fsdp-2", "fsdp", 2, 5);
  auto all = report_figures(dir.path());
  auto only_ddp = report_figures(dir.path(), "--pattern '^ddp-\\d/'");
  ASSERT_EQ(all.size(), 3u);
  ASSERT_EQ(only_ddp.size(), 2u);
  EXPECT_EQ(only_ddp["ddp/1"], all["ddp/1"]);
  EXPECT_EQ(only_ddp["ddp/2"], all["ddp/2"]);
}

namespace {

const std::string kBom = "\xEF\xBB\xBF";

// One study with a file of every format the report reads, as each tool writes it.
void write_every_format(const ScratchDir& dir) {
  write_run(dir, "runs/ddp-1", "ddp", 1, 10);
  write_run(dir, "runs/ddp-2", "ddp", 2, 6);
  dir.write("runs/ddp-2/ranks/0.json", R"({"schema": "scalelens.rank/1", "rank": 0, "host": "n1", "local_rank": 0,
"devices": [0], "start_ns": 0, "end_ns": 18000000000, "exit_status": 0})");
  dir.write("runs/ddp-2/nodes/n1/gpu.csv",
            "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
            "0,0,GPU-a,50,,,100,,,\n9000000000,0,GPU-a,70,,,200,,,\n18000000000,0,GPU-a,90,,,300,,,\n");
  dir.write("runs/ddp-2/traces/rank0.json", trace_with_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 0));
  dir.write("runs/ddp-1/nodes/n2/nvsmi.csv",
            "timestamp, index, name, uuid, utilization.gpu [%], power.draw [W]\n"
            "2024/01/02 03:04:05.000, 0, NVIDIA A100-SXM4-80GB, GPU-b, 84 %, 535.56 W\n"
            "2024/01/02 03:04:06.000, 0, NVIDIA A100-SXM4-80GB, GPU-b, 80 %, 500.00 W\n");
  dir.write("mlperf/result_0.txt",
            ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1000, \"event_type\": \"INTERVAL_START\", \"key\": \"run_start\", \"value\": null, \"metadata\": {}}\n"
            ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1000, \"event_type\": \"POINT_IN_TIME\", \"key\": \"number_of_nodes\", \"value\": 2, \"metadata\": {}}\n"
            ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1000, \"event_type\": \"POINT_IN_TIME\", \"key\": \"accelerators_per_node\", \"value\": 4, \"metadata\": {}}\n"
            ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1000, \"event_type\": \"INTERVAL_START\", \"key\": \"epoch_start\", \"value\": null, \"metadata\": {\"epoch_num\": 1}}\n"
            ":::MLLOG {\"namespace\": \"\", \"time_ms\": 3000, \"event_type\": \"INTERVAL_END\", \"key\": \"epoch_stop\", \"value\": null, \"metadata\": {\"epoch_num\": 1}}\n"
            ":::MLLOG {\"namespace\": \"\", \"time_ms\": 3000, \"event_type\": \"INTERVAL_START\", \"key\": \"epoch_start\", \"value\": null, \"metadata\": {\"epoch_num\": 2}}\n"
            ":::MLLOG {\"namespace\": \"\", \"time_ms\": 4500, \"event_type\": \"INTERVAL_END\", \"key\": \"epoch_stop\", \"value\": null, \"metadata\": {\"epoch_num\": 2}}\n"
            ":::MLLOG {\"namespace\": \"\", \"time_ms\": 4600, \"event_type\": \"INTERVAL_END\", \"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n");
  dir.write("itwinai/scalelens.json", R"({"world_size": 4})");
  dir.write("itwinai/scalability-metrics/epoch-time/epochtime_horovod_1N.csv",
            "epoch_id,time,name,nodes\n1,12.5,horovod,1\n2,10.25,horovod,1\n3,10.75,horovod,1\n");
}

std::string with_bom_everywhere(const std::filesystem::path& root) {
  std::string touched;
  for (auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::string text = slurp(e.path());
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << kBom << text;
    touched += e.path().filename().string() + " ";
  }
  return touched;
}

}  // namespace

// Excel and PowerShell start CSV and JSON with a byte-order mark; an epochs.csv with one lost all
// its epochs. Every reader now sees the same figures as without it, and says nothing about it.
TEST(HostileInput, ByteOrderMarkChangesNoFigureInAnyReader) {
  ScratchDir dir, out;
  write_every_format(dir);
  const std::string cmd = "report --format json -q -o " + quoted(out.path()) + " " + quoted(dir.path());
  auto plain = run_scalelens(cmd, "SCALELENS_NO_CACHE=1");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto before = figures(plain.out);
  // ddp/1: epochs 10 s each, first left out as warm-up → 10 s; mlperf 8 GPUs: epoch 2 = 1.5 s;
  // horovod from itwinai: epochs 2 and 3 → (10.25 + 10.75) / 2 = 10.5 s.
  ASSERT_EQ(before.size(), 4u) << plain.out;
  EXPECT_NE(before["ddp/1"].find("\"mean\":10"), std::string::npos) << before["ddp/1"];
  EXPECT_NE(before["horovod/4"].find("\"mean\":10.5"), std::string::npos) << before["horovod/4"];
  EXPECT_NE(plain.out.find("\"computation_score\""), std::string::npos);

  const std::string touched = with_bom_everywhere(dir.path());
  EXPECT_NE(touched.find("epochs.csv"), std::string::npos);
  auto bom = run_scalelens(cmd, "SCALELENS_NO_CACHE=1");
  ASSERT_EQ(bom.exit_code, 0) << bom.err;
  // Same configurations, figures, runs and warnings: the whole summary is the same document.
  EXPECT_EQ(bom.out, plain.out);
}

TEST(HostileInput, ByteOrderMarkInPlainAndGzipTracesIsSkipped) {
  ScratchDir dir;
  dir.write("plain/rank0.json", kBom + trace_with_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 0));
  dir.write("gz/rank1.json", kBom + trace_with_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 1));
  ASSERT_EQ(run_command("gzip -n " + quoted(dir.path() / "gz/rank1.json")).exit_code, 0);
  auto r = run_scalelens("trace --no-cache --format json " + quoted(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  ASSERT_EQ(doc["ranks"].get_array().size(), 2u) << r.out;
  for (auto rank : doc["ranks"].get_array()) {
    EXPECT_DOUBLE_EQ(double(rank["comm_us"]), 40.0);
    EXPECT_DOUBLE_EQ(double(rank["overlap_us"]), 20.0);
  }
  EXPECT_EQ(doc["warnings"].get_array().size(), 0u) << r.out;
}

namespace {

struct Measured {
  int exit_code = -1;
  std::string out, err;
  long max_rss_kb = 0;  // the child's peak resident memory (getrusage via wait4)
};

// The real binary as a child of this process, so that wait4 gives its own peak memory.
Measured run_measured(const std::vector<std::string>& args) {
  ScratchDir tmp;
  const auto out_path = tmp / "out", err_path = tmp / "err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> all{SCALELENS_BIN};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  Measured m;
  pid_t pid = 0;
  if (posix_spawn(&pid, SCALELENS_BIN, &fa, nullptr, argv.data(), environ) != 0) return m;
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  struct rusage ru {};
  ::wait4(pid, &status, 0, &ru);
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  m.max_rss_kb = ru.ru_maxrss;
  m.out = slurp(out_path);
  m.err = slurp(err_path);
  return m;
}

void gzip_file(const std::filesystem::path& p) { ASSERT_EQ(run_command("gzip -n -f " + quoted(p)).exit_code, 0); }

// The gzip trailer's last field (ISIZE, the inflated size mod 2^32) set to `isize`.
void patch_isize(const std::filesystem::path& gz, std::uint32_t isize) {
  std::string bytes = slurp(gz);
  for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<char>((isize >> (8 * i)) & 0xff);
  std::ofstream(gz, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

// A small .gz whose trailer claims 4 GiB made every reader thread allocate that much. Now memory
// follows what is inflated, the lie is caught (zlib's length check) and the file named.
TEST(HostileInput, GzipTrailerClaimingGigabytesCostsNoMemoryAndIsNamed) {
  ScratchDir dir, out;
  write_run(dir, "ddp-1", "ddp", 1, 10);
  write_run(dir, "ddp-2", "ddp", 2, 6);
  dir.write("ddp-2/traces/rank0.json", trace_with_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 0));
  gzip_file(dir / "ddp-2/traces/rank0.json");
  const std::vector<std::string> report{"report", "--format", "json", "-q", "-o", out.path().string(), dir.path().string()};
  setenv("SCALELENS_NO_CACHE", "1", 1);
  auto normal = run_measured(report);
  ASSERT_EQ(normal.exit_code, 0) << normal.err;

  // Liars beside good data: a trace and an nvidia-smi log, each gzip with ISIZE = 0xFFFFFFF0.
  dir.write("ddp-1/traces/rank0.json", trace_with_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 0));
  gzip_file(dir / "ddp-1/traces/rank0.json");
  patch_isize(dir / "ddp-1/traces/rank0.json.gz", 0xFFFFFFF0u);
  dir.write("ddp-1/nodes/n1/nvsmi.csv", "timestamp, index, name, uuid, utilization.gpu [%], power.draw [W]\n"
                                        "2024/01/02 03:04:05.000, 0, NVIDIA A100-SXM4-80GB, GPU-b, 84 %, 535.56 W\n");
  gzip_file(dir / "ddp-1/nodes/n1/nvsmi.csv");
  patch_isize(dir / "ddp-1/nodes/n1/nvsmi.csv.gz", 0xFFFFFFF0u);
  auto hostile = run_measured(report);
  ASSERT_EQ(hostile.exit_code, 0) << hostile.err;
  EXPECT_NE(hostile.out.find("rank0.json.gz"), std::string::npos) << hostile.out;
  EXPECT_NE(hostile.out.find("corrupt gzip data (the trailer's CRC-32 or length does not match the data)"), std::string::npos) << hostile.out;
  EXPECT_EQ(figures(hostile.out), figures(normal.out));
  // A few tens of MB at most above the normal run (it was 4 GiB per file and thread).
  EXPECT_LT(hostile.max_rss_kb, normal.max_rss_kb + 40 * 1024) << normal.max_rss_kb << " kB normally";

  auto trace = run_measured({"trace", "--no-cache", (dir / "ddp-1/traces/rank0.json.gz").string()});
  EXPECT_EQ(trace.exit_code, 2);
  EXPECT_NE(trace.err.find("rank0.json.gz: corrupt gzip data (the trailer's CRC-32 or length does not match the data)"), std::string::npos) << trace.err;
  EXPECT_LT(trace.max_rss_kb, normal.max_rss_kb + 40 * 1024);
  unsetenv("SCALELENS_NO_CACHE");
}

// A true bomb (little gzip, much data) is read up to --max-inflated and refused by name past it.
TEST(HostileInput, GzipInflatingPastMaxInflatedIsRefusedByName) {
  ScratchDir dir, out;
  write_run(dir, "ddp-1", "ddp", 1, 10);
  write_run(dir, "ddp-2", "ddp", 2, 6);
  // A valid trace padded with 8 MiB of blanks: ~8 KiB of gzip.
  dir.write("ddp-1/traces/rank0.json", trace_with_kernel("gemm2", 0) + std::string(8 << 20, ' '));
  gzip_file(dir / "ddp-1/traces/rank0.json");
  auto small = run_scalelens("trace --no-cache --max-inflated 1MiB " + quoted(dir / "ddp-1/traces/rank0.json.gz"));
  EXPECT_EQ(small.exit_code, 2);
  EXPECT_NE(small.err.find("rank0.json.gz: inflates to more than --max-inflated (1 MiB)"), std::string::npos) << small.err;
  auto enough = run_scalelens("trace --no-cache --max-inflated 16M " + quoted(dir / "ddp-1/traces/rank0.json.gz"));
  EXPECT_EQ(enough.exit_code, 0) << enough.err;
  // Sizes that are none (CLI11's own parser took "-5" and 1e23 bytes, wrapped around) are usage errors.
  for (const char* size : {"lots", "-5", "99999999999999999999999", "0", "5XB", "2EiB"}) {
    auto bad_size = run_scalelens("trace --max-inflated " + std::string(size) + " " + quoted(dir / "ddp-1/traces/rank0.json.gz"));
    EXPECT_EQ(bad_size.exit_code, 1) << size;
    EXPECT_NE(bad_size.err.find("not a size from 1 byte to 1 EiB (as 8GiB, 500M or bytes): " + std::string(size)), std::string::npos)
        << bad_size.err;
  }
  auto decimal = run_scalelens("trace --no-cache --max-inflated 0.5mib " + quoted(dir / "ddp-1/traces/rank0.json.gz"));
  EXPECT_NE(decimal.err.find("inflates to more than --max-inflated (524288 bytes)"), std::string::npos) << decimal.err;

  const std::string report = "report --format json -q -o " + quoted(out.path()) + " " + quoted(dir.path());
  auto refused = run_scalelens(report + " --max-inflated 1MiB", "SCALELENS_NO_CACHE=1");
  ASSERT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_NE(refused.out.find("inflates to more than --max-inflated (1 MiB)"), std::string::npos) << refused.out;
  std::filesystem::remove(dir / "ddp-1/traces/rank0.json.gz");
  auto without = run_scalelens(report, "SCALELENS_NO_CACHE=1");
  EXPECT_EQ(figures(refused.out), figures(without.out));
}

namespace {

// Runs the binary as an ordinary user when the tests run as root: root reads a chmod 000 folder.
std::string as_unprivileged() {
  if (::geteuid() != 0) return {};
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) return "none";
  return "setpriv --reuid=65534 --regid=65534 --clear-groups ";
}

}  // namespace

// An unreadable folder is named, the walk goes on with its siblings, and the report counts them.
TEST(HostileInput, UnreadableFolderIsNamedAndCountedAndSiblingsAreRead) {
  const std::string prefix = as_unprivileged();
  if (prefix == "none") GTEST_SKIP() << "running as root without setpriv: root reads any folder";
  ScratchDir dir, out;
  std::filesystem::permissions(out.path(), std::filesystem::perms::all);
  write_run(dir, "a-ddp-1", "ddp", 1, 10);
  write_run(dir, "b-locked/ddp-4", "ddp", 4, 4);
  write_run(dir, "c-ddp-2", "ddp", 2, 6);
  const std::string report = "report --format json -q -o " + quoted(out.path()) + " " + quoted(dir.path());
  std::filesystem::permissions(dir / "b-locked", std::filesystem::perms::none);
  auto r = run_command(prefix + " " SCALELENS_BIN " " + report + " </dev/null");
  std::filesystem::permissions(dir / "b-locked", std::filesystem::perms::owner_all);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find((dir / "b-locked").string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot list folder: Permission denied"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 folder under this input could not be read"), std::string::npos) << r.out;
  // The siblings after it (c-ddp-2) are still read, with the figures they have without the locked folder.
  std::filesystem::remove_all(dir / "b-locked");
  auto without = run_command(prefix + " " SCALELENS_BIN " " + report + " </dev/null");
  auto got = figures(r.out);
  EXPECT_EQ(got.size(), 2u);
  EXPECT_EQ(got, figures(without.out));
}

// A run's scalelens.json that cannot be read (this user may not) or is cut mid-object was told as
// if there were none: its files "no scalelens.json above this file", or "add world_size to a
// scalelens.json". The file is named with the real reason, and nothing says it is missing.
TEST(HostileInput, AnUnreadableOrInvalidManifestIsNamedWithItsReason) {
  ScratchDir dir, out;
  std::filesystem::permissions(out.path(), std::filesystem::perms::all);
  write_run(dir, "ddp-1", "ddp", 1, 10);
  write_run(dir, "ddp-4", "ddp", 4, 4);
  dir.write("ddp-4/scalelens.json", R"({"schema": "scalelens.run/1", "run_id": "ddp-4", "label": "ddp", "world_size": 4,)");
  const std::string report = "report --format json -q -o " + quoted(out.path()) + " " + quoted(dir.path());
  auto cut = run_scalelens(report + " --no-cache");
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_NE(cut.out.find("not a valid scalelens.json"), std::string::npos) << cut.out;
  EXPECT_NE(cut.out.find((dir / "ddp-4/scalelens.json").string()), std::string::npos) << cut.out;
  EXPECT_EQ(cut.out.find("unknown-world-size"), std::string::npos) << cut.out;
  EXPECT_EQ(cut.out.find("no-manifest"), std::string::npos) << cut.out;
  EXPECT_EQ(figures(cut.out).size(), 1u) << cut.out;

  const std::string prefix = as_unprivileged();
  if (prefix == "none") GTEST_SKIP() << "running as root without setpriv: root reads any file";
  write_run(dir, "ddp-4", "ddp", 4, 4);
  std::filesystem::permissions(dir / "ddp-4/scalelens.json", std::filesystem::perms::none);
  auto locked = run_command(prefix + " " SCALELENS_BIN " " + report + " --no-cache </dev/null");
  std::filesystem::permissions(dir / "ddp-4/scalelens.json", std::filesystem::perms::owner_all);
  ASSERT_EQ(locked.exit_code, 0) << locked.err;
  EXPECT_NE(locked.out.find("cannot be read (cannot open: Permission denied); the run is left out"), std::string::npos)
      << locked.out;
  EXPECT_NE(locked.out.find((dir / "ddp-4/scalelens.json").string()), std::string::npos) << locked.out;
  EXPECT_EQ(locked.out.find("no-manifest"), std::string::npos) << locked.out;
  EXPECT_EQ(locked.out.find("unknown-world-size"), std::string::npos) << locked.out;
  EXPECT_EQ(figures(locked.out).size(), 1u) << locked.out;
}

// An input given by name behind a folder this user cannot enter was "no such file or folder":
// it is named with the real reason, and the other input is read.
TEST(HostileInput, InputBehindAClosedFolderIsNamedWithTheReason) {
  const std::string prefix = as_unprivileged();
  if (prefix == "none") GTEST_SKIP() << "running as root without setpriv: root reaches any folder";
  ScratchDir dir, out;
  std::filesystem::permissions(out.path(), std::filesystem::perms::all);
  write_run(dir, "locked/ddp-1", "ddp", 1, 10);
  write_run(dir, "open/ddp-2", "ddp", 2, 6);
  std::filesystem::permissions(dir / "locked", std::filesystem::perms::none);
  auto r = run_command(prefix + " " SCALELENS_BIN " report --format json -q -o " + quoted(out.path()) + " " +
                       quoted(dir / "locked/ddp-1") + " " + quoted(dir / "open/ddp-2") + " </dev/null");
  std::filesystem::permissions(dir / "locked", std::filesystem::perms::owner_all);
  const std::string said = r.out + r.err;
  EXPECT_NE(said.find((dir / "locked/ddp-1").string() + ": cannot be reached: Permission denied; left out"), std::string::npos)
      << said;
  EXPECT_NE(said.find("unreadable-input"), std::string::npos) << said;
  EXPECT_EQ(said.find("no such file or folder"), std::string::npos) << said;
  EXPECT_EQ(figures(r.out).size(), 1u) << said;
}

// A study deeper than the open-file limit: the walk holds one folder open at a time, so every
// run is found (recursive_directory_iterator failed with EMFILE and lost every run after it).
TEST(HostileInput, StudyDeeperThanTheOpenFileLimitIsReadWhole) {
  ScratchDir dir, out;
  std::string deep;
  for (int i = 0; i < 80; ++i) deep += "d" + std::to_string(i) + "/";
  write_run(dir, "a/" + deep + "ddp-1", "ddp", 1, 10);
  write_run(dir, "z/" + deep + "ddp-2", "ddp", 2, 6);
  const std::string report = "report --format json -q --threads 1 -o " + quoted(out.path()) + " " + quoted(dir.path());
  auto unlimited = run_scalelens(report);
  ASSERT_EQ(unlimited.exit_code, 0) << unlimited.err;
  auto limited = run_command("bash -c 'ulimit -n 32 && exec " SCALELENS_BIN " " + report + "'");
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  auto got = figures(limited.out);
  EXPECT_EQ(got.size(), 2u) << limited.out.substr(0, 3000);
  EXPECT_EQ(got, figures(unlimited.out));
  EXPECT_EQ(limited.out.find("could not be read"), std::string::npos);
}

// A copy of a rank's trace beside it (or a rerun into the same folder) was counted twice.
TEST(HostileInput, SecondTraceOfARankIsNamedAndCountedOnce) {
  ScratchDir dir, out;
  write_run(dir, "ddp-1", "ddp", 1, 10);
  write_run(dir, "ddp-2", "ddp", 2, 6);
  // Rank 0 has 40 µs of exposed-free overlap; rank 1's NCCL kernel does not overlap (comm 40, overlap 0).
  dir.write("ddp-2/traces/rank0.json", trace_with_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 0));
  std::string rank1 = trace_with_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 1);
  rank1.replace(rank1.find("\"ts\": 30, \"dur\": 40"), 19, "\"ts\": 50, \"dur\": 40");
  dir.write("ddp-2/traces/rank1.json", rank1);
  const std::string report = "report --format json -q -o " + quoted(out.path()) + " " + quoted(dir.path());
  auto once = run_scalelens(report, "SCALELENS_NO_CACHE=1");
  ASSERT_EQ(once.exit_code, 0) << once.err;
  const auto expected = figures(once.out);
  auto score = [](const std::string& json) {
    auto at = json.find("\"computation_score\":", json.find("\"world_size\":2"));
    return json.substr(at, 40);
  };
  // comp 80, exposed comm (40 − 20) + 40 = 60: score 80 / 140.
  EXPECT_NE(score(once.out).find("0.5714285714285714"), std::string::npos) << score(once.out);

  std::filesystem::copy_file(dir / "ddp-2/traces/rank0.json", dir / "ddp-2/traces/rank0 (copy).json");
  auto copied = run_scalelens(report, "SCALELENS_NO_CACHE=1");
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  EXPECT_NE(copied.out.find("\"code\":\"duplicate-trace\""), std::string::npos) << copied.out;
  EXPECT_NE(copied.out.find("a second trace of rank 0"), std::string::npos) << copied.out;
  EXPECT_EQ(figures(copied.out), expected);
  EXPECT_EQ(score(copied.out), score(once.out));

  auto trace = run_scalelens("trace --no-cache --format json " + quoted(dir / "ddp-2/traces"));
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(trace.out).get(doc));
  EXPECT_EQ(doc["ranks"].get_array().size(), 2u) << trace.out;
  EXPECT_NE(trace.out.find("a second trace of rank 0"), std::string::npos);
}

// schedule(repeat=2) writes one trace per profiling window and rank: other step numbers, so both
// windows count (only a trace over the same steps is a copy).
TEST(HostileInput, TwoProfilingWindowsOfARankBothCount) {
  ScratchDir dir;
  std::string window_b = trace_with_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 0);
  window_b.replace(window_b.find("ProfilerStep#1"), 14, "ProfilerStep#9");
  dir.write("traces/rank0.a.json", trace_with_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 0));
  dir.write("traces/rank0.b.json", window_b);
  auto trace = run_scalelens("trace --no-cache --format json " + quoted(dir / "traces"));
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(trace.out).get(doc));
  EXPECT_EQ(doc["ranks"].get_array().size(), 2u) << trace.out;
  EXPECT_EQ(trace.out.find("duplicate-trace"), std::string::npos) << trace.out;

  // A third file repeating window b's steps is a copy of it, and only it is left out.
  dir.write("traces/rank0.b (copy).json", window_b);
  auto copied = run_scalelens("trace --no-cache --format json " + quoted(dir / "traces"));
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  ASSERT_FALSE(parser.parse(copied.out).get(doc));
  EXPECT_EQ(doc["ranks"].get_array().size(), 2u) << copied.out;
  EXPECT_NE(copied.out.find("over the same steps"), std::string::npos) << copied.out;
}

// A label, run id or file name with ESC or a newline was printed raw: an input could clear the
// screen or forge a line of the report. The terminal sees escapes; JSON keeps the text.
TEST(HostileInput, ControlCharactersAreEscapedOnTheTerminalAndKeptInJson) {
  ScratchDir dir, out;
  const std::string evil = "ddp\x1b[2J\nwarning: forged\x07";
  write_run(dir, "a", "ddp", 1, 10);
  write_run(dir, "b", "ddp", 2, 6);
  dir.write("c/scalelens.json", "{\"label\": \"ddp\\u001b[2J\\nwarning: forged\\u0007\", \"world_size\": 4, \"samples_per_epoch\": 1000, "
                                "\"start_ns\": 0, \"end_ns\": 9000000000}");
  dir.write("c/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,3000000000\n0,1,3000000000,6000000000\n0,2,6000000000,9000000000\n");
  // A file whose name holds an escape sequence and a newline, with a bad line to be warned about.
  dir.write("b/nodes/h\x1b[31m\nx/gpu.csv", "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
                                             "0,0,,50,,,100,,,\n1000000000,0,,NaN,,,100,,,\n");
  auto table = run_scalelens("report -q -o " + quoted(out.path()) + " " + quoted(dir.path()));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.find('\x1b'), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find('\x07'), std::string::npos);
  EXPECT_NE(table.out.find("ddp\\x1b[2J\\nwarning: forged\\x07"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("h\\x1b[31m\\nx/gpu.csv:3"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("\nwarning: forged"), std::string::npos);

  auto json = run_scalelens("report --format json -q -o " + quoted(out.path()) + " " + quoted(dir.path()));
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_EQ(json.err.find('\x1b'), std::string::npos) << json.err;  // warnings on stderr are escaped too
  auto got = figures(json.out);
  EXPECT_EQ(got.count(evil + "/4"), 1u) << json.out.substr(0, 2000);  // the label, intact
  EXPECT_EQ(got.count("ddp/2"), 1u);

  auto trace_dir = dir / "t";
  dir.write("t/rank0\x1b]0;owned\x07.json", trace_with_kernel("ncclKernel_AllReduce\\u001b[2J", 0));
  auto trace = run_scalelens("trace --no-cache --kernels 5 " + quoted(trace_dir));
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_EQ((trace.out + trace.err).find('\x1b'), std::string::npos) << trace.out;
  EXPECT_NE(trace.out.find("rank0\\x1b]0;owned\\x07.json"), std::string::npos) << trace.out;
}

// Numbers at and past the edges (int64 bounds, 1e308, "1e", hex, "+-5", thousands separators) are
// read or refused by line, never wrapped: the run's other lines and the other runs keep their figures.
TEST(HostileInput, ExtremeNumbersAreReadOrRefusedByLine) {
  ScratchDir dir, out;
  write_run(dir, "ddp-1", "ddp", 1, 10);
  write_run(dir, "ddp-2", "ddp", 2, 6);
  const std::string report = "report --format json -q -o " + quoted(out.path()) + " " + quoted(dir.path());
  auto clean = run_scalelens(report, "SCALELENS_NO_CACHE=1");
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  std::string csv = slurp(dir / "ddp-2/epochs.csv");
  csv += "0,3,9223372036854775807,-9223372036854775808\n"   // end − start would overflow int64
         "0,4,-9223372036854775808,9223372036854775807\n"
         "0,5,0,1e308\n"
         "0,6,0,1e\n"
         "0,7,0x10,0x20\n"
         "0,8,+-5,7\n"
         "0,9,\"1,000\",\"2,000\"\n"
         "9223372036854775808,10,0,1\n";
  dir.write("ddp-2/epochs.csv", csv);
  // Kineto: a ts at the edge of int64 µs with a duration that would carry past it.
  std::string edge = trace_with_kernel("gemm2", 0);
  edge.replace(edge.find("\"ts\": 10, \"dur\": 40"), 19, "\"ts\": 9223372036854775.999, \"dur\": 9223372036854775");
  dir.write("ddp-1/traces/rank0.json", edge);
  auto hostile = run_scalelens(report, "SCALELENS_NO_CACHE=1");
  ASSERT_EQ(hostile.exit_code, 0) << hostile.err;
  EXPECT_EQ(figures(hostile.out), figures(clean.out));
  EXPECT_NE(hostile.out.find("too large to be a time"), std::string::npos) << hostile.out.substr(hostile.out.find("\"warnings\""));
  // Each bad line is named: the folded bad-lines warning counts all eight.
  EXPECT_NE(hostile.out.find("8 lines"), std::string::npos) << hostile.out.substr(hostile.out.find("\"warnings\""));
}

// `scalelens trace /dev/zero` read until memory ran out and died of std::bad_alloc; a pipe that
// never ends did the same. A device is refused by name, a stream past --max-inflated too. A pipe
// is opened once: opened and closed unread first (the cache's key, the map attempt), its writer
// died of SIGPIPE and the read waited for a writer for ever (under `timeout`, exit 124).
TEST(HostileInput, ADeviceOrAnEndlessStreamIsNoTrace) {
  auto dev = run_scalelens("trace /dev/zero");
  EXPECT_EQ(dev.exit_code, 2);
  EXPECT_NE(dev.err.find("/dev/zero: a character device, not a trace file"), std::string::npos) << dev.err;
  auto endless = run_command("mkfifo zeros && { head -c 3000000 /dev/zero > zeros & } && timeout 60 " SCALELENS_BIN
                             " trace --max-inflated 1M zeros");
  EXPECT_EQ(endless.exit_code, 2);
  EXPECT_NE(endless.err.find("more than 1048576 bytes read and the stream goes on"), std::string::npos) << endless.err;
  // A real trace through a pipe, again and again: each read to its end, none waiting for ever.
  ScratchDir dir;
  const auto trace = dir.write("rank0.json", trace_with_kernel("ncclKernel_AllReduce"));
  for (int i = 0; i < 10; ++i) {
    auto piped = run_command("mkfifo p && { cat " + quoted(trace) + " > p & } && timeout 60 " SCALELENS_BIN " trace p");
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_NE(piped.out.find("rank"), std::string::npos) << piped.out;
  }
}
