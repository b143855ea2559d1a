// Issue 20 §1: collectives matched across ranks, each rank's wait for the last arrival and the
// transfer after it, on traces written in the profiler's shape with known late ranks and sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/kineto_writer.hpp"
#include "support/test_support.hpp"
#include "trace/collectives.hpp"
#include "trace/link_peaks.hpp"
#include "trace/trace_output.hpp"
#include "trace/trace_set.hpp"

using namespace scalelens;
using namespace scalelens::trace;
using namespace scalelens::testing;

namespace {

constexpr std::int64_t kStart = 1'730'000'000'000'000;

// One job of `n` ranks, 3 steps of 1000 µs: rank r's all-reduce starts `late[r]` µs after the
// others' and every rank's ends at the same time (the early ones run longer, waiting).
TraceSet job(const ScratchDir& dir, const std::vector<std::int64_t>& late, bool metadata = true,
             const std::map<int, std::string>& kernel_of = {}, double compute_share = 0.6) {
  std::int64_t last = 0;
  for (auto l : late) last = std::max(last, l);
  const int n = static_cast<int>(late.size());
  for (int r = 0; r < n; ++r) {
    KinetoTraceSpec spec;
    spec.rank = r;
    spec.world_size = n;
    spec.first_step_unix_us = kStart;
    spec.step_us = {1000, 1000, 1000};
    spec.comm_delay_us = late[static_cast<std::size_t>(r)];
    spec.comm_extend_us = last - late[static_cast<std::size_t>(r)];
    spec.comm_metadata = metadata;
    spec.compute_share = compute_share;
    if (auto k = kernel_of.find(r); k != kernel_of.end()) spec.comm_kernel = k->second;
    dir.write("rank" + std::to_string(r) + ".pt.trace.json", kineto_trace(spec));
  }
  TraceSetOptions options;
  options.inputs = {dir.path()};
  options.cache = false;
  return analyse_traces(options);
}

// Two ranks of one job, each trace as `change` makes it (from 2 steps of 1000 µs from kStart).
template <class Change>
CollectiveMatch two_ranks(const ScratchDir& dir, Change change) {
  for (int r = 0; r < 2; ++r) {
    KinetoTraceSpec spec;
    spec.rank = r;
    spec.world_size = 2;
    spec.first_step_unix_us = kStart;
    spec.step_us = {1000, 1000};
    change(r, spec);
    dir.write("rank" + std::to_string(r) + ".json", kineto_trace(spec));
  }
  TraceSetOptions options;
  options.inputs = {dir.path()};
  options.cache = false;
  return analyse_traces(options).collective_match;
}

}  // namespace

TEST(CollectiveMatch, TwoRanksOneLateByAKnownAmount) {
  ScratchDir dir;
  auto set = job(dir, {0, 100});
  const auto& m = set.collective_match;
  EXPECT_EQ(m.method, "process group");
  ASSERT_EQ(m.instances.size(), 3u);  // one all-reduce per step
  for (const auto& i : m.instances) {
    EXPECT_EQ(i.name, "AllReduce");
    EXPECT_EQ(i.group, "0 [0, 1]");
    EXPECT_EQ(i.ranks, 2);
    EXPECT_DOUBLE_EQ(i.skew_us, 100);
    EXPECT_DOUBLE_EQ(i.transfer_us, 400);                   // the last arrival's kernel: 40% of 1000 µs
    EXPECT_DOUBLE_EQ(i.bytes, 1048576.0 * 4);               // Float
    EXPECT_DOUBLE_EQ(i.algbw_gbps, 1048576.0 * 4 / 400e3);  // bytes per ns
    EXPECT_DOUBLE_EQ(i.busbw_gbps, i.algbw_gbps * 2 * 1 / 2);  // all-reduce: 2(n−1)/n
    EXPECT_EQ(i.last_rank, 1);
    EXPECT_EQ(i.first_rank, 0);
  }
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(m.ranks[0].wait_us, 3 * 100);
  EXPECT_DOUBLE_EQ(m.ranks[0].transfer_us, 3 * 400);
  EXPECT_DOUBLE_EQ(m.ranks[1].wait_us, 0);
  EXPECT_DOUBLE_EQ(m.ranks[1].transfer_us, 3 * 400);
  EXPECT_EQ(m.ranks[1].arrived_last, 3u);
  EXPECT_EQ(m.ranks[0].arrived_first, 3u);
  EXPECT_EQ(m.ranks[0].unmatched, 0u);
  EXPECT_TRUE(m.notes.empty());
}

// Within a node or across nodes, and the bus bandwidth against that link's peak: 4 ranks on one
// A100 SXM4 node (NVLink 3, 300 GB/s per direction), on two nodes of 2 over NDR InfiniBand (50
// GB/s), against a peak given by hand, and without knowing the nodes.
TEST(CollectiveMatch, IntraAndInterNodeAgainstTheLinkPeak) {
  ScratchDir dir;
  job(dir, {0, 0, 0, 0});
  auto with = [&](LinkOptions links) {
    TraceSetOptions options;
    options.inputs = {dir.path()};
    options.cache = false;
    options.links = std::move(links);
    return analyse_traces(options).collective_match;
  };
  const double busbw = 1048576.0 * 4 / 400e3 * 2 * 3 / 4;  // bytes / 400 µs × 2(n−1)/n

  auto one_node = with({4, std::nullopt, ""});
  ASSERT_EQ(one_node.instances.size(), 3u);
  for (const auto& i : one_node.instances) {
    EXPECT_EQ(i.members, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(i.scope, "intra-node");
    EXPECT_DOUBLE_EQ(i.busbw_gbps, busbw);
    EXPECT_DOUBLE_EQ(i.peak_gbps, 300);
    EXPECT_DOUBLE_EQ(i.busbw_of_peak, busbw / 300);
  }
  ASSERT_EQ(one_node.links.size(), 1u);
  EXPECT_EQ(one_node.links[0].scope, "intra-node");
  EXPECT_EQ(one_node.links[0].calls, 3u);
  EXPECT_DOUBLE_EQ(one_node.links[0].median_busbw_gbps, busbw);
  EXPECT_EQ(one_node.links[0].peak_from, "NVLink 3 (A100)");
  EXPECT_EQ(one_node.gpus_per_node_from, "--gpus-per-node");

  auto two_nodes = with({2, std::nullopt, "NDR"});
  for (const auto& i : two_nodes.instances) {
    EXPECT_EQ(i.scope, "inter-node");
    EXPECT_DOUBLE_EQ(i.peak_gbps, 50);
  }
  EXPECT_EQ(two_nodes.links.at(0).peak_from, "--network NDR");
  // Across nodes without a network named: the peak is unknown, not guessed.
  auto no_network = with({2, std::nullopt, ""});
  EXPECT_TRUE(std::isnan(no_network.instances.at(0).peak_gbps));
  EXPECT_TRUE(std::isnan(no_network.links.at(0).peak_gbps));

  auto by_hand = with({2, 100.0, "ndr"});
  EXPECT_DOUBLE_EQ(by_hand.instances.at(0).peak_gbps, 100);
  EXPECT_DOUBLE_EQ(by_hand.instances.at(0).busbw_of_peak, busbw / 100);
  EXPECT_EQ(by_hand.links.at(0).peak_from, "--link-gbps");

  // The writer's traces list one GPU each: within or across nodes cannot be told.
  auto unknown = with({});
  EXPECT_EQ(unknown.gpus_per_node, 0);
  EXPECT_EQ(unknown.instances.at(0).scope, "");
  EXPECT_EQ(unknown.links.at(0).scope, "unknown");

  EXPECT_DOUBLE_EQ(*network_gbps("slingshot-11"), 25);
  EXPECT_FALSE(network_gbps("token-ring"));
  EXPECT_DOUBLE_EQ(*intra_node_link_gbps("Tesla V100-SXM2-32GB"), 150);
  EXPECT_DOUBLE_EQ(*intra_node_link_gbps("NVIDIA H100 80GB HBM3"), 450);
  EXPECT_DOUBLE_EQ(*intra_node_link_gbps("NVIDIA A100-PCIE-40GB"), 31.5);
  EXPECT_FALSE(intra_node_link_gbps("AMD Instinct MI250X"));
}

TEST(CollectiveMatch, FourRanksWaitAddsUpToTheKernelTime) {
  ScratchDir dir;
  auto set = job(dir, {0, 40, 10, 90});  // the waiting kernels end inside the profiler's window
  const auto& m = set.collective_match;
  ASSERT_EQ(m.instances.size(), 3u);
  for (const auto& i : m.instances) {
    EXPECT_DOUBLE_EQ(i.skew_us, 90);
    EXPECT_EQ(i.last_rank, 3);
    EXPECT_DOUBLE_EQ(i.busbw_gbps, i.algbw_gbps * 2 * 3 / 4);
  }
  const double waits[] = {90, 50, 80, 0};
  for (int r = 0; r < 4; ++r) {
    const auto& s = m.ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(s.rank, r);
    EXPECT_DOUBLE_EQ(s.wait_us, 3 * waits[r]) << r;
    // Wait + transfer is each rank's collective kernel time, as its own figures count it.
    EXPECT_DOUBLE_EQ(s.wait_us + s.transfer_us, set.ranks[static_cast<std::size_t>(r)].total.comm_us) << r;
  }
  EXPECT_EQ(m.ranks[3].arrived_last, 3u);
  // The JSON carries it per rank and per instance.
  const auto json = format_json(set, OutputOptions{});
  EXPECT_NE(json.find("\"comm_wait_us\": 270"), std::string::npos) << json;
  EXPECT_NE(json.find("\"collective_matching\": {\"method\": \"process group\", \"instances\": 3"), std::string::npos);
  EXPECT_NE(json.find("\"skew_us\": 90"), std::string::npos);
}

// Older traces name no process group nor size: the kernels are matched by order, and said so.
TEST(CollectiveMatch, WithoutMetadataByOrder) {
  ScratchDir dir;
  auto set = job(dir, {30, 0}, false);
  const auto& m = set.collective_match;
  EXPECT_EQ(m.method, "order");
  ASSERT_EQ(m.instances.size(), 3u);
  EXPECT_EQ(m.instances[0].group, "");
  EXPECT_LT(m.instances[0].bytes, 0);
  EXPECT_TRUE(std::isnan(m.instances[0].algbw_gbps));
  EXPECT_DOUBLE_EQ(m.ranks[1].wait_us, 3 * 30);
}

// When the ranks' sequences disagree, matching stops rather than guessing.
TEST(CollectiveMatch, DisagreeingOrderStopsMatching) {
  ScratchDir dir;
  auto set = job(dir, {0, 0}, false, {{1, "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"}});
  const auto& m = set.collective_match;
  EXPECT_TRUE(m.instances.empty());
  EXPECT_TRUE(m.ranks.empty());
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("call #1 is AllReduce on rank 0 but AllGather on rank 1"), std::string::npos) << m.notes[0];
}

TEST(CollectiveMatch, ClocksThatCannotBeComparedAreSaid) {
  ScratchDir dir;
  auto m = two_ranks(dir, [](int, KinetoTraceSpec& spec) {
    spec.relative_to_base_time = false;
    spec.first_step_unix_us = 4'458'676'522'690;  // µs since boot, no base
  });
  EXPECT_TRUE(m.instances.empty());
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("clocks cannot be compared"), std::string::npos);
}

TEST(CollectiveMatch, BusFactorsFollowNccl) {
  EXPECT_DOUBLE_EQ(bus_factor("AllReduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor("allreduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor("AllGather", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor("_reduce_scatter_base", 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor("all_to_all", 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor("Broadcast", 16), 1);
  EXPECT_DOUBLE_EQ(bus_factor("SendRecv", 2), 1);
  EXPECT_TRUE(std::isnan(bus_factor("other", 4)));
}

// The shared DLRM traces (8 V100s, older trace without collective metadata): every rank's 8
// collective kernels matched by order; per rank, waits + transfer = its collective kernel time
// (within 1%), and the rank that most often arrives last waits least.
TEST(CollectiveMatch, RealDlrmTracesSplitWaitFromTransfer) {
  SCALELENS_REQUIRE_REALDATA(data);
  TraceSetOptions options;
  options.inputs = {data / "kineto/dlrm-8rank-v100"};
  options.cache = false;
  auto set = analyse_traces(options);
  const auto& m = set.collective_match;
  EXPECT_EQ(m.method, "order");
  ASSERT_EQ(m.ranks.size(), 8u);
  EXPECT_EQ(m.instances.size(), 8u);
  const RankCommSplit* most_last = &m.ranks[0];
  const RankCommSplit* least_wait = &m.ranks[0];
  for (std::size_t r = 0; r < 8; ++r) {
    const auto& s = m.ranks[r];
    EXPECT_EQ(s.matched, 8u);
    EXPECT_EQ(s.unmatched, 0u);
    double kernel_us = 0;
    for (const auto& c : set.ranks[r].collectives) kernel_us += c.time_us;
    EXPECT_NEAR(s.wait_us + s.transfer_us, kernel_us, 0.01 * kernel_us) << "rank " << r;
    // Its exposed communication splits the same way, and adds up to the rank's exposed time.
    const double exposed = set.ranks[r].total.exposed_comm_us;
    EXPECT_NEAR(s.exposed_wait_us + s.exposed_transfer_us, exposed, 0.01 * exposed) << "rank " << r;
    if (s.arrived_last > most_last->arrived_last) most_last = &s;
    if (s.wait_us < least_wait->wait_us) least_wait = &s;
  }
  EXPECT_EQ(most_last->rank, least_wait->rank);
  EXPECT_TRUE(m.notes.empty());
  // Its 5 SendRecv kernels a rank record no peer (the all-to-all of its embeddings): paired by
  // order as an all-to-all, which their counts and times allow, and said so.
  EXPECT_EQ(m.send_recv_by_order, 5u);
  const auto note = std::find_if(set.diagnostics.begin(), set.diagnostics.end(),
                                 [](const Diagnostic& d) { return d.code == "send-recv-by-order"; });
  ASSERT_NE(note, set.diagnostics.end());
  EXPECT_NE(note->message.find("5 SendRecv calls record no peer rank"), std::string::npos) << note->message;
  // Each trace lists the node's 8 V100 SXM2 (deviceProperties): one node, NVLink 2.
  EXPECT_EQ(m.gpus_per_node, 8);
  EXPECT_EQ(m.gpus_per_node_from, "deviceProperties");
  ASSERT_EQ(m.links.size(), 1u);
  EXPECT_EQ(m.links[0].scope, "intra-node");
  EXPECT_EQ(m.links[0].calls, m.instances.size());
  EXPECT_DOUBLE_EQ(m.links[0].peak_gbps, 150);
}

// A rank that profiled one step more (or whose last step was cut off on the others) has an extra
// call: it is left unmatched with a note, not paired with another call.
TEST(CollectiveMatch, AnExtraCallOnOneRankIsLeftUnmatched) {
  ScratchDir dir;
  auto m = two_ranks(dir, [](int r, KinetoTraceSpec& spec) { spec.step_us.resize(r == 0 ? 3 : 4, 1000); });
  ASSERT_EQ(m.instances.size(), 3u);
  EXPECT_EQ(m.ranks[1].matched, 3u);
  EXPECT_EQ(m.ranks[1].unmatched, 1u);
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("only rank 1 of its 2 traced ranks has calls in step 4; they are left unmatched"),
            std::string::npos)
      << m.notes[0];
}

// Two ranks that profiled different steps (rank 1's schedule began a step later: steps 2..4
// against 1..3): calls are matched within a step only (steps 2 and 3), never rank 1's step-2 call
// with rank 0's step-1 call; the steps one rank has alone are noted; the set says which rank
// profiled which steps, and its straggler rows are the shared steps'.
TEST(CollectiveMatch, RanksThatProfiledDifferentStepsAreMatchedWithinAStep) {
  ScratchDir dir;
  for (int r = 0; r < 2; ++r) {
    KinetoTraceSpec spec;
    spec.rank = r;
    spec.world_size = 2;
    spec.first_step = 1 + r;
    spec.first_step_unix_us = kStart + r * 1000;  // rank 1's step 2 runs when rank 0's does
    spec.step_us = {1000, 1000, 1000};
    spec.comm_delay_us = r == 1 ? 100 : 0;
    spec.comm_extend_us = r == 0 ? 100 : 0;
    dir.write("rank" + std::to_string(r) + ".pt.trace.json", kineto_trace(spec));
  }
  TraceSetOptions options;
  options.inputs = {dir.path()};
  options.cache = false;
  const auto set = analyse_traces(options);
  const auto& m = set.collective_match;
  ASSERT_EQ(m.instances.size(), 2u);
  for (const auto& i : m.instances) EXPECT_DOUBLE_EQ(i.skew_us, 100);  // by order alone: 1000 µs apart
  EXPECT_EQ(m.instances[1].index, 2u);  // its place in the group's calls: after steps 1 and 2
  EXPECT_EQ(m.ranks[0].unmatched, 1u);
  EXPECT_EQ(m.ranks[1].unmatched, 1u);
  ASSERT_EQ(m.notes.size(), 2u);
  EXPECT_NE(m.notes[0].find("only rank 0 of its 2 traced ranks has calls in step 1"), std::string::npos) << m.notes[0];
  EXPECT_NE(m.notes[1].find("only rank 1 of its 2 traced ranks has calls in step 4"), std::string::npos) << m.notes[1];
  EXPECT_NE(set.misaligned_steps.find("rank 0: steps 1, 2, 3; rank 1: steps 2, 3, 4"), std::string::npos)
      << set.misaligned_steps;
  ASSERT_EQ(set.stragglers.size(), 2u);
  EXPECT_EQ(set.stragglers[0].step, 2);
  EXPECT_EQ(set.stragglers[1].step, 3);
  bool warned = false;
  for (const auto& d : set.diagnostics) warned |= d.code == "misaligned-steps";
  EXPECT_TRUE(warned);
}

// A rank's clock far from the others' (30 s, or 0.5 s; past a minute its traces are another
// job's, split_into_jobs): its all-reduce "starts" after the others' have ended, which no
// collective can do. Nothing is matched, and the rank and its offset are named; within the slack
// NTP leaves, the calls are matched as ever.
TEST(CollectiveMatch, ACallThatEndedBeforeAnotherRankStartedItRefusesTheMatch) {
  for (const std::int64_t offset_us : {30'000'000LL, -500'000LL}) {
    ScratchDir dir;
    auto m = two_ranks(dir, [&](int r, KinetoTraceSpec& spec) { spec.first_step_unix_us += r == 1 ? offset_us : 0; });
    EXPECT_TRUE(m.instances.empty()) << offset_us;
    EXPECT_TRUE(m.ranks.empty());
    EXPECT_EQ(m.method, "");
    // Of two ranks the later is named (the lower median's the earlier's start).
    const std::string want = offset_us > 0 ? "rank 1 started it 30.000 s after the median" : "rank 0 started it 0.500 s after the median";
    EXPECT_NE(m.clock_conflict.find(want), std::string::npos) << m.clock_conflict;
    EXPECT_NE(m.clock_conflict.find("(2 such calls)"), std::string::npos) << m.clock_conflict;
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_EQ(m.notes[0], m.clock_conflict);
  }
  ScratchDir near;
  auto m = two_ranks(near, [&](int r, KinetoTraceSpec& spec) { spec.first_step_unix_us += r == 1 ? 5'000 : 0; });
  EXPECT_EQ(m.instances.size(), 2u);
  EXPECT_EQ(m.clock_conflict, "");
  // A broadcast's root may finish sending into a late receiver's buffers before that receiver's
  // kernel starts: a rank 0.5 s late is a straggler there, not a clock apart.
  ScratchDir rooted;
  m = two_ranks(rooted, [&](int r, KinetoTraceSpec& spec) {
    spec.comm_kernel = "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    spec.collective = "broadcast";
    spec.first_step_unix_us += r == 1 ? 500'000 : 0;
  });
  EXPECT_EQ(m.instances.size(), 2u);
  EXPECT_EQ(m.clock_conflict, "");
}

// The report carries it per configuration: of the matched collectives' kernel time, the share
// spent waiting. Two ranks, rank 1 late by 100 µs on each of 3 calls of 400 µs transfer:
// waits 3 × 100 (rank 0) + 0, transfers 3 × 400 on each rank: 300 / (300 + 2400).
TEST(CollectiveMatch, ReportGivesTheWaitingShareOfCollectiveTime) {
  ScratchDir dir;
  job(dir, {0, 100});  // its folder of traces, with no scalelens.json: a run of 2 ranks
  IngestOptions in;
  in.inputs = {dir.path().string()};
  auto summary = analyze(ingest(in), AnalysisOptions{});
  ASSERT_EQ(summary.configurations.size(), 1u);
  ASSERT_TRUE(summary.configurations[0].comm_wait_share.has_value());
  EXPECT_NEAR(*summary.configurations[0].comm_wait_share, 300.0 / 2700.0, 1e-12);
}

// The report's bandwidth-vs-message-size points: 4 ranks, 3 all-reduces of 4 MiB each lasting
// 400 µs after the last arrival, so one size bin with the exact bus bandwidth; and the GEMM each
// step launches from an aten::mm of recorded shape, against the roofline, per step and rank.
TEST(CollectiveMatch, ReportGivesBandwidthBySizeAndOpsAgainstTheRoofline) {
  ScratchDir dir;
  for (int r = 0; r < 4; ++r) {
    KinetoTraceSpec spec;
    spec.rank = r;
    spec.world_size = 4;
    spec.first_step_unix_us = kStart;
    spec.step_us = {1000, 1000, 1000};
    spec.gemm_m = spec.gemm_n = spec.gemm_k = 2048;
    dir.write("rank" + std::to_string(r) + ".pt.trace.json", kineto_trace(spec));
  }
  IngestOptions in;
  in.inputs = {dir.path().string()};
  auto summary = analyze(ingest(in), AnalysisOptions{});
  ASSERT_EQ(summary.configurations.size(), 1u);
  const auto& c = summary.configurations[0];
  ASSERT_EQ(c.collective_bandwidth.size(), 1u);
  const auto& p = c.collective_bandwidth[0];
  EXPECT_EQ(p.collective, "AllReduce");
  EXPECT_DOUBLE_EQ(p.bytes, 1048576.0 * 4);
  EXPECT_DOUBLE_EQ(p.busbw_gbps, 1048576.0 * 4 / 400e3 * 2 * 3 / 4);
  const auto& run = summary.runs.at(0);
  ASSERT_GE(run.steps_timed, 1u);
  EXPECT_EQ(p.calls, run.trace().collective_bandwidth.at(0).calls);
  ASSERT_EQ(c.roofline_ops.size(), 1u);
  const auto& op = c.roofline_ops[0];
  EXPECT_EQ(op.name, "aten::mm");
  EXPECT_EQ(op.bound, "compute");
  EXPECT_DOUBLE_EQ(op.gpu_us, 600);  // 60% of each 1000 µs step, per step and rank
  const double ideal_us = 2.0 * 2048 * 2048 * 2048 / 312e12 * 1e6;  // A100 bf16 peak
  EXPECT_NEAR(op.lost_us, 600 - ideal_us, 1e-6);
}

// `scalelens report` and `scalelens trace` agree on the shared DLRM traces.
TEST(CollectiveMatch, ReportAndTraceAgreeOnRealDlrm) {
  SCALELENS_REQUIRE_REALDATA(data);
  TraceSetOptions options;
  options.inputs = {data / "kineto/dlrm-8rank-v100"};
  options.cache = false;
  const auto m = analyse_traces(options).collective_match;
  double wait = 0, all = 0;
  for (const auto& s : m.ranks) {
    wait += s.wait_us;
    all += s.wait_us + s.transfer_us;
  }
  IngestOptions in;
  in.inputs = {(data / "kineto/dlrm-8rank-v100").string()};
  auto summary = analyze(ingest(in), AnalysisOptions{});
  ASSERT_EQ(summary.configurations.size(), 1u);
  ASSERT_TRUE(summary.configurations[0].comm_wait_share.has_value());
  EXPECT_NEAR(*summary.configurations[0].comm_wait_share, wait / all, 1e-12);
  EXPECT_GT(*summary.configurations[0].comm_wait_share, 0.5);  // DLRM's ranks mostly wait for rank 7
}

// Exposed communication (not hidden behind the step's GEMM) split the same way. GEMM [20, 570) µs
// into each step; rank 0's all-reduce [500, 1000) waits until 600 (rank 1 arrives then): exposed
// [570, 1000), of which [570, 600) waiting; rank 1's [600, 1000) exposed, all transfer.
TEST(CollectiveMatch, ExposedCommunicationSplitsIntoWaitingAndTransfer) {
  ScratchDir dir;
  auto set = job(dir, {0, 100}, true, {}, 0.55);
  const auto& m = set.collective_match;
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(m.ranks[0].exposed_wait_us, 3 * 30);
  EXPECT_DOUBLE_EQ(m.ranks[0].exposed_transfer_us, 3 * 400);
  EXPECT_DOUBLE_EQ(m.ranks[1].exposed_wait_us, 0);
  EXPECT_DOUBLE_EQ(m.ranks[1].exposed_transfer_us, 3 * 400);
  // Each rank's exposed split adds up to its exposed communication.
  for (std::size_t r = 0; r < 2; ++r)
    EXPECT_DOUBLE_EQ(m.ranks[r].exposed_wait_us + m.ranks[r].exposed_transfer_us, set.ranks[r].total.exposed_comm_us) << r;
  IngestOptions in;
  in.inputs = {dir.path().string()};
  auto summary = analyze(ingest(in), AnalysisOptions{});
  ASSERT_TRUE(summary.configurations.at(0).exposed_comm_wait_share.has_value());
  EXPECT_NEAR(*summary.configurations[0].exposed_comm_wait_share, 90.0 / (90 + 1200 + 1200), 1e-12);
}

// Members that disagree at different calls: the group is matched up to the earliest, and the note
// names the first member in rank order that disagrees there, whichever member is read first.
TEST(CollectiveMatch, TheEarliestDisagreementAcrossMembersEndsTheMatching) {
  auto calls_of = [](const std::vector<std::pair<std::string, double>>& calls, std::int64_t late_ns) {
    std::vector<CollectiveCall> out;
    for (std::size_t i = 0; i < calls.size(); ++i)
      out.push_back({"g", calls[i].first, kStart + static_cast<std::int64_t>(i) * 1'000'000 + late_ns, 500'000,
                     calls[i].second, 3, {}});
    return out;
  };
  const auto ref = calls_of({{"AllReduce", 100}, {"AllReduce", 100}, {"AllReduce", 100}, {"AllReduce", 100}}, 0);
  // Rank 1 disagrees at call #3 (another collective), rank 2 at call #2 (another size).
  const auto one = calls_of({{"AllReduce", 100}, {"AllReduce", 100}, {"AllGather", 100}, {"AllReduce", 100}}, 2000);
  const auto two = calls_of({{"AllReduce", 100}, {"AllReduce", 200}, {"AllReduce", 100}, {"AllReduce", 100}}, 1000);
  auto m = match_collectives(std::vector<RankCalls>{{0, true, &ref}, {1, true, &one}, {2, true, &two}});
  ASSERT_EQ(m.instances.size(), 1u);
  EXPECT_EQ(m.instances[0].last_rank, 1);
  EXPECT_EQ(m.instances[0].first_rank, 0);
  EXPECT_EQ(m.instances[0].members, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(m.ranks.size(), 3u);
  EXPECT_EQ(m.ranks[2].matched, 1u);
  EXPECT_EQ(m.ranks[2].unmatched, 3u);
  EXPECT_DOUBLE_EQ(m.ranks[0].wait_us, 2);  // waited 2 µs for rank 1
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("call #2 (AllReduce) moves 100 bytes on rank 0 but 200 on rank 2"), std::string::npos)
      << m.notes[0];
  // Rank 1 disagreeing at call #2 as well: it comes first in rank order, so it is the one named.
  const auto early = calls_of({{"AllReduce", 100}, {"AllGather", 100}, {"AllReduce", 100}, {"AllReduce", 100}}, 2000);
  m = match_collectives(std::vector<RankCalls>{{0, true, &ref}, {2, true, &two}, {1, true, &early}});
  ASSERT_EQ(m.instances.size(), 1u);
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("call #2 is AllReduce on rank 0 but AllGather on rank 1"), std::string::npos) << m.notes[0];
}

// Rank 1's trace lacks step 2's first all-reduce (Kineto dropped the event): paired in order, its
// second "ended before" rank 0's first started, which read as clocks apart and threw away steps 1
// and 3, which pair up. That step alone is left unmatched, with a note that says why.
TEST(CollectiveMatch, ACallMissingFromOneTraceLeavesItsStepUnmatchedNotAClockConflict) {
  auto steps = [](bool drop_step2_first) {
    std::vector<CollectiveCall> out;
    for (std::int64_t step = 1; step <= 3; ++step) {
      const std::int64_t t = kStart + step * 100'000'000;
      if (!(drop_step2_first && step == 2)) out.push_back({"g", "AllReduce", t + 100'000, 500'000, 4000, 2, step, {}});
      out.push_back({"g", "AllReduce", t + 30'100'000, 500'000, 4000, 2, step, {}});
    }
    return out;
  };
  const auto full = steps(false), dropped = steps(true);
  auto m = match_collectives(std::vector<RankCalls>{{0, true, &full}, {1, true, &dropped}});
  EXPECT_EQ(m.clock_conflict, "");
  EXPECT_EQ(m.instances.size(), 4u);  // steps 1 and 3, two calls each
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_EQ(m.ranks[0].unmatched, 2u);
  EXPECT_EQ(m.ranks[1].unmatched, 1u);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes[0].find("in step 2 the ranks have different numbers of calls"), std::string::npos) << m.notes[0];
  // Clocks 1000 s apart still show in the steps that pair up: refused, with the other notes kept.
  auto late = dropped;
  for (auto& c : late) c.start_ns += 1'000'000'000'000;
  m = match_collectives(std::vector<RankCalls>{{0, true, &full}, {1, true, &late}});
  EXPECT_TRUE(m.instances.empty());
  EXPECT_NE(m.clock_conflict.find("rank 1 started it 1000.000 s after"), std::string::npos) << m.clock_conflict;
  EXPECT_GE(m.notes.size(), 2u);
}

namespace {
// A two-stage pipeline (1F1B's steady state): each step rank 0 sends its activations to rank 1
// and receives its gradients back; rank 1 receives, then sends. Point-to-point calls only, in
// PyTorch's shape (kernel ncclDevKernel_SendRecv with "Collective name" send/recv and the peer);
// rank 1's clock `offset_us` ahead.
TraceSet pipeline(const ScratchDir& dir, std::int64_t offset_us, bool with_peer = true) {
  for (int r = 0; r < 2; ++r) {
    KinetoTraceSpec spec;
    spec.rank = r;
    spec.world_size = 2;
    spec.first_step_unix_us = kStart + (r == 1 ? offset_us : 0);
    spec.step_us = {1000, 1000, 1000};
    const int peer = 1 - r;
    spec.p2p = {{r == 0, peer, with_peer}, {r == 1, peer, with_peer}};
    dir.write("rank" + std::to_string(r) + ".pt.trace.json", kineto_trace(spec));
  }
  TraceSetOptions options;
  options.inputs = {dir.path()};
  options.cache = false;
  return analyse_traces(options);
}
}  // namespace

// Send/recv pair two ranks, not the group: matched in order across the group they paired rank 0's
// send with rank 1's receive and its receive with rank 1's send, and a clock 1000 s ahead became
// a 1000 s skew, waits of whole kernels, silently. They are left out of the wait/transfer split
// with a note; a receive that ended before its send started (beyond NTP's slack) is a clock
// conflict, in `trace` and in `report`.
TEST(CollectiveMatch, SendRecvOnlyJobIsCheckedForClocksApartAndNotSplit) {
  ScratchDir dir;
  auto set = pipeline(dir, 0);
  auto m = set.collective_match;
  EXPECT_EQ(m.clock_conflict, "");
  EXPECT_TRUE(m.instances.empty());
  EXPECT_TRUE(m.ranks.empty());
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("12 point-to-point calls (send/recv) are not matched"), std::string::npos) << m.notes[0];
  // Each rank's send/recv time is still its communication time.
  EXPECT_GT(set.ranks.at(0).total.comm_us, 0);

  for (const std::int64_t offset_us : {30'000'000LL, -30'000'000LL}) {
    ScratchDir apart;
    set = pipeline(apart, offset_us);
    m = set.collective_match;
    EXPECT_TRUE(m.instances.empty()) << offset_us;
    // Ahead, rank 1's sends start after rank 0's receives of them ended; behind, its receives end
    // before rank 0's sends start.
    const std::string want = offset_us > 0 ? "rank 0's receive from rank 1" : "rank 1's receive from rank 0";
    EXPECT_NE(m.clock_conflict.find(want), std::string::npos) << m.clock_conflict;
    EXPECT_NE(m.clock_conflict.find("ended 30.000 s before"), std::string::npos) << m.clock_conflict;
    EXPECT_NE(m.clock_conflict.find("(3 such calls)"), std::string::npos) << m.clock_conflict;
    bool warned = false;
    for (const auto& d : set.diagnostics) warned |= d.code == "clock-conflict";
    EXPECT_TRUE(warned);
    IngestOptions in;
    in.inputs = {apart.path().string()};
    auto summary = analyze(ingest(in), AnalysisOptions{});
    ASSERT_EQ(summary.configurations.size(), 1u);
    EXPECT_FALSE(summary.configurations[0].comm_wait_share.has_value());
    bool reported = false;
    for (const auto& w : summary.warnings) reported |= w.code == "clock-conflict";
    EXPECT_TRUE(reported);
  }
  // Without the peers (older PyTorch) the pairs cannot be formed: the note says the clocks were
  // not checked against them.
  ScratchDir unpaired;
  m = pipeline(unpaired, 30'000'000LL, false).collective_match;
  EXPECT_TRUE(m.instances.empty());
  EXPECT_EQ(m.clock_conflict, "");
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("no peer rank"), std::string::npos) << m.notes[0];
}

// Older traces (PyTorch < 2.2): SendRecv kernels with no collective args, so no peer, paired in
// order across every rank as if each were one collective of all. A four-stage pipeline: the end
// stages make 2 calls a step, the middle ones 4, and rank 0's send to rank 1 was "matched" with
// rank 2's receive from rank 1, its wait and transfer made of another pair's times, unchecked.
// They cannot be an all-to-all (the counts differ): left unmatched, said. Two stages, whose calls
// line up and overlap as an all-to-all's would, are paired by order with the coded note
// `send-recv-by-order`; and if they did not overlap they are left unmatched, not paired.
TEST(CollectiveMatch, SendRecvWithoutArgsIsPairedByOrderOnlyWhereItCanBeAnAllToAll) {
  auto pipeline_without_args = [](const ScratchDir& dir, int stages, std::int64_t last_offset_us) {
    for (int r = 0; r < stages; ++r) {
      KinetoTraceSpec spec;
      spec.rank = r;
      spec.world_size = stages;
      spec.first_step_unix_us = kStart + (r == stages - 1 ? last_offset_us : 0);
      spec.step_us = {1000, 1000, 1000};
      spec.comm_metadata = false;
      if (r > 0) spec.p2p.push_back({false, r - 1});
      if (r < stages - 1) spec.p2p.push_back({true, r + 1}), spec.p2p.push_back({false, r + 1});
      if (r > 0) spec.p2p.push_back({true, r - 1});
      dir.write("rank" + std::to_string(r) + ".pt.trace.json", kineto_trace(spec));
    }
    TraceSetOptions options;
    options.inputs = {dir.path()};
    options.cache = false;
    return analyse_traces(options);
  };
  auto has = [](const TraceSet& set, const std::string& code) {
    return std::any_of(set.diagnostics.begin(), set.diagnostics.end(), [&](const Diagnostic& d) { return d.code == code; });
  };
  ScratchDir four;
  auto set = pipeline_without_args(four, 4, 0);
  EXPECT_TRUE(set.collective_match.instances.empty());
  EXPECT_TRUE(set.collective_match.ranks.empty());
  ASSERT_EQ(set.collective_match.notes.size(), 3u);  // one per step
  EXPECT_NE(set.collective_match.notes[0].find("in step 1 the ranks have different numbers of calls, among them SendRecv "
                                               "kernels that record no peer"),
            std::string::npos)
      << set.collective_match.notes[0];
  EXPECT_FALSE(has(set, "send-recv-by-order"));

  ScratchDir two;
  set = pipeline_without_args(two, 2, 0);
  EXPECT_EQ(set.collective_match.method, "order");
  EXPECT_EQ(set.collective_match.instances.size(), 6u);
  EXPECT_EQ(set.collective_match.send_recv_by_order, 6u);
  ASSERT_TRUE(has(set, "send-recv-by-order"));
  for (const auto& d : set.diagnostics)
    if (d.code == "send-recv-by-order") {
      EXPECT_EQ(d.severity, Severity::note);
      EXPECT_NE(d.message.find("6 SendRecv calls record no peer rank"), std::string::npos) << d.message;
    }
  IngestOptions in;
  in.inputs = {two.path().string()};
  auto summary = analyze(ingest(in), AnalysisOptions{});
  bool reported = false;
  for (const auto& w : summary.warnings) reported |= w.code == "send-recv-by-order";
  EXPECT_TRUE(reported);

  ScratchDir apart;
  set = pipeline_without_args(apart, 2, 30'000'000LL);
  EXPECT_TRUE(set.collective_match.instances.empty());
  EXPECT_EQ(set.collective_match.clock_conflict, "");
  ASSERT_FALSE(set.collective_match.notes.empty());
  EXPECT_NE(set.collective_match.notes[0].find("which an all-to-all cannot do"), std::string::npos) << set.collective_match.notes[0];
  EXPECT_FALSE(has(set, "send-recv-by-order"));
}

// The shared sampled-2of128 traces (ranks 0 and 1 of 128): their SendRecv kernels record no peer,
// and the second of each step ends on one rank tens of ms before the other starts it, which one
// all-to-all cannot do. They were paired by order (a waiting share of 0%); now left unmatched.
TEST(CollectiveMatch, RealSampledSendRecvThatCannotBeAnAllToAllIsNotPaired) {
  SCALELENS_REQUIRE_REALDATA(data);
  TraceSetOptions options;
  options.inputs = {data / "kineto/hta/sampled-2of128"};
  options.cache = false;
  const auto set = analyse_traces(options);
  const auto& m = set.collective_match;
  EXPECT_TRUE(m.instances.empty());
  EXPECT_EQ(m.clock_conflict, "");
  EXPECT_EQ(m.send_recv_by_order, 0u);
  ASSERT_EQ(m.notes.size(), 2u);  // steps 551 and 552
  EXPECT_NE(m.notes[0].find("step 551's call #2 (SendRecv, no peer recorded)"), std::string::npos) << m.notes[0];
  EXPECT_NE(m.notes[0].find("which an all-to-all cannot do"), std::string::npos) << m.notes[0];
}

// A three-stage pipeline whose stages exchange activations and gradients with both neighbours in
// one batch per step (batch_isend_irecv: ncclGroupStart/End), as pipeline schedules do: one
// ncclDevKernel_SendRecv per step on each rank moves every send and receive of the batch, recorded
// as "coalesced" with 0 elements and no peer. It was taken for a collective of the whole process
// group: rank 0's batch with rank 1 "matched" with rank 2's, and its 0 elements made a message of
// 0 bytes moved at 0 GB/s. It is a batch of sends and receives: not matched into instances, and of
// unknown size, said in the note.
TEST(CollectiveMatch, BatchedSendRecvIsPointToPointOfUnknownSize) {
  ScratchDir dir;
  for (int r = 0; r < 3; ++r) {
    KinetoTraceSpec spec;
    spec.rank = r;
    spec.world_size = 3;
    spec.first_step_unix_us = kStart;
    spec.step_us = {1000, 1000, 1000};
    spec.batch_p2p = true;
    if (r > 0) spec.p2p.push_back({false, r - 1}), spec.p2p.push_back({true, r - 1});  // activations in, gradients back
    if (r < 2) spec.p2p.push_back({true, r + 1}), spec.p2p.push_back({false, r + 1});
    dir.write("rank" + std::to_string(r) + ".pt.trace.json", kineto_trace(spec));
  }
  TraceSetOptions options;
  options.inputs = {dir.path()};
  options.cache = false;
  const auto set = analyse_traces(options);
  const auto& m = set.collective_match;
  EXPECT_EQ(m.clock_conflict, "");
  EXPECT_TRUE(m.instances.empty());
  EXPECT_TRUE(m.ranks.empty());
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("9 point-to-point calls (send/recv) are not matched"), std::string::npos) << m.notes[0];
  EXPECT_NE(m.notes[0].find("batched"), std::string::npos) << m.notes[0];
  for (const auto& r : set.ranks) {
    ASSERT_EQ(r.collectives.size(), 1u);
    EXPECT_EQ(r.collectives[0].name, "SendRecv");
    EXPECT_EQ(r.collectives[0].count, 3u);
    EXPECT_EQ(r.collectives[0].sized, 0u);  // no size known: no bandwidth, rather than 0 GB/s
    EXPECT_GT(r.total.comm_us, 0);
  }
  IngestOptions in;
  in.inputs = {dir.path().string()};
  auto summary = analyze(ingest(in), AnalysisOptions{});
  ASSERT_EQ(summary.configurations.size(), 1u);
  EXPECT_FALSE(summary.configurations[0].comm_wait_share.has_value());
  EXPECT_TRUE(summary.configurations[0].collective_bandwidth.empty());
}

// Rank 0 (the group's first member) made an extra all-reduce in step 1; step 2's first call
// disagrees. Numbered through the group by rank 0's counts, that was "call #3", which is rank 1's
// second call: the note numbers calls within the named step, as every rank finds them, and says
// which step the extra call is in.
TEST(CollectiveMatch, NotesNumberCallsWithinTheirStep) {
  auto calls_of = [](const std::vector<std::pair<std::int64_t, std::string>>& calls) {
    std::vector<CollectiveCall> out;
    for (std::size_t i = 0; i < calls.size(); ++i)
      out.push_back({"g", calls[i].second, kStart + static_cast<std::int64_t>(i) * 1'000'000, 500'000, 100, 2, calls[i].first, {}});
    return out;
  };
  const auto zero = calls_of({{1, "AllReduce"}, {1, "AllReduce"}, {2, "AllReduce"}});
  const auto one = calls_of({{1, "AllReduce"}, {2, "AllGather"}});
  auto m = match_collectives(std::vector<RankCalls>{{0, true, &zero}, {1, true, &one}});
  ASSERT_EQ(m.notes.size(), 2u);
  EXPECT_NE(m.notes[0].find("rank 0 has 2 calls in step 1, 1 more than the fewest of the group (1)"), std::string::npos)
      << m.notes[0];
  EXPECT_NE(m.notes[1].find("step 2's call #1 is AllReduce on rank 0 but AllGather on rank 1"), std::string::npos) << m.notes[1];
}
