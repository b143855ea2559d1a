// Real PyTorch (Debian's python3-torch, on the CPU): torchrun under `scalelens run`, the profiler's
// traces in the run folder, then `scalelens trace` and `scalelens report` over them. The user's
// main path, with nothing simulated but the GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <simdjson.h>

#include "support/run_binary.hpp"

namespace fs = std::filesystem;
using namespace scalelens::testing;

namespace {

bool torch_available() { return run_command("/usr/bin/python3 -c 'import torch' && command -v torchrun").exit_code == 0; }

// CI installs python3-torch and sets SCALELENS_REQUIRE_TORCH, so a broken install fails there.
#define SCALELENS_REQUIRE_TORCH()                                                          \
  do {                                                                                     \
    if (!torch_available()) {                                                              \
      if (std::getenv("SCALELENS_REQUIRE_TORCH")) FAIL() << "PyTorch (python3-torch) missing"; \
      GTEST_SKIP() << "PyTorch not installed (apt install python3-torch)";                 \
    }                                                                                      \
  } while (0)

}  // namespace

TEST(TorchrunCli, ProfiledCpuDdpUnderScalelensRunFeedsTraceAndReport) {
  SCALELENS_REQUIRE_TORCH();
  ScratchDir dir;
  const auto runs = dir / "runs";
  auto r = run_scalelens("run --study " + quoted(runs) + " --label ddp-cpu --interval 0.2 -q -- torchrun --standalone "
                         "--nproc_per_node=2 --redirects 1 --tee 1 " SCALELENS_SOURCE_DIR "/examples/torch-ddp/profile_ddp.py "
                         "--device cpu --width 256 --layers 3 --batch 32 --steps 8");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 rank(s), backend gloo"), std::string::npos) << r.out;
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(runs)) folders.push_back(e.path());
  ASSERT_EQ(folders.size(), 1u);
  const fs::path run = folders[0];

  // The manifest knows the world size from torchrun's arguments and that the wrapper wraps it.
  simdjson::dom::parser parser;
  simdjson::dom::element manifest = parser.load((run / "scalelens.json").string());
  EXPECT_EQ(int64_t(manifest["world_size"]), 2);
  EXPECT_EQ(std::string_view(manifest["launcher"]), "torchrun");

  // One trace per rank, written by torch.profiler into the run folder (SCALELENS_TRACE_DIR).
  std::size_t traces = 0;
  for (const auto& e : fs::directory_iterator(run / "traces"))
    if (e.path().filename().string().find(".pt.trace.json") != std::string::npos) ++traces;
  ASSERT_EQ(traces, 2u);

  // PyTorch 1.13 on the CPU writes array-format traces without distributedInfo: both are read,
  // ranks come from the file names, and each has the 3 active profiler steps of the schedule.
  auto t = run_scalelens("trace " + quoted(run / "traces") + " --format json --no-cache");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  simdjson::dom::parser tp;
  simdjson::dom::element trace = tp.parse(t.out);
  simdjson::dom::array ranks = trace["ranks"];
  ASSERT_EQ(ranks.size(), 2u) << t.out;
  int64_t rank_sum = 0;
  for (simdjson::dom::element rank : ranks) {
    rank_sum += int64_t(rank["rank"]);
    EXPECT_EQ(int64_t(rank["steps"]), 3) << t.out;
    EXPECT_GT(double(rank["step_time_us"]), 0) << t.out;
  }
  EXPECT_EQ(rank_sum, 0 + 1);
  EXPECT_NE(t.out.find("no GPU activity in the trace (CPU-only profile)"), std::string::npos) << t.out;

  // The report: one configuration of 2 ranks, with no false "missing ranks" for the one wrapper.
  auto rep = run_scalelens("report " + quoted(runs) + " --format json -o " + quoted(dir / "report"));
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  simdjson::dom::parser sp;
  simdjson::dom::element summary = sp.parse(rep.out);
  simdjson::dom::array configs = summary["configurations"];
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(int64_t(configs.at(0)["world_size"]), 2);
  EXPECT_GT(double(configs.at(0)["run_time_s"]["mean"]), 0);
  // Epochs and steps came through python/scalelens_log.py: epoch 1 (after warm-up) and its samples.
  EXPECT_GT(double(configs.at(0)["epoch_time_s"]["mean"]), 0) << rep.out;
  EXPECT_GT(double(configs.at(0)["throughput_samples_per_s"]), 0) << rep.out;
  EXPECT_EQ(std::string_view(summary["world_size_unit"]), "ranks");  // no GPU on the node
  for (simdjson::dom::element w : simdjson::dom::array(summary["warnings"]))
    EXPECT_NE(std::string_view(w["code"]), "missing-ranks") << rep.out;
}
