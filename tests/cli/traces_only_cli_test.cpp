// Issue 18 as a profiler user meets it: `scalelens report traces/` over folders of Kineto traces
// (one per rank, gzip as the profiler's tensorboard handler writes them), no scalelens.json.
#include <gtest/gtest.h>

#include <algorithm>

#include <simdjson.h>

#include <cstdlib>
#include <string>

#include "support/kineto_writer.hpp"
#include "support/run_binary.hpp"

using namespace scalelens::testing;

namespace {

constexpr std::int64_t kStart = 1'730'000'000'000'000;

// ranks' step durations (µs) of one job, gzip-compressed like tensorboard_trace_handler(use_gzip=True).
void write_job(const ScratchDir& dir, const std::string& folder, int world_size, std::int64_t start_us,
               const std::vector<std::vector<std::int64_t>>& steps_of_rank) {
  for (int r = 0; r < static_cast<int>(steps_of_rank.size()); ++r) {
    KinetoTraceSpec spec;
    spec.rank = r;
    spec.world_size = world_size;
    spec.first_step_unix_us = start_us + r * 500;
    spec.step_us = steps_of_rank[static_cast<std::size_t>(r)];
    auto file = dir.write(folder + "/host_" + std::to_string(40000 + r) + ".1730000000123.pt.trace.json",
                          kineto_trace(spec));
    ASSERT_EQ(std::system(("gzip -f " + quoted(file)).c_str()), 0);
  }
}

void write_study(const ScratchDir& dir) {
  write_job(dir, "traces/ddp-1gpu", 1, kStart, {{900'000, 400'000, 400'000, 400'000}});
  write_job(dir, "traces/ddp-2gpu", 2, kStart + 3'600'000'000,
            {{700'000, 210'000, 230'000, 210'000}, {650'000, 220'000, 220'000, 240'000}});
  write_job(dir, "traces/ddp-4gpu", 4, kStart + 7'200'000'000,
            {{600'000, 115'000, 115'000}, {600'000, 120'000, 110'000}, {600'000, 118'000, 118'000}, {600'000, 125'000, 100'000}});
}

}  // namespace

TEST(TracesOnlyCli, FolderOfTraceFoldersIsAScalingStudy) {
  ScratchDir dir, out;
  write_study(dir);
  auto r = run_scalelens("report " + quoted(dir / "traces") + " --global-batch-size 512 --format json -o " + quoted(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  simdjson::dom::array configs;
  ASSERT_FALSE(doc["configurations"].get_array().get(configs));
  ASSERT_EQ(configs.size(), 3u);
  const double step[] = {0.4, (0.220 + 0.230 + 0.240) / 3, (0.125 + 0.118) / 2};
  const int gpus[] = {1, 2, 4};
  std::size_t i = 0;
  for (auto c : configs) {
    EXPECT_EQ(std::string(c["label"].get_string().value()), "ddp");
    EXPECT_EQ(c["world_size"].get_int64().value(), gpus[i]);
    EXPECT_EQ(std::string(c["time_from"].get_string().value()), "step");
    EXPECT_NEAR(c["step_time_s"]["mean"].get_double().value(), step[i], 1e-9);
    EXPECT_NEAR(c["speedup"].get_double().value(), step[0] / step[i], 1e-9);
    EXPECT_NEAR(c["efficiency"].get_double().value(), step[0] / step[i] / gpus[i], 1e-9);
    EXPECT_NEAR(c["throughput_samples_per_s"].get_double().value(), 512 / step[i], 1e-6);
    EXPECT_EQ(std::string(c["scaling"].get_string().value()), "strong");
    ++i;
  }
  // No "no scalelens.json" complaint; how runs were formed and labelled is said.
  EXPECT_EQ(r.err.find("[no-manifest]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("labelled 'ddp' (from the folder name; --label NAME sets it)"), std::string::npos) << r.err;
  // The files agree: summary.csv has the step-time columns, the page and figures exist.
  const auto csv = slurp(out / "summary.csv");
  EXPECT_NE(csv.find("step_time_mean_s"), std::string::npos);
  EXPECT_NE(csv.find(",step,"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(out / "report.html"));
  // Every row has the header's columns, and the breakdown, POP and lost-time columns are summary.json's.
  std::vector<std::vector<std::string>> rows;
  for (std::size_t at = 0; at < csv.size();) {
    const auto end = csv.find('\n', at);
    std::vector<std::string> cells;
    std::string line = csv.substr(at, end - at), cellv;
    for (char ch : line) {
      if (ch == ',') cells.push_back(cellv), cellv.clear();
      else cellv += ch;
    }
    cells.push_back(cellv);
    rows.push_back(cells);
    at = end + 1;
  }
  ASSERT_EQ(rows.size(), 4u);
  auto column = [&](const std::string& name) {
    const auto it = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(it, rows[0].end()) << name;
    return static_cast<std::size_t>(it - rows[0].begin());
  };
  std::size_t row = 1;
  for (auto c : configs) {
    ASSERT_EQ(rows[row].size(), rows[0].size()) << "row " << row;
    const auto shares = c["breakdown_shares"];
    ASSERT_TRUE(shares.is_object());
    EXPECT_EQ(std::stod(rows[row][column("breakdown_computation")]), shares["computation"].get_double().value());
    EXPECT_EQ(std::stod(rows[row][column("breakdown_idle")]), shares["idle"].get_double().value());
    if (c["pop"].is_object())
      EXPECT_EQ(std::stod(rows[row][column("pop_load_balance")]), c["pop"]["load_balance"].get_double().value());
    EXPECT_EQ(rows[row][column("pareto")], "false");  // no energy here
    ++row;
  }
}

TEST(TracesOnlyCli, TableShowsStepTimeAndLabelOptionRenames) {
  ScratchDir dir, out;
  write_study(dir);
  auto r = run_scalelens("report " + quoted(dir / "traces") + " --label resnet --warmup-steps 0 -o " + quoted(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step ms (95% CI)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("resnet "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ddp "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step time is the slowest rank's per profiler step"), std::string::npos) << r.out;
  // --warmup-steps 0 keeps the 900 ms first step: 1 GPU's mean is (0.9 + 3 × 0.4) / 4 = 525 ms.
  EXPECT_NE(r.out.find("525"), std::string::npos) << r.out;
}

TEST(TracesOnlyCli, BatchOptionsExcludeEachOther) {
  ScratchDir dir;
  write_study(dir);
  auto r = run_scalelens("report " + quoted(dir / "traces") + " --global-batch-size 64 --batch-per-gpu 8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
}

TEST(TracesOnlyCli, SharedRealTracesReportedFromTheirFolder) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir out;
  auto r = run_scalelens("report " + quoted(data / "kineto/dlrm-8rank-v100") + " --no-cache --format json -o " + quoted(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  auto c = doc["configurations"].at(0);
  EXPECT_EQ(std::string(c["label"].get_string().value()), "dlrm-v100");
  EXPECT_EQ(c["world_size"].get_int64().value(), 8);
  EXPECT_EQ(std::string(c["time_from"].get_string().value()), "step");
  EXPECT_GT(c["step_time_s"]["mean"].get_double().value(), 0.01);  // one ProfilerStep of ~14-20 ms per rank
  EXPECT_LT(c["step_time_s"]["mean"].get_double().value(), 0.03);
  EXPECT_TRUE(c["computation_score"].is_double());
  EXPECT_NE(r.err.find("[warmup-not-excluded]"), std::string::npos) << r.err;
}

// The real DLRM ranks with one rank's fault, reported from their folder: the configuration, and
// what the report said on standard error.
struct FaultyDlrm {
  Output r;
  simdjson::dom::parser parser;
  simdjson::dom::element config;
};
template <class Change>
void report_dlrm_with(const std::filesystem::path& data, int rank, Change change, FaultyDlrm& f) {
  ScratchDir dir, out;
  copy_dlrm_traces(data, dir, rank, change);
  f.r = run_scalelens("report " + quoted(dir.path()) + " --no-cache --format json -o " + quoted(out.path()));
  ASSERT_EQ(f.r.exit_code, 0) << f.r.err;
  simdjson::dom::element doc;
  ASSERT_FALSE(f.parser.parse(f.r.out).get(doc)) << f.r.out;
  f.config = doc["configurations"].at(0);
}

// Rank 4 profiled step 11, the others step 10: no step is timed from a subset of the ranks (rank
// 4's step 11 alone made an 18.0 ms "slowest rank" step time, and the 19.9 ms step 10 was dropped
// as warm-up), and the report says which ranks profiled which steps.
TEST(TracesOnlyCli, RanksThatProfiledDifferentStepsGiveNoStepTime) {
  SCALELENS_REQUIRE_REALDATA(data);
  FaultyDlrm f;
  report_dlrm_with(data, 4, [](std::string text) {
    text.replace(text.find("\"ProfilerStep#10\""), 17, "\"ProfilerStep#11\"");
    return text;
  }, f);
  EXPECT_NE(f.r.err.find("rank 4: step 11; ranks 0, 1, 2, 3, 5, 6, 7: step 10"), std::string::npos) << f.r.err;
  EXPECT_NE(f.r.err.find("[misaligned-steps]"), std::string::npos) << f.r.err;
  EXPECT_TRUE(f.config["step_time_s"].is_null() || f.config["step_time_s"]["mean"].is_null()) << f.r.out.substr(0, 2000);
  EXPECT_EQ(f.r.err.find("[warmup-not-excluded]"), std::string::npos) << f.r.err;
}

// Rank 5's clock 30 s ahead: its calls cannot have run with the others', so no share of
// collective time is called waiting (it read 87% against the real traces' 96%), and it is said.
// (Past a minute apart its trace reads as another job's: split_into_jobs.)
TEST(TracesOnlyCli, ClocksThatDisagreeGiveNoWaitingShare) {
  SCALELENS_REQUIRE_REALDATA(data);
  FaultyDlrm f;
  report_dlrm_with(data, 5, [](std::string text) {
    return rewrite_times(text, [](std::string_view key, std::string_view digits) {
      return key == "ts" ? std::to_string(std::stoll(std::string(digits)) + 30'000'000) : std::string(digits);
    });
  }, f);
  EXPECT_NE(f.r.err.find("[clock-conflict]"), std::string::npos) << f.r.err;
  EXPECT_NE(f.r.err.find("rank 5 started it 30.000 s after"), std::string::npos) << f.r.err;
  EXPECT_TRUE(f.config["comm_wait_share"].is_null()) << f.r.out.substr(0, 2000);
}

// Rank 6's trace is there but empty: the report names the file and why, beside the missing rank.
TEST(TracesOnlyCli, AnEmptyTraceIsNamed) {
  SCALELENS_REQUIRE_REALDATA(data);
  FaultyDlrm f;
  report_dlrm_with(data, 6, [](std::string) { return std::string(); }, f);
  EXPECT_NE(f.r.err.find("worker6_step_12.1694128201553.pt.trace.json: JSON is incomplete or malformed"), std::string::npos)
      << f.r.err;
  EXPECT_NE(f.r.err.find("(0 bytes)"), std::string::npos) << f.r.err;
  EXPECT_NE(f.r.err.find("[missing-ranks]"), std::string::npos) << f.r.err;
}
