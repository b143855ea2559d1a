#pragma once
// Writes a PyTorch profiler (Kineto) trace in the shape the profiler writes it (compare
// ../shared/data/kineto: dlrm-8rank-v100 for the older layout with Unix-µs timestamps, hta/triton
// for PyTorch ≥ 2.1 with timestamps relative to a trailing baseTimeNanoseconds): deviceProperties,
// distributedInfo, then per step a ProfilerStep#N annotation, the launches (cuda_runtime) and
// their kernels (a GEMM, then an NCCL all-reduce on the communication stream) with matching
// correlation ids, and the profiler's own "PyTorch Profiler (0)" span.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace scalelens::testing {

struct KinetoTraceSpec {
  int rank = 0, world_size = 1;
  std::string backend = "nccl";
  std::string device = "NVIDIA A100-SXM4-80GB";
  std::int64_t first_step_unix_us = 1'730'000'000'000'000;  // when the first profiled step began
  bool relative_to_base_time = true;  // PyTorch ≥ 2.1; false: ts in Unix µs, no baseTimeNanoseconds
  // When the process's profiler started (Unix µs): baseTimeNanoseconds, that second, the same in
  // every trace the process writes (one per schedule(repeat=N) window). 0: 3 s before the first step.
  std::int64_t process_start_unix_us = 0;
  std::int64_t first_step = 1;        // number of the first ProfilerStep
  std::vector<std::int64_t> step_us;  // each step's duration (µs)
  // The all-reduce kernel of each step starts at 50% of the step + comm_delay_us and lasts 40% of
  // it + comm_extend_us (a rank that arrives late starts later; one that waits runs longer).
  std::int64_t comm_delay_us = 0, comm_extend_us = 0;
  double compute_share = 0.6;  // the GEMM runs from 20 µs into the step for this share of it
  std::string comm_kernel = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
  std::string collective = "allreduce";
  std::int64_t comm_nelems = 1048576;  // Float elements of each all-reduce
  bool comm_metadata = true;  // PyTorch ≥ 2.2 kernel args: Collective name, msg sizes, process group
  // record_shapes=True: the GEMM is launched from an "aten::mm" op of these sizes (M×K by K×N) and type.
  std::int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0;
  std::string gemm_type = "c10::BFloat16";
  // Pipeline parallel: per step, these send/recv calls in place of the all-reduce, one after
  // another in its slot, as PyTorch (≥ 2.2, NCCL ≥ 2.19) records them: a "nccl:send 0->1" /
  // "nccl:recv 1<-0" annotation and a record_param_comms op around the launch, and the
  // ncclDevKernel_SendRecv kernel carrying the collective's args with "Dst Rank" / "Src Rank".
  // `peer` is a global rank; `with_peer` false leaves out the ranks (older PyTorch). With
  // comm_metadata false the kernels carry no collective args at all, as before PyTorch 2.2 (the
  // shared DLRM traces' SendRecv kernels).
  struct PointToPoint {
    bool send = true;
    int peer = 0;
    bool with_peer = true;
  };
  std::vector<PointToPoint> p2p;
  // The step's p2p calls batched (batch_isend_irecv: ncclGroupStart/End, as pipeline schedules
  // exchange activations and gradients with both neighbours): each call's record_param_comms and
  // annotation as above but no kernel of its own; then the batch's "nccl:coalesced" annotation and
  // record_param_comms ("Collective name" coalesced, 0 elements, no peer) around the one
  // ncclDevKernel_SendRecv that moves them all, which carries the batch's args.
  bool batch_p2p = false;
};

// "0, 1, 2, 3" as the profiler lists a process group's ranks.
inline std::string ranks_text(int n) {
  std::string s;
  for (int r = 0; r < n; ++r) s += (r ? ", " : "") + std::to_string(r);
  return s;
}

inline std::string kineto_trace(const KinetoTraceSpec& s) {
  // Newer Kineto: base = the process's start, rounded down to a whole second; ts = Unix µs − base.
  const std::int64_t process_start_us = s.process_start_unix_us ? s.process_start_unix_us : s.first_step_unix_us - 3'000'000;
  const std::int64_t base_us = s.relative_to_base_time ? process_start_us / 1'000'000 * 1'000'000 : 0;
  const int pid = 40000 + s.rank, tid = pid;
  std::string out = fmt::format(R"j({{
  "schemaVersion": 1,
  "deviceProperties": [
    {{
      "id": 0, "name": "{}", "totalGlobalMem": 85097971712,
      "computeMajor": 8, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936,
      "numSms": 108, "sharedMemPerBlockOptin": 166912
    }}
  ],
  "distributedInfo": {{"backend": "{}", "rank": {}, "world_size": {}, "pg_count": 1, "pg_config": [{{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:{}", "pg_size": {}}}]}},
  "record_shapes": {},
  "traceEvents": [
)j",
                                s.device, s.backend, s.rank, s.world_size, s.backend, s.world_size, s.gemm_m > 0 ? 1 : 0);
  std::int64_t t = s.first_step_unix_us - base_us;
  const std::int64_t window_begin = t - 50;
  std::int64_t correlation = 1000;
  for (std::size_t k = 0; k < s.step_us.size(); ++k) {
    const std::int64_t dur = s.step_us[k], n = s.first_step + static_cast<std::int64_t>(k);
    out += fmt::format(R"j(  {{
    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": {}, "tid": {},
    "ts": {}, "dur": {},
    "args": {{
      "External id": {},"Ev Idx": {}
    }}
  }},
)j",
                       n, pid, tid, t, dur, correlation, k * 3);
    // GEMM over the first 60% of the step, then the gradients' all-reduce, partly overlapped.
    // A launch on the CPU thread and its kernel on `stream`, tied by one correlation id.
    auto launch = [&](std::int64_t launch_ts, const std::string& kernel, int stream, std::int64_t ts, std::int64_t kernel_dur,
                      const std::string& more_args) {
      const std::int64_t c = ++correlation;
      out += fmt::format(R"j(  {{
    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {}, "tid": {},
    "ts": {}, "dur": 5,
    "args": {{
      "External id": {},
      "cbid": 211, "correlation": {}
    }}
  }},
  {{
    "ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": {},
    "ts": {}, "dur": {},
    "args": {{
      "External id": {},
      "queued": 0, "device": 0, "context": 1,
      "stream": {}, "correlation": {},
      {}
    }}
  }},
)j",
                         pid, tid, launch_ts, c, c, kernel, stream, ts, kernel_dur, c, stream, c, more_args);
    };
    if (s.gemm_m > 0)  // the op that launched the GEMM, as record_shapes=True writes it
      out += fmt::format(R"j(  {{
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": {}, "tid": {},
    "ts": {}, "dur": 9,
    "args": {{
      "External id": {},"Ev Idx": {}, "Input Dims": [[{}, {}], [{}, {}]], "Input type": ["{}", "{}"], "Fwd thread id": 0, "Sequence number": {}
    }}
  }},
)j",
                         pid, tid, t + 8, correlation + 500, k * 3 + 1, s.gemm_m, s.gemm_k, s.gemm_k, s.gemm_n, s.gemm_type,
                         s.gemm_type, k);
    launch(t + 10, "ampere_sgemm_128x64_tn", 7, t + 20, static_cast<std::int64_t>(static_cast<double>(dur) * s.compute_share),
           R"("registers per thread": 122, "grid": [64, 8, 1], "block": [128, 1, 1])");
    for (std::size_t j = 0; j < s.p2p.size(); ++j) {
      const auto& p = s.p2p[j];
      const std::int64_t slot = dur * 4 / 10 / static_cast<std::int64_t>(s.p2p.size());
      const std::int64_t at = t + 30 + 10 * static_cast<std::int64_t>(j);  // op, annotation, launch
      const char* op = p.send ? "send" : "recv";
      const std::string title = p.send ? fmt::format("nccl:send {}->{}", s.rank, p.peer) : fmt::format("nccl:recv {}<-{}", s.rank, p.peer);
      const std::string meta = fmt::format(
          R"("Collective name": "{}", "dtype": "Float", "In msg nelems": {}, "Out msg nelems": {}, "In split size": "[]", "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1, "Group size": {}, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[{}]")",
          op, s.comm_nelems, s.comm_nelems, s.world_size, ranks_text(s.world_size));
      const std::string peer = p.with_peer ? fmt::format(R"(, "Rank": {}, "{}": {})", p.peer, p.send ? "Dst Rank" : "Src Rank", p.peer) : "";
      out += fmt::format(R"j(  {{
    "ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": {}, "tid": {},
    "ts": {}, "dur": 8,
    "args": {{
      "External id": {},"Ev Idx": {}, {}{}
    }}
  }},
  {{
    "ph": "X", "cat": "user_annotation", "name": "{}", "pid": {}, "tid": {},
    "ts": {}, "dur": 6,
    "args": {{
      "External id": {},"Ev Idx": {}
    }}
  }},
)j",
                         pid, tid, at, correlation + 700 + static_cast<std::int64_t>(j), k * 3 + 2,
                         s.comm_metadata ? meta : std::string(R"("Input Dims": [[1048576]], "Input type": ["float"])"),
                         s.comm_metadata ? peer : std::string(), title, pid,
                         tid, at + 1, correlation + 600 + static_cast<std::int64_t>(j), k * 3 + 2);
      if (!s.batch_p2p)
        launch(at + 2, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20,
               t + dur * 5 / 10 + static_cast<std::int64_t>(j) * slot + s.comm_delay_us, slot + s.comm_extend_us,
               s.comm_metadata ? meta + peer : std::string(R"("est. achieved occupancy %": 3)"));
    }
    if (s.batch_p2p && !s.p2p.empty()) {
      const std::int64_t at = t + 30 + 10 * static_cast<std::int64_t>(s.p2p.size());
      const std::string meta = fmt::format(
          R"("Collective name": "coalesced", "dtype": "Byte", "In msg nelems": 0, "Out msg nelems": 0, "In split size": "[]", "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1, "Group size": {}, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[{}]")",
          s.world_size, ranks_text(s.world_size));
      out += fmt::format(R"j(  {{
    "ph": "X", "cat": "user_annotation", "name": "nccl:coalesced", "pid": {}, "tid": {},
    "ts": {}, "dur": 9,
    "args": {{
      "External id": {},"Ev Idx": {}
    }}
  }},
  {{
    "ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": {}, "tid": {},
    "ts": {}, "dur": 8,
    "args": {{
      "External id": {},"Ev Idx": {}, {}
    }}
  }},
)j",
                         pid, tid, at, correlation + 800, k * 3 + 2, pid, tid, at + 1, correlation + 801, k * 3 + 2, meta);
      launch(at + 2, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20, t + dur * 5 / 10 + s.comm_delay_us,
             dur * 4 / 10 + s.comm_extend_us, meta);
    }
    if (s.p2p.empty())
    launch(t + 15, s.comm_kernel, 20, t + dur * 5 / 10 + s.comm_delay_us, dur * 4 / 10 + s.comm_extend_us,
           s.comm_metadata
               ? fmt::format(R"("Collective name": "{}", "In msg nelems": {}, "Out msg nelems": {}, "Group size": {}, "dtype": "Float", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[{}]")",
                             s.collective, s.comm_nelems, s.comm_nelems, s.world_size, ranks_text(s.world_size))
               : std::string(R"("est. achieved occupancy %": 3)"));
    t += dur;
    ++correlation;
  }
  out += fmt::format(R"j(  {{
    "ph": "X", "cat": "Trace", "ts": {}, "dur": {},
    "pid": "Spans", "tid": "PyTorch Profiler",
    "name": "PyTorch Profiler (0)",
    "args": {{
      "Op count": 0
    }}
  }},
  {{
    "name": "Record Window End", "ph": "i", "s": "g",
    "pid": "", "tid": "", "ts": {}
  }}
  ],
  "traceName": "rank{}.pt.trace.json",
  "displayTimeUnit": "ms")j",
                     window_begin, t + 100 - window_begin, t + 100, s.rank);
  if (s.relative_to_base_time) out += fmt::format(",\n  \"baseTimeNanoseconds\": {}", base_us * 1000);
  out += "\n}\n";
  return out;
}

}  // namespace scalelens::testing
