// FLOPs, MFU and the input pipeline, on a small hand-written trace whose figures are worked out
// in the comments.
#include <cmath>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"
#include "trace/breakdown.hpp"
#include "trace/gpu_peaks.hpp"
#include "trace/kineto.hpp"
#include "trace/trace_set.hpp"

namespace scalelens::trace {
namespace {

using scalelens::testing::read_study;

// Two 1000 µs steps on an A100.
// Step 1: data loading [0, 100] (the annotation; the Python __next__ frame [10, 90] inside it
//   adds nothing to the union); aten::mm 1.56e11 flops in bf16; its kernel runs [130, 930].
//   No GPU activity during [0, 100]: loading 100 µs, all of it with the GPU idle.
// Step 2: data loading [1000, 1100]; aten::mm 1.56e11 bf16 and aten::add 1e9 fp32; the kernel
//   runs [1050, 1900], so the GPU is busy for [1050, 1100] of the loading: idle 50 µs.
// After the steps (ts 2500) an op with 5e11 flops belongs to no step and is not counted.
// FLOPs = 3.13e11 over 2000 µs = 1.565e14 FLOP/s = 156.5 TFLOP/s; precision bf16 (3.12e11 of
// the flops); A100 bf16 peak 312 TFLOP/s → MFU = 156.5 / 312 = 0.50160256…
const char* kTrace = R"json({"deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}], "distributedInfo": {"rank": 0, "world_size": 1},
"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 1000},
 {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "ts": 0, "dur": 100},
 {"ph": "X", "cat": "python_function", "name": "torch/utils/data/dataloader.py(623): __next__", "ts": 10, "dur": 80},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 110, "dur": 50, "args": {"flops": 156000000000, "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 120, "dur": 5, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "ampere_bf16_gemm", "ts": 130, "dur": 800, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 1000, "dur": 1000},
 {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "ts": 1000, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1010, "dur": 5, "args": {"flops": 1.56e11, "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1016, "dur": 2, "args": {"flops": 1000000000, "Input type": ["float", "float", "Scalar"]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1020, "dur": 5, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "ampere_bf16_gemm", "ts": 1050, "dur": 850, "args": {"stream": 7, "correlation": 2}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 2500, "dur": 5, "args": {"flops": 500000000000, "Input type": ["float"]}},
 {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": 3000}
]})json";

RankSummary summary() {
  std::string text = kTrace;
  auto parsed = parse_kineto(text, "mfu.json");
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  return analyse(parsed.value(), CommMatcher());
}

TEST(TraceMfu, AchievedFlopsAndMfuFromTheTable) {
  auto r = summary();
  ASSERT_EQ(r.steps_analysed, 2);
  EXPECT_EQ(r.flops_ops, 3u);
  EXPECT_DOUBLE_EQ(r.flops, 3.13e11);
  EXPECT_EQ(r.flops_precision, "bf16");
  EXPECT_DOUBLE_EQ(r.achieved_flops_per_s(), 1.565e14);
  auto m = mfu_of(r, std::nullopt);
  EXPECT_DOUBLE_EQ(m.achieved_tflops, 156.5);
  EXPECT_DOUBLE_EQ(m.peak_tflops, 312.0);
  EXPECT_NEAR(m.mfu, 156.5 / 312.0, 1e-12);
  // --peak-tflops 100: 156.5 / 100.
  EXPECT_NEAR(mfu_of(r, 100.0).mfu, 1.565, 1e-12);
  auto b = to_rank_breakdown(r);
  ASSERT_TRUE(b.flops && b.peak_flops);
  EXPECT_DOUBLE_EQ(*b.flops, 3.13e11);
  EXPECT_DOUBLE_EQ(*b.peak_flops, 312e12);
}

TEST(TraceMfu, ReportCarriesMfuPerRunAndConfiguration) {
  // The same trace as rank 0 and rank 1 of a 2-GPU run: each rank's MFU is 156.5 / 312.
  scalelens::testing::ScratchDir dir;
  dir.write("run/scalelens.json", R"({"label": "ddp", "world_size": 2, "run_id": "run"})");
  dir.write("run/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,3000000\n");
  std::string rank1 = kTrace;
  rank1.replace(rank1.find("\"rank\": 0"), 9, "\"rank\": 1");
  dir.write("run/traces/rank0.json", kTrace);
  dir.write("run/traces/rank1.json", rank1);
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].breakdown.size(), 2u);
  auto s = analyze(study, {});
  ASSERT_EQ(s.runs.size(), 1u);
  ASSERT_TRUE(s.runs[0].trace().mfu);
  EXPECT_NEAR(*s.runs[0].trace().mfu, 156.5 / 312.0, 1e-12);
  ASSERT_EQ(s.configurations.size(), 1u);
  ASSERT_TRUE(s.configurations[0].mfu);
  EXPECT_NEAR(*s.configurations[0].mfu, 156.5 / 312.0, 1e-12);
}

TEST(TraceMfu, NoFlopsNoMfu) {
  std::string text = R"({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 10}]})";
  auto parsed = parse_kineto(text, "t.json");
  ASSERT_TRUE(parsed.ok());
  auto r = analyse(parsed.value(), CommMatcher());
  EXPECT_EQ(r.flops_ops, 0u);
  EXPECT_TRUE(std::isnan(r.achieved_flops_per_s()));
  EXPECT_FALSE(to_rank_breakdown(r).flops);
  scalelens::RankBreakdown b = to_rank_breakdown(r);
  scalelens::Run run;
  run.world_size = 1;
  run.breakdown.push_back(b);
  std::vector<scalelens::Diagnostic> warnings;
  EXPECT_FALSE(scalelens::summarize_run(run, {}, warnings).trace().mfu);
}

TEST(TraceInputPipeline, DataLoadingPerStepAndGpuIdleDuringIt) {
  auto r = summary();
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(r.steps[0].dataloader_us, 100.0);
  EXPECT_DOUBLE_EQ(r.steps[0].dataloader_gpu_idle_us, 100.0);
  EXPECT_DOUBLE_EQ(r.steps[1].dataloader_us, 100.0);
  EXPECT_DOUBLE_EQ(r.steps[1].dataloader_gpu_idle_us, 50.0);
  EXPECT_DOUBLE_EQ(r.total.dataloader_us, 200.0);
  EXPECT_DOUBLE_EQ(r.total.dataloader_gpu_idle_us, 150.0);
}

TEST(TraceGpuPeaks, DenseDatasheetFigures) {
  EXPECT_EQ(peak_tflops("NVIDIA A100-SXM4-80GB", "bf16"), 312.0);
  EXPECT_EQ(peak_tflops("NVIDIA A100-PCIE-40GB", "tf32"), 156.0);
  EXPECT_EQ(peak_tflops("NVIDIA A100-SXM4-40GB", "fp32"), 19.5);
  EXPECT_EQ(peak_tflops("Tesla V100-SXM2-32GB", "fp16"), 125.0);
  EXPECT_EQ(peak_tflops("Tesla V100-PCIE-16GB", "fp16"), 112.0);
  EXPECT_EQ(peak_tflops("Tesla V100-SXM2-32GB", "bf16"), std::nullopt);
  EXPECT_EQ(peak_tflops("NVIDIA H100 80GB HBM3", "bf16"), 989.4);
  EXPECT_EQ(peak_tflops("NVIDIA H100 PCIe", "bf16"), 756.5);
  EXPECT_EQ(peak_tflops("NVIDIA H200", "tf32"), 494.7);
  EXPECT_EQ(peak_tflops("NVIDIA L4", "fp16"), 121.0);
  EXPECT_EQ(peak_tflops("NVIDIA L40S", "bf16"), 362.05);
  EXPECT_EQ(peak_tflops("NVIDIA L40", "bf16"), std::nullopt);
  EXPECT_EQ(peak_tflops("AMD Instinct MI250X", "bf16"), 383.0);
  EXPECT_EQ(peak_tflops("AMD Instinct MI300X", "fp16"), 1307.4);
  EXPECT_EQ(peak_tflops("AMD Radeon Graphics", "bf16"), std::nullopt);
  EXPECT_EQ(peak_tflops("NVIDIA A100-SXM4-80GB", "fp64"), std::nullopt);
  EXPECT_EQ(gpu_family("NVIDIA H100 PCIe"), "H100 PCIe");
}

}  // namespace
}  // namespace scalelens::trace
