#pragma once
// Roofline per operator (DESIGN.md, "Roofline per operator"): the GPU time of each op that the
// profiler recorded shapes for (record_shapes=True), its FLOPs and bytes from those shapes, and
// whether it is compute- or memory-bound against the GPU's peaks.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/kineto.hpp"

namespace scalelens::trace {

// True for the ops the cost model knows ("aten::mm", "aten::addmm", "aten::bmm", convolution
// backward, scaled-dot-product attention, element-wise ops and reductions). The parser keeps
// shapes for these only.
bool has_cost_model(std::string_view op_name);

// FLOPs and bytes of one call of an op from its recorded shapes and types (the JSON texts of
// args["Input Dims"] and args["Input type"]). Unknown (flops < 0) with `why` when the shapes do
// not determine them (a forward convolution's output size is not recorded, say).
struct OpCost {
  double flops = -1, bytes = -1;
  std::string precision;  // "fp32", "bf16", "fp16", "tf32" never (the trace cannot tell); "" unknown
  std::string why;        // why flops are unknown
};
OpCost op_cost(std::string_view op_name, std::string_view input_dims_json, std::string_view input_types_json);

// The GPU work of one op signature (name, shapes, types) in a rank's analysed steps: the
// non-communication GPU activity launched while the innermost modelled op was open on the
// launching thread.
struct OpFigures {
  std::string name;    // aten::addmm
  std::string shapes;  // [[256], [16, 13], [13, 256], [], []]
  std::string types;   // ["float", "float", "float", "Scalar", "Scalar"]
  std::size_t calls = 0, gpu_events = 0;
  double gpu_time_us = 0;
  double flops = -1, bytes = -1;  // totals over the calls; -1 unknown
  std::string precision;
  std::string why;  // why flops are unknown
};

// The ops of one trace, by GPU time, descending. `in_analysed_step(ts_ns)` says whether a CPU time
// lies in an analysed (not cut-off) profiler step; `is_comm(name)` which kernels are communication.
// `shaped_ops` receives how many modelled ops carried shapes (0: record_shapes was off).
std::vector<OpFigures> attribute_ops(const ParsedTrace& trace, const std::function<bool(std::int64_t)>& in_analysed_step,
                                     const std::function<bool(std::uint32_t)>& is_comm_name, std::size_t& shaped_ops);

// The same signatures of several ranks (or runs) added up, the most GPU time first; an unknown
// cost on any side leaves the sum unknown.
void add_ops(std::vector<OpFigures>& into, const std::vector<OpFigures>& ops);

// One op against the roofline of its GPU: peak FLOP/s at its precision and peak memory bandwidth.
struct RooflinePoint {
  double achieved_tflops = std::numeric_limits<double>::quiet_NaN();
  double achieved_tbps = std::numeric_limits<double>::quiet_NaN();
  double intensity = std::numeric_limits<double>::quiet_NaN();  // FLOPs per byte
  double peak_tflops = std::numeric_limits<double>::quiet_NaN(), peak_tbps = std::numeric_limits<double>::quiet_NaN();
  std::string bound;  // "compute", "memory", "" when a peak or the cost is unknown
  // Achieved over attainable (min(peak FLOP/s, intensity × peak bandwidth)); above 1 when the
  // model's precision understates the GPU's (fp32 matmuls run as TF32).
  double of_roofline = std::numeric_limits<double>::quiet_NaN();
  double lost_us = std::numeric_limits<double>::quiet_NaN();  // GPU time beyond what the roofline allows, ≥ 0
};
struct PeakOverrides {
  std::optional<double> tflops, tbps;  // --peak-tflops, --peak-tbps
};
RooflinePoint roofline_of(const OpFigures& op, std::string_view device_name, const PeakOverrides& peaks);

}  // namespace scalelens::trace
