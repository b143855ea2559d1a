// `scalelens report` over an MLPerf HPC results tree with two systems and a weak-scaling
// submission (issue 13 §2): the layout of mlcommons/hpc_results_v1.0/v2.0,
// <submitter>/results/<system>/<strong|weak>/<benchmark>/result_N.txt.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <array>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "support/run_binary.hpp"

using namespace scalelens::testing;

namespace {

std::string line(std::int64_t ms, const char* key, const std::string& value, const std::string& meta = "\"lineno\": 1") {
  return fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"POINT_IN_TIME\", \"key\": \"{}\", "
                     "\"value\": {}, \"metadata\": {{\"file\": \"./train.py\", {}}}}}\n",
                     ms, key, value, meta);
}

// A log of nodes × per_node GPUs: run_start at t0 s, three epochs of the given lengths.
std::string log(int nodes, int per_node, std::int64_t t0_s, std::array<double, 3> epochs, std::optional<int> instance = {}) {
  const std::int64_t t0 = 1662214300000 + t0_s * 1000;
  std::string out = line(t0 - 9000, "submission_benchmark", "\"deepcam\"");
  out += line(t0 - 9000, "submission_platform", fmt::format("\"{}xNVIDIA DGX A100\"", nodes));
  out += line(t0 - 8000, "number_of_ranks", std::to_string(nodes * per_node));
  out += line(t0 - 8000, "number_of_nodes", std::to_string(nodes));
  out += line(t0 - 8000, "accelerators_per_node", std::to_string(per_node));
  if (instance) out += line(t0 - 8000, "instance_id", std::to_string(*instance));
  out += line(t0 - 8000, "global_batch_size", "128");
  out += line(t0 - 5000, "train_samples", "121266");
  out += line(t0, "run_start", "null");
  std::int64_t t = t0;
  for (int e = 0; e < 3; ++e) {
    const auto meta = fmt::format("\"lineno\": 333, \"epoch_num\": {}", e + 1);
    out += line(t, "epoch_start", "null", meta);
    t += static_cast<std::int64_t>(epochs[e] * 1000);
    out += line(t, "epoch_stop", "null", meta);
  }
  out += line(t, "run_stop", "null", "\"lineno\": 415, \"status\": \"success\"");
  return out;
}

}  // namespace

TEST(MlperfCli, TwoSystemsAndWeakInstancesAreKeptApart) {
  ScratchDir dir, out;
  dir.write("NVIDIA/results/dgxa100_n2_pytorch/strong/deepcam/result_1.txt", log(2, 8, 0, {30, 10, 10}));
  dir.write("NVIDIA/results/dgxa100_n4_pytorch/strong/deepcam/result_1.txt", log(4, 8, 0, {30, 5, 5}));
  dir.write("HelmholtzAI/results/juwelsbooster_gpu_n4_pytorch1.13/strong/deepcam/result_1.txt", log(4, 4, 0, {40, 20, 20}));
  // Weak: two instances of 2 × 8 GPUs, started at 0 and 10 s; the later one stops at 10 + 70 s.
  dir.write("NVIDIA/results/dgxa100_n4_pytorch/weak/deepcam/result_1.txt", log(2, 8, 0, {40, 12, 12}, 0));
  dir.write("NVIDIA/results/dgxa100_n4_pytorch/weak/deepcam/result_2.txt", log(2, 8, 10, {40, 15, 15}, 1));

  auto table = run_scalelens("report " + quoted(dir.path()) + " -o " + quoted(out.path()));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const auto header = table.out.substr(0, table.out.find('\n'));
  EXPECT_NE(header.find("system"), std::string::npos) << table.out;
  EXPECT_NE(header.find("instances"), std::string::npos) << table.out;
  EXPECT_NE(header.find("models/min"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("juwelsbooster_gpu"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("2x16"), std::string::npos) << table.out;  // instances x GPUs per instance
  EXPECT_NE(table.out.find("[configuration-split]"), std::string::npos) << table.out;

  auto json = run_scalelens("report " + quoted(dir.path()) + " --format json -o " + quoted(out.path()));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  auto number = [](simdjson::dom::element c, const char* key) {
    double v = -1;
    EXPECT_EQ(c[key].get(v), simdjson::SUCCESS) << key;
    return v;
  };
  int seen = 0;
  for (auto c : doc["configurations"].get_array()) {
    const std::string curve{std::string_view(c["curve"])};
    const auto ws = number(c, "world_size");
    if (curve == "deepcam [weak] @ dgxa100") {
      ++seen;
      EXPECT_EQ(ws, 32);
      EXPECT_EQ(number(c, "instances"), 2);
      EXPECT_EQ(number(c, "runs"), 1);
      // TTTa = (10 + 70) − 0 = 80 s; 2 models / (80/60) min = 1.5 models/min.
      EXPECT_DOUBLE_EQ(number(c, "time_to_train_all_s"), 80);
      EXPECT_DOUBLE_EQ(number(c, "models_per_minute"), 1.5);
    } else if (curve == "deepcam [strong] @ dgxa100" && ws == 32) {
      ++seen;
      EXPECT_DOUBLE_EQ(number(c, "speedup"), 2);  // 10 s at 16 GPUs, 5 s at 32
    } else if (curve == "deepcam @ juwelsbooster_gpu") {
      ++seen;
      EXPECT_EQ(ws, 16);
      EXPECT_DOUBLE_EQ(number(c, "speedup"), 1);  // its own baseline, not NVIDIA's 16 GPUs
    }
  }
  EXPECT_EQ(seen, 3) << json.out;
}

// MLPerf Training logs state no size: their system file gives it, found by the folders above the
// log whatever path the report was given (`report .` inside a benchmark folder lost it, and the
// runs were refused for an unknown world size).
TEST(MlperfCli, TrainingResultsReadFromInsideTheirBenchmarkFolderKeepTheirSystemsSize) {
  ScratchDir dir;
  std::string training = line(1714439417000, "submission_benchmark", "\"resnet\"");
  training += line(1714439417100, "run_start", "null");
  training += line(1714439417200, "epoch_start", "null", "\"lineno\": 1, \"epoch_num\": 1");
  training += line(1714439439631, "epoch_stop", "null", "\"lineno\": 1, \"epoch_num\": 1");
  training += line(1714439439700, "run_stop", "null", "\"lineno\": 1, \"status\": \"success\"");
  dir.write("ASUSTeK/results/ESC_N8A-E12/resnet/result_0.txt", training);
  dir.write("ASUSTeK/systems/ESC_N8A-E12.json", R"({"system_name": "ESC_N8A-E12", "number_of_nodes": "1", "accelerators_per_node": "8"})");
  for (const char* input : {".", "../resnet"}) {
    auto r = run_scalelens(std::string("report ") + input + " -q --format json -o " + quoted(dir / "out"),
                           "cd " + quoted(dir / "ASUSTeK/results/ESC_N8A-E12/resnet") + " &&");
    ASSERT_EQ(r.exit_code, 0) << input << ": " << r.err;
    EXPECT_NE(r.out.find("\"world_size\":8"), std::string::npos) << r.out.substr(0, 2000);
  }
}
