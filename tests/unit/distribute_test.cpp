// The pieces of `mpirun -n K scalelens ...` that need no MPI: how files are shared out, the loop
// on one process, what a reader's output looks like between processes, and the launcher's signs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>

#include "common/file_io.hpp"
#include "distribute/launch_environment.hpp"
#include "distribute/process_group.hpp"
#include "ingest/read_output_codec.hpp"
#include "support/test_support.hpp"

using namespace scalelens;

TEST(ShareBySize, EveryProcessGetsAboutTheSameBytesAndTheAnswerIsTheSameEachTime) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int processes = 1 + static_cast<int>(rng() % 16);
    std::vector<std::uintmax_t> sizes(rng() % 300);
    for (auto& s : sizes) s = rng() % 2 ? rng() % 1000 : rng() % 1000000;  // small and large files mixed
    const auto owner = share_by_size(sizes, processes);
    ASSERT_EQ(owner, share_by_size(sizes, processes));
    std::vector<std::uintmax_t> load(processes, 0);
    std::uintmax_t largest = 0, total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_GE(owner[i], 0);
      ASSERT_LT(owner[i], processes);
      load[owner[i]] += std::max<std::uintmax_t>(sizes[i], 1);
      largest = std::max(largest, std::max<std::uintmax_t>(sizes[i], 1));
      total += std::max<std::uintmax_t>(sizes[i], 1);
    }
    // Largest first to the least loaded: no process ends more than one file above the mean.
    const double mean = static_cast<double>(total) / processes;
    for (auto l : load) EXPECT_LE(static_cast<double>(l), mean + static_cast<double>(largest)) << "trial " << trial;
  }
}

// Files are weighed by what they hold: a gzipped trace by the size its trailer states.
TEST(ShareBySize, GzippedFilesWeighWhatTheyInflateTo) {
  scalelens::testing::ScratchDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"ph\": \"X\", \"name\": \"kernel\", \"ts\": " + std::to_string(i) + "},\n";
  dir.write("t.json", text);
  ASSERT_EQ(std::system(("cd '" + dir.path().string() + "' && gzip -k t.json && cp t.json.gz twice.json.gz && gzip -c t.json >> twice.json.gz").c_str()), 0);
  const auto disk = [&](const char* name) { return std::filesystem::file_size(dir / name); };
  EXPECT_EQ(content_size_estimate(dir / "t.json", disk("t.json")), text.size());
  EXPECT_EQ(content_size_estimate(dir / "t.json.gz", disk("t.json.gz")), text.size());
  EXPECT_LT(disk("t.json.gz") * 10, text.size()) << "the test's text compresses well";
  // Two members: the trailer is the last member's, still the right order of magnitude.
  EXPECT_EQ(content_size_estimate(dir / "twice.json.gz", disk("twice.json.gz")), text.size());
  // A trailer that cannot be true (below the compressed size): 8 times the file.
  auto bad = dir.write("bad.gz", std::string("\x1f\x8b") + std::string(100, 'x') + std::string(4, '\0'));
  EXPECT_EQ(content_size_estimate(bad, 106), 106u * 8);
  EXPECT_EQ(content_size_estimate(dir / "missing.gz", 500), 500u);
}

TEST(ShareBySize, TheLargestFilesGoToDifferentProcesses) {
  const auto owner = share_by_size({5, 900, 10, 800, 700, 1}, 3);
  EXPECT_EQ(owner[1], 0);
  EXPECT_EQ(owner[3], 1);
  EXPECT_EQ(owner[4], 2);
  EXPECT_EQ(share_by_size({5, 6}, 1), (std::vector<int>{0, 0}));
  EXPECT_TRUE(share_by_size({}, 4).empty());
}

namespace {
SharedWork<int> squares(std::size_t n) {
  SharedWork<int> w;
  w.sizes.assign(n, 10);
  w.threads = 3;
  w.work = [](std::size_t i) { return static_cast<int>(i * i); };
  w.name = [](std::size_t i) { return "file-" + std::to_string(i) + ".json"; };
  return w;
}
}  // namespace

TEST(SharedFor, OneProcessDoesEveryItemInItemOrder) {
  auto results = shared_for(single_process(), squares(100));
  ASSERT_EQ(results.size(), 100u);
  for (std::size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i], static_cast<int>(i * i));
}

TEST(SharedFor, AFailureNamesTheItemAndIsRaisedOnTheCallingThread) {
  auto w = squares(50);
  w.work = [](std::size_t i) -> int {
    if (i == 17) throw std::runtime_error("truncated gzip stream");
    return 1;
  };
  try {
    shared_for(single_process(), w);
    FAIL() << "no failure raised";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "file-17.json: truncated gzip stream");
  }
}

TEST(SharedFor, CancelLeavesTheItemsNotStarted) {
  std::atomic<bool> cancel{false};
  auto w = squares(200);
  w.threads = 1;
  w.work = [&](std::size_t i) {
    if (i == 9) cancel = true;
    return 1;
  };
  w.cancel = &cancel;
  auto results = shared_for(single_process(), w);
  ASSERT_EQ(results.size(), 200u);
  EXPECT_TRUE(results[9].has_value());
  EXPECT_FALSE(results[150].has_value());
}

namespace {

// A reader's output with every kind of member filled, NaN and empty values among them.
ReadOutput filled_output() {
  ReadOutput out;
  scalelens::Run run;
  run.run_id = "r1";
  run.label = "ddp";
  run.world_size = 8;
  run.global_batch_size = 1024.5;
  run.scaling = "strong";
  run.start_ns = 1700000000000000000;
  run.detected_from = {{"world_size", "scalelens.json"}, {"gpu", "nvidia-smi"}};
  run.details_to_fill().missing["energy"] = "no counter";
  run.hosts = {"node01", "node02", ""};
  run.epochs.push_back({3, 2, 10, 2000000000, 512.0});
  run.steps.push_back({0, 7, 5, 9, std::nullopt});
  GpuSeries gpu;
  gpu.node = "node01";
  gpu.index = 3;
  gpu.uuid = "GPU-abc";
  gpu.nominal_timestamps = true;
  for (int i = 0; i < 1000; ++i) {
    GpuSample s;
    s.t_ns = i * 100000000LL;
    s.util_pct = static_cast<float>(i % 100);
    s.energy_mj = i % 7 ? 1e9 + i : kMissing;
    gpu.samples.push_back(s);
  }
  run.gpus.push_back(gpu);
  run.host_series.push_back({"node01", "host.csv", {{1, 50.0, 2e9, kMissing}}});
  run.ranks.push_back({4, "node02", 1, {"0", "1"}, 5, std::nullopt, 0, "ranks/4.json"});
  RankBreakdown b;
  b.rank = 4;
  b.steps = 3;
  b.comm_us = 12.25;
  b.idle_us = std::nan("");
  b.step_times_us = {1.5, 2.5, 3.5};
  b.step_ids = {10, 11, 12};
  b.flops = 3e15;
  b.backend = "nccl";
  b.calls.push_back({"pg0", "AllReduce", 100, 50, 4096, 8, 11, {0, 10, 20, 50}});
  b.op_losses.push_back({"aten::mm", "[[16, 512]]", "compute", 30.0, std::nan("")});
  run.breakdown.push_back(b);
  run.details_to_fill().profiler_averages = ProfilerAverages{10, 5, 2, 1};
  out.runs.push_back(run);
  scalelens::Run plain;  // no details: none is made on the way
  plain.run_id = "r2";
  out.runs.push_back(plain);
  out.attach.steps.push_back({1, 2, 3, 4, 5.0});
  GpuDigest digest;  // a GPU log summarized where it was read (`scalelens report`)
  digest.gpus = 2;
  GpuFigures figures;
  figures.peak_mem_bytes = 4e10;
  figures.util_pct = RangeStat{50.5, std::nan(""), 60};
  UtilHistogram share{};
  share[100] = 0.25f;
  figures.util_time_share = std::make_shared<const SparseUtilHistogram>(SparseUtilHistogram::of(share));
  figures.energy_j = 12.5;
  figures.energy_from = "counter";
  figures.energy_gpus = 2;
  figures.energy_j_per_gpu = 6.25;
  figures.warnings.push_back({Severity::note, "coarse-sampling", "a GPU has only 7 samples", "/runs/a", 0, "ddp/8"});
  figures.nodes = {"node01", ""};
  figures.name = "NVIDIA H100 80GB HBM3";
  digest.figures = std::make_shared<const GpuFigures>(std::move(figures));
  digest.with_uuid = 2;
  digest.page_json = PackedText::pack(R"({"node":"node01","index":3})");
  out.attach.gpu_digest = std::make_shared<const GpuDigest>(std::move(digest));
  out.warn("bad-csv", "a line with 3 fields, 5 expected", "/runs/a/gpu.csv", 17);
  out.diagnostics.back().configuration = "ddp/8";
  return out;
}

}  // namespace

TEST(ReadOutputCodec, EveryMemberCrossesUnchanged) {
  const ReadOutput original = filled_output();
  const std::string bytes = encode_read_output(original);
  auto back = decode_read_output(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(encode_read_output(*back), bytes);  // nothing lost or added on the way
  ASSERT_EQ(back->runs.size(), 2u);
  const scalelens::Run& r = back->runs[0];
  EXPECT_TRUE(r.details_part.filled());
  EXPECT_EQ(back->runs[1].run_id, "r2");
  EXPECT_FALSE(back->runs[1].details_part.filled());
  EXPECT_EQ(r.label, "ddp");
  EXPECT_EQ(r.world_size, 8);
  EXPECT_EQ(r.global_batch_size, 1024.5);
  EXPECT_EQ(r.detected_from.at("gpu"), "nvidia-smi");
  EXPECT_EQ(r.hosts, (std::vector<std::string>{"node01", "node02", ""}));
  ASSERT_EQ(r.gpus.size(), 1u);
  ASSERT_EQ(r.gpus[0].samples.size(), 1000u);
  EXPECT_TRUE(r.gpus[0].nominal_timestamps);
  EXPECT_EQ(r.gpus[0].samples[999].t_ns, 99900000000LL);
  EXPECT_TRUE(std::isnan(r.gpus[0].samples[7].energy_mj));
  EXPECT_TRUE(std::isnan(r.gpus[0].samples[1].mem_used_bytes));
  EXPECT_FALSE(r.steps[0].samples.has_value());
  EXPECT_EQ(r.epochs[0].samples, 512.0);
  EXPECT_EQ(r.ranks[0].local_rank, 1);
  EXPECT_FALSE(r.ranks[0].end_ns.has_value());
  EXPECT_TRUE(std::isnan(r.breakdown[0].idle_us));
  EXPECT_EQ(r.breakdown[0].calls[0].exposed_ns, (std::vector<std::int64_t>{0, 10, 20, 50}));
  EXPECT_EQ(r.breakdown[0].op_losses[0].bound, "compute");
  EXPECT_EQ(r.details().profiler_averages->files, 1);
  EXPECT_EQ(back->attach.steps[0].samples, 5.0);
  ASSERT_TRUE(back->attach.gpu_digest);
  const GpuDigest& d = *back->attach.gpu_digest;
  EXPECT_EQ(d.with_uuid, 2u);
  ASSERT_TRUE(d.figures);
  EXPECT_EQ(d.figures->energy_gpus, 2u);
  EXPECT_EQ(d.figures->energy_j_per_gpu, 6.25);
  EXPECT_TRUE(std::isnan(d.figures->util_pct->min));
  EXPECT_EQ(d.figures->util_time_share->dense()[100], 0.25f);
  EXPECT_EQ(d.figures->util_time_share->values.size(), 1u);
  EXPECT_EQ(d.figures->warnings[0].configuration, "ddp/8");
  EXPECT_EQ(d.figures->nodes, (std::vector<std::string>{"node01", ""}));
  EXPECT_EQ(d.page_json.text(), R"({"node":"node01","index":3})");
  EXPECT_FALSE(back->runs[0].gpu_digest);  // none where none was made
  ASSERT_EQ(back->diagnostics.size(), 1u);
  EXPECT_EQ(back->diagnostics[0].line, 17);
  EXPECT_EQ(back->diagnostics[0].configuration, "ddp/8");
  EXPECT_EQ(back->diagnostics[0].severity, Severity::warning);
}

// A page text set aside in this process's temporary file means nothing to another process: the
// report sets texts aside only when it runs alone, and sending one is an internal error.
TEST(ReadOutputCodec, ATextSetAsideInThisProcessIsNeverSent) {
  const auto spill = TextSpill::create();
  ASSERT_TRUE(spill);
  GpuDigest digest;
  digest.page_json = PackedText::pack(R"({"node":"node01","index":3})");
  digest.page_json.spill_to(spill);
  ASSERT_TRUE(digest.page_json.spill);
  ReadOutput out;
  out.attach.gpu_digest = std::make_shared<const GpuDigest>(std::move(digest));
  EXPECT_THROW(encode_read_output(out), std::logic_error);
}

TEST(ReadOutputCodec, ShortOrGarbledBytesAreRefusedNeverReadPast) {
  const std::string bytes = encode_read_output(filled_output());
  for (std::size_t n = 0; n < bytes.size(); n += 1 + n / 64) EXPECT_FALSE(decode_read_output(bytes.substr(0, n))) << n;
  EXPECT_FALSE(decode_read_output(bytes + "x"));
  // Counts made huge: refused by the bytes left, not allocated.
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bad = bytes;
    for (int k = 0; k < 4; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    (void)decode_read_output(bad);  // any answer, but no crash and no runaway allocation (ASan build)
  }
}

namespace {
// Sets launcher variables for one test and restores the environment after it.
class LauncherVariables {
 public:
  LauncherVariables() {
    for (const char* name : kNames) unsetenv(name);
  }
  ~LauncherVariables() {
    for (const char* name : kNames) unsetenv(name);
  }
  void set(const char* name, const char* value) { setenv(name, value, 1); }

 private:
  static constexpr const char* kNames[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK",
                                           "SLURM_STEP_NUM_TASKS", "SLURM_PROCID",         "PMIX_RANK",
                                           "SCALELENS_NO_MPI"};
};
}  // namespace

TEST(LaunchEnvironment, TellsOneProcessFromManyAndWhetherMpiCanJoinThem) {
  {
    LauncherVariables env;
    EXPECT_FALSE(launch_environment().many());
    env.set("SLURM_PROCID", "0");  // sbatch's own script, or srun -n 1: one process
    env.set("SLURM_STEP_NUM_TASKS", "1");
    EXPECT_FALSE(launch_environment().many());
  }
  {
    LauncherVariables env;
    env.set("OMPI_COMM_WORLD_SIZE", "4");
    env.set("OMPI_COMM_WORLD_RANK", "3");
    auto e = launch_environment();
    EXPECT_EQ(e.size, 4);
    EXPECT_EQ(e.rank, 3);
    EXPECT_TRUE(e.mpi_can_join);
  }
  {
    LauncherVariables env;  // plain srun: MPI would make K one-process jobs
    env.set("SLURM_STEP_NUM_TASKS", "8");
    env.set("SLURM_PROCID", "5");
    auto e = launch_environment();
    EXPECT_EQ(e.size, 8);
    EXPECT_EQ(e.rank, 5);
    EXPECT_EQ(e.launcher, "srun");
    EXPECT_FALSE(e.mpi_can_join);
    env.set("PMIX_RANK", "5");  // srun --mpi=pmix
    EXPECT_TRUE(launch_environment().mpi_can_join);
  }
  {
    LauncherVariables env;  // a child process of an MPI rank, told so
    env.set("OMPI_COMM_WORLD_SIZE", "4");
    env.set("SCALELENS_NO_MPI", "1");
    EXPECT_FALSE(launch_environment().many());
    env.set("SCALELENS_NO_MPI", "0");
    EXPECT_TRUE(launch_environment().many());
  }
  {
    LauncherVariables env;
    env.set("OMPI_COMM_WORLD_SIZE", "two");  // not a count: not taken as a launch
    EXPECT_FALSE(launch_environment().many());
  }
}
