// Issue 20 §2: the roofline per operator. FLOPs and bytes from the shapes the profiler records
// (record_shapes=True), the GPU time of the kernels each op launched, and the verdict against the
// GPU's peaks, on traces written in the profiler's shape and on the real DLRM traces.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "support/kineto_writer.hpp"
#include "support/test_support.hpp"
#include "trace/gpu_peaks.hpp"
#include "trace/roofline.hpp"
#include "trace/trace_output.hpp"
#include "trace/trace_set.hpp"

using namespace scalelens;
using namespace scalelens::trace;
using namespace scalelens::testing;

namespace {

constexpr const char* kBf16x2 = R"(["c10::BFloat16", "c10::BFloat16"])";

TEST(OpCost, MatrixProductsCountTwoMnk) {
  auto mm = op_cost("aten::mm", "[[64, 128], [128, 32]]", kBf16x2);
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 64 * 32 * 128);
  EXPECT_DOUBLE_EQ(mm.bytes, (64.0 * 128 + 128 * 32 + 64 * 32) * 2);
  EXPECT_EQ(mm.precision, "bf16");

  // addmm(bias[N], A[M, K], B[K, N]): the product plus the bias added to every output element.
  auto addmm = op_cost("aten::addmm", "[[512], [16, 13], [13, 512], [], []]", R"(["float", "float", "float", "Scalar", "Scalar"])");
  EXPECT_DOUBLE_EQ(addmm.flops, 2.0 * 16 * 512 * 13 + 16 * 512);
  EXPECT_DOUBLE_EQ(addmm.bytes, (512.0 + 16 * 13 + 13 * 512 + 16 * 512) * 4);
  EXPECT_EQ(addmm.precision, "fp32");

  auto bmm = op_cost("aten::bmm", "[[16, 16, 27], [16, 27, 27]]", R"(["float", "float"])");
  EXPECT_DOUBLE_EQ(bmm.flops, 2.0 * 16 * 16 * 27 * 27);

  // linear(x[B, T, K], w[N, K], b[N]) = rows × N × K products.
  auto linear = op_cost("aten::linear", "[[8, 10, 64], [32, 64], [32]]", R"(["c10::Half", "c10::Half", "c10::Half"])");
  EXPECT_DOUBLE_EQ(linear.flops, 2.0 * 80 * 32 * 64 + 80 * 32);
  EXPECT_EQ(linear.precision, "fp16");
}

TEST(OpCost, AttentionConvolutionBackwardElementwise) {
  // q, k, v [B=2, H=4, L=S=128, E=64]: QKᵀ and PV, 2·B·H·L·S·E each.
  auto sdpa = op_cost("aten::_scaled_dot_product_flash_attention", "[[2, 4, 128, 64], [2, 4, 128, 64], [2, 4, 128, 64], [], []]",
                      R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])");
  EXPECT_DOUBLE_EQ(sdpa.flops, 4.0 * 2 * 4 * 128 * 128 * 64);
  // The backward is 2.5 × the forward.
  auto back = op_cost("aten::_scaled_dot_product_flash_attention_backward",
                      "[[2, 4, 128, 64], [2, 4, 128, 64], [2, 4, 128, 64], [2, 4, 128, 64]]",
                      R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])");
  EXPECT_DOUBLE_EQ(back.flops, 2.5 * sdpa.flops);

  // grad_out[N=8, O=64, 16, 16], input[8, 32, 16, 16], weight[64, 32, 3, 3]: both gradients.
  auto conv = op_cost("aten::convolution_backward", "[[8, 64, 16, 16], [8, 32, 16, 16], [64, 32, 3, 3], [], [], [], [], [], [], []]",
                      R"(["float", "float", "float", "", "", "", "", "", "", ""])");
  EXPECT_DOUBLE_EQ(conv.flops, 2 * (2.0 * 8 * 64 * 16 * 16 * 32 * 3 * 3));
  // A forward convolution's output size is not in Input Dims: unknown, and said why.
  auto fwd = op_cost("aten::cudnn_convolution", "[[8, 32, 16, 16], [64, 32, 3, 3]]", R"(["float", "float"])");
  EXPECT_LT(fwd.flops, 0);
  EXPECT_NE(fwd.why.find("output size"), std::string::npos);

  auto add = op_cost("aten::add_", "[[1024, 96, 15], [15], []]", R"(["float", "float", "Scalar"])");
  EXPECT_DOUBLE_EQ(add.flops, 1024.0 * 96 * 15);
  EXPECT_DOUBLE_EQ(add.bytes, (1024.0 * 96 * 15 + 15) * 4 + 1024.0 * 96 * 15 * 4);
  // A copy that converts reads 4 and writes 2 bytes per element; it does no arithmetic.
  auto copy = op_cost("aten::copy_", "[[100, 10], [100, 10], []]", R"(["c10::Half", "float", "Scalar"])");
  EXPECT_DOUBLE_EQ(copy.flops, 0);
  EXPECT_DOUBLE_EQ(copy.bytes, 1000.0 * 2 + 1000.0 * 4);
  // "[]" of type int is a 0-dim tensor (one element); of type Scalar it is no tensor at all.
  EXPECT_DOUBLE_EQ(op_cost("aten::fill_", "[[], []]", R"(["int", "Scalar"])").bytes, 4);
  EXPECT_LT(op_cost("aten::fill_", "[[], []]", R"(["Scalar", "Scalar"])").flops, 0);

  EXPECT_FALSE(has_cost_model("aten::as_strided"));
  EXPECT_LT(op_cost("aten::as_strided", "[[2, 2]]", R"(["float"])").flops, 0);
  EXPECT_LT(op_cost("aten::mm", "not json", kBf16x2).flops, 0);
  EXPECT_LT(op_cost("aten::mm", "[[64, 128, 3], [128, 32]]", kBf16x2).flops, 0);  // not matrices
}

// One rank, 3 steps of 1000 µs, each running a 4096³ bf16 GEMM for 600 µs on an A100 SXM4 80GB.
TraceSet gemm_trace(const ScratchDir& dir, bool shapes) {
  KinetoTraceSpec spec;
  spec.step_us = {1000, 1000, 1000};
  spec.compute_share = 0.6;
  if (shapes) spec.gemm_m = spec.gemm_n = spec.gemm_k = 4096;
  dir.write("rank0.pt.trace.json", kineto_trace(spec));
  TraceSetOptions options;
  options.inputs = {dir.path()};
  options.cache = false;
  return analyse_traces(options);
}

TEST(Roofline, KnownGemmAgainstTheA100Roofline) {
  ScratchDir dir;
  auto set = gemm_trace(dir, true);
  ASSERT_EQ(set.ranks.size(), 1u);
  const auto& r = set.ranks[0];
  ASSERT_GE(r.steps_analysed, 2);
  const auto calls = static_cast<std::size_t>(r.steps_analysed);
  EXPECT_EQ(r.shaped_ops, calls);
  ASSERT_EQ(r.ops.size(), 1u);
  const auto& op = r.ops[0];
  EXPECT_EQ(op.name, "aten::mm");
  EXPECT_EQ(op.calls, calls);
  EXPECT_DOUBLE_EQ(op.gpu_time_us, 600.0 * calls);
  const double n = 4096;
  EXPECT_DOUBLE_EQ(op.flops, 2 * n * n * n * calls);
  EXPECT_DOUBLE_EQ(op.bytes, 3 * n * n * 2 * calls);

  auto p = roofline_of(op, r.device, {});
  EXPECT_DOUBLE_EQ(p.peak_tflops, 312);    // A100 bf16 dense
  EXPECT_DOUBLE_EQ(p.peak_tbps, 2.039);    // A100 SXM4 80GB
  EXPECT_NEAR(p.achieved_tflops, 2 * n * n * n / 600e-6 * 1e-12, 1e-9);
  EXPECT_NEAR(p.intensity, n / 3, 1e-9);  // 2n³ FLOPs over 3n² bf16 elements
  EXPECT_EQ(p.bound, "compute");
  EXPECT_NEAR(p.of_roofline, p.achieved_tflops / 312, 1e-12);
  EXPECT_NEAR(p.lost_us, 600.0 * calls - op.flops / 312e12 * 1e6, 1e-6);

  // Overrides replace the table; a low bandwidth roof turns the same op memory-bound.
  auto low = roofline_of(op, r.device, {std::nullopt, 0.5});
  EXPECT_DOUBLE_EQ(low.peak_tbps, 0.5);
  EXPECT_EQ(roofline_of(op, r.device, {std::nullopt, 0.001}).bound, "memory");
  EXPECT_TRUE(std::isnan(roofline_of(op, "Some Unknown GPU", {}).of_roofline));
}

TEST(Roofline, TraceOutputsCarryTheOpsOrSayShapesAreMissing) {
  ScratchDir with, without;
  auto set = gemm_trace(with, true);
  OutputOptions out;
  out.top_ops = 5;
  const std::string table = format_table(set, out);
  EXPECT_NE(table.find("aten::mm [[4096, 4096], [4096, 4096]]"), std::string::npos) << table;
  EXPECT_NE(table.find("compute"), std::string::npos);
  const std::string json = format_json(set, out);
  EXPECT_NE(json.find("\"bound\": \"compute\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"peak_tflops\": 312"), std::string::npos);

  auto bare = gemm_trace(without, false);
  EXPECT_EQ(bare.ranks.at(0).shaped_ops, 0u);
  EXPECT_TRUE(bare.ranks.at(0).ops.empty());
  EXPECT_NE(format_table(bare, out).find("record_shapes=True"), std::string::npos);

}

// Where the GPU's work outlasts even the steps taken at its pace, the table's shares are of its
// span, as the page's charts take them: a real trace (HTA's negative_queue_length_values_check)
// showed idle 138% of the step.
TEST(Roofline, TableSharesAreOfTheSpanWhereTheGpuOutlastsTheSteps) {
  TraceSet set;
  RankSummary r;
  r.rank = 0;
  r.steps_analysed = 1;
  r.total.step_time_us = 214'810;
  r.total.span_us = 373'000;
  r.total.idle_us = 297'000;
  r.total.comp_us = 62'000;
  set.ranks.push_back(r);
  const std::string table = format_table(set, OutputOptions{});
  const auto row = table.find('\n') + 1;
  const std::string line = table.substr(row, table.find('\n', row) - row);
  EXPECT_NE(line.find(" 79.6 "), std::string::npos) << line;  // idle: 297 / 373
  EXPECT_NE(line.find(" 16.6 "), std::string::npos) << line;  // comp: 62 / 373
  EXPECT_EQ(line.find("138"), std::string::npos) << line;
}

TEST(Roofline, CachedSummaryKeepsTheOps) {
  ScratchDir dir, cache;
  gemm_trace(dir, true);
  TraceSetOptions options;
  options.inputs = {dir.path()};
  options.cache_dir = cache.path();
  auto first = analyse_traces(options);
  auto second = analyse_traces(options);
  ASSERT_EQ(second.files_cached, 1u);
  ASSERT_EQ(first.ranks.at(0).ops.size(), second.ranks.at(0).ops.size());
  const auto &a = first.ranks[0].ops[0], &b = second.ranks[0].ops[0];
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.shapes, b.shapes);
  EXPECT_EQ(a.types, b.types);
  EXPECT_EQ(a.calls, b.calls);
  EXPECT_DOUBLE_EQ(a.gpu_time_us, b.gpu_time_us);
  EXPECT_DOUBLE_EQ(a.flops, b.flops);
  EXPECT_DOUBLE_EQ(a.bytes, b.bytes);
  EXPECT_EQ(first.ranks[0].shaped_ops, second.ranks[0].shaped_ops);
}

// The real DLRM traces (V100, record_shapes=True): every matrix product's FLOPs follow from its
// recorded shapes, the ops' GPU time stays within the rank's GPU busy time, and V100 peaks apply.
TEST(Roofline, RealDlrmTracesMatrixProductsFromTheirShapes) {
  SCALELENS_REQUIRE_REALDATA(data);
  TraceSetOptions options;
  options.inputs = {data / "kineto/dlrm-8rank-v100"};
  options.cache = false;
  auto set = analyse_traces(options);
  ASSERT_EQ(set.ranks.size(), 8u);
  std::size_t products = 0;
  for (const auto& r : set.ranks) {
    EXPECT_GT(r.shaped_ops, 0u) << r.file;
    ASSERT_FALSE(r.ops.empty()) << r.file;
    double in_ops = 0;
    for (const auto& op : r.ops) {
      in_ops += op.gpu_time_us;
      EXPECT_GT(op.calls, 0u);
      if (op.name != "aten::mm") continue;
      long long m = 0, k = 0, k2 = 0, n = 0;
      ASSERT_EQ(std::sscanf(op.shapes.c_str(), "[[%lld, %lld], [%lld, %lld]]", &m, &k, &k2, &n), 4) << op.shapes;
      EXPECT_EQ(k, k2);
      EXPECT_DOUBLE_EQ(op.flops, 2.0 * static_cast<double>(m * n * k) * static_cast<double>(op.calls)) << op.shapes;
      auto p = roofline_of(op, r.device, {});
      EXPECT_DOUBLE_EQ(p.peak_tflops, 15.7);  // V100 SXM2, fp32
      EXPECT_DOUBLE_EQ(p.peak_tbps, 0.9);
      EXPECT_FALSE(p.bound.empty());
      EXPECT_GT(p.of_roofline, 0);
      ++products;
    }
    EXPECT_LE(in_ops, r.total.busy_us + 1e-6) << r.file;
  }
  EXPECT_GT(products, 0u);
}

}  // namespace
