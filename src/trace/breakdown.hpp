#pragma once
// The trace breakdown of DESIGN.md ("Trace breakdown"), per rank and profiler step, and HTA's
// own temporal breakdown and comm/comp overlap (the `--hta` mode), from a parsed Kineto trace.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/user_regex.hpp"
#include "model/study.hpp"
#include "trace/kineto.hpp"
#include "trace/roofline.hpp"

namespace scalelens::trace {

enum class KernelClass : std::uint8_t { computation, communication, memory };

// Which GPU events count as communication. Default: the collective-library kernels.
class CommMatcher {
 public:
  CommMatcher();                                  // nccl…, ncclKernel…, ncclDevKernel…, rccl…
  explicit CommMatcher(UserRegex regex);  // --comm-kernel-regex: matches anywhere in the name
  bool is_comm(std::string_view kernel_name) const;

 private:
  std::optional<UserRegex> regex_;
};

// |·| of the DESIGN.md figures for one step (or for the events outside any step). µs.
struct StepFigures {
  std::int64_t step = -1;  // ProfilerStep number; -1 for "no step"
  double step_time_us = 0, comp_us = 0, comm_us = 0, overlap_us = 0, exposed_comm_us = 0;
  double mem_us = 0, busy_us = 0, span_us = 0, idle_us = 0;
  // Input pipeline: |∪ data-loading CPU ranges| started in the step (DataLoader `__next__`,
  // `enumerate(DataLoader)#…`), and the part of it during which no GPU activity ran at all.
  double dataloader_us = 0, dataloader_gpu_idle_us = 0;
  std::size_t gpu_events = 0;
  bool cut_off = false;  // last step cut by the end of profiling: listed, not summed
};

struct CollectiveFigures {
  std::string name;  // AllReduce, AllGather, SendRecv ...
  std::size_t count = 0;
  double time_us = 0;
  double bytes = 0;        // from In msg nelems × dtype size where the trace has them
  std::size_t sized = 0;   // how many calls had a message size
  double time_sized_us = 0;
  // Algorithm bandwidth: bytes / time over the calls with a size, GB/s; 0 when unknown.
  double algbw_gbps() const { return time_sized_us > 0 ? bytes / (time_sized_us * 1e3) : 0; }
};

struct KernelFigures {
  std::string name;
  KernelClass cls = KernelClass::computation;
  std::size_t count = 0;
  double time_us = 0;
};

// HTA 0.6.1's figures for one rank (see /work/shared/data/README.md for the recipe).
struct HtaFigures {
  bool has_gpu_rows = false;  // HTA cannot compute a temporal breakdown without them
  double kernel_time_us = 0, idle_us = 0, compute_us = 0, non_compute_us = 0;
  double idle_pct = 0, compute_pct = 0, non_compute_pct = 0;  // rounded to 2 decimals like HTA
  double comm_us = 0, overlap_us = 0;
  std::optional<double> overlap_pct;  // null when there is no communication
};

struct RankSummary {
  std::string file;
  int rank = 0;
  bool rank_known = false;
  std::optional<int> world_size;
  std::string backend;                  // distributedInfo.backend, "" when absent
  std::optional<std::int64_t> start_ns;  // profiling's first step as a Unix time, when the clock says
  // baseTimeNanoseconds: Kineto sets it once, when the process's profiler starts, so every trace one
  // process writes (schedule(repeat=N)) has the same, and a rerun's process another.
  std::optional<std::int64_t> base_time_ns;
  std::string device;
  int visible_gpus = 0;  // deviceProperties entries: the GPUs its process could see
  std::vector<StepFigures> steps;   // in step order, cut-off step included but flagged
  StepFigures no_step;              // GPU events launched outside every ProfilerStep
  StepFigures total;                // summed over the steps analysed
  int steps_analysed = 0;
  // Its step times at the GPU's pace, not its ProfilerSteps': its GPU ran behind its CPU (DESIGN.md,
  // "Trace breakdown").
  bool gpu_paced = false;
  std::vector<CollectiveFigures> collectives;
  std::vector<CollectiveCall> calls;  // the collective kernels one by one, in start order
  std::vector<KernelFigures> kernels;  // every kernel name, by time, descending
  std::size_t gpu_events = 0;
  // HTA, both ways: its step filter applies only when the set of traces has ≥ 2 step names.
  HtaFigures hta_filtered, hta_unfiltered;
  std::vector<std::int64_t> step_numbers;  // distinct ProfilerStep numbers in the file
  std::vector<std::string> warnings;
  // FLOPs the profiler estimated (with_flops=True: args.flops of ops) in the analysed steps, and
  // their precision ("bf16", "fp16", "tf32", "fp32"; "" unknown) by the flops-weighted majority
  // of the ops' first input type.
  double flops = 0;
  std::size_t flops_ops = 0;
  std::string flops_precision;
  // The GPU work of the ops with a cost model, by signature, the most GPU time first (at most
  // kMaxOps); `shaped_ops`: how many such ops carried shapes (0: record_shapes was off).
  static constexpr std::size_t kMaxOps = 100;
  std::vector<OpFigures> ops;
  std::size_t shaped_ops = 0;
  bool cached = false;  // read from the summary cache, not parsed

  // Achieved FLOP/s over the analysed steps' time; NaN without flops or steps.
  double achieved_flops_per_s() const;

  double computation_score() const;  // comp / (comp + exposed_comm); NaN when both are 0
  double raw_share() const;          // comp / (comp + comm)
  double overlap_ratio() const;      // overlap / comm
};

RankSummary analyse(const ParsedTrace& trace, const CommMatcher& comm);

// HTA's figures for one parsed trace; `apply_step_filter` as HTA decides over the whole set.
HtaFigures hta_breakdown(const ParsedTrace& trace, bool apply_step_filter);

// HTA's kernel type for a full kernel name (Python re.match rules).
enum class HtaKernelType : std::uint8_t { communication, memory, computation, other };
HtaKernelType hta_kernel_type(std::string_view name);

// |∪ intervals|; sorts in place. Intervals are [start, end) in any unit.
std::int64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>>& intervals);

// Collective name from NCCL args or the kernel name ("ncclKernel_AllReduce_RING_LL_Sum_float" →
// "AllReduce", "ncclDevKernel_SendRecv(...)" → "SendRecv").
std::string collective_from_kernel(std::string_view kernel_name);

// Bytes per element of a PyTorch/NCCL dtype name ("Float", "float32", "BFloat16", ...); 0 unknown.
int dtype_bytes(std::string_view dtype);

// Precision of an op's input type ("c10::BFloat16" → "bf16", "c10::Half" → "fp16", "float" → "fp32"); "" other.
std::string precision_of(std::string_view type);

}  // namespace scalelens::trace
