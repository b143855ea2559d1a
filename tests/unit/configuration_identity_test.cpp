// Configuration identity (label, system, world size), MLPerf HPC results layouts (several systems,
// weak-scaling instances), splits, the mixed-inputs check and provenance (issue 13 §2, §4).
// Inputs are MLPerf HPC result trees in the shape of mlcommons/hpc_results_v1.0 and v2.0:
// <submitter>/results/<system>/<strong|weak>/<benchmark>/result_N.txt, <submitter>/systems/<system>.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "collect/collect_run.hpp"
#include "collect/run_folder.hpp"
#include "ingest/ingest.hpp"
#include "report/summary_writers.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"

using namespace scalelens;

namespace {

using scalelens::testing::read_study;

constexpr std::int64_t kT0 = 1632596327552;  // ms, as in the real logs

// One :::MLLOG line as mlcommons/logging writes it.
std::string mllog(std::int64_t time_ms, const std::string& event, const std::string& key, const std::string& value,
                  const std::string& metadata = R"("file": "./train.py", "lineno": 141)") {
  return fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"{}\", \"key\": \"{}\", \"value\": {}, "
                     "\"metadata\": {{{}}}}}\n",
                     time_ms, event, key, value, metadata);
}

struct LogSpec {
  std::string benchmark = "deepcam", platform = "SUBMISSION_PLATFORM_PLACEHOLDER";
  int nodes = 2, per_node = 8;
  double batch = 256;
  std::optional<int> instance_id;
  std::int64_t start_ms = kT0 + 30000;
  std::vector<double> epoch_s;  // back to back from start_ms
  double tail_s = 1;            // run_stop after the last epoch
};

std::string mlperf_log(const LogSpec& s) {
  std::string out;
  out += mllog(kT0, "POINT_IN_TIME", "submission_benchmark", "\"" + s.benchmark + "\"");
  out += mllog(kT0 + 49, "POINT_IN_TIME", "submission_platform",
               fmt::format("\"{}x{}\"", s.nodes, s.platform));
  out += mllog(kT0 + 51, "POINT_IN_TIME", "number_of_ranks", std::to_string(s.nodes * s.per_node));
  out += mllog(kT0 + 51, "POINT_IN_TIME", "number_of_nodes", std::to_string(s.nodes));
  out += mllog(kT0 + 51, "POINT_IN_TIME", "accelerators_per_node", std::to_string(s.per_node));
  if (s.instance_id) out += mllog(kT0 + 51, "POINT_IN_TIME", "instance_id", std::to_string(*s.instance_id));
  out += mllog(kT0 + 51, "POINT_IN_TIME", "global_batch_size", fmt::format("{}", s.batch));
  out += mllog(kT0 + 2000, "POINT_IN_TIME", "train_samples", "121266");
  out += mllog(s.start_ms, "INTERVAL_START", "run_start", "null");
  std::int64_t t = s.start_ms;
  for (std::size_t e = 0; e < s.epoch_s.size(); ++e) {
    const auto meta = fmt::format(R"("file": "./train.py", "lineno": 333, "epoch_num": {})", e + 1);
    out += mllog(t, "INTERVAL_START", "epoch_start", "null", meta);
    t += static_cast<std::int64_t>(std::llround(s.epoch_s[e] * 1000));
    out += mllog(t, "INTERVAL_END", "epoch_stop", "null", meta);
  }
  out += mllog(t + static_cast<std::int64_t>(s.tail_s * 1000), "INTERVAL_END", "run_stop", "null",
               R"("file": "./train.py", "lineno": 415, "status": "success")");
  return out;
}

std::string system_json(const std::string& name, int nodes, const std::string& gpu) {
  return fmt::format(R"({{
    "submitter": "Test", "division": "closed", "status": "onprem", "system_name": "{}",
    "number_of_nodes": "{}", "host_processors_per_node": "2", "accelerators_per_node": "8",
    "accelerator_model_name": "{}", "framework": "PyTorch NVIDIA Release 21.09"
}}
)",
                     name, nodes, gpu);
}

const ConfigurationSummary* find(const Summary& s, const std::string& label, const std::string& system, int p) {
  for (const auto& c : s.configurations)
    if (c.label == label && c.system == system && c.world_size == p) return &c;
  return nullptr;
}

std::size_t count_code(const Summary& s, const std::string& code) {
  return static_cast<std::size_t>(std::count_if(s.warnings.begin(), s.warnings.end(), [&](auto& d) { return d.code == code; }));
}

const Diagnostic* warning(const Summary& s, const std::string& code) {
  auto it = std::find_if(s.warnings.begin(), s.warnings.end(), [&](auto& d) { return d.code == code; });
  return it == s.warnings.end() ? nullptr : &*it;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

}  // namespace

TEST(MachineName, SizeTokenIsCutFromMlperfSystemNames) {
  // Through the reader: the system folder names of hpc_results_v1.0/v2.0.
  const std::pair<const char*, const char*> cases[] = {
      {"dgxa100_n64_ngc21.09_pytorch", "dgxa100"},
      {"perlmutter_10x128x4_ngc21.09_pytorch", "perlmutter"},
      {"juwelsbooster_gpu_n3072_pytorch1.10_22x128", "juwelsbooster_gpu"},
      {"fugaku_82944xA64FX_tensorflow_closed", "fugaku"},
      {"longhorn-pytorch", "longhorn-pytorch"},
      {"32xXE8545x4A100-SXM4-40GB", "XE8545x4A100-SXM4-40GB"},
      // hpc_results_v3.0's Clemson system_name: the count written apart was kept in the name.
      {"18 xR750 - 2 xA100 - PCIe - 80 GB", "R750 - 2 xA100 - PCIe - 80 GB"},
  };
  for (auto [folder, machine] : cases) {
    scalelens::testing::ScratchDir dir;
    dir.write(fmt::format("S/results/{}/strong/deepcam/result_1.txt", folder), mlperf_log({.epoch_s = {10, 9}}));
    auto study = read_study(dir);
    ASSERT_EQ(study.runs.size(), 1u) << folder;
    EXPECT_EQ(study.runs[0].system, machine) << folder;
    EXPECT_EQ(study.runs[0].scaling, "strong");
    EXPECT_EQ(study.runs[0].details().benchmark, "deepcam");
  }
}

TEST(MlperfSystems, TwoMachinesWithTheSameGpuCountAreTwoCurves) {
  scalelens::testing::ScratchDir dir;
  // NVIDIA: 2 nodes × 8 (16 GPUs) twice and 4 × 8 (32 GPUs) once; HelmholtzAI: 4 × 4 = 16 GPUs.
  dir.write("NVIDIA/systems/dgxa100_n2_pytorch.json", system_json("dgxa100_n2_pytorch", 2, "NVIDIA A100-SXM4-80GB"));
  dir.write("NVIDIA/systems/dgxa100_n4_pytorch.json", system_json("dgxa100_n4_pytorch", 4, "NVIDIA A100-SXM4-80GB"));
  dir.write("HelmholtzAI/systems/juwelsbooster_gpu_n4_pytorch1.10.json",
            system_json("juwelsbooster_gpu_n4_pytorch1.10", 4, "NVIDIA A100-SXM4-40GB"));
  dir.write("NVIDIA/results/dgxa100_n2_pytorch/strong/deepcam/result_1.txt", mlperf_log({.epoch_s = {30, 10, 12}}));
  dir.write("NVIDIA/results/dgxa100_n2_pytorch/strong/deepcam/result_2.txt", mlperf_log({.epoch_s = {30, 11, 11}}));
  dir.write("NVIDIA/results/dgxa100_n4_pytorch/strong/deepcam/result_1.txt", mlperf_log({.nodes = 4, .epoch_s = {20, 6, 5}}));
  dir.write("HelmholtzAI/results/juwelsbooster_gpu_n4_pytorch1.10/strong/deepcam/result_1.txt",
            mlperf_log({.platform = "JUWELS_Booster", .nodes = 4, .per_node = 4, .epoch_s = {40, 20, 22}}));
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 4u);
  auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 3u);  // (label, world size) alone would pool 3 runs at 16 GPUs
  EXPECT_EQ(s.systems, (std::vector<std::string>{"dgxa100", "juwelsbooster_gpu"}));
  const auto* nv16 = find(s, "deepcam", "dgxa100", 16);
  const auto* nv32 = find(s, "deepcam", "dgxa100", 32);
  const auto* jw16 = find(s, "deepcam", "juwelsbooster_gpu", 16);
  ASSERT_TRUE(nv16 && nv32 && jw16);
  EXPECT_EQ(nv16->runs, 2u);
  EXPECT_EQ(nv16->curve, "deepcam @ dgxa100");
  EXPECT_EQ(nv16->key(), "deepcam @ dgxa100/16");
  // Epochs after the warm-up one: NVIDIA 16 GPUs {10, 12, 11, 11} → 11 s; 32 GPUs {6, 5} → 5.5 s.
  EXPECT_NEAR(nv16->epoch_time_s->mean, 11, 1e-9);
  EXPECT_NEAR(*nv32->speedup, 11 / 5.5, 1e-9);
  EXPECT_EQ(nv32->baseline_world_size, 16);
  // The other machine is its own curve with its own baseline: itself.
  EXPECT_NEAR(jw16->epoch_time_s->mean, 21, 1e-9);
  EXPECT_NEAR(*jw16->speedup, 1, 1e-12);
  EXPECT_EQ(count_code(s, "possibly-mixed-inputs"), 0u);
  // Provenance names the files, the reader, the system file and the GPU count source.
  EXPECT_NE(nv16->provenance.find("2 inputs under"), std::string::npos) << nv16->provenance;
  EXPECT_NE(nv16->provenance.find("(mlperf reader)"), std::string::npos) << nv16->provenance;
  EXPECT_NE(nv16->provenance.find("system dgxa100 from system_name dgxa100_n2_pytorch"), std::string::npos) << nv16->provenance;
  EXPECT_NE(nv16->provenance.find("GPUs: 16 per run (number_of_ranks)"), std::string::npos) << nv16->provenance;
  EXPECT_NE(nv16->provenance.find("excluded: 2 warm-up epochs"), std::string::npos) << nv16->provenance;
  // The table shows a system column only because there are two systems; JSON carries the key.
  const auto table = render_table(s, {});
  EXPECT_NE(table.find("system"), std::string::npos) << table;
  EXPECT_NE(table.find("speedup against each label's (on each system) smallest GPU count"), std::string::npos) << table;
  EXPECT_NE(table.find("juwelsbooster_gpu"), std::string::npos) << table;
  const auto json = render_summary_json(s);
  EXPECT_NE(json.find(R"("system":"juwelsbooster_gpu")"), std::string::npos);
  EXPECT_NE(json.find(R"("curve":"deepcam @ dgxa100")"), std::string::npos);
}

TEST(MlperfSystems, OneSystemShowsNoSystemColumn) {
  scalelens::testing::ScratchDir dir;
  dir.write("NVIDIA/results/dgxa100_n2_pytorch/strong/deepcam/result_1.txt", mlperf_log({.epoch_s = {30, 10}}));
  dir.write("NVIDIA/results/dgxa100_n4_pytorch/strong/deepcam/result_1.txt", mlperf_log({.nodes = 4, .epoch_s = {20, 5}}));
  auto s = analyze(read_study(dir), {});
  ASSERT_EQ(s.configurations.size(), 2u);
  EXPECT_EQ(s.configurations[0].system, "dgxa100");  // from the results folder: no systems/ file here
  EXPECT_EQ(s.configurations[0].curve, "deepcam");
  EXPECT_NE(s.configurations[0].provenance.find("from results folder dgxa100_n2_pytorch"), std::string::npos);
  EXPECT_NEAR(*s.configurations[1].speedup, 2, 1e-9);
  const auto table = render_table(s, {});
  EXPECT_EQ(table.find("system"), std::string::npos) << table;
}

TEST(MlperfWeakScaling, InstancesOfOneWeakFolderAreOneRun) {
  scalelens::testing::ScratchDir dir;
  dir.write("NVIDIA/systems/dgxa100_n6_pytorch.json", system_json("dgxa100_n6_pytorch", 6, "NVIDIA A100-SXM4-80GB"));
  // Three concurrent instances of 2 nodes × 8 GPUs (the v1.0/v2.0 NVIDIA weak deepcam shape),
  // starting 0, 5 and 2 s after kT0 + 30 s, batch 128 each.
  const std::vector<std::vector<double>> epochs = {{40, 10, 12}, {41, 14, 16}, {39, 11, 11}};
  const std::int64_t starts[] = {kT0 + 30000, kT0 + 35000, kT0 + 32000};
  const double tails[] = {2, 3, 1};
  for (int i = 0; i < 3; ++i)
    dir.write(fmt::format("NVIDIA/results/dgxa100_n6_pytorch/weak/deepcam/result_{}.txt", i + 1),
              mlperf_log({.batch = 128, .instance_id = i, .start_ms = starts[i], .epoch_s = epochs[i], .tail_s = tails[i]}));
  // A pruned instance (Fugaku's weak/cosmoflow/pruned_results/ shape) is not counted.
  dir.write("NVIDIA/results/dgxa100_n6_pytorch/weak/deepcam/pruned_results/result_4.txt",
            mlperf_log({.batch = 128, .instance_id = 3, .epoch_s = {40, 90, 95}}));
  auto study = read_study(dir);
  ASSERT_EQ(study.runs.size(), 3u);
  EXPECT_TRUE(std::any_of(study.diagnostics.begin(), study.diagnostics.end(), [](auto& d) { return d.code == "pruned-instance"; }));
  auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 1u);
  const auto& c = s.configurations[0];
  EXPECT_EQ(c.world_size, 48);  // 3 instances × 16 GPUs
  EXPECT_EQ(c.runs, 1u);
  EXPECT_EQ(c.instances, 3u);
  EXPECT_EQ(c.gpus_per_instance, 16);
  EXPECT_EQ(c.nodes, 6);
  EXPECT_EQ(c.scaling, "weak");
  // Per-instance epoch times after warm-up, pooled: {10, 12, 14, 16, 11, 11}.
  EXPECT_EQ(c.epoch_time_s->n, 6u);
  EXPECT_NEAR(c.epoch_time_s->mean, 74.0 / 6, 1e-9);
  // Per-instance run times: 62+2, 71+3, 61+1 s.
  EXPECT_NEAR(c.run_time_s->mean, (64.0 + 74 + 62) / 3, 1e-9);
  // MLPerf HPC throughput metric: TTTa = last run_stop − first run_start over the instances
  // = (35 + 74) − 30 = 79 s; 3 models / (79/60 min).
  EXPECT_NEAR(*c.time_to_train_all_s, 79, 1e-9);
  EXPECT_NEAR(*c.models_per_minute, 3 / (79.0 / 60), 1e-9);
  // Aggregate samples/s: each instance's train_samples / its mean kept epoch time, summed.
  EXPECT_NEAR(*c.throughput_samples_per_s, 121266 / 11.0 + 121266 / 15.0 + 121266 / 11.0, 1e-6);
  EXPECT_NE(c.provenance.find("GPUs: 3 instances × 16 per instance (number_of_ranks)"), std::string::npos) << c.provenance;
  EXPECT_NE(c.provenance.find("excluded: 3 warm-up epochs; 1 pruned instance (pruned_results/)"), std::string::npos)
      << c.provenance;
  EXPECT_EQ(count_code(s, "possibly-mixed-inputs"), 0u);
  EXPECT_EQ(count_code(s, "few-repeats"), 0u);  // three instances are three repeats
  const auto json = render_summary_json(s);
  EXPECT_NE(json.find(R"("instances":3,"gpus_per_instance":16)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("instance_id":2)"), std::string::npos);
}

TEST(MlperfWeakScaling, NeverPooledWithStrongScalingRuns) {
  scalelens::testing::ScratchDir dir;
  // Strong: 2 × 8 = 16 GPUs; weak: 2 instances of 1 × 8 = 16 GPUs on the same machine.
  dir.write("NVIDIA/results/dgxa100_n2_pytorch/strong/deepcam/result_1.txt", mlperf_log({.epoch_s = {30, 10, 10}}));
  dir.write("NVIDIA/results/dgxa100_n2_pytorch/weak/deepcam/result_1.txt",
            mlperf_log({.nodes = 1, .instance_id = 0, .epoch_s = {30, 20, 20}}));
  dir.write("NVIDIA/results/dgxa100_n2_pytorch/weak/deepcam/result_2.txt",
            mlperf_log({.nodes = 1, .instance_id = 1, .epoch_s = {30, 22, 22}}));
  auto s = analyze(read_study(dir), {});
  ASSERT_EQ(s.configurations.size(), 2u);
  const auto* strong = find(s, "deepcam [strong]", "dgxa100", 16);
  const auto* weak = find(s, "deepcam [weak]", "dgxa100", 16);
  ASSERT_TRUE(strong && weak);
  EXPECT_EQ(strong->runs, 1u);
  EXPECT_NEAR(strong->epoch_time_s->mean, 10, 1e-9);
  EXPECT_EQ(weak->instances, 2u);
  EXPECT_NEAR(weak->epoch_time_s->mean, 21, 1e-9);
  const auto* split = warning(s, "configuration-split");
  ASSERT_TRUE(split);
  EXPECT_NE(split->message.find("scaling mode (strong, weak)"), std::string::npos) << split->message;
  EXPECT_NE(strong->provenance.find("scaling mode"), std::string::npos) << strong->provenance;
}

namespace {
constexpr std::int64_t kSec = 1'000'000'000;
Run model_run(std::string label, std::string system, int p, std::vector<double> epoch_seconds, std::string id) {
  Run r;
  r.label = std::move(label);
  r.system = std::move(system);
  r.world_size = p;
  r.run_id = id;
  r.path = "/runs/" + id;
  std::int64_t t = 0;
  for (std::size_t e = 0; e < epoch_seconds.size(); ++e) {
    auto d = static_cast<std::int64_t>(epoch_seconds[e] * kSec);
    r.epochs.push_back(Interval{0, static_cast<std::int64_t>(e), t, t + d, std::nullopt});
    t += d;
  }
  r.start_ns = 0;
  r.end_ns = t;
  return r;
}
}  // namespace

TEST(Consistency, RepeatsThatDisagreeWildlyArePossiblyMixedInputs) {
  Study st;
  // Same label, system and GPU count; kept epochs {10, 10} and {20, 20}: run means 10 and 20,
  // sample std 7.071, CV 47% > 25%. Their batches differ only in being unknown for one.
  auto a = model_run("ddp", "jwb", 8, {30, 10, 10}, "a");
  a.global_batch_size = 256;
  auto b = model_run("ddp", "jwb", 8, {30, 20, 20}, "b");
  st.runs = {a, b};
  auto s = analyze(st, {});
  ASSERT_EQ(s.configurations.size(), 1u);
  const auto* w = warning(s, "possibly-mixed-inputs");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->configuration, "ddp/8");
  EXPECT_NE(w->message.find("coefficient of variation 47%"), std::string::npos) << w->message;
  EXPECT_NE(w->message.find("system jwb, benchmark unknown, global batch 256, instance ids none"), std::string::npos)
      << w->message;
  EXPECT_NE(w->message.find("its 2 runs' epoch times disagree"), std::string::npos) << w->message;
  // 10 vs 11: CV 6.7%, not flagged.
  st.runs[1] = model_run("ddp", "jwb", 8, {30, 11, 11}, "b");
  EXPECT_EQ(count_code(analyze(st, {}), "possibly-mixed-inputs"), 0u);
  // A third run that logged no epoch: its run time (40 s) is no epoch mean, and is not set beside
  // the others' epoch means (it made a CV of 84% of two means 9% apart).
  auto c = model_run("ddp", "jwb", 8, {}, "c");
  c.start_ns = 0, c.end_ns = 40'000'000'000;
  st.runs.push_back(c);
  const auto with_c = analyze(st, {});
  EXPECT_EQ(count_code(with_c, "possibly-mixed-inputs"), 0u);
  EXPECT_EQ(count_code(with_c, "epochs-from-some-runs"), 1u) << "c's lack of epochs is said on its own";
}

TEST(Split, RunsOnDifferentGpuModelsOrBatchesAreNotRepeats) {
  Study st;
  auto a = model_run("ddp", "", 4, {10, 10}, "a");
  a.global_batch_size = 128;
  a.gpu_model = "A100";
  auto b = model_run("ddp", "", 4, {10, 12}, "b");
  b.global_batch_size = 256;
  b.gpu_model = "H100";
  auto c = model_run("ddp", "", 8, {10, 6}, "c");
  c.global_batch_size = 128;
  c.gpu_model = "A100";
  st.runs = {a, b, c};
  auto s = analyze(st, {});
  ASSERT_EQ(s.configurations.size(), 3u);
  const auto* a4 = find(s, "ddp [A100, batch 128]", "", 4);
  const auto* a8 = find(s, "ddp [A100, batch 128]", "", 8);
  const auto* h4 = find(s, "ddp [H100, batch 256]", "", 4);
  ASSERT_TRUE(a4 && a8 && h4);
  EXPECT_NEAR(*a8->speedup, 10.0 / 6, 1e-9);  // along its own curve
  const auto* split = warning(s, "configuration-split");
  ASSERT_TRUE(split);
  EXPECT_NE(split->message.find("GPU model (A100, H100) and global batch at the same world size (128, 256)"), std::string::npos)
      << split->message;
  EXPECT_EQ(count_code(s, "inconsistent-runs"), 0u);
}

namespace {
// A run folder as `scalelens run` writes it (its scalelens.json through the collector's own writer)
// with `epochs` epochs of `epoch_s` each, logged by every rank.
void write_run(const scalelens::testing::ScratchDir& d, const std::string& id, int p, double batch, double epoch_s,
               std::optional<std::string> scaling, std::int64_t start_ns) {
  scalelens::collect::ManifestData m;
  m.run_id = id;
  m.label = "ddp";
  m.world_size = p;
  m.nodes = 1;
  m.gpus_per_node = p;
  m.global_batch_size = batch;
  m.scaling = std::move(scaling);
  m.start_ns = start_ns;
  m.complete = true;
  std::string epochs = "rank,epoch,start_ns,end_ns,samples\n";
  std::int64_t t = start_ns;
  for (int e = 0; e < 3; ++e, t += static_cast<std::int64_t>(epoch_s * kSec))
    for (int r = 0; r < p; ++r) epochs += fmt::format("{},{},{},{},\n", r, e, t, t + static_cast<std::int64_t>(epoch_s * kSec));
  m.end_ns = t;
  ASSERT_TRUE(scalelens::collect::prepare_run_folder(d.path() / id, "node0"));
  ASSERT_TRUE(scalelens::collect::write_manifest(d.path() / id, m));
  d.write(id + "/epochs.csv", epochs);
}
}  // namespace

// A strong-scaling study (batch 256 at every GPU count, no "scaling" field) and a weak one of the
// same label that declares "scaling": "weak" (batch 32 per GPU) are two experiments: pooled, they
// made one weak curve of 55 ± 82.7 s at 1 GPU.
TEST(Split, UndeclaredStrongRunsAreNotRepeatsOfDeclaredWeakOnes) {
  scalelens::testing::ScratchDir d;
  for (int p : {1, 2, 4}) {
    write_run(d, fmt::format("A{}", p), p, 256, 100.0 / p, std::nullopt, (p + 1) * 1000 * kSec);
    write_run(d, fmt::format("B{}", p), p, 32.0 * p, 10, "weak", (p + 50) * 1000 * kSec);
  }
  const auto study = read_study(d);
  ASSERT_EQ(study.runs.size(), 6u);
  for (const std::optional<std::string>& forced : {std::optional<std::string>(), std::optional<std::string>("strong")}) {
    AnalysisOptions o;
    o.scaling = forced;
    const auto s = analyze(study, o);
    ASSERT_EQ(s.configurations.size(), 6u) << forced.value_or("detected");
    const auto* a4 = find(s, "ddp", "", 4);
    const auto* b4 = find(s, "ddp [weak]", "", 4);
    ASSERT_TRUE(a4 && b4);
    EXPECT_EQ(a4->runs, 1u);
    EXPECT_NEAR(a4->epoch_time_s->mean, 25, 1e-9);
    EXPECT_NEAR(*a4->speedup, 4, 1e-9);  // 100 s / 25 s along its own curve
    EXPECT_NEAR(b4->epoch_time_s->mean, 10, 1e-9);
    const auto* split = warning(s, "configuration-split");
    ASSERT_TRUE(split);
    EXPECT_NE(split->message.find("scaling mode (weak, and strong by the global batch of the runs that declare none)"),
              std::string::npos)
        << split->message;
    EXPECT_EQ(count_code(s, "possibly-mixed-inputs"), 0u);
    EXPECT_EQ(count_code(s, "inconsistent-runs"), 0u);
  }
}

// Undeclared runs whose global batch grows with the GPUs as the declared weak runs' does are their
// repeats, pooled as before.
TEST(Split, UndeclaredRunsThatScaleAsTheDeclaredOnesArePooled) {
  scalelens::testing::ScratchDir d;
  for (int p : {1, 2, 4}) {
    write_run(d, fmt::format("A{}", p), p, 32.0 * p, 10, std::nullopt, (p + 1) * 1000 * kSec);
    write_run(d, fmt::format("B{}", p), p, 32.0 * p, 10.5, "weak", (p + 50) * 1000 * kSec);
  }
  const auto s = analyze(read_study(d), {});
  ASSERT_EQ(s.configurations.size(), 3u);
  EXPECT_EQ(find(s, "ddp", "", 4)->runs, 2u);
  EXPECT_EQ(find(s, "ddp", "", 4)->scaling, "weak");
  EXPECT_EQ(count_code(s, "configuration-split"), 0u);
  // Pooled, but not silently: the declarations differ.
  const auto* partly = warning(s, "scaling-partly-declared");
  ASSERT_TRUE(partly);
  EXPECT_NE(partly->message.find("3 declare none"), std::string::npos) << partly->message;
  EXPECT_NE(partly->message.find("(their global batches scale as weak scaling's do)"), std::string::npos) << partly->message;
}

// One undeclared run beside declared weak runs of its label and GPU count: one GPU count cannot
// tell its mode, so it is pooled as their repeat (DESIGN.md, configuration), with a warning that
// the declarations differ; it was pooled silently.
TEST(Split, AnUndeclaredRunPooledWithDeclaredWeakOnesIsWarnedOf) {
  scalelens::testing::ScratchDir d;
  for (int p : {1, 2, 4}) write_run(d, fmt::format("B{}", p), p, 32.0 * p, 10, "weak", (p + 50) * 1000 * kSec);
  write_run(d, "A4", 4, 128, 12, std::nullopt, 1000 * kSec);
  const auto s = analyze(read_study(d), {});
  ASSERT_EQ(s.configurations.size(), 3u);
  const auto* c4 = find(s, "ddp", "", 4);
  ASSERT_TRUE(c4);
  EXPECT_EQ(c4->runs, 2u);
  EXPECT_EQ(c4->scaling, "weak");
  EXPECT_NEAR(c4->epoch_time_s->mean, 11, 1e-9);
  const auto* partly = warning(s, "scaling-partly-declared");
  ASSERT_TRUE(partly) << "pooled silently";
  EXPECT_NE(partly->message.find("runs of 'ddp' differ in their scaling declaration: 1 declares none ("), std::string::npos)
      << partly->message;
  EXPECT_NE(partly->message.find("A4"), std::string::npos) << partly->message;
  EXPECT_NE(partly->message.find("declare \"weak\""), std::string::npos) << partly->message;
  EXPECT_NE(partly->message.find("cannot tell the mode"), std::string::npos) << partly->message;
  EXPECT_EQ(count_code(s, "configuration-split"), 0u);
  // Declared alike, nothing to say.
  scalelens::testing::ScratchDir all_declared;
  for (int p : {1, 2, 4}) write_run(all_declared, fmt::format("B{}", p), p, 32.0 * p, 10, "weak", (p + 50) * 1000 * kSec);
  write_run(all_declared, "A4", 4, 128, 12, "weak", 1000 * kSec);
  EXPECT_EQ(count_code(analyze(read_study(all_declared), {}), "scaling-partly-declared"), 0u);
}

// Declared weak runs of one GPU count with two global batches ran two batches per GPU (32 and 64):
// two weak-scaling experiments, whose times were pooled into one mean (15 s of 10 s and 20 s).
TEST(Split, WeakRunsDifferingInBatchAtOneWorldSizeAreNotRepeats) {
  scalelens::testing::ScratchDir d;
  for (int p : {1, 2}) {
    write_run(d, fmt::format("B{}", p), p, 32.0 * p, 10, "weak", (p + 1) * 1000 * kSec);
    write_run(d, fmt::format("C{}", p), p, 64.0 * p, 20, "weak", (p + 50) * 1000 * kSec);
  }
  const auto s = analyze(read_study(d), {});
  ASSERT_EQ(s.configurations.size(), 4u);
  const auto* split = warning(s, "configuration-split");
  ASSERT_TRUE(split);
  EXPECT_NE(split->message.find("global batch at the same world size (32, 64, 128)"), std::string::npos) << split->message;
  for (int p : {1, 2}) {
    // Tagged by the batch per GPU, which each weak-scaling curve keeps.
    const auto* b = find(s, "ddp [batch 32 per GPU]", "", p);
    const auto* c = find(s, "ddp [batch 64 per GPU]", "", p);
    ASSERT_TRUE(b && c) << p;
    EXPECT_EQ(b->runs, 1u);
    EXPECT_NEAR(b->epoch_time_s->mean, 10, 1e-9);
    EXPECT_NEAR(c->epoch_time_s->mean, 20, 1e-9);
    EXPECT_EQ(b->scaling, "weak");
  }
  EXPECT_EQ(count_code(s, "inconsistent-runs"), 0u);
}

// The same runs declaring no "scaling": their batches say weak scaling (32 and 64 per GPU at 1 and 2
// GPUs), so they are tagged by batch per GPU as declared weak runs are. Tagged by global batch, they
// made "ddp [batch 64]" of 64 per GPU at 1 GPU and 32 per GPU at 2 (a strong-scaling curve of two
// experiments' runs). Runs of one global batch at every GPU count stay tagged by it.
TEST(Split, UndeclaredRunsOfTwoBatchesPerGpuAreTaggedByBatchPerGpu) {
  scalelens::testing::ScratchDir d;
  for (int p : {1, 2}) {
    write_run(d, fmt::format("B{}", p), p, 32.0 * p, 10, std::nullopt, (p + 1) * 1000 * kSec);
    write_run(d, fmt::format("C{}", p), p, 64.0 * p, 20, std::nullopt, (p + 50) * 1000 * kSec);
  }
  const auto s = analyze(read_study(d), {});
  ASSERT_EQ(s.configurations.size(), 4u);
  for (int p : {1, 2}) {
    const auto* b = find(s, "ddp [batch 32 per GPU]", "", p);
    const auto* c = find(s, "ddp [batch 64 per GPU]", "", p);
    ASSERT_TRUE(b && c) << p;
    EXPECT_NEAR(b->epoch_time_s->mean, 10, 1e-9);
    EXPECT_NEAR(c->epoch_time_s->mean, 20, 1e-9);
    EXPECT_EQ(b->scaling, "weak");
    EXPECT_EQ(c->scaling, "weak");
  }
  // Strong scaling written alike (global batches 256 and 512 at 1 and 2 GPUs): by global batch.
  scalelens::testing::ScratchDir strong;
  for (int p : {1, 2}) {
    write_run(strong, fmt::format("B{}", p), p, 256, 10.0 / p, std::nullopt, (p + 1) * 1000 * kSec);
    write_run(strong, fmt::format("C{}", p), p, 512, 20.0 / p, std::nullopt, (p + 50) * 1000 * kSec);
  }
  const auto t = analyze(read_study(strong), {});
  ASSERT_EQ(t.configurations.size(), 4u);
  for (int p : {1, 2}) {
    const auto* b = find(t, "ddp [batch 256]", "", p);
    ASSERT_TRUE(b && find(t, "ddp [batch 512]", "", p)) << p;
    EXPECT_EQ(b->scaling, "strong");
  }
  // At one GPU count the batches cannot tell the mode: by global batch, the mode the curve is read in.
  scalelens::testing::ScratchDir one;
  write_run(one, "B4", 4, 128, 10, std::nullopt, 1000 * kSec);
  write_run(one, "C4", 4, 256, 20, std::nullopt, 2000 * kSec);
  const auto u = analyze(read_study(one), {});
  EXPECT_TRUE(find(u, "ddp [batch 128]", "", 4) && find(u, "ddp [batch 256]", "", 4));
}

// A label holding " @ " and a system holding it: "x @ y" on z and x on "y @ z" were both the curve
// "x @ y @ z", joined into one curve of two labels' points. Each is now named with its label and
// system quoted, said in a note; other curves keep their names.
TEST(CurveNames, NamesThatMeetAreQuoted) {
  scalelens::testing::ScratchDir d;
  auto manifest = [&](const std::string& folder, const std::string& label, const std::string& system, int p, double epoch_s,
                      std::int64_t start_s) {
    d.write(folder + "/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "label": "{}", "system": "{}", "world_size": {}}})", label, system, p));
    const std::int64_t t = start_s * kSec, len = static_cast<std::int64_t>(epoch_s * kSec);
    d.write(folder + "/epochs.csv", fmt::format("rank,epoch,start_ns,end_ns\n0,0,{},{}\n0,1,{},{}\n", t, t + len, t + len, t + 2 * len));
  };
  manifest("a1", "x @ y", "z", 1, 10, 1000);
  manifest("a2", "x @ y", "z", 2, 5, 2000);
  manifest("b1", "x", "y @ z", 1, 40, 3000);
  manifest("b2", "x", "y @ z", 2, 30, 4000);
  manifest("c1", "ddp", "juwels", 1, 10, 5000);
  const auto s = analyze(read_study(d), {});
  ASSERT_EQ(s.configurations.size(), 5u);
  std::set<std::string> curves;
  for (const auto& c : s.configurations) curves.insert(c.curve);
  EXPECT_EQ(curves, (std::set<std::string>{"'x @ y' @ 'z'", "'x' @ 'y @ z'", "ddp @ juwels"}));
  const auto* xy = find(s, "x @ y", "z", 2);
  ASSERT_TRUE(xy);
  EXPECT_EQ(xy->curve, "'x @ y' @ 'z'");
  ASSERT_TRUE(xy->speedup);
  EXPECT_NEAR(*xy->speedup, 2, 1e-9);  // against its own 1 GPU, not the other label's
  const auto* note = warning(s, "curve-names-quoted");
  ASSERT_TRUE(note);
  EXPECT_EQ(note->severity, Severity::note);
  EXPECT_NE(note->message.find(R"(2 curves would all be named "x @ y @ z")"), std::string::npos) << note->message;
  EXPECT_EQ(s.curves.size(), 3u);
}

// --scaling strong analyses declared weak runs as strong ones, so a global batch that differs at one
// world size (32 and 64 per GPU) splits them as it splits any strong-scaling runs.
TEST(Split, UnderScalingStrongRunsDifferingInBatchAtOneWorldSizeAreNotRepeats) {
  scalelens::testing::ScratchDir d;
  for (int p : {1, 2}) {
    write_run(d, fmt::format("B{}", p), p, 32.0 * p, 10, "weak", (p + 1) * 1000 * kSec);
    write_run(d, fmt::format("C{}", p), p, 64.0 * p, 20, "weak", (p + 50) * 1000 * kSec);
  }
  const auto study = read_study(d);
  AnalysisOptions o;
  o.scaling = "strong";
  const auto s = analyze(study, o);
  const auto* split = warning(s, "configuration-split");
  ASSERT_TRUE(split);
  EXPECT_NE(split->message.find("global batch at the same world size (32, 64, 128)"), std::string::npos) << split->message;
  const auto* b1 = find(s, "ddp [batch 32]", "", 1);
  const auto* c1 = find(s, "ddp [batch 64]", "", 1);
  ASSERT_TRUE(b1 && c1);
  EXPECT_NEAR(b1->epoch_time_s->mean, 10, 1e-9);
  EXPECT_NEAR(c1->epoch_time_s->mean, 20, 1e-9);
  EXPECT_EQ(count_code(s, "inconsistent-runs"), 0u);
}

TEST(RunPlanSystem, FromSlurmClusterNameElseTheHostNamePattern) {
  using namespace scalelens::collect;
  RunOptions o;
  o.command = {"python3", "train.py"};
  auto p = plan_run(o, {{"SLURM_JOB_ID", "5"}, {"SLURM_CLUSTER_NAME", "juwelsbooster"}, {"SCALELENS_HOST", "jwb0123"}});
  EXPECT_EQ(p.system, "juwelsbooster");
  EXPECT_EQ(p.detected_from["system"], "SLURM_CLUSTER_NAME");
  p = plan_run(o, {{"SCALELENS_HOST", "nid001234.perlmutter.nersc.gov"}});
  EXPECT_EQ(p.system, "nid");
  p = plan_run(o, {{"SCALELENS_HOST", "gpu-07"}});
  EXPECT_EQ(p.system, "gpu");
  EXPECT_EQ(p.detected_from["system"], "host name pattern (gpu-07)");
  p = plan_run(o, {{"SCALELENS_HOST", "workstation"}});
  EXPECT_EQ(p.system, "workstation");
}

TEST(ManifestSystem, ReadFromScalelensJsonAndInheritedByForeignFiles) {
  scalelens::testing::ScratchDir dir;
  dir.write("a/scalelens.json", R"({"schema": "scalelens.run/1", "run_id": "a", "label": "ddp", "world_size": 8, "system": "jureca",
    "start_ns": 0, "end_ns": 10000000000, "status": "complete"})");
  dir.write("b/scalelens.json", R"({"schema": "scalelens.run/1", "run_id": "b", "label": "ddp", "world_size": 8, "system": "juwels",
    "start_ns": 0, "end_ns": 20000000000, "status": "complete"})");
  auto study = read_study(dir);
  auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 2u);
  EXPECT_EQ(s.configurations[0].system, "jureca");
  EXPECT_EQ(s.configurations[1].system, "juwels");
  EXPECT_EQ(s.configurations[1].curve, "ddp @ juwels");
  EXPECT_NE(s.configurations[1].provenance.find("system juwels from scalelens.json"), std::string::npos)
      << s.configurations[1].provenance;
  EXPECT_EQ(count_code(s, "possibly-mixed-inputs"), 0u);  // pooled, 10 s vs 20 s would be flagged
}

TEST(ManifestSystem, WhatScalelensRunWritesIsWhatTheReportReads) {
  scalelens::testing::ScratchDir d;
  const auto dir = d.path() / "ddp-slurm-1.0";
  ASSERT_TRUE(scalelens::collect::prepare_run_folder(dir, "jwb0001"));
  scalelens::collect::ManifestData m;
  m.run_id = "ddp-slurm-1.0";
  m.label = "ddp";
  m.system = "juwelsbooster";
  m.world_size = 4;
  m.start_ns = 1'000'000'000;
  m.end_ns = 3'000'000'000;
  m.detected_from = {{"system", "SLURM_CLUSTER_NAME"}};
  m.complete = true;
  ASSERT_TRUE(scalelens::collect::write_manifest(dir, m));
  EXPECT_NE(scalelens::testing::slurp(dir / "scalelens.json").find(R"("system":"juwelsbooster")"), std::string::npos);
  auto study = ingest(IngestOptions{{d.path().string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].system, "juwelsbooster");
  EXPECT_EQ(study.runs[0].detected_from.at("system"), "SLURM_CLUSTER_NAME");
}

namespace {

// A run folder as `scalelens run` writes it, of `label` on `system` (as written: spaces and case
// kept), three epochs of `epoch_s` on rank 0.
void write_system_run(const scalelens::testing::ScratchDir& dir, const std::string& name, const std::string& label,
                      const std::string& system, int p, double epoch_s) {
  const auto ns = [](double s) { return static_cast<std::int64_t>(s * 1e9); };
  dir.write(name + "/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "{}", "system": "{}", "world_size": {}, )"
                        R"("samples_per_epoch": 1000, "start_ns": 0, "end_ns": {}, "status": "complete"}})",
                        name, label, system, p, ns(3 * epoch_s)));
  std::string epochs = "rank,epoch,start_ns,end_ns,samples\n";
  for (int e = 0; e < 3; ++e) epochs += fmt::format("0,{},{},{},1000\n", e, ns(e * epoch_s), ns((e + 1) * epoch_s));
  dir.write(name + "/epochs.csv", epochs);
}

}  // namespace

// Spaces around a system or label are no part of it: "juwels " and " juwels" are juwels, one curve
// whose speedups are against its 1-GPU run (each was a curve of its own, every speedup 1×, and the
// rows looked alike). A note says which name was read so.
TEST(ManifestSystem, SpacesAroundASystemOrLabelAreNoPartOfIt) {
  scalelens::testing::ScratchDir dir;
  write_system_run(dir, "a", "ddp", "juwels", 1, 12);
  write_system_run(dir, "b", "ddp ", "juwels ", 2, 6);
  write_system_run(dir, "c", "ddp", " juwels", 4, 4);
  auto s = analyze(read_study(dir), {});
  ASSERT_EQ(s.configurations.size(), 3u);
  ASSERT_EQ(s.systems, std::vector<std::string>{"juwels"});
  const auto* two = find(s, "ddp", "juwels", 2);
  const auto* four = find(s, "ddp", "juwels", 4);
  ASSERT_TRUE(two && four);
  EXPECT_DOUBLE_EQ(*two->speedup, 2.0);
  EXPECT_DOUBLE_EQ(*four->speedup, 3.0);
  EXPECT_EQ(count_code(s, "name-trimmed"), 3u);  // b's label and system, c's system
  const auto* note = warning(s, "name-trimmed");
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->severity, Severity::note);
  EXPECT_EQ(note->message, "label 'ddp ' read as 'ddp': spaces around a name are no part of it");
  EXPECT_EQ(note->path, (dir / "b").string());
  EXPECT_EQ(count_code(s, "names-differ-in-case"), 0u);
}

// Names that differ only in case may be meant apart (two clusters, two setups): kept apart, but
// a warning names them, as their rows look alike (nothing but few-repeats was said).
TEST(ManifestSystem, NamesDifferingOnlyInCaseStayApartAndAreNamed) {
  scalelens::testing::ScratchDir dir;
  write_system_run(dir, "a", "ddp", "juwels", 1, 12);
  write_system_run(dir, "b", "ddp", "JUWELS", 2, 6);
  write_system_run(dir, "c", "DDP", "juwels", 4, 4);
  auto s = analyze(read_study(dir), {});
  ASSERT_EQ(s.configurations.size(), 3u);
  EXPECT_EQ(s.systems, (std::vector<std::string>{"JUWELS", "juwels"}));
  ASSERT_EQ(count_code(s, "names-differ-in-case"), 2u);
  std::vector<std::string> messages;
  for (const auto& w : s.warnings)
    if (w.code == "names-differ-in-case") messages.push_back(w.message);
  EXPECT_EQ(messages[0], "labels 'DDP' and 'ddp' differ only in case: kept apart as separate curves (rename one where they are one)");
  EXPECT_EQ(messages[1], "systems 'JUWELS' and 'juwels' differ only in case: kept apart as separate curves (rename one where they are one)");
}
