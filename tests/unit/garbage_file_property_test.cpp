// Property: adding any one garbage file (random bytes, random bytes behind a format's header, an
// empty file, a truncated copy of a real input) anywhere in a real study never changes the figures
// of the configurations it does not belong to. The study: the MLPerf HPC v1.0 DeepCAM logs
// (../shared/data) and a small scalelens run-folder study (ddp on 1 and 2 GPUs, with GPU samples,
// steps and a Kineto trace). A file belongs to the configurations of the runs whose folder holds it
// (or that it defines itself; a scalelens.json: of every run under its folder, which it declares one
// run); configurations measured against one of those (its baseline) may change their speedup and
// efficiency, nothing else.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>

#include <fmt/format.h>

#include "support/study_figures.hpp"
#include "support/test_support.hpp"

using namespace scalelens;
namespace fs = std::filesystem;
using scalelens::testing::ScratchDir;

namespace {

constexpr const char* kGpuHeader = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";

// A run folder as `scalelens run` writes it (see limits_test.cpp), with a Kineto trace of rank 0.
void write_run(const ScratchDir& dir, const std::string& name, int p, double epoch_s) {
  dir.write(name + "/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "ddp", "world_size": {}, "nodes": 1, )"
                        R"("gpus_per_node": {}, "global_batch_size": 64, "start_ns": 1000000000, "end_ns": 21000000000, )"
                        R"("status": "complete"}})", name, p, p));
  std::string epochs = "rank,epoch,start_ns,end_ns,samples\n", steps = "rank,step,start_ns,end_ns,samples\n";
  for (int e = 0; e < 3; ++e)
    for (int r = 0; r < p; ++r) {
      const auto start = 1'000'000'000 + static_cast<std::int64_t>(e * epoch_s * 1e9);
      epochs += fmt::format("{},{},{},{},{}\n", r, e, start, start + static_cast<std::int64_t>(epoch_s * 1e9), 100 / p);
      steps += fmt::format("{},{},{},{},{}\n", r, e, start, start + 100'000'000, 64 / p);
    }
  dir.write(name + "/epochs.csv", epochs);
  dir.write(name + "/steps.csv", steps);
  std::string gpu = kGpuHeader;
  for (std::int64_t t = 1; t <= 21; t += 5)
    for (int g = 0; g < p; ++g)
      gpu += fmt::format("{}000000000,{},GPU-{},{},10,1e9,{},{},1400,60\n", t, g, g, 40 + 2 * t, 100 + t, t * 150'000);
  dir.write(name + "/nodes/n01/gpu.csv", gpu);
  dir.write(name + "/ranks/0.json", R"({"schema": "scalelens.rank/1", "rank": 0, "host": "n01", "local_rank": 0})");
  dir.write(name + "/traces/rank0.pt.trace.json",
            R"j({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": )j" + std::to_string(p) + R"j(}, "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 1000},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 20, "dur": 5, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "gemm", "ts": 100, "dur": 500, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "ts": 500, "dur": 300, "args": {"stream": 7, "correlation": 2}},
{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": 2000}]})j");
}

bool inside(const fs::path& file, const fs::path& folder) {
  auto f = file.lexically_normal().string(), d = folder.lexically_normal().string();
  return f == d || (f.size() > d.size() && f.compare(0, d.size(), d) == 0 && f[d.size()] == '/');
}

// Every file of the study that a garbage copy can be cut from.
std::vector<fs::path> real_inputs(const fs::path& root) {
  std::vector<fs::path> files;
  for (auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().string().find(".scalelens-cache") == std::string::npos &&
        e.path().filename() != "LICENSE.md")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string random_bytes(std::mt19937& rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

}  // namespace

TEST(GarbageFileProperty, OneGarbageFileNeverChangesTheFiguresOfConfigurationsItDoesNotBelongTo) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  fs::copy(data / "mlperf-hpc-v1.0-deepcam", dir / "mlperf", fs::copy_options::recursive);
  // Copies are read-only like the originals; the test writes beside them.
  for (auto& e : fs::recursive_directory_iterator(dir.path()))
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  fs::permissions(dir / "mlperf", fs::perms::owner_write, fs::perm_options::add);
  write_run(dir, "runs/ddp-1", 1, 6.0);
  write_run(dir, "runs/ddp-2", 2, 4.0);
  AnalysisOptions options;
  options.threads = 1;
  const auto before = scalelens::testing::report_of(dir.path().string(), options);
  ASSERT_EQ(before.configurations.size(), 4u);  // deepcam/512, deepcam/2048, ddp/1, ddp/2

  const auto inputs = real_inputs(dir.path());
  std::vector<fs::path> folders{dir.path(), dir / "mlperf", dir / "runs", dir / "new"};
  for (const auto& f : inputs) folders.push_back(f.parent_path());
  const std::vector<std::string> names{"garbage.bin", "result_9.txt", "epochs.csv", "gpu.csv", "smi.csv",
                                       "scalelens.json", "rank9.pt.trace.json", "9.json", "meta.yaml"};
  const std::vector<std::string> headers{
      kGpuHeader, "rank,epoch,start_ns,end_ns,samples\n", ":::MLLOG {\"time_ms\": ", "{\"traceEvents\": [",
      "timestamp, index, utilization.gpu [%], power.draw [W]\n", "{\"schema\": \"scalelens.run/1\", ",
      "{\"schema\": \"scalelens.rank/1\", \"rank\": "};

  constexpr int kSeeds = 60;
  int owned = 0;  // seeds whose file went into a run (the others must change nothing at all)
  for (int seed = 1; seed <= kSeeds; ++seed) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    std::string content, kind;
    switch (seed % 4) {
      case 0: kind = "random bytes"; content = random_bytes(rng, pick(4096)); break;
      case 1: kind = "empty"; break;
      case 2: {
        const auto& src = inputs[pick(inputs.size())];
        const auto text = scalelens::testing::slurp(src);
        content = text.substr(0, text.empty() ? 0 : pick(text.size()));
        kind = "truncated copy of " + fs::relative(src, dir.path()).string();
        break;
      }
      default: {
        const auto& h = headers[pick(headers.size())];
        content = h + random_bytes(rng, pick(512));
        kind = "random bytes behind '" + h.substr(0, 20) + "'";
      }
    }
    const fs::path folder = folders[pick(folders.size())];
    fs::path file = folder / names[pick(names.size())];
    for (int i = 0; fs::exists(file); ++i) file = folder / fmt::format("g{}-{}", i, names[pick(names.size())]);
    SCOPED_TRACE(fmt::format("seed {}: {} at {}", seed, kind, fs::relative(file, dir.path()).string()));
    fs::create_directories(folder);
    dir.write(fs::relative(file, dir.path()).string(), content);

    const auto after = scalelens::testing::report_of(dir.path().string(), options);
    // The configurations the garbage belongs to: of the runs whose folder holds it, or that it defines.
    std::set<std::string> owners;
    for (const auto& c : after.configurations)
      for (auto i : c.run_indices)
        if (inside(file, after.runs[i].path)) owners.insert(c.key());
    // A manifest (by its name or schema) declares its folder one run: everything under it is that
    // run's (DESIGN.md), so the runs there before are its own.
    if (file.filename() == "scalelens.json" || content.find("\"scalelens.run/") != std::string::npos)
      for (const auto& c : before.configurations)
        for (auto i : c.run_indices)
          if (inside(before.runs[i].path, file.parent_path())) owners.insert(c.key());
    owned += !owners.empty();
    for (const auto& c : before.configurations) {
      if (owners.count(c.key())) continue;
      auto it = std::find_if(after.configurations.begin(), after.configurations.end(), [&](auto& a) { return a.key() == c.key(); });
      ASSERT_NE(it, after.configurations.end()) << c.key() << " disappeared";
      EXPECT_EQ(scalelens::testing::absolute_figures_of(*it), scalelens::testing::absolute_figures_of(c)) << c.key();
      // baseline_label names the baseline's curve.
      const std::string baseline = c.baseline_label + "/" + std::to_string(c.baseline_world_size.value_or(0));
      const std::string baseline_after = it->baseline_label + "/" + std::to_string(it->baseline_world_size.value_or(0));
      if (!owners.count(baseline) && !owners.count(baseline_after))
        EXPECT_EQ(scalelens::testing::relative_figures_of(*it), scalelens::testing::relative_figures_of(c)) << c.key();
    }
    fs::remove(file);
    std::error_code ec;
    if (folder == dir / "new") fs::remove_all(folder, ec);
  }
  EXPECT_GT(owned, kSeeds / 10);
  EXPECT_LT(owned, kSeeds);
  // The study is back as it was.
  EXPECT_EQ(scalelens::testing::figures_by_configuration(scalelens::testing::report_of(dir.path().string(), options)),
            scalelens::testing::figures_by_configuration(before));
}
