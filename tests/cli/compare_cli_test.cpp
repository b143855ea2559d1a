// `scalelens compare` end to end on pairs of studies built from real inputs: the MLPerf HPC
// deepcam logs (5 repeats at 512 and 2048 GPUs) as they are and with one configuration's clock
// stretched, the DLRM traces with one kernel slowed by editing its durations, and the MPI demo
// study measured twice.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "support/mlflow_store.hpp"
#include "support/run_binary.hpp"

using namespace scalelens::testing;
namespace fs = std::filesystem;

namespace {

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive);
  for (auto& e : fs::recursive_directory_iterator(to))
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// Every "time_ms" of an MLPerf log moved so that the time since its first event is `factor`
// times longer: the run, each epoch and the time to train all slow down by that factor.
void stretch_clock(const fs::path& file, double factor) {
  const std::string text = read(file);
  const std::string key = "\"time_ms\": ";
  std::string out;
  std::optional<long long> t0;
  std::size_t pos = 0;
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, pos)) {
    const std::size_t num = at + key.size();
    std::size_t end = num;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    const long long t = std::stoll(text.substr(num, end - num));
    if (!t0) t0 = t;
    out += text.substr(pos, num - pos) + std::to_string(*t0 + std::llround(static_cast<double>(t - *t0) * factor));
    pos = end;
  }
  out += text.substr(pos);
  write(file, out);
}

fs::path deepcam(const fs::path& data) { return data / "mlperf-hpc-v1.0-deepcam"; }
fs::path n64_logs(const fs::path& study) { return study / "NVIDIA/results/dgxa100_n64_ngc21.09_pytorch/strong/deepcam"; }

struct Verdicts {
  std::map<std::string, std::string> of;  // "512/time" → verdict
  std::size_t configurations = 0, unmatched = 0;
};

Verdicts parse(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(json);
  Verdicts v;
  EXPECT_EQ(std::string_view(root["schema"]), "scalelens.compare/1");
  for (auto c : root["configurations"].get_array()) {
    ++v.configurations;
    const auto p = int64_t(c["world_size"]);
    for (auto m : c["metrics"].get_array()) {
      v.of[fmt::format("{}/{}", p, std::string_view(m["metric"]))] = std::string(std::string_view(m["verdict"]));
      // Every metric carries the figures the schema promises.
      for (const char* key : {"before", "after", "rel_change", "ci_low", "ci_high", "verdict"}) EXPECT_FALSE(m[key].error()) << key;
    }
  }
  v.unmatched = root["unmatched"]["before"].get_array().size() + root["unmatched"]["after"].get_array().size();
  return v;
}

TEST(CompareCli, IdenticalRealStudiesAreUnchangedAndExitZero) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  copy_tree(deepcam(data), dir / "again");
  auto r = run_scalelens("compare " + quoted(deepcam(data)) + " " + quoted(dir / "again") + " --format json -q");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto v = parse(r.out);
  EXPECT_EQ(v.configurations, 2u);
  EXPECT_EQ(v.unmatched, 0u);
  ASSERT_FALSE(v.of.empty());
  for (const auto& [key, verdict] : v.of) EXPECT_EQ(verdict, "unchanged") << key;
  EXPECT_EQ(v.of.count("512/time"), 1u);
  EXPECT_EQ(v.of.count("2048/efficiency"), 1u);
}

TEST(CompareCli, TenPercentSlowerAtOneConfigurationRegressesItAndExitsFour) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  copy_tree(deepcam(data), dir / "after");
  for (auto& f : fs::directory_iterator(n64_logs(dir / "after"))) stretch_clock(f.path(), 1.10);
  auto r = run_scalelens("compare " + quoted(deepcam(data)) + " " + quoted(dir / "after") + " -q --junit " +
                         quoted(dir / "junit.xml") + " -o " + quoted(dir / "out"));
  ASSERT_EQ(r.exit_code, 4) << r.out << r.err;
  // The table: the regression first, with its change.
  const auto first_row = r.out.substr(r.out.find('\n', r.out.find("configuration")) + 1);
  EXPECT_EQ(first_row.rfind("deepcam @ dgxa100 512 GPUs   time per epoch", 0), 0u) << r.out;
  EXPECT_NE(first_row.find("+10.0%"), std::string::npos) << r.out;
  auto v = parse(read(dir / "out/compare.json"));
  EXPECT_EQ(v.of["512/time"], "regressed");
  EXPECT_EQ(v.of["512/throughput"], "regressed");
  EXPECT_EQ(v.of["2048/time"], "unchanged");
  // Slower at the baseline: the larger configuration's efficiency rose.
  EXPECT_EQ(v.of["2048/efficiency"], "improved");
  const auto junit = read(dir / "junit.xml");
  EXPECT_NE(junit.find("failures=\"2\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<testcase classname=\"scalelens.deepcam @ dgxa100 512 GPUs\" name=\"time per epoch\"><failure type=\"regressed\""),
            std::string::npos)
      << junit;
  EXPECT_NE(read(dir / "out/compare.md").find("| deepcam @ dgxa100 512 GPUs | time per epoch | 8.87 s | 9.76 s | +10.0% |"),
            std::string::npos);
  const auto html = read(dir / "out/compare.html");
  EXPECT_NE(html.find("\"compare\":{"), std::string::npos);
  EXPECT_NE(html.find("\"comparison\":"), std::string::npos);

  // CI keeps only the baseline's summary.json: the same verdicts from it.
  auto report = run_scalelens("report " + quoted(deepcam(data)) + " -q -o " + quoted(dir / "baseline"));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto saved = run_scalelens("compare " + quoted(dir / "baseline/summary.json") + " " + quoted(dir / "after") +
                             " --metric time,efficiency --format json -q");
  ASSERT_EQ(saved.exit_code, 4) << saved.err;
  auto vs = parse(saved.out);
  EXPECT_EQ(vs.of["512/time"], "regressed");
  EXPECT_EQ(vs.of["2048/efficiency"], "improved");
  EXPECT_EQ(vs.of.count("512/throughput"), 0u) << "only the metrics asked for";
  // The report's output folder stands for its summary.json.
  EXPECT_EQ(run_scalelens("compare " + quoted(dir / "baseline") + " " + quoted(dir / "after") + " -q").exit_code, 4);
  // A list option before the positionals takes only its own value.
  EXPECT_EQ(run_scalelens("compare --metric time --match label=deepcam:deepcam " + quoted(dir / "baseline") + " " + quoted(dir / "after") + " -q").exit_code, 4);
  // A threshold above the change: within it is not "regressed".
  EXPECT_EQ(run_scalelens("compare " + quoted(dir / "baseline") + " " + quoted(dir / "after") + " -q --threshold 20%").exit_code, 0);
}

TEST(CompareCli, OneRepeatEachIsInconclusiveNeverRegressed) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  for (const char* side : {"before", "after"}) {
    copy_tree(deepcam(data), dir / side);
    for (auto& f : fs::recursive_directory_iterator(dir / side))
      if (f.path().filename().string().rfind("result_", 0) == 0 && f.path().filename() != "result_1.txt") fs::remove(f.path());
  }
  for (auto& f : fs::directory_iterator(n64_logs(dir / "after"))) stretch_clock(f.path(), 1.30);
  auto r = run_scalelens("compare " + quoted(dir / "before") + " " + quoted(dir / "after") + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("inconclusive"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("regressed "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("an interval needs at least 2 repeats on each side"), std::string::npos) << r.out;
  // A strict gate fails on it.
  EXPECT_EQ(run_scalelens("compare " + quoted(dir / "before") + " " + quoted(dir / "after") + " -q --fail-on inconclusive").exit_code, 4);
}

TEST(CompareCli, NothingMatchedExitsTwoAndNamesWhatIsOnEachSide) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  copy_tree(deepcam(data), dir / "a");
  copy_tree(deepcam(data), dir / "b");
  fs::remove_all(dir / "a/NVIDIA/results/dgxa100_n256_ngc21.09_pytorch");
  fs::remove_all(dir / "b/NVIDIA/results/dgxa100_n64_ngc21.09_pytorch");
  auto r = run_scalelens("compare " + quoted(dir / "a") + " " + quoted(dir / "b") + " -q");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("only before (no match after): deepcam @ dgxa100 512 GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("only after (no match before): deepcam @ dgxa100 2048 GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("no configuration of one side matches"), std::string::npos) << r.err;

  // One configuration gone from the after study: listed; a strict gate fails on it.
  auto gone = run_scalelens("compare " + quoted(deepcam(data)) + " " + quoted(dir / "a") + " -q");
  EXPECT_EQ(gone.exit_code, 0) << gone.out << gone.err;
  EXPECT_NE(gone.out.find("only before (no match after): deepcam @ dgxa100 2048 GPUs"), std::string::npos) << gone.out;
  EXPECT_EQ(run_scalelens("compare " + quoted(deepcam(data)) + " " + quoted(dir / "a") + " -q --fail-on inconclusive").exit_code, 4);
  // Matched, but neither side has the metric asked for: nothing was compared.
  auto energy = run_scalelens("compare " + quoted(deepcam(data)) + " " + quoted(dir / "a") + " -q --metric energy");
  EXPECT_EQ(energy.exit_code, 2) << energy.out << energy.err;
  EXPECT_NE(energy.err.find("no metric could be compared"), std::string::npos) << energy.err;
}

TEST(CompareCli, UsageErrorsExitOneAndUnreadableInputsTwo) {
  ScratchDir dir;
  dir.write("a/x.txt", "hello\n");
  EXPECT_EQ(run_scalelens("compare " + quoted(dir / "a") + " " + quoted(dir / "a") + " --threshold 500").exit_code, 1);
  EXPECT_EQ(run_scalelens("compare " + quoted(dir / "a") + " " + quoted(dir / "a") + " --metric speed").exit_code, 1);
  EXPECT_EQ(run_scalelens("compare " + quoted(dir / "a") + " " + quoted(dir / "a") + " --match ddp").exit_code, 1);
  EXPECT_EQ(run_scalelens("compare " + quoted(dir / "a")).exit_code, 1);
  auto missing = run_scalelens("compare " + quoted(dir / "nope") + " " + quoted(dir / "a"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no such file or folder"), std::string::npos) << missing.err;
  auto bad = dir.write("bad.json", R"({"schema": "scalelens.summary/2", "configurations": {"label": 3}})");
  auto r = run_scalelens("compare " + quoted(bad) + " " + quoted(dir / "a"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(bad.string() + ": not a summary scalelens can compare: summary.configurations should be an array"),
            std::string::npos)
      << r.err;
}

// Kernel events of the DLRM traces span lines: `"cat": "kernel", "name": "<name>", ...` then
// `"ts": …, "dur": N,` on the next. Multiplies N of every kernel whose name starts with `prefix`.
std::size_t slow_kernel(const fs::path& file, const std::string& prefix, double factor) {
  std::string text = read(file);
  const std::string marker = "\"cat\": \"kernel\", \"name\": \"" + prefix;
  std::size_t edited = 0;
  for (std::size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) {
    const std::size_t dur = text.find("\"dur\": ", at);
    const std::size_t num = dur + 7;
    std::size_t end = num;
    while (std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    const long long d = std::stoll(text.substr(num, end - num));
    text.replace(num, end - num, std::to_string(std::llround(static_cast<double>(d) * factor)));
    ++edited;
  }
  write(file, text);
  return edited;
}

// The real DLRM traces under dir/before/dlrm-8rank, and under dir/after/dlrm-8rank with the kernels
// whose names start with `kernel` lasting `factor` times as long; how many events were edited.
std::size_t dlrm_before_and_slowed_after(const fs::path& data, const ScratchDir& dir, const std::string& kernel, double factor) {
  copy_tree(data / "kineto/dlrm-8rank-v100", dir / "before/dlrm-8rank");
  copy_tree(data / "kineto/dlrm-8rank-v100", dir / "after/dlrm-8rank");
  std::size_t edited = 0;
  for (auto& f : fs::directory_iterator(dir / "after/dlrm-8rank"))
    if (f.path().extension() == ".json") edited += slow_kernel(f.path(), kernel, factor);
  return edited;
}

TEST(CompareCli, TracesWithOneKernelSlowedNameItFirstAtTheTraceLevel) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  const std::size_t edited = dlrm_before_and_slowed_after(data, dir, "void gemmSN_TN_kernel", 4);
  ASSERT_GT(edited, 8u);
  auto r = run_scalelens("compare " + quoted(dir / "before") + " " + quoted(dir / "after") + " --kernels 3 --format json -q --no-cache");
  ASSERT_NE(r.exit_code, 2) << r.out << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  auto traces = root["traces"].get_array();
  ASSERT_EQ(traces.size(), 1u) << r.out;
  auto t = traces.at(0).value();
  EXPECT_EQ(int64_t(t["ranks_before"]), 8);
  auto kernels = t["kernels"].get_array();
  ASSERT_GE(kernels.size(), 1u);
  auto top = kernels.at(0).value();
  EXPECT_EQ(std::string_view(top["name"]).rfind("void gemmSN_TN_kernel", 0), 0u) << std::string_view(top["name"]);
  EXPECT_NEAR(double(top["after_us"]), 4 * double(top["before_us"]), 1e-6 * double(top["after_us"]));
  EXPECT_EQ(std::string_view(top["status"]), "both");
  // Nothing else changed: only its instantiations are listed, the rest counted as unchanged.
  for (auto k : kernels) {
    EXPECT_EQ(std::string_view(k["name"]).rfind("void gemmSN_TN_kernel", 0), 0u) << std::string_view(k["name"]);
    EXPECT_GT(double(k["delta_us"]), 0.0) << std::string_view(k["name"]);
  }
  EXPECT_GT(int64_t(t["kernels_unchanged"]), 50) << r.out.substr(0, 2000);
  EXPECT_EQ(t["ranks"].get_array().size(), 8u);
  // The terminal table shows the trace level too.
  auto table = run_scalelens("compare " + quoted(dir / "before") + " " + quoted(dir / "after") + " --kernels 3 -q");
  EXPECT_NE(table.out.find("Trace level, dlrm 8 GPUs"), std::string::npos) << table.out;
}

// Kernels whose time did not change are counted, not listed: where fewer than --kernels changed,
// the list was filled with them as "+0" rows (memcpy and memset first, by name). The real DLRM
// traces against themselves, and against a copy whose kernels last 10% longer (durations in whole
// µs, so the shortest stay as they were; memcpy and memset events are not kernels and stay too).
TEST(CompareCli, TheTraceLevelListsOnlyKernelsThatChangedAndSaysUnchangedOfTheRest) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  const std::size_t edited = dlrm_before_and_slowed_after(data, dir, "", 1.1);
  ASSERT_GT(edited, 8 * 200u);
  const std::string before = quoted(dir / "before"), after = quoted(dir / "after");

  auto same = run_scalelens("compare " + before + " " + before + " --kernels 10 -q --no-cache");
  ASSERT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("0 new kernels, 0 gone, "), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("\n  no kernel's time changed\n"), std::string::npos) << same.out;
  EXPECT_EQ(same.out.find("Memcpy"), std::string::npos) << same.out;
  EXPECT_EQ(same.out.find("+0\n"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("AllReduce     1.33   1.33  unchanged\n"), std::string::npos) << same.out;
  auto same_md = run_scalelens("compare " + before + " " + before + " --format markdown -q");
  EXPECT_NE(same_md.out.find("No kernel's time changed."), std::string::npos) << same_md.out;
  EXPECT_EQ(same_md.out.find("| +0 |"), std::string::npos) << same_md.out;

  auto longer = run_scalelens("compare " + before + " " + after + " --kernels 1000 --format json -q");
  ASSERT_NE(longer.exit_code, 2) << longer.out << longer.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(longer.out);
  auto t = root["traces"].get_array().at(0).value();
  std::size_t listed = 0;
  for (auto k : t["kernels"].get_array()) {
    ++listed;
    EXPECT_GT(double(k["delta_us"]), 0.0) << std::string_view(k["name"]);
    EXPECT_NE(std::string_view(k["name"]).rfind("Mem", 0), 0u) << std::string_view(k["name"]);
  }
  EXPECT_GT(listed, 40u);
  // The memcpy and memset events (5 kinds) and the kernels too short to change.
  EXPECT_GT(int64_t(t["kernels_unchanged"]), 5);
  auto table = run_scalelens("compare " + before + " " + after + " --kernels 1000 -q");
  EXPECT_EQ(table.out.find("+0\n"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("Memcpy"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(fmt::format("{} kernels unchanged", int64_t(t["kernels_unchanged"]))), std::string::npos) << table.out;
}

#ifdef SCALELENS_MPI_TRAIN
// The demo study (the MPI example under scalelens run) measured twice: every configuration
// matched, every metric with an interval from its repeats; and a study against its own summary:
// all unchanged.
TEST(CompareCli, TheDemoStudyRunTwiceIsMatchedWithIntervals) {
  ScratchDir dir;
  ScratchDir mpi_tmp;
  for (const char* study : {"first", "second"})
    for (int ranks : {1, 2})
      for (int repeat = 0; repeat < 2; ++repeat) {
        auto r = run_command(private_mpi_env(mpi_tmp) + MPIRUN "-n " + std::to_string(ranks) + " " SCALELENS_BIN
                             " run --study " + quoted(dir / study) + " --label mpi-sgd-strong --mpi-comm -q --global-batch-size 256 -- "
                             SCALELENS_MPI_TRAIN " --mode strong --epochs 3 --samples 4096");
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
      }
  auto r = run_scalelens("compare " + quoted(dir / "first") + " " + quoted(dir / "second") + " --format json -q");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.out << r.err;
  auto v = parse(r.out);
  EXPECT_EQ(v.configurations, 2u);
  EXPECT_EQ(v.unmatched, 0u);
  EXPECT_TRUE(v.of.count("1/time") && v.of.count("2/time") && v.of.count("2/efficiency") && v.of.count("2/computation_score")) << r.out;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(r.out);
  for (auto c : root["configurations"].get_array())
    for (auto m : c["metrics"].get_array()) EXPECT_FALSE(m["ci_low"].is_null()) << std::string_view(m["metric"]);

  auto report = run_scalelens("report " + quoted(dir / "first") + " -q -o " + quoted(dir / "report"));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto self = run_scalelens("compare " + quoted(dir / "report/summary.json") + " " + quoted(dir / "first") + " --format json -q");
  ASSERT_EQ(self.exit_code, 0) << self.out << self.err;
  for (const auto& [key, verdict] : parse(self.out).of) EXPECT_EQ(verdict, "unchanged") << key;
}
#endif

}  // namespace

// What reading a side's folders left out is said, as report says it (file, line, reason) on
// standard error and in compare.json: a refused manifest and a skipped line moved the figures
// with no word. --pattern is checked as report checks it, and refused where a side is a saved
// summary (its configurations are formed from all of its runs: one side filtered, one whole).
TEST(CompareCli, WhatReadingLeftOutIsSaidAndPatternIsCheckedOnBothSides) {
  ScratchDir dir;
  const fs::path toy = fs::path(SCALELENS_SOURCE_DIR) / "examples/toy-study";
  copy_tree(toy, dir / "before");
  copy_tree(toy, dir / "after");
  write(dir / "after/toy-2r-0/scalelens.json", "{\"label\": 5");
  std::string epochs = read(dir / "after/toy-4r-0/epochs.csv");
  const std::size_t line3 = epochs.find('\n', epochs.find('\n') + 1) + 1;
  epochs.replace(line3, epochs.find('\n', line3) - line3, "0,2,abc,def,xx");
  write(dir / "after/toy-4r-0/epochs.csv", epochs);
  auto r = run_scalelens("compare " + quoted(dir / "before") + " " + quoted(dir / "after") + " -q -o " + quoted(dir / "out"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("error: " + (dir / "after/toy-2r-0/scalelens.json").string() + ": after side: not a valid scalelens.json"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warning: " + (dir / "after/toy-4r-0/epochs.csv").string() + ":3: after side: 1 line skipped"),
            std::string::npos)
      << r.err;
  simdjson::dom::parser parser;
  const std::string json = read(dir / "out/compare.json");
  simdjson::dom::element root = parser.parse(json);
  std::size_t named = 0;
  for (auto w : root["warnings"].get_array()) {
    std::string_view path;
    if (w["path"].get(path)) continue;
    named += path == (dir / "after/toy-4r-0/epochs.csv").string() && int64_t(w["line"]) == 3;
    named += path == (dir / "after/toy-2r-0/scalelens.json").string() && std::string_view(w["severity"]) == "error";
  }
  EXPECT_EQ(named, 2u) << json;

  auto bad = run_scalelens("compare " + quoted(dir / "before") + " " + quoted(dir / "before") + " --pattern '('");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--pattern '(' is not a valid regular expression"), std::string::npos) << bad.err;
  ASSERT_EQ(run_scalelens("report -q " + quoted(dir / "before") + " -o " + quoted(dir / "report")).exit_code, 0);
  auto saved = run_scalelens("compare " + quoted(dir / "report/summary.json") + " " + quoted(dir / "before") + " --pattern 2r");
  EXPECT_EQ(saved.exit_code, 1);
  EXPECT_NE(saved.err.find("the before side is a saved summary.json"), std::string::npos) << saved.err;
  EXPECT_EQ(run_scalelens("compare " + quoted(dir / "before") + " " + quoted(dir / "after") + " -q --pattern 2r").exit_code, 0);
}

namespace {

// One train run of itwinai's TorchTrainer on 2 GPUs, with two epochs timed by its main worker.
void write_itwinai_train_run(const MlflowStore& store, const std::string& id, const std::string& strategy) {
  constexpr std::int64_t t0 = 1'700'000'000'000;
  store.run(id, id + "-" + strategy, t0, t0 + 100, 3);
  store.worker(id + "w0", id, 0, 2, t0 + 200, strategy);
  store.worker(id + "w1", id, 1, 2, t0 + 300, strategy);
  store.metric(id + "w0", "epoch_time_s", std::to_string(t0 + 10'000) + " 10.5 0\n" + std::to_string(t0 + 20'000) + " 9.5 1\n");
}

}  // namespace

// A --match whose name no configuration of its side has pairs nothing: the comparison went on as
// without it, and a gate passed. Here the horovod runs are in an MLflow experiment that was
// deleted (MLflow moved it to .trash, marked deleted), which report leaves out with a note that
// compare does not show: the error names the side, the value and what was left out.
TEST(CompareCli, AMatchNamingWhatASideLacksIsAnErrorNamingSideAndValue) {
  ScratchDir dir;
  MlflowStore live(dir, "1");
  write_itwinai_train_run(live, "a", "torch-ddp");
  write_itwinai_train_run(live, "b", "torch-ddp");
  MlflowStore deleted(dir, "2", "deleted");
  write_itwinai_train_run(deleted, "c", "horovod");
  const std::string study = quoted(dir.path());
  const auto trashed = (dir / "mllogs/mlflow/.trash/2/meta.yaml").string();

  auto old_deleted = run_scalelens("compare " + study + " " + study + " -q --match label=horovod:torch-ddp");
  EXPECT_EQ(old_deleted.exit_code, 1) << old_deleted.out << old_deleted.err;
  EXPECT_NE(old_deleted.err.find("--match label=horovod:torch-ddp: the before side has no configuration labelled 'horovod' (it has "
                                 "'torch-ddp'); reading it left out " +
                                 trashed + ": MLflow experiment marked deleted; left out"),
            std::string::npos)
      << old_deleted.err;
  EXPECT_EQ(old_deleted.err.find("the after side"), std::string::npos) << old_deleted.err;

  auto new_deleted = run_scalelens("compare " + study + " " + study + " -q --match label=torch-ddp:horovod");
  EXPECT_EQ(new_deleted.exit_code, 1) << new_deleted.out << new_deleted.err;
  EXPECT_NE(new_deleted.err.find("--match label=torch-ddp:horovod: the after side has no configuration labelled 'horovod'"),
            std::string::npos)
      << new_deleted.err;
  EXPECT_EQ(new_deleted.err.find("the before side"), std::string::npos) << new_deleted.err;

  auto no_system = run_scalelens("compare " + study + " " + study + " -q --match system=jureca:juwels");
  EXPECT_EQ(no_system.exit_code, 1) << no_system.out << no_system.err;
  EXPECT_NE(no_system.err.find("--match system=jureca:juwels: the before side has no configuration on system 'jureca' (none names a "
                               "system)"),
            std::string::npos)
      << no_system.err;
  EXPECT_NE(no_system.err.find("--match system=jureca:juwels: the after side has no configuration on system 'juwels'"),
            std::string::npos)
      << no_system.err;

  // A match both sides have is taken.
  auto both = run_scalelens("compare " + study + " " + study + " -q --match label=torch-ddp:torch-ddp --format json");
  EXPECT_EQ(both.exit_code, 0) << both.out << both.err;
  EXPECT_NE(both.out.find("\"label\":\"torch-ddp\""), std::string::npos) << both.out;
}

// The 8 real DLRM traces, whose reading warns of their events ("64 GPU events were not launched
// inside any ProfilerStep") and notes how they formed a run: none of it left an input out, so a
// --match naming a label no side has lists none of it (it listed all, as if they were where the
// name went).
TEST(CompareCli, AMatchErrorListsOnlyWhatReadingLeftOut) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir;
  std::filesystem::create_directories(dir / "dlrm-8gpu");
  for (const auto& e : std::filesystem::directory_iterator(data / "kineto/dlrm-8rank-v100"))
    if (e.path().filename().string().rfind("worker", 0) == 0)
      std::filesystem::copy_file(e.path(), dir / "dlrm-8gpu" / e.path().filename());
  const std::string study = quoted(dir.path());
  auto r = run_scalelens("compare " + study + " " + study + " -q --no-cache --match label=foo:dlrm");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("--match label=foo:dlrm: the before side has no configuration labelled 'foo' (it has 'dlrm')"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("reading it left out"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("GPU events were not launched"), std::string::npos) << r.err;
}
