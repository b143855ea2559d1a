// The default trace breakdown (DESIGN.md "Trace breakdown") against hand computations on small
// traces written here; every expected figure is worked out in the comment beside it.
#include <cmath>
#include <string>

#include "support/test_support.hpp"
#include "trace/breakdown.hpp"
#include "trace/kineto.hpp"
#include "trace/trace_set.hpp"

namespace scalelens::trace {
namespace {
using scalelens::testing::ScratchDir;

ParsedTrace parse(std::string text) {
  auto r = parse_kineto(text, "test.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r.value()) : ParsedTrace{};
}

std::string launch(int corr, double ts) {
  return "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": " + std::to_string(ts) +
         ", \"dur\": 1, \"args\": {\"correlation\": " + std::to_string(corr) + "}},\n";
}
std::string gpu(const char* cat, const std::string& name, int corr, const std::string& ts, const std::string& dur,
                const std::string& extra_args = "") {
  return std::string("{\"ph\": \"X\", \"cat\": \"") + cat + "\", \"name\": \"" + name + "\", \"ts\": " + ts +
         ", \"dur\": " + dur + ", \"args\": {\"stream\": 7, \"correlation\": " + std::to_string(corr) + extra_args + "}},\n";
}
std::string step(int n, const std::string& ts, const std::string& dur) {
  return "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" + std::to_string(n) + "\", \"ts\": " + ts +
         ", \"dur\": " + dur + "},\n";
}
std::string trace_of(const std::string& events, const std::string& window = "0, \"dur\": 1000") {
  return "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 2, \"world_size\": 4}, \"traceEvents\": [\n" + events +
         "{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"ts\": " + window + "}\n]}";
}

// Step 1 (0..100 µs): gemm 10..50, AllReduce 30..70 (1e6 floats), memcpy 80..85, gemm 60..75.
std::string one_step_trace() {
  return trace_of(step(1, "0", "100") + launch(1, 1) + launch(2, 2) + launch(3, 3) + launch(4, 4) +
                  gpu("kernel", "gemm", 1, "10", "40") +
                  gpu("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", 2, "30", "40",
                      ", \"Collective name\": \"allreduce\", \"In msg nelems\": 1000000, \"dtype\": \"Float\"") +
                  gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 3, "80", "5") + gpu("kernel", "gemm2", 4, "60", "15"));
}

TEST(TraceBreakdown, StepFiguresFollowTheUnionDefinitions) {
  auto r = analyse(parse(one_step_trace()), CommMatcher());
  ASSERT_EQ(r.steps.size(), 1u);
  const auto& s = r.steps[0];
  EXPECT_EQ(s.step, 1);
  EXPECT_DOUBLE_EQ(s.step_time_us, 100);   // ProfilerStep#1 duration
  EXPECT_DOUBLE_EQ(s.comp_us, 55);         // [10,50) ∪ [60,75) = 40 + 15
  EXPECT_DOUBLE_EQ(s.comm_us, 40);         // [30,70)
  EXPECT_DOUBLE_EQ(s.overlap_us, 30);      // [30,50) + [60,70)
  EXPECT_DOUBLE_EQ(s.exposed_comm_us, 10); // 40 − 30
  EXPECT_DOUBLE_EQ(s.mem_us, 5);           // [80,85)
  EXPECT_DOUBLE_EQ(s.busy_us, 70);         // [10,75) ∪ [80,85)
  EXPECT_DOUBLE_EQ(s.span_us, 75);         // 85 − 10
  EXPECT_DOUBLE_EQ(s.idle_us, 5);          // 75 − 70
  EXPECT_EQ(r.steps_analysed, 1);
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.world_size, 4);
}

TEST(TraceBreakdown, RankWithoutDistributedInfoIsTakenFromTheFileName) {
  const std::string text = R"([{"name": "ProfilerStep#1", "ph": "X", "ts": 0, "dur": 100, "pid": "CPU functions", "tid": 1}])";
  auto named = [&](const std::string& path) {
    std::string buffer = text;
    auto t = parse_kineto(buffer, path);
    EXPECT_TRUE(t.ok());
    return analyse(t.value(), CommMatcher());
  };
  auto r = named("/traces/rank3.1796230551979.pt.trace.json.gz");
  EXPECT_EQ(r.rank, 3);
  EXPECT_FALSE(r.rank_known);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0], "no rank in the trace (distributedInfo.rank); taken as 3 from the file name");
  EXPECT_EQ(named("worker_12_step_3.pt.trace.json").rank, 12);
  EXPECT_EQ(named("dlrm-worker-5.json").rank, 5);
  EXPECT_EQ(named("frank7.json").rank, 0);  // "rank" inside a word is no rank
  EXPECT_EQ(named("trace.json").rank, 0);
}

TEST(TraceBreakdown, ScoresAreComputationOverComputationPlusExposedComm) {
  auto r = analyse(parse(one_step_trace()), CommMatcher());
  EXPECT_NEAR(r.computation_score(), 55.0 / 65.0, 1e-12);  // comp / (comp + exposed) = 55 / (55 + 10)
  EXPECT_NEAR(r.raw_share(), 55.0 / 95.0, 1e-12);          // comp / (comp + comm) = 55 / (55 + 40)
  EXPECT_NEAR(r.overlap_ratio(), 0.75, 1e-12);             // overlap / comm = 30 / 40
}

TEST(TraceBreakdown, CollectivesCountTimeSizeAndAlgorithmBandwidth) {
  auto r = analyse(parse(one_step_trace()), CommMatcher());
  ASSERT_EQ(r.collectives.size(), 1u);
  const auto& c = r.collectives[0];
  EXPECT_EQ(c.name, "AllReduce");  // from the kernel name, not the lower-case arg
  EXPECT_EQ(c.count, 1u);
  EXPECT_DOUBLE_EQ(c.time_us, 40);
  EXPECT_DOUBLE_EQ(c.bytes, 4e6);            // 1e6 elements × 4 bytes (Float)
  EXPECT_DOUBLE_EQ(c.algbw_gbps(), 100.0);   // 4e6 B / 40 µs = 1e11 B/s
}

TEST(TraceBreakdown, GpuWorkLaunchedOutsideEveryStepIsReportedApart) {
  auto text = trace_of(step(1, "0", "100") + launch(1, 1) + gpu("kernel", "gemm", 1, "10", "40") + launch(9, 150) +
                       gpu("kernel", "late", 9, "160", "20") + gpu("kernel", "orphan", -5, "300", "7"));
  auto r = analyse(parse(text), CommMatcher());
  EXPECT_DOUBLE_EQ(r.total.comp_us, 40);  // only gemm belongs to ProfilerStep#1
  EXPECT_EQ(r.no_step.gpu_events, 2u);    // "late" (launched at 150) and "orphan" (correlation −5)
  EXPECT_DOUBLE_EQ(r.no_step.comp_us, 27);  // 20 + 7
}

TEST(TraceBreakdown, LastStepEndingAfterTheProfilerWindowIsCutOff) {
  // Window 0..180 µs; ProfilerStep#2 runs 100..200, so profiling stopped inside it.
  auto text = trace_of(step(1, "0", "100") + launch(1, 1) + gpu("kernel", "gemm", 1, "10", "40") + step(2, "100", "100") +
                           launch(2, 101) + gpu("kernel", "gemm", 2, "110", "40"),
                       "0, \"dur\": 180");
  auto r = analyse(parse(text), CommMatcher());
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_FALSE(r.steps[0].cut_off);
  EXPECT_TRUE(r.steps[1].cut_off);
  EXPECT_EQ(r.steps_analysed, 1);
  EXPECT_DOUBLE_EQ(r.total.step_time_us, 100);  // step 1 only
}

TEST(TraceBreakdown, WhereTheGpuRanBehindAStepLastsFromItsFirstGpuWorkToTheNextSteps) {
  // The CPU queues steps 1 and 2 in 10 µs each; the GPU takes 90 µs a step, 5 µs apart: kernels at
  // 5..95, 100..190 and 195..285. Step 3's ProfilerStep (20..115) is at the GPU's pace again.
  auto text = trace_of(step(1, "0", "10") + launch(1, 1) + gpu("kernel", "gemm", 1, "5", "90") + step(2, "10", "10") + launch(2, 11) +
                           gpu("kernel", "gemm", 2, "100", "90") + step(3, "20", "95") + launch(3, 21) +
                           gpu("kernel", "gemm", 3, "195", "90"),
                       "0, \"dur\": 300");
  auto r = analyse(parse(text), CommMatcher());
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps_analysed, 3);
  EXPECT_DOUBLE_EQ(r.steps[0].step_time_us, 95);  // 100 − 5, not its 10 µs ProfilerStep
  EXPECT_DOUBLE_EQ(r.steps[1].step_time_us, 95);  // 195 − 100
  EXPECT_DOUBLE_EQ(r.steps[2].step_time_us, 95);  // the last keeps its ProfilerStep: no next step to tell
  EXPECT_DOUBLE_EQ(r.total.step_time_us, 285);
  EXPECT_DOUBLE_EQ(r.total.span_us, 270);
  EXPECT_FALSE(gpu_ran_behind(r.total.span_us, r.total.step_time_us)) << "no part exceeds its step any more";
  EXPECT_TRUE(r.gpu_paced);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("the GPU ran behind the CPU"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("ProfilerSteps (0.04 ms); step times are taken at the GPU's pace"), std::string::npos) << r.warnings[0];
}

TEST(TraceBreakdown, AtTheGpusPaceAStepWithoutGpuWorkKeepsItsProfilerStepAndTheLastItsSpan) {
  // The CPU queues four steps in 10 µs each, never waiting; step 3 launches nothing. The GPU runs
  // 5..95, 100..190 and (step 4) 195..285.
  auto text = trace_of(step(1, "0", "10") + launch(1, 1) + gpu("kernel", "gemm", 1, "5", "90") + step(2, "10", "10") + launch(2, 11) +
                           gpu("kernel", "gemm", 2, "100", "90") + step(3, "20", "10") + step(4, "30", "10") + launch(4, 31) +
                           gpu("kernel", "gemm", 4, "195", "90"),
                       "0, \"dur\": 300");
  auto r = analyse(parse(text), CommMatcher());
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps_analysed, 4);
  EXPECT_DOUBLE_EQ(r.steps[0].step_time_us, 95);  // 100 − 5
  EXPECT_DOUBLE_EQ(r.steps[1].step_time_us, 95);  // 195 − 100: to step 4, the next with GPU work
  EXPECT_DOUBLE_EQ(r.steps[2].step_time_us, 10);  // no GPU work: its ProfilerStep
  EXPECT_DOUBLE_EQ(r.steps[3].step_time_us, 90);  // the last: its span, longer than its 10 µs ProfilerStep
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("step times are taken at the GPU's pace"), std::string::npos) << r.warnings[0];
}

TEST(TraceBreakdown, FloatTimestampsKeepTheirNanoseconds) {
  // ts 1712195495502094.5 µs does not fit a double exactly; the kernel lasts 10.125 µs.
  auto text = trace_of(step(1, "1712195495502000.000", "1000.0") + launch(1, 1712195495502001.0) +
                           gpu("kernel", "gemm", 1, "1712195495502094.5", "10.125"),
                       "1712195495501000.0, \"dur\": 5000.0");
  auto r = analyse(parse(text), CommMatcher());
  EXPECT_DOUBLE_EQ(r.total.comp_us, 10.125);
  EXPECT_DOUBLE_EQ(r.total.step_time_us, 1000);
}

TEST(TraceBreakdown, CommKernelRegexOverridesTheDefault) {
  auto text = trace_of(step(1, "0", "100") + launch(1, 1) + launch(2, 2) + gpu("kernel", "my_allreduce_kernel", 1, "10", "20") +
                       gpu("kernel", "gemm", 2, "40", "10"));
  EXPECT_DOUBLE_EQ(analyse(parse(text), CommMatcher()).total.comm_us, 0);  // not an NCCL name
  auto r = analyse(parse(text), CommMatcher(UserRegex::compile("^my_allreduce", "--comm-kernel-regex").value()));
  EXPECT_DOUBLE_EQ(r.total.comm_us, 20);
  EXPECT_DOUBLE_EQ(r.total.comp_us, 10);
}

TEST(TraceBreakdown, HtaRoundsFloatEventsInward) {
  // HTA: end = floor(10.6 + 2.0) = 12, ts = ceil(10.6) = 11 → 1 µs of compute in a 1 µs window.
  auto text = trace_of(launch(1, 1.0) + gpu("kernel", "gemm", 1, "10.6", "2.0"), "0.5, \"dur\": 100");
  auto h = hta_breakdown(parse(text), false);
  ASSERT_TRUE(h.has_gpu_rows);
  EXPECT_DOUBLE_EQ(h.kernel_time_us, 1);
  EXPECT_DOUBLE_EQ(h.compute_us, 1);
  EXPECT_DOUBLE_EQ(h.compute_pct, 100);
}

TEST(TraceBreakdown, HtaKernelTypesFollowItsNameRules) {
  EXPECT_EQ(hta_kernel_type("ncclDevKernel_SendRecv(ncclDevComm*)"), HtaKernelType::communication);
  EXPECT_EQ(hta_kernel_type("void foo<ncclKernel_x>"), HtaKernelType::communication);
  EXPECT_EQ(hta_kernel_type("Memcpy HtoD (Pageable -> Device)"), HtaKernelType::memory);
  EXPECT_EQ(hta_kernel_type("cudaDeviceSynchronize"), HtaKernelType::other);  // contains "Sync"
  EXPECT_EQ(hta_kernel_type("volta_sgemm_128x64_nn"), HtaKernelType::computation);
}

TEST(TraceBreakdown, StragglerIsTheRankSlowestInMostSteps) {
  ScratchDir dir;
  auto body = [](const std::string& d1, const std::string& d2) {
    return step(1, "0", d1) + step(2, "1000", d2) + launch(1, 1) + gpu("kernel", "gemm", 1, "10", "5") + launch(2, 1001) +
           gpu("kernel", "gemm", 2, "1010", "5");
  };
  auto with_rank = [&](int rank, const std::string& d1, const std::string& d2) {
    auto t = trace_of(body(d1, d2), "0, \"dur\": 5000");
    return t.replace(t.find("\"rank\": 2"), 9, "\"rank\": " + std::to_string(rank));
  };
  dir.write("r0.json", with_rank(0, "100", "100"));
  dir.write("r1.json", with_rank(1, "300", "250"));  // slowest in both steps
  dir.write("r2.json", with_rank(2, "200", "90"));
  TraceSetOptions options;
  options.inputs.push_back(dir.path());
  auto set = analyse_traces(options);
  ASSERT_EQ(set.ranks.size(), 3u);
  ASSERT_EQ(set.stragglers.size(), 2u);
  EXPECT_EQ(set.stragglers[0].slowest_rank, 1);
  EXPECT_DOUBLE_EQ(set.stragglers[0].spread(), 1.0);  // (300 − 100) / mean 200
  ASSERT_TRUE(set.straggler_rank.has_value());
  EXPECT_EQ(*set.straggler_rank, 1);
  EXPECT_DOUBLE_EQ(set.step_time_us.max, 275);  // rank 1: (300 + 250) / 2
}

}  // namespace
}  // namespace scalelens::trace
