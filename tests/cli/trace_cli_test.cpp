// `scalelens trace` as a user runs it: the real binary, real folders, exit codes from DESIGN.md.
#include <simdjson.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <limits>
#include <string>

#include "support/run_binary.hpp"
#include "support/test_support.hpp"

namespace {
using scalelens::testing::copy_dlrm_traces;
using scalelens::testing::rewrite_times;
using scalelens::testing::ScratchDir;

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

RunResult run(const std::string& args) {
  std::string cmd = std::string(SCALELENS_BIN) + " " + args + " 2>&1";
  RunResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) r.out.append(buf.data(), n);
  int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// Two steps, one compute kernel and one NCCL kernel each, rank 3 of 4.
const char* kSmallTrace = R"json({"schemaVersion": 1, "distributedInfo": {"rank": 3, "world_size": 4},
"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 4, "dur": 2, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 10, "dur": 40, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "ts": 30, "dur": 40, "args": {"stream": 20, "correlation": 2}},
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 100, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 101, "dur": 2, "args": {"correlation": 3}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 110, "dur": 40, "args": {"stream": 7, "correlation": 3}},
 {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": 300}
]})json";

TEST(TraceCli, DlrmPrintsEightRanksAndTheStraggler) {
  SCALELENS_REQUIRE_REALDATA(data);
  auto r = run("trace " + quoted(data / "kineto" / "dlrm-8rank-v100"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (int rank = 0; rank < 8; ++rank)
    EXPECT_NE(r.out.find("worker" + std::to_string(rank) + "_step_12"), std::string::npos) << "rank " << rank << "\n" << r.out;
  // Rank 1's ProfilerStep#10 is the longest (19901 µs against 12509..19313 µs on the others).
  EXPECT_NE(r.out.find("straggler: rank 1"), std::string::npos) << r.out;
}

TEST(TraceCli, JsonFollowsTheTraceSchema) {
  SCALELENS_REQUIRE_REALDATA(data);
  auto r = run("trace --format json " + quoted(data / "kineto" / "dlrm-8rank-v100"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out.substr(0, 500);
  EXPECT_EQ(std::string_view(doc["schema"]), "scalelens.trace/1");
  simdjson::dom::array ranks = doc["ranks"];
  EXPECT_EQ(ranks.size(), 8u);
  for (auto rank : ranks) {
    EXPECT_EQ(std::string_view(rank["step_time_from"]), "profiler_step");  // its GPUs kept up
    for (const char* key : {"rank", "file", "steps", "step_time_us", "comp_us", "comm_us", "overlap_us", "exposed_comm_us",
                            "mem_us", "idle_us", "busy_us", "span_us", "computation_score", "overlap_ratio", "collectives",
                            "comm_wait_us", "comm_transfer_us", "arrived_last", "arrived_first"})
      EXPECT_FALSE(rank[key].error()) << key;
    EXPECT_TRUE(rank["comm_wait_us"].is_number());  // all 8 ranks' collectives matched (by order)
  }
  EXPECT_EQ(std::string_view(doc["collective_matching"]["method"]), "order");
  EXPECT_EQ(simdjson::dom::array(doc["collective_instances"]).size(), 8u);
  EXPECT_FALSE(doc["warnings"].error());
  // --instances bounds the list; the longest transfer comes first.
  auto few = run("trace --format json --instances 3 " + quoted(data / "kineto" / "dlrm-8rank-v100"));
  ASSERT_EQ(few.exit_code, 0) << few.out;
  simdjson::dom::parser p2;
  simdjson::dom::array list = p2.parse(few.out)["collective_instances"];
  ASSERT_EQ(list.size(), 3u);
  EXPECT_GE(double(list.at(0)["transfer_us"]), double(list.at(1)["transfer_us"]));
  // The table says who the others wait for.
  auto table = run("trace " + quoted(data / "kineto" / "dlrm-8rank-v100"));
  EXPECT_NE(table.out.find("collectives matched across ranks (order; 8 calls)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("last to arrive most often: rank 7 (5 of 8 calls)"), std::string::npos) << table.out;
}

TEST(TraceCli, HtaModeAddsHtaFigures) {
  ScratchDir dir;
  auto trace = dir.write("rank3.json", kSmallTrace);
  auto r = run("trace --hta --format json " + quoted(trace));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  auto hta = doc["ranks"].at(0)["hta"];
  ASSERT_FALSE(hta.error()) << r.out;
  // Two steps exist, so HTA keeps only events before the last step's start (ts 100): gemm 10..50 and
  // nccl 30..70. kernel_time = 70 - 10 = 60 µs, compute = 40 µs, overlap = 20 of 40 µs comm = 50 %.
  EXPECT_DOUBLE_EQ(double(hta["kernel_time_us"]), 60.0);
  EXPECT_DOUBLE_EQ(double(hta["compute_us"]), 40.0);
  EXPECT_DOUBLE_EQ(double(hta["overlap_pct"]), 50.0);
}

TEST(TraceCli, BadFileIsNamedAndOtherRanksStillAnalysed) {
  ScratchDir dir;
  dir.write("good.json", kSmallTrace);
  dir.write("cut.json", std::string(kSmallTrace).substr(0, 300));
  auto r = run("trace " + quoted(dir.path() / "good.json") + " " + quoted(dir.path() / "cut.json"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("cut.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("truncated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("good.json"), std::string::npos) << r.out;
}

TEST(TraceCli, NoUsableTraceExitsTwo) {
  ScratchDir dir;
  auto bad = dir.write("cut.json", std::string(kSmallTrace).substr(0, 300));
  EXPECT_EQ(run("trace " + quoted(bad)).exit_code, 2);
  EXPECT_EQ(run("trace " + quoted(dir.path() / "missing.json")).exit_code, 2);
}

TEST(TraceCli, UsageErrorsExitOne) {
  ScratchDir dir;
  auto trace = dir.write("rank3.json", kSmallTrace);
  EXPECT_EQ(run("trace --no-such-option " + quoted(trace)).exit_code, 1);
  EXPECT_EQ(run("trace --comm-kernel-regex '(' " + quoted(trace)).exit_code, 1);
  EXPECT_EQ(run("trace --format xml " + quoted(trace)).exit_code, 1);
  EXPECT_EQ(run("trace").exit_code, 1);
}

TEST(TraceCli, SecondRunReadsTheCacheAndNoCacheParses) {
  ScratchDir dir;
  auto trace = dir.write("rank3.json", kSmallTrace);
  auto cached_of = [](const std::string& out) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(out).get(doc)) return std::string("unparsable: ") + out;
    bool cached = false;
    if (doc["ranks"].at(0)["cached"].get(cached)) return std::string("no cached field: ") + out;
    return std::string(cached ? "true" : "false");
  };
  auto first = run("trace --format json " + quoted(dir.path()));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_EQ(cached_of(first.out), "false");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / ".scalelens-cache")) << "nothing written beside the traces";
  auto second = run("trace --format json " + quoted(dir.path()));
  ASSERT_EQ(second.exit_code, 0) << second.out;
  EXPECT_EQ(cached_of(second.out), "true");
  EXPECT_NE(second.out.find("\"files_cached\": 1"), std::string::npos) << second.out;
  auto fresh = run("trace --no-cache --format json " + quoted(trace));
  EXPECT_EQ(cached_of(fresh.out), "false");
}

TEST(TraceCli, PeakTflopsGivesMfu) {
  ScratchDir dir;
  // One aten::mm of 2e8 bf16 flops in ProfilerStep#1.
  std::string text = kSmallTrace;
  text.insert(text.find("{\"ph\": \"X\", \"cat\": \"cuda_runtime\""),
              R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1, "args": {"flops": 200000000, "Input type": ["c10::BFloat16"]}},
 )");
  auto trace = dir.write("rank3.json", text);
  auto r = run("trace --no-cache --peak-tflops 4 --format json " + quoted(trace));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  auto rank = doc["ranks"].at(0);
  // Step 2 launches 1 kernel against step 1's 2, so both steps count: 200 µs of steps.
  // 2e8 / 200e-6 s = 1e12 FLOP/s = 1 TFLOP/s; MFU = 1 / 4 = 0.25.
  EXPECT_DOUBLE_EQ(double(rank["achieved_tflops"]), 1.0) << r.out;
  EXPECT_DOUBLE_EQ(double(rank["peak_tflops"]), 4.0);
  EXPECT_DOUBLE_EQ(double(rank["mfu"]), 0.25);
  EXPECT_EQ(std::string_view(rank["flops_precision"]), "bf16");
  auto table = run("trace --no-cache --peak-tflops 4 " + quoted(trace));
  EXPECT_NE(table.out.find("MFU 25.0% of 4 TFLOP/s"), std::string::npos) << table.out;
  EXPECT_EQ(run("trace --peak-tflops -1 " + quoted(trace)).exit_code, 1);
}

// The roofline table of the real DLRM traces (record_shapes=True, V100): --ops N rows, the
// JSON's ops per rank with their verdict, and the same again from the cached summaries.
TEST(TraceCli, OpsPrintsTheRooflineTableAndJson) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir cache;
  const std::string common = quoted(data / "kineto" / "dlrm-8rank-v100") + " --cache-dir " + quoted(cache.path());
  for (int pass = 0; pass < 2; ++pass) {  // parsed, then cached
    auto r = run("trace --ops 5 " + common);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("top 5 ops by GPU time against the roofline"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("aten::addmm [[512], [16, 512], [512, 512], [], []]"), std::string::npos) << r.out;
    auto j = run("trace --ops 3 --format json " + common);
    ASSERT_EQ(j.exit_code, 0);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    ASSERT_FALSE(parser.parse(j.out).get(doc)) << j.out;
    for (auto rank : doc["ranks"].get_array()) {
      EXPECT_GT(std::int64_t(rank["shaped_ops"]), 0);
      auto ops = rank["ops"].get_array();
      EXPECT_EQ(ops.size(), 3u);
      for (auto op : ops) {
        EXPECT_GT(double(op["gpu_time_us"]), 0);
        EXPECT_DOUBLE_EQ(double(op["peak_tbps"]), 0.9);  // V100 HBM2
      }
    }
  }
  EXPECT_EQ(run("trace --ops -2 " + common).exit_code, 1);
}

// Bus bandwidth within a node on the real DLRM traces (8 V100 SXM2 listed per trace: NVLink 2);
// telling it to be two nodes of 4 makes the calls inter-node, with the network's peak; an unknown
// network is a usage error that names the known ones.
TEST(TraceCli, LinksWithinAndAcrossNodes) {
  SCALELENS_REQUIRE_REALDATA(data);
  const std::string traces = quoted(data / "kineto" / "dlrm-8rank-v100") + " --no-cache";
  auto one = run("trace " + traces);
  ASSERT_EQ(one.exit_code, 0) << one.out;
  EXPECT_NE(one.out.find("bus bandwidth, intra-node: 8 calls against 150.0 GB/s per direction (NVLink 2 (V100 SXM2))"),
            std::string::npos) << one.out;
  auto two = run("trace --gpus-per-node 4 --network hdr --format json " + traces);
  ASSERT_EQ(two.exit_code, 0) << two.out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(two.out).get(doc)) << two.out;
  EXPECT_EQ(std::int64_t(doc["collective_matching"]["gpus_per_node"]), 4);
  auto links = doc["collective_matching"]["links"].get_array();
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(std::string_view(links.at(0)["scope"]), "inter-node");
  EXPECT_DOUBLE_EQ(double(links.at(0)["peak_gbps"]), 25);
  for (auto i : doc["collective_instances"].get_array()) EXPECT_EQ(std::string_view(i["scope"]), "inter-node");
  auto bad = run("trace --network token-ring " + traces);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("ndr"), std::string::npos) << bad.out;
}

TEST(TraceCli, HelpShowsExamples) {
  auto r = run("trace --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("scalelens trace traces/ --steps"), std::string::npos) << r.out;
}

// `scalelens trace --format json` over a folder: its standard output parsed, and its warnings by code.
struct TraceJson {
  int exit_code = -1;
  std::string out, err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string warnings(std::string_view code) {
    std::string all;
    simdjson::dom::array list;
    if (doc["warnings"].get_array().get(list)) return all;
    for (auto w : list)
      if (std::string_view(w["code"]) == code) all += std::string(std::string_view(w["message"])) + "\n";
    return all;
  }
};
void trace_json(const std::filesystem::path& folder, TraceJson& t) {
  auto r = scalelens::testing::run_scalelens("trace --no-cache --format json " + quoted(folder));
  t.exit_code = r.exit_code;
  t.out = r.out;
  t.err = r.err;
  ASSERT_FALSE(t.parser.parse(t.out).get(t.doc)) << t.out.substr(0, 500) << t.err;
}

// A rank whose profiler schedule began a step later (the real DLRM ranks, rank 4's one step
// renamed #10 -> #11): said, with who profiled what; no straggler row over 7 of the 8 ranks, and
// no collective of rank 4's step 11 matched with the others' step 10.
TEST(TraceCli, RanksThatProfiledDifferentStepsAreSaidAndNotCompared) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  copy_dlrm_traces(data, dir, 4, [](std::string text) {
    const auto at = text.find("\"ProfilerStep#10\"");
    text.replace(at, 17, "\"ProfilerStep#11\"");
    return text;
  });
  TraceJson t;
  trace_json(dir.path(), t);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(simdjson::dom::array(t.doc["ranks"]).size(), 8u);
  const std::string said = t.warnings("misaligned-steps");
  EXPECT_NE(said.find("rank 4: step 11; ranks 0, 1, 2, 3, 5, 6, 7: step 10"), std::string::npos) << t.out;
  EXPECT_NE(said.find("only the 0 steps that every rank profiled are compared"), std::string::npos) << said;
  EXPECT_EQ(simdjson::dom::array(t.doc["stragglers"]["steps"]).size(), 0u) << t.out;
  EXPECT_EQ(simdjson::dom::array(t.doc["collective_instances"]).size(), 0u) << t.out;
  std::string notes;
  for (auto n : simdjson::dom::array(t.doc["collective_matching"]["notes"])) notes += std::string(std::string_view(n)) + "\n";
  EXPECT_NE(notes.find("only rank 4 of its 8 traced ranks has calls in step 11"), std::string::npos) << notes;
  // The real traces as they are: no such warning, the straggler row over all 8 ranks.
  TraceJson real;
  trace_json(data / "kineto" / "dlrm-8rank-v100", real);
  EXPECT_EQ(real.warnings("misaligned-steps"), "");
  EXPECT_EQ(int64_t(real.doc["stragglers"]["steps"].at(0)["ranks"]), 8);
}

// Rank 5's clock 30 s ahead (every ts of the real trace + 3e7 µs): a collective cannot end on one
// rank before another starts it, so nothing is matched, and the rank and offset are named. A
// rerun's rank 0 an hour later beside the first run's ranks 1..7 (no rank shared) is another job,
// told apart before any call is matched (past a minute, a clock that far off reads the same; within
// a collective timeout, 30 min, it would read as the job's late rank).
TEST(TraceCli, CollectivesThatCannotHaveRunTogetherAreNotMatched) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir ahead, rerun;
  copy_dlrm_traces(data, ahead, 5, [](std::string text) {
    return rewrite_times(text, [](std::string_view key, std::string_view digits) {
      return key == "ts" ? std::to_string(std::stoll(std::string(digits)) + 30'000'000) : std::string(digits);
    });
  });
  TraceJson t;
  trace_json(ahead.path(), t);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const std::string said = t.warnings("clock-conflict");
  EXPECT_NE(said.find("rank 5 started it 30.000 s after the median"), std::string::npos) << t.out;
  EXPECT_NE(said.find("the ranks' clocks disagree, or the traces are from different jobs"), std::string::npos) << said;
  EXPECT_EQ(simdjson::dom::array(t.doc["collective_instances"]).size(), 0u);
  for (auto rank : simdjson::dom::array(t.doc["ranks"])) EXPECT_TRUE(rank["comm_wait_us"].is_null());
  // The rerun: ranks 1..7 of the first job, rank 0 of a job an hour later (its file newer, so kept).
  copy_dlrm_traces(data, rerun, 0, [](std::string text) { return text; });
  for (const auto& e : std::filesystem::directory_iterator(rerun.path()))
    if (e.path().filename().string().rfind("worker0_", 0) == 0) std::filesystem::remove(e.path());
  rerun.write("worker0_step_12.1694128321545.pt.trace.json",
              rewrite_times(scalelens::testing::slurp(data / "kineto/dlrm-8rank-v100/worker0_step_12.1694128201545.pt.trace.json"),
                            [](std::string_view key, std::string_view digits) {
                              return key == "ts" ? std::to_string(std::stoll(std::string(digits)) + 3'600'000'000)
                                                 : std::string(digits);
                            }));
  TraceJson mixed;
  trace_json(rerun.path(), mixed);
  EXPECT_EQ(mixed.warnings("clock-conflict"), "") << mixed.out;
  EXPECT_NE(mixed.warnings("mixed-jobs").find("traces of 2 jobs"), std::string::npos) << mixed.out;
  EXPECT_EQ(simdjson::dom::array(mixed.doc["collective_instances"]).size(), 0u);
  // The real traces: every call overlaps across the ranks, all matched.
  TraceJson real;
  trace_json(data / "kineto" / "dlrm-8rank-v100", real);
  EXPECT_EQ(real.warnings("clock-conflict"), "");
  EXPECT_EQ(simdjson::dom::array(real.doc["collective_instances"]).size(), 8u);
}

// A rerun's rank 0 (the real trace two minutes later, a newer file) beside the first job's ranks
// 0..7: told apart by when profiling began, as `scalelens report` tells them, and analysed apart.
// It was left out as a duplicate of rank 0, or kept in its place: one table of both jobs, and
// no collective matched (clock-conflict).
TEST(TraceCli, ARerunsTraceBesideTheFirstRunsIsAnotherJob) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  copy_dlrm_traces(data, dir, 0, [](std::string text) { return text; });
  dir.write("worker0_step_12.1694128321545.pt.trace.json",
            rewrite_times(scalelens::testing::slurp(data / "kineto/dlrm-8rank-v100/worker0_step_12.1694128201545.pt.trace.json"),
                          [](std::string_view key, std::string_view digits) {
                            return key == "ts" ? std::to_string(std::stoll(std::string(digits)) + 120'000'000)
                                               : std::string(digits);
                          }));
  TraceJson t;
  trace_json(dir.path(), t);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.warnings("clock-conflict"), "");
  EXPECT_EQ(t.warnings("duplicate-trace"), "");
  const std::string said = t.warnings("mixed-jobs");
  EXPECT_NE(said.find("traces of 2 jobs"), std::string::npos) << t.out;
  EXPECT_NE(said.find("job 2 (profiling began 2023-09-07 23:12:"), std::string::npos) << said;
  EXPECT_NE(said.find("worker0_step_12.1694128321545.pt.trace.json"), std::string::npos) << said;
  // Nothing compared across the jobs; each job's figures as its own traces give them.
  EXPECT_EQ(simdjson::dom::array(t.doc["stragglers"]["steps"]).size(), 0u);
  EXPECT_EQ(simdjson::dom::array(t.doc["collective_instances"]).size(), 0u);
  simdjson::dom::array jobs = t.doc["jobs"];
  ASSERT_EQ(jobs.size(), 2u);
  TraceJson real;
  trace_json(data / "kineto" / "dlrm-8rank-v100", real);
  auto first = jobs.at(0);
  EXPECT_EQ(simdjson::dom::array(first["ranks"]).size(), 8u);
  EXPECT_EQ(simdjson::dom::array(first["collective_instances"]).size(), 8u);
  EXPECT_EQ(int64_t(first["stragglers"]["rank"]), int64_t(real.doc["stragglers"]["rank"]));
  EXPECT_EQ(simdjson::dom::array(first["stragglers"]["steps"]).size(), simdjson::dom::array(real.doc["stragglers"]["steps"]).size());
  auto second = jobs.at(1);
  ASSERT_EQ(simdjson::dom::array(second["ranks"]).size(), 1u);
  EXPECT_NE(std::string_view(second["ranks"].at(0)["file"]).find("1694128321545"), std::string_view::npos);
  // The table: one per job, headed by when it began.
  auto table = run("trace --no-cache " + quoted(dir.path()));
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("job 1 of 2 (profiling began 2023-09-07 23:10:"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("job 2 of 2 (profiling began 2023-09-07 23:12:"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("warning: " + dir.path().string() + ": traces of 2 jobs"), std::string::npos) << table.out;
}

// The real DLRM job's traces of ranks `first`..`last` into `dir`, `later_us` later, their names
// prefixed with `prefix` (a second copy of some ranks beside the first).
void write_ranks(const std::filesystem::path& data, const ScratchDir& dir, int first, int last, std::int64_t later_us,
                 const std::string& prefix = "") {
  for (const auto& e : std::filesystem::directory_iterator(data / "kineto" / "dlrm-8rank-v100")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("worker", 0) != 0 || name[6] - '0' < first || name[6] - '0' > last) continue;
    std::string text = scalelens::testing::slurp(e.path());
    if (later_us != 0)
      text = rewrite_times(text, [&](std::string_view key, std::string_view digits) {
        return key == "ts" ? std::to_string(std::stoll(std::string(digits)) + later_us) : std::string(digits);
      });
    dir.write(prefix + name, text);
  }
}

// The real DLRM job's traces into `dir`, those of ranks 4..7 `later_us` later.
void write_halves(const std::filesystem::path& data, const ScratchDir& dir, std::int64_t later_us) {
  write_ranks(data, dir, 0, 3, 0);
  write_ranks(data, dir, 4, 7, later_us);
}

// Ranks 0..3 of the real DLRM job beside ranks 4..7 of another job an hour later (the real
// traces an hour on): no rank is shared, and they were taken for one job of 8 ranks, whose
// stragglers and collectives compared the two jobs' clocks. Two jobs, said; the real job's own
// folder stays one.
TEST(TraceCli, RanksOfAnotherJobSharingNoRankAreAnotherJob) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  write_halves(data, dir, 3'600'000'000);
  TraceJson t;
  trace_json(dir.path(), t);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const std::string said = t.warnings("mixed-jobs");
  EXPECT_NE(said.find("traces of 2 jobs"), std::string::npos) << t.out;
  EXPECT_NE(said.find("job 2 (profiling began 2023-09-08 00:10:"), std::string::npos) << said;
  EXPECT_EQ(t.warnings("clock-conflict"), "");
  simdjson::dom::array jobs = t.doc["jobs"];
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(simdjson::dom::array(jobs.at(0)["ranks"]).size(), 4u);
  EXPECT_EQ(simdjson::dom::array(jobs.at(1)["ranks"]).size(), 4u);
  EXPECT_EQ(int64_t(jobs.at(1)["ranks"].at(0)["rank"]), 4);
  // The same halves 90 s apart, as one job's late node would be: within a collective's timeout,
  // the same step, ranks 0..7 each once: one job of 8 ranks (it was two jobs of 4).
  ScratchDir late;
  write_halves(data, late, 90'000'000);
  TraceJson one_job;
  trace_json(late.path(), one_job);
  ASSERT_EQ(one_job.exit_code, 0) << one_job.err;
  EXPECT_EQ(one_job.warnings("mixed-jobs"), "") << one_job.out;
  EXPECT_EQ(simdjson::dom::array(one_job.doc["ranks"]).size(), 8u);
  simdjson::dom::array no_jobs;
  EXPECT_TRUE(one_job.doc["jobs"].get_array().get(no_jobs) || no_jobs.size() == 0);
  // The real folders, each one job: no jobs and no mixed-jobs.
  for (const auto& real : {data / "kineto" / "dlrm-8rank-v100", data / "kineto" / "hta" / "sampled-2of128"}) {
    TraceJson one;
    trace_json(real, one);
    EXPECT_EQ(one.warnings("mixed-jobs"), "") << real;
    EXPECT_EQ(simdjson::dom::array(one.doc["ranks"]).size(), real.filename() == "dlrm-8rank-v100" ? 8u : 2u);
    simdjson::dom::array none;
    EXPECT_TRUE(one.doc["jobs"].get_array().get(none) || none.size() == 0) << real;
  }
}

// Ranks 0..3 of the real DLRM job, 4..5 90 s later and 6..7 180 s later (two slow nodes): each
// group more than a minute after the one before, none sharing a rank, the same steps, all within
// a collective's timeout. One job of 8 ranks; it was three jobs (mixed-jobs), since only a pair of
// groups was joined. Two such jobs ten minutes apart stay two jobs of 8; a copy of ranks 4..5
// beside them (two groups that could be the job's ranks 4..5) keeps every group apart, said.
TEST(TraceCli, LateRanksInThreeGroupsAreOneJob) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  write_ranks(data, dir, 0, 3, 0);
  write_ranks(data, dir, 4, 5, 90'000'000);
  write_ranks(data, dir, 6, 7, 180'000'000);
  TraceJson t;
  trace_json(dir.path(), t);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.warnings("mixed-jobs"), "") << t.out;
  EXPECT_EQ(t.warnings("late-ranks-ambiguous"), "") << t.out;
  EXPECT_EQ(simdjson::dom::array(t.doc["ranks"]).size(), 8u);
  simdjson::dom::array no_jobs;
  EXPECT_TRUE(t.doc["jobs"].get_array().get(no_jobs) || no_jobs.size() == 0);

  ScratchDir twice;
  for (const std::int64_t at : {std::int64_t{0}, std::int64_t{600'000'000}}) {
    const std::string run = at ? "second-" : "";
    write_ranks(data, twice, 0, 3, at, run);
    write_ranks(data, twice, 4, 5, at + 90'000'000, run);
    write_ranks(data, twice, 6, 7, at + 180'000'000, run);
  }
  TraceJson two;
  trace_json(twice.path(), two);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.warnings("mixed-jobs").find("traces of 2 jobs"), std::string::npos) << two.out;
  simdjson::dom::array jobs = two.doc["jobs"];
  ASSERT_EQ(jobs.size(), 2u);
  for (auto job : jobs) EXPECT_EQ(simdjson::dom::array(job["ranks"]).size(), 8u);

  write_ranks(data, dir, 4, 5, 270'000'000, "copy-");  // after 6..7: 0..3, 4..5, 6..7, 4..5
  TraceJson unsure;
  trace_json(dir.path(), unsure);
  ASSERT_EQ(unsure.exit_code, 0) << unsure.err;
  const std::string said = unsure.warnings("late-ranks-ambiguous");
  EXPECT_NE(said.find("ranks 4, 5 began profiling in more than one of the groups"), std::string::npos) << unsure.out;
  EXPECT_NE(said.find("cannot be told"), std::string::npos) << said;
  EXPECT_NE(unsure.warnings("mixed-jobs").find("traces of 4 jobs"), std::string::npos) << unsure.out;
}

// The real DLRM job as it reads when ranks 4..7 reach step 10 `later_us` late on one clock (a slow
// node): their traces begin that much later; ranks 0..3's first collective waits for them, so it
// lasts that much longer, as does every event around it, and all they did after it is that much later.
void write_late_start(const std::filesystem::path& data, const ScratchDir& dir, std::int64_t later_us) {
  write_ranks(data, dir, 4, 7, later_us);
  for (const auto& e : std::filesystem::directory_iterator(data / "kineto" / "dlrm-8rank-v100")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("worker", 0) != 0 || name[6] >= '4') continue;
    const std::string text = scalelens::testing::slurp(e.path());
    // The first collective kernel's start (kernels' "ts" follows their name).
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    for (std::size_t at = text.find("\"name\": \"ncclKernel"); at != std::string::npos; at = text.find("\"name\": \"ncclKernel", at + 1)) {
      const std::size_t ts = text.find("\"ts\": ", at) + 6;
      first = std::min<std::int64_t>(first, std::stoll(text.substr(ts, text.find_first_not_of("0123456789", ts) - ts)));
    }
    std::int64_t last_ts = 0;  // each event's "ts" comes before its "dur"
    dir.write(name, rewrite_times(text, [&](std::string_view key, std::string_view digits) {
                const std::int64_t v = std::stoll(std::string(digits));
                if (key == "ts") return std::to_string((last_ts = v) > first ? v + later_us : v);
                return std::to_string(last_ts <= first && first < last_ts + v ? v + later_us : v);
              }));
  }
}

// Ranks 4..7 joined as the job's late ranks (90 s after 0..3, the same step) are matched as one
// job: on one clock, ranks 0..3 waited those 90 s in the first collective, and every call pairs up
// (8 calls; ranks 0..3 wait 90 s, 4..7 milliseconds). Traces whose every event is 90 s apart
// instead (write_halves) cannot be one clock's: a collective would have held ranks 0..3 for the
// 90 s, and theirs ended before ranks 4..7 began it. That is a clock-conflict still, naming all
// four ranks that far off (it named rank 7 alone).
TEST(TraceCli, LateRanksOnOneClockAreMatchedAsOneJob) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir late;
  write_late_start(data, late, 90'000'000);
  TraceJson t;
  trace_json(late.path(), t);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.warnings("mixed-jobs"), "") << t.out;
  EXPECT_EQ(t.warnings("clock-conflict"), "") << t.out;
  EXPECT_EQ(t.warnings("trace").find("lasts longer than the trace"), std::string::npos) << t.out;  // none left out
  EXPECT_EQ(simdjson::dom::array(t.doc["collective_instances"]).size(), 8u);
  simdjson::dom::array ranks = t.doc["ranks"];
  ASSERT_EQ(ranks.size(), 8u);
  for (auto rank : ranks) {
    const double wait_us = rank["comm_wait_us"];
    if (int64_t(rank["rank"]) < 4) EXPECT_NEAR(wait_us, 90e6, 0.1e6) << rank;
    else EXPECT_LT(wait_us, 0.1e6) << rank;
  }

  ScratchDir apart;
  write_halves(data, apart, 90'000'000);
  TraceJson shifted;
  trace_json(apart.path(), shifted);
  ASSERT_EQ(shifted.exit_code, 0) << shifted.err;
  EXPECT_EQ(shifted.warnings("mixed-jobs"), "") << shifted.out;
  const std::string said = shifted.warnings("clock-conflict");
  EXPECT_NE(said.find("ranks 4, 5, 6, 7 started it up to 90.0"), std::string::npos) << shifted.out;
  EXPECT_EQ(simdjson::dom::array(shifted.doc["collective_instances"]).size(), 0u);
}

// A rank's trace left empty (the job killed before the profiler wrote it) among the others of a
// folder is named with its reason, as it is when given alone.
TEST(TraceCli, AnEmptyTraceInAFolderIsNamed) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  copy_dlrm_traces(data, dir, 6, [](std::string) { return std::string(); });
  TraceJson t;
  trace_json(dir.path(), t);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(simdjson::dom::array(t.doc["ranks"]).size(), 7u);
  const std::string bad = t.warnings("bad-trace");
  EXPECT_NE(bad.find("the file may be truncated (0 bytes)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("worker6_step_12.1694128201553.pt.trace.json"), std::string::npos) << t.out;
  auto table = run("trace --no-cache " + quoted(dir.path()));
  EXPECT_NE(table.out.find("error: " + (dir.path() / "worker6_step_12.1694128201553.pt.trace.json").string()),
            std::string::npos)
      << table.out;
}

// Times written as JSON strings ("ts": "1694…"): every event is left out, and the trace is said to
// be unreadable for that reason (not CPU-only, not missing "dur"), with exit status 2: nothing analysed.
TEST(TraceCli, TimesWrittenAsStringsAreNamedAndNothingAnalysedExitsTwo) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  auto file = dir.write("rank0.pt.trace.json",
                        rewrite_times(scalelens::testing::slurp(data / "kineto/dlrm-8rank-v100/worker0_step_12.1694128201545.pt.trace.json"),
                                      [](std::string_view, std::string_view digits) { return "\"" + std::string(digits) + "\""; }));
  auto r = run("trace --no-cache " + quoted(file));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("\"ts\" is written as a string (\"16941282"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("none of its 3290 events could be read"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("CPU-only"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("has no \"dur\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no trace could be analysed"), std::string::npos) << r.out;
  // Only the GPU events' (kernels', memcpys', memsets') times as strings: the CPU side is
  // analysed, and the trace is not said to be a CPU-only profile.
  std::string text = scalelens::testing::slurp(data / "kineto/dlrm-8rank-v100/worker0_step_12.1694128201545.pt.trace.json");
  for (const std::string cat : {"\"cat\": \"kernel\"", "\"cat\": \"gpu_memcpy\"", "\"cat\": \"gpu_memset\""})
    for (std::size_t at = text.find(cat); at != std::string::npos; at = text.find(cat, at + 1)) {
      const std::size_t ts = text.find("\"ts\": ", at) + 6, end = text.find(',', ts);
      text.replace(ts, end - ts, "\"" + text.substr(ts, end - ts) + "\"");
    }
  auto kernels = run("trace --no-cache " + quoted(dir.write("kernels.pt.trace.json", text)));
  EXPECT_EQ(kernels.exit_code, 0) << kernels.out;
  EXPECT_NE(kernels.out.find("every GPU event (261) was left out (reasons above)"), std::string::npos) << kernels.out;
  EXPECT_EQ(kernels.out.find("CPU-only"), std::string::npos) << kernels.out;
}

}  // namespace
