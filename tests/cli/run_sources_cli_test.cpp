// Sources of one run that disagree (its manifest, epochs, rank records, traces, GPU logs): said,
// never a figure silently changed. Real binary, folders in the shape the real tools write them.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "support/run_binary.hpp"

using namespace scalelens::testing;

namespace {

constexpr long long kStartNs = 1700000000000000000LL;  // 2023/11/14 22:13:20 UTC

// What a run's scalelens.json says besides what every one here says (`scalelens run`'s at the
// run's end: label ddp on juwels, strong scaling, exit status 0).
struct Manifest {
  int world_size = 4, nodes = 1;
  int gpus_per_node = 0;  // 0: world_size
  long long start_ns = kStartNs, end_ns = kStartNs;
  bool batch = true;  // global_batch_size 256 and samples_per_epoch 10000
  std::optional<double> sampling_interval_s;
};

void write_manifest(const ScratchDir& dir, const std::string& name, const Manifest& m) {
  dir.write(name + "/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "ddp", "system": "juwels", "world_size": {}, )"
                        R"("nodes": {}, "gpus_per_node": {}, {}"scaling": "strong", "start_ns": {}, "end_ns": {}, {})"
                        R"("exit_status": 0, "status": "complete"}})",
                        name, m.world_size, m.nodes, m.gpus_per_node ? m.gpus_per_node : m.world_size,
                        m.batch ? R"("global_batch_size": 256, "samples_per_epoch": 10000, )" : "", m.start_ns, m.end_ns,
                        m.sampling_interval_s ? fmt::format(R"("sampling_interval_s": {}, )", *m.sampling_interval_s) : ""));
}

// A run folder as `scalelens run` leaves it: manifest, ranks/<r>.json, epochs.csv of `ranks` ranks;
// its manifest says 1 node of world_size GPUs unless told. Its node stamps a time t as `clock`(t)
// where one is given (a clock stepped back).
void write_collected_run(const ScratchDir& dir, const std::string& name, int world_size, int ranks, double epoch_s,
                         int epochs = 3, int nodes = 1, int gpus_per_node = 0,
                         const std::function<long long(long long)>& clock = {}) {
  auto stamp = [&](long long t) { return clock ? clock(t) : t; };
  const long long end = stamp(kStartNs + static_cast<long long>((epochs * epoch_s + 2) * 1e9));
  write_manifest(dir, name, {.world_size = world_size, .nodes = nodes, .gpus_per_node = gpus_per_node, .end_ns = end});
  std::string csv = "rank,epoch,start_ns,end_ns,samples\n";
  for (int r = 0; r < ranks; ++r) {
    dir.write(fmt::format("{}/ranks/{}.json", name, r),
              fmt::format(R"({{"schema":"scalelens.rank/1","rank":{},"host":"node0","local_rank":{},"devices":["{}"],)"
                          R"("start_ns":{},"end_ns":{},"exit_status":0,"pid":{}}})",
                          r, r, r, kStartNs, end, 4100 + r) + "\n");
    for (int e = 0; e < epochs; ++e) {
      const long long t0 = kStartNs + static_cast<long long>((1 + e * epoch_s) * 1e9);
      csv += fmt::format("{},{},{},{},{}\n", r, e, stamp(t0), stamp(t0 + static_cast<long long>(epoch_s * 1e9)), 10000 / ranks);
    }
  }
  dir.write(name + "/epochs.csv", csv);
}

constexpr std::string_view kGpuCsvHeader =
    "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
// A line of node0's gpu.csv as the sampler writes it, of GPU `g` (80% busy, 1000 MiB): its power and
// energy counter as given, empty where NVML gave none.
std::string gpu_csv_line(long long t_ns, int g, std::string_view power_w = "300.00", std::string_view energy_mj = "") {
  return fmt::format("{},{},GPU-6b1a0f0e-5b7c-9c33-5f0a-2a8d1c4e9f0{},80,10,1048576000,{},{},1410,60\n", t_ns, g, g, power_w,
                     energy_mj);
}

// A collected run of 4 ranks on one node whose clock stepped back 5 s `step_at_s` into the run (an
// NTP step; between two of the sampler's ticks): everything stamped after it (the run's end, the
// ranks' ends, epochs, steps, gpu.csv's and host.csv's samples) is 5 s early. Three 10 s epochs
// from 1 s, and `steps` 1 s steps from 1 s if asked; a second step back, of 2 s, if asked; a step
// of `step_s`, not 5 s, if asked.
void write_stepped_run(const ScratchDir& dir, double step_at_s, int steps = 0, double second_step_at_s = 0,
                       double step_s = 5) {
  const long long kStep = static_cast<long long>(step_s * 1e9);
  constexpr long long kSecondStep = 2000000000LL;
  const long long step_at = kStartNs + static_cast<long long>(step_at_s * 1e9);
  const long long second_at = second_step_at_s > 0 ? kStartNs + static_cast<long long>(second_step_at_s * 1e9) : kStartNs + 100000000000LL;
  auto on_node_clock = [&](long long true_ns) {
    return true_ns - (true_ns >= step_at ? kStep : 0) - (true_ns >= second_at ? kSecondStep : 0);
  };
  write_collected_run(dir, "ddp-4", 4, 4, 10, 3, 1, 4, on_node_clock);  // 32 s
  std::string step_rows = "rank,step,start_ns,end_ns,samples\n";
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < steps; ++s) {
      const long long t0 = kStartNs + (1 + s) * 1000000000LL;
      step_rows += fmt::format("{},{},{},{},{}\n", r, s, on_node_clock(t0), on_node_clock(t0 + 1000000000LL), 64);
    }
  if (steps > 0) dir.write("ddp-4/steps.csv", step_rows);
  std::string gpu(kGpuCsvHeader);
  std::string host = "t_ns,cpu_util_pct,mem_used_bytes,cpu_energy_uj\n";
  for (int tick = 0; tick <= 64; ++tick) {
    const long long t = on_node_clock(kStartNs + tick * 500000000LL);
    for (int g = 0; g < 4; ++g) gpu += gpu_csv_line(t, g);
    host += fmt::format("{},12.5,8589934592,{}\n", t, 900000000LL + tick * 50000000LL);
  }
  dir.write("ddp-4/nodes/node0/gpu.csv", gpu);
  dir.write("ddp-4/nodes/node0/host.csv", host);
}

// The warnings of `code` in a report's JSON, their messages joined.
std::string messages_of(simdjson::dom::element root, std::string_view code) {
  std::string all;
  for (simdjson::dom::element w : root["warnings"].get_array())
    if (std::string_view(w["code"]) == code) all += std::string(std::string_view(w["message"])) + "\n";
  return all;
}

// Each of `parts` is somewhere in `said` (messages_of's warnings, joined).
void expect_says(const std::string& said, std::initializer_list<std::string> parts) {
  for (const auto& part : parts) EXPECT_NE(said.find(part), std::string::npos) << "no \"" << part << "\" in: " << said;
}

// The study's one configuration: epochs of `seconds` each, every one (`out`: the report, to show).
void expect_epochs_of(simdjson::dom::element root, double seconds, const std::string& out) {
  simdjson::dom::element config = root["configurations"].at(0);
  EXPECT_NEAR(double(config["epoch_time_s"]["mean"]), seconds, 1e-6) << out.substr(0, 2000);
  EXPECT_NEAR(double(config["epoch_time_s"]["std"]), 0, 1e-6);
}

// A job's own MLPerf log (the mllog package's lines in its slurm-%j.out), its times from the run's
// start: run_start at 1 s, 3 epochs every `period_ms` of `epoch_ms` each, run_stop at `stop_ms`.
std::string mlperf_job_log(long long period_ms, long long epoch_ms, long long stop_ms) {
  std::string log = "Starting training on 4 GPUs\n";
  auto mllog = [&](long long ms, const char* event, const char* key, const std::string& metadata) {
    log += fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"{}\", \"key\": \"{}\", "
                       "\"value\": null, \"metadata\": {{{}\"file\": \"train.py\", \"lineno\": 88}}}}\n",
                       kStartNs / 1000000 + ms, event, key, metadata);
  };
  mllog(1000, "INTERVAL_START", "run_start", "");
  for (int e = 0; e < 3; ++e) {
    mllog(1000 + e * period_ms, "INTERVAL_START", "epoch_start", fmt::format("\"epoch_num\": {}, ", e));
    mllog(1000 + e * period_ms + epoch_ms, "INTERVAL_END", "epoch_stop", fmt::format("\"epoch_num\": {}, ", e));
  }
  mllog(stop_ms, "INTERVAL_END", "run_stop", "\"status\": \"success\", ");
  return log;
}

}  // namespace

// A run whose manifest says world_size 4 while its epochs.csv and ranks/ hold ranks 0..7 gave
// speedup 8 at 4 GPUs, efficiency 200%, beside the warning. Its files win: it is placed at 8.
TEST(RunSourcesCli, RanksBeyondTheWorldSizeAreSaid) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-1", 1, 1, 40);
  write_collected_run(dir, "ddp-8", 4, 8, 5);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  const std::string said = messages_of(root, "ranks-beyond-world-size");
  expect_says(said, {"the run's world size is 4",
                     "epochs of ranks 0–7",
                     "rank records of ranks 0–7",
                     "ranks beyond it: 4, 5, 6, 7",
                     "placed at the 8 GPUs its ranks show, not its stated 4"});
  EXPECT_EQ(said.find("\n"), said.size() - 1) << "one warning, for the one run: " << said;
  // By hand: 3 epochs of 40 s at 1 GPU, of 5 s at the 8 ranks: speedup 8, efficiency 100% (was 200% at 4).
  std::map<int64_t, double> efficiency;
  for (simdjson::dom::element c : root["configurations"].get_array())
    efficiency[int64_t(c["world_size"])] = double(c["efficiency"]);
  EXPECT_EQ(efficiency.size(), 2u) << r.out.substr(0, 800);
  EXPECT_NEAR(efficiency[8], 1.0, 1e-9) << r.out.substr(0, 800);
  EXPECT_EQ(efficiency.count(4), 0u);
  for (simdjson::dom::element run : root["runs"].get_array())
    if (std::string_view(run["run_id"]) == "ddp-8") EXPECT_EQ(int64_t(run["world_size"]), 8);
  for (simdjson::dom::element w : root["warnings"].get_array())
    if (std::string_view(w["code"]) == "ranks-beyond-world-size") EXPECT_EQ(std::string_view(w["configuration"]), "ddp/8");
  EXPECT_EQ(messages_of(root, "missing-ranks"), "");
  // The terminal summary places it where summary.json does: a row of 8 GPUs, none of 4.
  auto t = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("ranks-beyond-world-size"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("ddp/8"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("ddp/4"), std::string::npos) << t.out;
  // The page's run series too (it drew the Run's stated 4).
  ScratchDir out;
  ASSERT_EQ(run_scalelens("report " + quoted(dir.path()) + " -q --no-cache -o " + quoted(out.path())).exit_code, 0);
  const auto page = slurp(out / "report.html");
  EXPECT_NE(page.find("\"run_id\":\"ddp-8\",\"label\":\"ddp\",\"world_size\":8,"), std::string::npos);
  EXPECT_EQ(page.find("\"run_id\":\"ddp-8\",\"label\":\"ddp\",\"world_size\":4,"), std::string::npos);

  // Its ranks within the world size: nothing said.
  ScratchDir fine;
  write_collected_run(fine, "ddp-1", 1, 1, 40);
  write_collected_run(fine, "ddp-4", 4, 4, 10);
  auto f = run_scalelens("report " + quoted(fine.path()) + " -q --no-cache --format json");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.out.find("ranks-beyond-world-size"), std::string::npos) << f.out.substr(0, 600);
}

// A run's warnings name the configuration it is in, as summary.json's configurations give it
// (their curve and world size): they named its manifest's label and stated world size, so that
// with two systems "ddp/8" was no configuration ("ddp @ juwels/8" is), nor was "/8" for a run with
// no label ("unlabelled/8"), nor " ddp /8" for a label written with spaces around it.
TEST(RunSourcesCli, ARunsWarningsNameTheConfigurationItIsIn) {
  auto configurations_of = [](simdjson::dom::element root) {
    std::set<std::string> keys;
    for (simdjson::dom::element c : root["configurations"].get_array())
      keys.insert(fmt::format("{}/{}", std::string_view(c["curve"]), int64_t(c["world_size"])));
    return keys;
  };
  // Each warning's configuration, with its code.
  auto named = [](simdjson::dom::element root) {
    std::set<std::string> out;
    for (simdjson::dom::element w : root["warnings"].get_array()) {
      std::string_view configuration;
      if (!w["configuration"].get(configuration)) out.insert(fmt::format("{} {}", std::string_view(w["code"]), configuration));
    }
    return out;
  };
  ScratchDir two_systems;
  write_collected_run(two_systems, "ddp-1", 1, 1, 40);
  write_collected_run(two_systems, "ddp-8", 4, 8, 5);  // ranks 0..7: placed at 8
  write_collected_run(two_systems, "ddp-4-jureca", 2, 4, 10);  // ranks 0..3: placed at 4
  auto manifest = slurp(two_systems / "ddp-4-jureca/scalelens.json");
  manifest.replace(manifest.find("juwels"), std::string_view("juwels").size(), "jureca");
  two_systems.write("ddp-4-jureca/scalelens.json", manifest);
  auto r = run_scalelens("report " + quoted(two_systems.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  EXPECT_EQ(configurations_of(root),
            (std::set<std::string>{"ddp @ juwels/1", "ddp @ juwels/8", "ddp @ jureca/4"}));
  const auto two = named(root);
  EXPECT_TRUE(two.count("ranks-beyond-world-size ddp @ juwels/8")) << r.out.substr(0, 3000);
  EXPECT_TRUE(two.count("ranks-beyond-world-size ddp @ jureca/4")) << r.out.substr(0, 3000);
  for (const auto& w : two) EXPECT_EQ(w.find(" ddp/"), std::string::npos) << w;

  // One system: a run with no label, and one whose label has spaces around it.
  ScratchDir labels;
  write_collected_run(labels, "none-8", 4, 8, 5);
  manifest = slurp(labels / "none-8/scalelens.json");
  const std::string label_written = R"("label": "ddp", )";
  manifest.replace(manifest.find(label_written), label_written.size(), "");
  labels.write("none-8/scalelens.json", manifest);
  write_collected_run(labels, "spaced-4", 2, 4, 10);
  manifest = slurp(labels / "spaced-4/scalelens.json");
  manifest.replace(manifest.find(R"("ddp")"), std::string_view(R"("ddp")").size(), R"(" ddp ")");
  labels.write("spaced-4/scalelens.json", manifest);
  r = run_scalelens("report " + quoted(labels.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  root = parser.parse(r.out);
  EXPECT_EQ(configurations_of(root), (std::set<std::string>{"ddp/4", "unlabelled/8"}));
  const auto one = named(root);
  EXPECT_TRUE(one.count("ranks-beyond-world-size unlabelled/8")) << r.out.substr(0, 3000);
  EXPECT_TRUE(one.count("ranks-beyond-world-size ddp/4")) << r.out.substr(0, 3000);
  EXPECT_TRUE(one.count("name-trimmed ddp/4")) << r.out.substr(0, 3000);
  for (const auto& w : one) EXPECT_TRUE(w.ends_with(" ddp/4") || w.ends_with(" unlabelled/8")) << w;
}

// --batch-per-gpu b gives a run that states no global batch b x its GPUs: the 8 its ranks place
// it at, not its stated 4 (its configuration at 8 GPUs read a batch of 4 GPUs', 128).
TEST(RunSourcesCli, BatchPerGpuCountsTheGpusTheRunIsPlacedAt) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-8", 4, 8, 5);
  auto manifest = slurp(dir / "ddp-8/scalelens.json");
  const std::string batch_written = R"("global_batch_size": 256, )";
  manifest.replace(manifest.find(batch_written), batch_written.size(), "");
  dir.write("ddp-8/scalelens.json", manifest);
  auto r = run_scalelens("report " + quoted(dir.path()) + " --batch-per-gpu 32 -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  std::map<int64_t, double> batch;
  for (simdjson::dom::element c : root["configurations"].get_array())
    batch[int64_t(c["world_size"])] = double(c["global_batch_size"]);
  EXPECT_EQ(batch, (std::map<int64_t, double>{{8, 256.0}})) << r.out.substr(0, 1500);
}

// The real traces of an 8-rank DLRM job (distributedInfo.world_size 8) in a run folder whose
// manifest says 4: its ranks 0..3 are within 4, but the traces say the world was 8. Said; the run
// stays at 4, the ranks it holds (the traces' world size is a statement, not a rank seen).
TEST(RunSourcesCli, TracesOfALargerWorldInARunAreSaid) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  write_collected_run(dir, "ddp-4", 4, 4, 10);
  std::filesystem::create_directories(dir / "ddp-4/traces");
  for (const auto& e : std::filesystem::directory_iterator(data / "kineto/dlrm-8rank-v100")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("worker", 0) == 0 && name[6] < '4')
      std::filesystem::copy_file(e.path(), dir / ("ddp-4/traces/" + name));
  }
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  const std::string said = messages_of(root, "ranks-beyond-world-size");
  expect_says(said, {"traces recorded in a world of 8 (distributedInfo.world_size)",
                     "stays at its stated 4 GPUs, which its ranks fill"});
  EXPECT_EQ(int64_t(root["runs"].at(0)["world_size"]), 4);
}

// world_size 8 on 2 nodes × 2 GPUs per node, as a manifest says: one of them is wrong (or ranks
// share GPUs), and where the run stands on its curve with it. Was said by nothing.
TEST(RunSourcesCli, AWorldSizeAboveItsNodesGpusIsSaid) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-1", 1, 1, 40);
  write_collected_run(dir, "ddp-8", 8, 8, 5, 3, 2, 2);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  const std::string said = messages_of(root, "world-size-beyond-gpus");
  EXPECT_NE(said.find("the run's world size is 8, but its scalelens.json says 2 nodes × 2 GPUs per node = 4 GPUs"),
            std::string::npos)
      << said << r.out.substr(0, 800);
  EXPECT_EQ(said.find("\n"), said.size() - 1) << "one warning, for the one run: " << said;

  // 2 nodes × 4 GPUs: nothing said.
  ScratchDir fine;
  write_collected_run(fine, "ddp-1", 1, 1, 40);
  write_collected_run(fine, "ddp-8", 8, 8, 5, 3, 2, 4);
  auto f = run_scalelens("report " + quoted(fine.path()) + " -q --no-cache --format json");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.out.find("world-size-beyond-gpus"), std::string::npos) << f.out.substr(0, 600);
}

// Repeats whose hand-edited manifests say "run_id": "" were three runs of the one id "": an empty
// id is no id, so each gets its folder's, as when it writes none, and the field is said.
TEST(RunSourcesCli, AnEmptyRunIdIsNoId) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-1", 1, 1, 40);
  for (int i = 0; i < 3; ++i) {
    const std::string name = fmt::format("ddp-4-r{}", i);
    write_collected_run(dir, name, 4, 4, 10 + i);
    const std::string manifest = slurp(dir / (name + "/scalelens.json"));
    dir.write(name + "/scalelens.json", std::regex_replace(manifest, std::regex(R"("run_id": "[^"]*")"), R"("run_id": "")"));
  }
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  std::vector<std::string> ids;
  for (simdjson::dom::element run : root["runs"].get_array()) ids.emplace_back(std::string_view(run["run_id"]));
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"ddp-1", "ddp-4-r0", "ddp-4-r1", "ddp-4-r2"})) << r.out.substr(0, 800);
  const std::string said = messages_of(root, "bad-manifest-field");
  EXPECT_NE(said.find("field \"run_id\" should be a non-empty string"), std::string::npos) << said;
}

// An nvidia-smi log at a study's root, beside its run folders and in none of them, was a run of
// its own: a configuration of 4 GPUs labelled after the study, with energy and no time. Which
// run's GPUs it logged cannot be told: it is left out, and said.
TEST(RunSourcesCli, AGpuLogBesideRunFoldersIsNoRun) {
  ScratchDir dir;
  write_collected_run(dir, "study/ddp-1", 1, 1, 40);
  write_collected_run(dir, "study/ddp-4", 4, 4, 10);
  // `nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,memory.used,power.draw --format=csv -l 1`
  std::string smi = "timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W]\n";
  for (int s = 0; s <= 32; ++s)
    for (int g = 0; g < 4; ++g)
      smi += fmt::format("2023/11/14 22:13:{:02d}.{:03d}, {}, NVIDIA A100-SXM4-80GB, 80 %, 1000 MiB, 300.00 W\n", 20 + s,
                         2 * g, g);
  dir.write("study/nvsmi.log", smi);
  auto r = run_scalelens("report " + quoted(dir / "study") + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  std::vector<std::string> runs;
  for (simdjson::dom::element run : root["runs"].get_array())
    runs.push_back(fmt::format("{} {} {}", std::string_view(run["label"]), int64_t(run["world_size"]), int64_t(run["gpus"])));
  std::sort(runs.begin(), runs.end());
  EXPECT_EQ(runs, (std::vector<std::string>{"ddp 1 0", "ddp 4 0"})) << r.out.substr(0, 1000);
  const std::string said = messages_of(root, "gpu-log-not-assigned");
  EXPECT_NE(said.find("beside run folders (ddp-1, ddp-4), in none of them"), std::string::npos) << said;
  EXPECT_EQ(messages_of(root, "runs-from-gpu-logs"), "");
  for (simdjson::dom::element w : root["warnings"].get_array())
    if (std::string_view(w["code"]) == "gpu-log-not-assigned")
      EXPECT_EQ(std::string_view(w["path"]), (dir / "study/nvsmi.log").string());

  // Five run folders: the first three by name, and how many more, as every list in a message.
  for (int p : {2, 8, 16}) write_collected_run(dir, fmt::format("study/ddp-{}", p), p, p, 40.0 / p);
  auto five = run_scalelens("report " + quoted(dir / "study") + " -q --no-cache --format json");
  ASSERT_EQ(five.exit_code, 0) << five.err;
  simdjson::dom::parser five_parser;
  const std::string five_said = messages_of(five_parser.parse(five.out), "gpu-log-not-assigned");
  EXPECT_NE(five_said.find("beside run folders (ddp-1, ddp-16, ddp-2 and 2 more), in none of them"), std::string::npos) << five_said;
}

// A node's gpu.csv (scalelens's sampler: index and UUID) and, in the same nodes/node0/, the user's
// own `nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,memory.used,power.draw
// --format=csv -l 1` log of the same 4 GPUs (index, no uuid): 8 GPUs and the energy doubled. A GPU
// known by node and index in one and by its UUID, at that node and index, in the other is one GPU.
TEST(RunSourcesCli, AnIndexOnlyNvSmiLogBesideGpuCsvIsTheSameGpus) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-4", 4, 4, 10);  // 32 s
  std::string csv(kGpuCsvHeader);
  std::string smi = "timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W]\n";
  for (int s = 0; s <= 32; ++s)
    for (int g = 0; g < 4; ++g) {
      csv += gpu_csv_line(kStartNs + s * 1000000000LL, g, "300.00", std::to_string(5123456789LL + s * 300000LL));
      smi += fmt::format("2023/11/14 22:13:{:02d}.{:03d}, {}, NVIDIA A100-SXM4-80GB, 80 %, 1000 MiB, 300.00 W\n", 20 + s,
                         2 * g, g);
    }
  dir.write("ddp-4/nodes/node0/gpu.csv", csv);
  dir.write("ddp-4/nodes/node0/smi.log", smi);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  simdjson::dom::element run = root["runs"].at(0);
  EXPECT_EQ(int64_t(run["gpus"]), 4) << r.out.substr(0, 800);
  // By hand: 4 GPUs × 300 W × the run's 32 s = 38400 J = 10.667 Wh.
  EXPECT_NEAR(double(run["energy_wh"]), 4 * 300.0 * 32 / 3600, 1e-3);
  const std::string said = messages_of(root, "energy-double-counted");
  expect_says(said, {"smi.log", "gpu.csv"});
  EXPECT_EQ(messages_of(root, "gpus-beyond-world-size"), "");
}

// A hand-written `{"label": "mix", "system": "lab"}` above 8gpu/ (the 8 real DLRM traces) and 2gpu/
// (a real ResNet trace, rank 0 of 2): read as one run of world size 2 with DLRM's steps and a
// computation score of both. Without it, two runs. A manifest above trace folders supplies
// defaults (label, system); it never merges them: the same two runs either way.
TEST(RunSourcesCli, ALabelManifestAboveTraceFoldersDoesNotMergeThem) {
  SCALELENS_REQUIRE_REALDATA(data);
  auto lay_out = [&](const ScratchDir& dir) {
    std::filesystem::create_directories(dir / "study/8gpu");
    std::filesystem::create_directories(dir / "study/2gpu");
    for (const auto& e : std::filesystem::directory_iterator(data / "kineto/dlrm-8rank-v100"))
      if (e.path().filename().string().rfind("worker", 0) == 0)
        std::filesystem::copy_file(e.path(), dir / "study/8gpu" / e.path().filename());
    std::filesystem::copy_file(data / "kineto/hta/resnet-ddp-rank0of2-a100.json.gz",
                               dir / "study/2gpu/resnet-ddp-rank0of2-a100.json.gz");
    // And the DLRM node's `nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,power.draw
    // --format=csv -l 1` beside its traces: its 8 GPUs are that run's, with or without the manifest.
    std::string log = "timestamp, index, name, utilization.gpu [%], power.draw [W]\n";
    for (int s = 0; s < 30; ++s)
      for (int g = 0; g < 8; ++g)
        log += fmt::format("2023/09/07 23:09:{:02d}.{:03d}, {}, Tesla V100-SXM2-32GB, 80 %, 250.00 W\n", 30 + s, 2 * g, g);
    dir.write("study/8gpu/nvsmi.log", log);
  };
  auto runs_of = [](const std::string& json) {
    simdjson::dom::parser parser;
    simdjson::dom::element root = parser.parse(json);
    std::vector<std::string> runs;
    for (simdjson::dom::element r : root["runs"].get_array()) {
      std::string_view system;  // absent where the run has none
      if (r["system"].get(system)) system = {};
      runs.push_back(fmt::format("{} {} {} {} GPUs sampled", std::string_view(r["label"]), system, int64_t(r["world_size"]),
                                 int64_t(r["gpus"])));
    }
    std::sort(runs.begin(), runs.end());
    return runs;
  };
  ScratchDir with, without;
  lay_out(with);
  lay_out(without);
  with.write("study/scalelens.json", R"({"label":"mix","system":"lab"})");
  auto w = run_scalelens("report " + quoted(with / "study") + " -q --no-cache --format json");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  auto wo = run_scalelens("report " + quoted(without / "study") + " --label mix -q --no-cache --format json");
  ASSERT_EQ(wo.exit_code, 0) << wo.err;
  // Two runs either way (on two GPU models: their labels tagged, `configuration-split`).
  EXPECT_EQ(runs_of(w.out), (std::vector<std::string>{"mix [NVIDIA A100-PG509-200] lab 2 0 GPUs sampled",
                                                      "mix [Tesla V100-SXM2-32GB] lab 8 8 GPUs sampled"}))
      << w.out.substr(0, 1000);
  EXPECT_EQ(runs_of(wo.out), (std::vector<std::string>{"mix [NVIDIA A100-PG509-200]  2 0 GPUs sampled",
                                                       "mix [Tesla V100-SXM2-32GB]  8 8 GPUs sampled"}))
      << wo.out.substr(0, 1000);
  EXPECT_NE(w.out.find("labelled 'mix' (from the scalelens.json above them)"), std::string::npos) << w.out.substr(0, 1500);
}

// The 8 real DLRM traces beside their run's own scalelens.json (run_id, nodes, exit status, no
// world size: the traces state it). Taken for a manifest of defaults above them, the run lost its
// identity (run_id from the traces' folder, nodes and exit status null). Traces beside a manifest
// are its run's; only those in folders below it form runs of their own.
TEST(RunSourcesCli, TracesBesideAManifestWithoutWorldSizeAreItsRun) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  std::filesystem::create_directories(dir / "study/dlrm-8gpu");
  for (const auto& e : std::filesystem::directory_iterator(data / "kineto/dlrm-8rank-v100"))
    if (e.path().filename().string().rfind("worker", 0) == 0)
      std::filesystem::copy_file(e.path(), dir / "study/dlrm-8gpu" / e.path().filename());
  dir.write("study/dlrm-8gpu/scalelens.json",
            R"({"schema":"scalelens.run/1","run_id":"job-4711","label":"dlrm","system":"lab","nodes":1,)"
            R"("gpus_per_node":8,"global_batch_size":2048,"exit_status":0,"status":"complete"})");
  auto r = run_scalelens("report " + quoted(dir / "study") + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  std::vector<std::string> runs;
  for (simdjson::dom::element run : root["runs"].get_array()) {
    int64_t nodes = -1, exit_status = -1;  // -1 where null
    if (run["nodes"].get(nodes)) nodes = -1;
    if (run["exit_status"].get(exit_status)) exit_status = -1;
    runs.push_back(fmt::format("{} {} {} nodes {} exit {}", std::string_view(run["run_id"]), std::string_view(run["label"]),
                               int64_t(run["world_size"]), nodes, exit_status));
  }
  EXPECT_EQ(runs, (std::vector<std::string>{"job-4711 dlrm 8 nodes 1 exit 0"})) << r.out.substr(0, 1500);
  EXPECT_EQ(messages_of(root, "runs-from-traces"), "");
}

// gpu.csv as the sampler writes it (every 0.5 s), with the node's clock stepped back 5 s (an NTP
// step) 16 s into the run: the later rows are stamped 5 s early. The same samples as an nvidia-smi
// log were warned `time-goes-backwards`; gpu.csv's were sorted and said nothing. One step, said once.
// Sorted, the stamps after the step interleaved with those before: the power was integrated over
// 27 s (9.0 Wh, a 5 s "gap" at the end); the GPUs drew 300 W for all 32 s.
TEST(RunSourcesCli, AClockStepBackInGpuCsvIsSaidOnceAndItsEnergyIsThe32sDrawn) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-4", 4, 4, 10);  // 32 s
  std::string csv(kGpuCsvHeader);
  int first_step_line = 0, line = 1;
  for (int tick = 0; tick <= 64; ++tick) {
    const long long stepped_back = tick > 32 ? 5000000000LL : 0;
    for (int g = 0; g < 4; ++g) {
      ++line;
      if (tick == 33 && g == 0) first_step_line = line;
      csv += gpu_csv_line(kStartNs + tick * 500000000LL - stepped_back, g);
    }
  }
  dir.write("ddp-4/nodes/node0/gpu.csv", csv);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  const std::string said = messages_of(root, "time-goes-backwards");
  EXPECT_NE(said.find(fmt::format("timestamps go backwards 1 time (the first at line {})", first_step_line)),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("\n"), said.size() - 1) << "one warning, for the one file: " << said;
  simdjson::dom::element run = root["runs"].at(0);
  EXPECT_NEAR(double(run["energy_wh"]), 4 * 300.0 * 32 / 3600, 1e-3);
  EXPECT_EQ(messages_of(root, "energy-gaps"), "");
}

// The same clock step as `scalelens run` records it: the wrapper stamps the run's end (scalelens.json's
// and the ranks' end_ns) with the stepped clock, 5 s early, then takes the sampler's last sample;
// the job's epochs after the step are stamped 5 s early too; host.csv is sampled with gpu.csv. The
// rows were put back on the clock the run began with but the end was not: the power was clipped
// to 27 s (9.0 Wh), and the run took 27 s. The end is moved by the step, and said: 32 s, 10.67 Wh.
TEST(RunSourcesCli, AnEndStampedAfterAClockStepBackIsMovedByTheStep) {
  ScratchDir dir;
  write_stepped_run(dir, 16.2);  // between two samples
  const int step_line = 2 + 33 * 4;  // the first sample after the step, at 16.5 s
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  simdjson::dom::element run = root["runs"].at(0);
  EXPECT_NEAR(double(run["energy_wh"]), 4 * 300.0 * 32 / 3600, 1e-3);
  EXPECT_NEAR(double(run["run_time_s"]), 32, 1e-6);
  EXPECT_NEAR(double(run["host_energy_wh"]), 100.0 * 32 / 3600, 1e-3);
  const std::string said = messages_of(root, "clock-stepped");
  expect_says(said, {fmt::format("stepped back 5 s while the run ran (at line {})", step_line),
                     "taken 5 s later",
                     "(the run 32 s, not 27 s)"});
  EXPECT_EQ(messages_of(root, "energy-gaps"), "");
}

// The same step on one node of two: the other node's samples may be summarized over the run's end
// as stated as they are read, so it stays (whether samples are kept or not); that the run's time and
// energy leave out the step is said, not hidden.
TEST(RunSourcesCli, AnEndStampedAfterAClockStepBackOnOneOfTwoNodesIsSaid) {
  ScratchDir dir;
  constexpr long long kStep = 5000000000LL;
  auto on_node0_clock = [&](long long true_ns) { return true_ns >= kStartNs + 16200000000LL ? true_ns - kStep : true_ns; };
  write_manifest(dir, "ddp-8",
                 {.world_size = 8, .nodes = 2, .gpus_per_node = 4, .end_ns = on_node0_clock(kStartNs + 32000000000LL)});
  for (const std::string node : {"node0", "node1"}) {
    std::string gpu(kGpuCsvHeader);
    for (int tick = 0; tick <= 64; ++tick) {
      const long long true_t = kStartNs + tick * 500000000LL;
      const long long t = node == "node0" ? on_node0_clock(true_t) : true_t;
      for (int g = 0; g < 4; ++g)
        gpu += fmt::format("{},{},GPU-{}-{},80,10,1048576000,300.00,,1410,60\n", t, g, node, g);
    }
    dir.write("ddp-8/nodes/" + node + "/gpu.csv", gpu);
  }
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  const std::string said = messages_of(root, "clock-stepped");
  expect_says(said, {"left as stated (the run's GPU or host logs of another node do not find it so)", "leave out its last 5 s"});
  EXPECT_NEAR(double(root["runs"].at(0)["run_time_s"]), 27, 1e-6);
}

// The clock stepped back 5 s 13.2 s into the run, during the second epoch (11 s to 21 s): that
// epoch's end and the third's times were stamped 5 s early; the second epoch read 5 s, not 10 s
// (epoch time 7.5 s, high-variation). The log places the step: those times are taken 5 s later.
TEST(RunSourcesCli, EpochsAndStepsStampedAfterAClockStepBackAreTakenOnTheRunsClock) {
  ScratchDir dir;
  write_stepped_run(dir, 13.2, 30);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  expect_epochs_of(root, 10, r.out);
  EXPECT_EQ(messages_of(root, "high-variation"), "");
  EXPECT_NEAR(double(root["runs"].at(0)["run_time_s"]), 32, 1e-6);
  const std::string said = messages_of(root, "clock-stepped");
  expect_says(said, {"(nodes/node0/gpu.csv, line ",
                     "times stamped after the step are taken 5 s later",
                     "those of 8 epochs",
                     "(epoch 1 of rank 0 lasts 10 s, not 5 s)",
                     // Steps from 1 s: the 17 after the step and the one across it (13 s to 14 s, its end
                     // stamped before its start), of each rank.
                     "those of 72 steps",
                     "(and that of 4 ranks in ranks/)"});
  EXPECT_EQ(messages_of(root, "bad-lines"), "");
  EXPECT_EQ(said.find("cannot be placed"), std::string::npos) << said;
}

// The same step 16.2 s into the run: the second epoch's end (21 s, stamped 16 s) and the third's
// start lie within the 5.5 s the clock passed twice, and neither their values nor their order tell
// on which side of the step they were stamped (the second epoch 16 s to 21 s, or the third 15 s).
// The side that gives them the first epoch's 10 s is taken, and said so.
TEST(RunSourcesCli, EpochsStampedWhereTheClockPassedTwiceArePlacedByTheirLengthsAndSaid) {
  ScratchDir dir;
  write_stepped_run(dir, 16.2);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  expect_epochs_of(root, 10, r.out);
  const std::string said = messages_of(root, "clock-stepped");
  EXPECT_NE(said.find("those of 8 epochs (epoch 1 of rank 0 lasts 10 s, not 5 s); placed by the lengths of the rank's "
                      "other epochs, as stamped between 11 s and 16.5 s into the run, which the clock passed both before "
                      "and after the step: 8 epochs"),
            std::string::npos)
      << said;
}

// The clock stepped back twice (5 s at 10.2 s, 2 s more at 20.2 s): the run's end moves by both,
// but which of the epochs' stamps lie after which step their values cannot tell. Read as written,
// and said so, not moved by a guess.
TEST(RunSourcesCli, EpochsOfANodeWhoseClockSteppedTwiceAreSaidToBeReadAsWritten) {
  ScratchDir dir;
  write_stepped_run(dir, 10.2, 0, 20.2);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  EXPECT_NEAR(double(root["runs"].at(0)["run_time_s"]), 32, 1e-6);
  const std::string said = messages_of(root, "clock-stepped");
  expect_says(said, {"the node's clock stepped back more than once while the run ran (nodes/node0/gpu.csv, from line ",
                     "they are read as written, and a time across a step is short by it"});
}

// epochs.csv alone (no log of the run places a step) whose rank's epoch starts 5 s before its
// epoch before ended: a clock stepped back, or rows appended. It was read silently.
TEST(RunSourcesCli, EpochsThatGoBackInTimeAreSaid) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-4", 4, 4, 10);
  std::string epochs = "rank,epoch,start_ns,end_ns,samples\n";
  for (int e = 0; e < 3; ++e) {
    const long long t0 = kStartNs + (1 + e * 10LL) * 1000000000LL - (e == 2 ? 5000000000LL : 0);
    epochs += fmt::format("0,{},{},{},2500\n", e, t0, t0 + 10000000000LL);
  }
  dir.write("ddp-4/epochs.csv", epochs);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  const std::string said = messages_of(root, "time-goes-backwards");
  EXPECT_NE(said.find("times go back 1 time (the first at line 4: rank 0's epoch 2 starts 5 s before its epoch 1 ends)"),
            std::string::npos)
      << said;
}

// gpu.csv's energy counter moves before the run and after it but holds one value all through it,
// while power shows the GPUs drawing 300 W: stuck over the run. Power stood in without a word where
// a sample met each edge, and where none did the counter's energy was the edges' few joules.
TEST(RunSourcesCli, AnEnergyCounterStuckOnlyOverTheRunIsReplacedByPowerAndSaid) {
  for (const long long offset_ms : {0LL, 250LL}) {
    ScratchDir dir;
    const long long start = kStartNs + 8000000000LL + offset_ms * 1000000LL, end = start + 16000000000LL;
    write_manifest(dir, "ddp-4", {.start_ns = start, .end_ns = end, .batch = false, .sampling_interval_s = 0.5});
    std::string csv(kGpuCsvHeader);
    for (int tick = 0; tick <= 64; ++tick) {
      const long long t = kStartNs + tick * 500000000LL;
      // 300 W x 0.5 s a tick, outside the run; held from the last tick before it to the first after.
      const int counted = t < start ? tick : t <= end ? static_cast<int>((start - kStartNs - 1) / 500000000LL) : tick - 32;
      for (int g = 0; g < 4; ++g)
        csv += gpu_csv_line(t, g, "300.00", std::to_string(5123456789LL + counted * 150000LL));
    }
    dir.write("ddp-4/nodes/node0/gpu.csv", csv);
    auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    simdjson::dom::parser parser;
    simdjson::dom::element root = parser.parse(r.out);
    simdjson::dom::element run = root["runs"].at(0);
    EXPECT_NEAR(double(run["energy_wh"]), 4 * 300.0 * 16 / 3600, 1e-3) << offset_ms;
    EXPECT_EQ(std::string_view(run["energy_from"]), "power") << offset_ms;
    const std::string said = messages_of(root, "energy-counter-stuck");
    EXPECT_NE(said.find("of 4 GPUs holds one value all through the run while power_w shows drawing, though it moves "
                        "before or after the run"),
              std::string::npos)
        << offset_ms << ": " << said;
  }
}

// gpu.csv as the sampler writes it (every 0.5 s, NVML's energy counter in energy_mj) whose counter
// stops 16 s into a 32 s run while power.draw goes on: from there on its field is empty, or it
// repeats its last value. The energy was the counter's 16 s (5.33 Wh), the rest lost and not said;
// power stands in where the counter stopped, as over a gap: 4 GPUs x 300 W x 32 s.
TEST(RunSourcesCli, AnEnergyCounterThatStopsMidLogIsFollowedByPower) {
  for (const bool repeated : {false, true}) {
    ScratchDir dir;
    write_collected_run(dir, "ddp-4", 4, 4, 10);  // 32 s
    std::string csv(kGpuCsvHeader);
    for (int tick = 0; tick <= 64; ++tick)
      for (int g = 0; g < 4; ++g) {
        const long long counter_mj = 5123456789LL + std::min(tick, 32) * 150000LL;  // 300 W x 0.5 s a tick
        csv += gpu_csv_line(kStartNs + tick * 500000000LL, g, "300.00",
                            tick <= 32 || repeated ? std::to_string(counter_mj) : std::string());
      }
    dir.write("ddp-4/nodes/node0/gpu.csv", csv);
    auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    simdjson::dom::parser parser;
    simdjson::dom::element root = parser.parse(r.out);
    simdjson::dom::element run = root["runs"].at(0);
    EXPECT_NEAR(double(run["energy_wh"]), 4 * 300.0 * 32 / 3600, 1e-3) << "repeated: " << repeated;
    EXPECT_EQ(messages_of(root, "energy-gaps"), "") << "repeated: " << repeated;
  }
}

// gpu.csv as the sampler writes it whose energy counter holds its first value on every row while
// power_w reads 300 W (NVML's total energy stuck). Over a 4 s run sampled every second the counter
// was taken as measured, and the energy was 0 Wh; over a 32 s run power stood in, unsaid. Power
// gives both (4 GPUs x 300 W), and the stuck counter is named.
TEST(RunSourcesCli, AnEnergyCounterStuckOnItsFirstValueIsReplacedByPowerAndSaid) {
  for (const auto& [seconds, interval_ms] : {std::pair{4, 1000}, std::pair{32, 500}}) {
    ScratchDir dir;
    const long long end = kStartNs + seconds * 1000000000LL;
    write_manifest(dir, "ddp-4", {.end_ns = end, .batch = false, .sampling_interval_s = interval_ms / 1000.0});
    std::string csv(kGpuCsvHeader);
    for (long long t = kStartNs; t <= end; t += interval_ms * 1000000LL)
      for (int g = 0; g < 4; ++g)
        csv += gpu_csv_line(t, g, "300.00", std::to_string(5123456789LL + g));
    dir.write("ddp-4/nodes/node0/gpu.csv", csv);
    auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    simdjson::dom::parser parser;
    simdjson::dom::element root = parser.parse(r.out);
    simdjson::dom::element run = root["runs"].at(0);
    EXPECT_NEAR(double(run["energy_wh"]), 4 * 300.0 * seconds / 3600, 1e-3) << seconds << " s";
    EXPECT_EQ(std::string_view(run["energy_from"]), "power") << seconds << " s";
    const std::string said = messages_of(root, "energy-counter-stuck");
    EXPECT_NE(said.find("of 4 GPUs holds one value all through the log"), std::string::npos) << seconds << " s: " << said;
    EXPECT_NE(said.find("5123456789 mJ on every reading"), std::string::npos) << said;
  }
}

// The same counter stopping where no power is logged after it (power_w empty, as the sampler
// writes a reading NVML did not give): nothing measured that tail, which is left out and said.
TEST(RunSourcesCli, AnEnergyCounterThatStopsWithPowerIsAGap) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-4", 4, 4, 10);  // 32 s
  std::string csv(kGpuCsvHeader);
  for (int tick = 0; tick <= 64; ++tick)
    for (int g = 0; g < 4; ++g)
      csv += gpu_csv_line(kStartNs + tick * 500000000LL, g, tick <= 32 ? "300.00" : "",
                          std::to_string(5123456789LL + std::min(tick, 32) * 150000LL));
  dir.write("ddp-4/nodes/node0/gpu.csv", csv);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  EXPECT_NEAR(double(root["runs"].at(0)["energy_wh"]), 4 * 300.0 * 16 / 3600, 1e-3);
  const std::string said = messages_of(root, "energy-gaps");
  EXPECT_NE(said.find("64.0 s of GPU time"), std::string::npos) << said;
}

// A run killed before its end was written: scalelens.json as `scalelens run` writes it at the
// start ("status": "running", start_ns, no end_ns), its epochs to 31 s, and a gpu.csv that ends
// 16 s in (the node's sampler died). The GPU log was checked only against a stated start and end:
// half the energy was lost unsaid. The epochs' last end (CLOCK_REALTIME, as gpu.csv's t_ns) is
// the least the run lasted; so too without a start (a hand-written manifest).
TEST(RunSourcesCli, AGpuLogEndingBeforeTheEpochsOfARunWithoutAnEndIsAGap) {
  for (const bool with_start : {true, false}) {
    ScratchDir dir;
    write_collected_run(dir, "ddp-4", 4, 4, 10);  // epochs 1..11, 11..21, 21..31 s
    dir.write("ddp-4/scalelens.json",
              fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "ddp-4", "label": "ddp", "system": "juwels", )"
                          R"("world_size": 4, "nodes": 1, "gpus_per_node": 4, "global_batch_size": 256, )"
                          R"("samples_per_epoch": 10000, "scaling": "strong", {}"status": "running"}})",
                          with_start ? fmt::format(R"("start_ns": {}, )", kStartNs) : std::string()));
    std::string csv(kGpuCsvHeader);
    for (int tick = 0; tick <= 32; ++tick)
      for (int g = 0; g < 4; ++g)
        csv += gpu_csv_line(kStartNs + tick * 500000000LL, g);
    dir.write("ddp-4/nodes/node0/gpu.csv", csv);
    auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    simdjson::dom::parser parser;
    simdjson::dom::element root = parser.parse(r.out);
    EXPECT_NEAR(double(root["runs"].at(0)["energy_wh"]), 4 * 300.0 * 16 / 3600, 1e-3) << "with start: " << with_start;
    const std::string said = messages_of(root, "energy-gaps");
    // 15 s (16 to 31 s) of 4 GPUs; without a start, the first epoch's start (1 s) is where it is held from.
    EXPECT_NE(said.find("60.0 s of GPU time"), std::string::npos) << "with start: " << with_start << ": " << said;
  }
}

// A run folder whose epochs.csv says 10 s epochs, and in it the job's own MLPerf log (the mllog
// package's lines in its slurm-%j.out) saying 15 s: the report used 15 s (speedup 2.67, not 4)
// silently, and MLPerf's epochs end 14 s after the manifest's end_ns. Said, and the folder's used.
TEST(RunSourcesCli, EpochSourcesOfOneRunThatDisagreeAreSaid) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-1", 1, 1, 40);
  write_collected_run(dir, "ddp-4", 4, 4, 10);  // epochs 1..11, 11..21, 21..31 s; end 32 s
  dir.write("ddp-4/slurm-1234.out", mlperf_job_log(15000, 15000, 46000));
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  const std::string said = messages_of(root, "epoch-sources-disagree");
  expect_says(said, {"epochs.csv (3 epochs, 10 s each on average)",
                     "slurm-1234.out (3 epochs, 15 s, its last ending 14 s after the run's end",
                     "the run folder's own are used"});
  for (simdjson::dom::element c : root["configurations"].get_array())
    if (int64_t(c["world_size"]) == 4) EXPECT_NEAR(double(c["speedup"]), 4.0, 1e-9) << r.out.substr(0, 1500);
}

// One job with a straggler: epochs.csv's slowest rank (rank 3) takes 10.2 s an epoch, the job's
// MLPerf log (rank 0's view) 10.0 s. Warned at 1% as "one of them is of another run"; a straggler
// alone is not another run: not said, and the folder's own epochs (the slowest rank's) are used.
TEST(RunSourcesCli, AStragglerDoesNotMakeEpochSourcesDisagree) {
  ScratchDir dir;
  write_collected_run(dir, "ddp-1", 1, 1, 40);
  write_collected_run(dir, "ddp-4", 4, 4, 10);  // its epochs.csv rewritten below, rank 3 slower
  std::string csv = "rank,epoch,start_ns,end_ns,samples\n";
  for (int r = 0; r < 4; ++r)
    for (int e = 0; e < 3; ++e) {
      const long long t0 = kStartNs + static_cast<long long>((1 + e * 10.2) * 1e9);
      csv += fmt::format("{},{},{},{},{}\n", r, e, t0, t0 + static_cast<long long>((r == 3 ? 10.2 : 10.0) * 1e9), 2500);
    }
  dir.write("ddp-4/epochs.csv", csv);
  dir.write("ddp-4/slurm-1234.out", mlperf_job_log(10200, 10000, 31600));
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  EXPECT_EQ(messages_of(root, "epoch-sources-disagree"), "");
  for (simdjson::dom::element c : root["configurations"].get_array())  // 40 s / 10.2 s: the slowest rank's
    if (int64_t(c["world_size"]) == 4) EXPECT_NEAR(double(c["speedup"]), 40 / 10.2, 1e-6) << r.out.substr(0, 1500);
}

// The clock stepped back 12 s 16.2 s into the run, within the second epoch (11 s to 21 s), which is
// stamped to end at 9 s, before it starts: it was left out as a bad line (epoch time from the third
// epoch alone). The log places the step within it: its end is taken 12 s later, and it lasts 10 s.
TEST(RunSourcesCli, AnEpochThatEndsBeforeItStartsBecauseTheClockSteppedBackWithinItLastsItsTrueLength) {
  ScratchDir dir;
  write_stepped_run(dir, 16.2, 0, 0, 12);
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  simdjson::dom::element epoch_time = root["configurations"].at(0)["epoch_time_s"];
  EXPECT_EQ(int64_t(epoch_time["n"]), 2) << r.out.substr(0, 2000);  // epochs 1 and 2, after the warm-up
  EXPECT_NEAR(double(epoch_time["mean"]), 10, 1e-6);
  EXPECT_NEAR(double(epoch_time["std"]), 0, 1e-6);
  EXPECT_EQ(messages_of(root, "bad-lines"), "");
  const std::string said = messages_of(root, "clock-stepped");
  EXPECT_NE(said.find("those of 8 epochs (epoch 1 of rank 0 lasts 10 s, not -2 s)"), std::string::npos) << said;
}

// The same epochs with no log of the run that places a step: the epoch that ends before it starts
// is a bad line, left out and said so, as before.
TEST(RunSourcesCli, AnEpochThatEndsBeforeItStartsWithNoStepPlacedIsABadLine) {
  ScratchDir dir;
  write_stepped_run(dir, 16.2, 0, 0, 12);
  std::filesystem::remove_all(dir / "ddp-4/nodes");
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  EXPECT_EQ(int64_t(root["configurations"].at(0)["epoch_time_s"]["n"]), 1) << r.out.substr(0, 2000);
  EXPECT_EQ(messages_of(root, "bad-lines"), "4 lines skipped; the first, line 3: end_ns is before start_ns\n");
  EXPECT_EQ(messages_of(root, "clock-stepped"), "");
}

// The step of EpochsAndStepsStampedAfterAClockStepBackAreTakenOnTheRunsClock in a run whose manifest
// states no end (a job killed before `scalelens run` wrote it): no end to move, but gpu.csv and
// host.csv place the step all the same. The epochs after it were read as written (the second 5 s,
// not 10 s); they are taken on the run's clock, and said so.
TEST(RunSourcesCli, EpochsStampedAfterAClockStepBackInARunWithoutAnEndAreTakenOnTheRunsClock) {
  ScratchDir dir;
  write_stepped_run(dir, 13.2);
  dir.write("ddp-4/scalelens.json", std::regex_replace(slurp(dir / "ddp-4/scalelens.json"), std::regex(R"("end_ns": \d+, )"), ""));
  auto r = run_scalelens("report " + quoted(dir.path()) + " -q --no-cache --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  EXPECT_TRUE(root["runs"].at(0)["run_time_s"].is_null()) << "no end: " << r.out.substr(0, 2000);
  simdjson::dom::element epoch_time = root["configurations"].at(0)["epoch_time_s"];
  EXPECT_NEAR(double(epoch_time["mean"]), 10, 1e-6) << r.out.substr(0, 2000);
  EXPECT_NEAR(double(epoch_time["std"]), 0, 1e-6);
  const std::string said = messages_of(root, "clock-stepped");
  EXPECT_NE(said.find("(nodes/node0/gpu.csv, line "), std::string::npos) << said;
  EXPECT_NE(said.find("those of 8 epochs (epoch 1 of rank 0 lasts 10 s, not 5 s)"), std::string::npos) << said;
  EXPECT_EQ(said.find("scalelens.json's end_ns"), std::string::npos) << said;
}
