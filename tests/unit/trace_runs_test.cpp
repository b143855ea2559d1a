// Issue 18: folders of profiler traces without a scalelens.json are a scaling study of their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "ingest/trace_runs.hpp"
#include "support/kineto_writer.hpp"
#include "support/test_support.hpp"
#include "trace/breakdown.hpp"
#include "trace/kineto.hpp"

using namespace scalelens;
using namespace scalelens::testing;

namespace {

Study read(const ScratchDir& dir, IngestOptions options = {}) {
  options.inputs = {dir.path().string()};
  return ingest(options);
}

std::size_t count_code(const std::vector<Diagnostic>& all, const std::string& code) {
  return static_cast<std::size_t>(std::count_if(all.begin(), all.end(), [&](const Diagnostic& d) { return d.code == code; }));
}

const Diagnostic* find_code(const std::vector<Diagnostic>& all, const std::string& code) {
  auto it = std::find_if(all.begin(), all.end(), [&](const Diagnostic& d) { return d.code == code; });
  return it == all.end() ? nullptr : &*it;
}

// The ranks of one job: rank r's steps as given, all starting at `start_us`; ranks from
// `first_rank` on. `process_start_us`: when the ranks' processes began profiling (0: just before).
void write_job(const ScratchDir& dir, const std::string& folder, int world_size, std::int64_t start_us,
               const std::vector<std::vector<std::int64_t>>& steps_of_rank, std::int64_t first_step = 1,
               const std::string& name = "rank{}.pt.trace.json", int first_rank = 0, std::int64_t process_start_us = 0) {
  for (int r = first_rank; r < first_rank + static_cast<int>(steps_of_rank.size()); ++r) {
    KinetoTraceSpec spec;
    spec.process_start_unix_us = process_start_us;
    spec.rank = r;
    spec.world_size = world_size;
    spec.first_step_unix_us = start_us + r * 700;  // ranks reach the step within a millisecond
    spec.first_step = first_step;
    spec.step_us = steps_of_rank[static_cast<std::size_t>(r - first_rank)];
    dir.write(folder + "/" + fmt::format(fmt::runtime(name), r), kineto_trace(spec));
  }
}

// The traces read formed one run of `ranks` ranks: no mixed-jobs, none missing.
void expect_one_job_of(const Study& study, std::size_t ranks) {
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].breakdown.size(), ranks);
  EXPECT_EQ(count_code(study.diagnostics, "mixed-jobs"), 0u);
  EXPECT_EQ(count_code(study.diagnostics, "missing-ranks"), 0u);
}

constexpr std::int64_t kStart = 1'730'000'000'000'000;  // 2024-10-27, Unix µs

}  // namespace

TEST(TraceRunLabel, FolderNameWithoutCounts) {
  EXPECT_EQ(label_from_folder("/t/ddp-8gpu"), "ddp");
  EXPECT_EQ(label_from_folder("/t/ddp-8gpus"), "ddp");
  EXPECT_EQ(label_from_folder("/t/fsdp_n16_run2"), "fsdp");
  EXPECT_EQ(label_from_folder("/t/resnet50-ddp-4nodes-32g"), "resnet50-ddp");
  EXPECT_EQ(label_from_folder("/t/deepspeed.ws64.seed3"), "deepspeed");
  EXPECT_EQ(label_from_folder("/t/gpt2_bs32-x8"), "gpt2_bs32");
  EXPECT_EQ(label_from_folder("/t/dlrm-8rank-v100"), "dlrm-v100");  // a GPU model is no count
  // Nothing left: the parent's name, stripped the same way.
  EXPECT_EQ(label_from_folder("/t/ddp/8"), "ddp");
  EXPECT_EQ(label_from_folder("/t/ddp-runs/16gpus"), "ddp-runs");
  EXPECT_EQ(label_from_folder("/t/lm/8/"), "lm");
  // "." and "": the working folder's name.
  const auto here = label_from_folder(std::filesystem::current_path().filename());
  EXPECT_EQ(label_from_folder("."), here);
  EXPECT_EQ(label_from_folder(""), here);
}

// The parent's name is taken from the absolute path: "8" named from inside dlrmjob/ was labelled
// "traces" (a relative path has no parent to name), "dlrmjob/8" and "$PWD/dlrmjob/8" "dlrmjob".
TEST(TraceRunLabel, TheParentsNameDoesNotDependOnHowThePathIsWritten) {
  ScratchDir dir;
  std::filesystem::create_directories(dir / "dlrmjob/8");
  const auto was = std::filesystem::current_path();
  std::filesystem::current_path(dir / "dlrmjob");
  const std::vector<std::string> labels{label_from_folder("8"), label_from_folder("./8"), label_from_folder("8/"),
                                        label_from_folder("../dlrmjob/8"), label_from_folder("8/../8")};
  std::filesystem::current_path(was);
  for (const auto& label : labels) EXPECT_EQ(label, "dlrmjob");
  EXPECT_EQ(label_from_folder(dir / "dlrmjob/8"), "dlrmjob");
}

TEST(TraceRunLabel, PerRankSubfoldersBelongToTheirParent) {
  EXPECT_EQ(run_folder_of("/t/ddp-4gpu/rank3/trace.json"), std::filesystem::path("/t/ddp-4gpu"));
  EXPECT_EQ(run_folder_of("/t/ddp-4gpu/worker_12/trace.json.gz"), std::filesystem::path("/t/ddp-4gpu"));
  EXPECT_EQ(run_folder_of("/t/ddp-4gpu/trace.json"), std::filesystem::path("/t/ddp-4gpu"));
  EXPECT_EQ(run_folder_of("/t/frank3/trace.json"), std::filesystem::path("/t/frank3"));
  EXPECT_EQ(run_folder_of("trace.json"), std::filesystem::path("."));  // named without a folder
}

// The start of profiling: newer Kineto writes ts relative to a trailing baseTimeNanoseconds,
// older Kineto Unix µs; both give the same Unix time, and the cache keeps it.
TEST(TraceRunStart, BaseTimeAndUnixTimestampsGiveTheSameStart) {
  ScratchDir dir;
  KinetoTraceSpec spec;
  spec.step_us = {1000, 1000};
  spec.first_step_unix_us = kStart + 123;
  auto newer = trace::load_kineto(dir.write("new.json", kineto_trace(spec)));
  spec.relative_to_base_time = false;
  auto older = trace::load_kineto(dir.write("old.json", kineto_trace(spec)));
  ASSERT_TRUE(newer && older);
  EXPECT_TRUE(newer.value().base_time_ns.has_value());
  EXPECT_FALSE(older.value().base_time_ns.has_value());
  EXPECT_EQ(newer.value().backend, "nccl");
  const auto a = trace::analyse(newer.value(), trace::CommMatcher()), b = trace::analyse(older.value(), trace::CommMatcher());
  ASSERT_TRUE(a.start_ns && b.start_ns);
  EXPECT_EQ(*a.start_ns, (kStart + 123) * 1000);
  EXPECT_EQ(*b.start_ns, *a.start_ns);
}

TEST(TraceRunStart, RealTraceWithBaseTimeStartsWhenItsLogSays) {
  SCALELENS_REQUIRE_REALDATA(data);
  // hta/triton.json.gz: its own log says "2024-10-28 16:06:31" (US Pacific, UTC−7) when recording ended.
  auto parsed = trace::load_kineto(data / "kineto/hta/triton.json.gz");
  ASSERT_TRUE(parsed) << parsed.error().message;
  auto r = trace::analyse(parsed.value(), trace::CommMatcher());
  ASSERT_TRUE(r.start_ns.has_value());
  const std::int64_t logged = 1'730'156'791;  // 2024-10-28 23:06:31 UTC
  EXPECT_NEAR(static_cast<double>(*r.start_ns) * 1e-9, static_cast<double>(logged), 5.0);
  // resnet: ts ~ 51 days (a clock since boot) + baseTimeNanoseconds; its log: 2024-05-22 17:15:23 PDT.
  auto resnet = trace::load_kineto(data / "kineto/hta/resnet-ddp-rank0of2-a100.json.gz");
  ASSERT_TRUE(resnet);
  auto rr = trace::analyse(resnet.value(), trace::CommMatcher());
  ASSERT_TRUE(rr.start_ns.has_value());
  EXPECT_NEAR(static_cast<double>(*rr.start_ns) * 1e-9, 1'716'423'323.0, 5.0);
}

// A clock that is no Unix time and no base to place it gives no start (times since boot cannot be
// compared across nodes); such traces are grouped by folder alone.
TEST(TraceRunStart, MonotonicClockWithoutBaseGivesNoStart) {
  ScratchDir dir;
  KinetoTraceSpec spec;
  spec.relative_to_base_time = false;
  spec.first_step_unix_us = 4'458'676'522'690;  // µs since boot
  spec.step_us = {1000};
  auto parsed = trace::load_kineto(dir.write("t.json", kineto_trace(spec)));
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(trace::analyse(parsed.value(), trace::CommMatcher()).start_ns.has_value());
}

TEST(TracesAlone, OneFolderPerWorldSizeMakesACurveWithStepTimeSpeedup) {
  ScratchDir dir;
  // Step 1 is warm-up (left out). Step time per step = the slowest rank's.
  write_job(dir, "traces/ddp-1gpu", 1, kStart, {{900'000, 400'000, 400'000, 400'000, 400'000}});
  write_job(dir, "traces/ddp-2gpu", 2, kStart + 3'600'000'000,
            {{700'000, 210'000, 230'000, 210'000, 230'000}, {650'000, 220'000, 220'000, 240'000, 200'000}});
  // Per-rank subfolders, as some launchers write them.
  write_job(dir, "traces/ddp-4gpu", 4, kStart + 7'200'000'000,
            {{600'000, 115'000, 115'000}, {600'000, 120'000, 110'000}, {600'000, 118'000, 118'000}, {600'000, 125'000, 100'000}},
            1, "rank{}/trace.json");
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 3u);
  for (const auto& run : study.runs) {
    EXPECT_EQ(run.label, "ddp");
    EXPECT_EQ(run.format, "kineto");
    EXPECT_EQ(run.gpu_model, "NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(static_cast<int>(run.breakdown.size()), *run.world_size);
  }
  EXPECT_EQ(count_code(study.diagnostics, "runs-from-traces"), 3u);
  EXPECT_EQ(count_code(study.diagnostics, "no-manifest"), 0u);
  EXPECT_EQ(count_code(study.diagnostics, "missing-ranks"), 0u);
  EXPECT_EQ(count_code(study.diagnostics, "mixed-jobs"), 0u);

  auto summary = analyze(study, AnalysisOptions{});
  ASSERT_EQ(summary.configurations.size(), 3u);
  const auto& c1 = summary.configurations[0];
  const auto& c2 = summary.configurations[1];
  const auto& c4 = summary.configurations[2];
  ASSERT_TRUE(c1.step_time_s && c2.step_time_s && c4.step_time_s);
  EXPECT_EQ(c1.time_from, "step");
  EXPECT_NEAR(c1.step_time_s->mean, 0.4, 1e-12);
  EXPECT_NEAR(c2.step_time_s->mean, (0.220 + 0.230 + 0.240 + 0.230) / 4, 1e-12);  // slowest of the two per step
  EXPECT_NEAR(c4.step_time_s->mean, (0.125 + 0.118) / 2, 1e-12);
  EXPECT_EQ(c2.step_time_s->n, 4u);
  ASSERT_TRUE(c2.speedup && c4.speedup);
  EXPECT_NEAR(*c2.speedup, 0.4 / 0.23, 1e-9);
  EXPECT_NEAR(*c4.speedup, 0.4 / 0.1215, 1e-9);
  EXPECT_NEAR(*c4.efficiency, 0.4 / 0.1215 / 4, 1e-9);
  EXPECT_NEAR(*c4.karp_flatt, (1 / (0.4 / 0.1215) - 0.25) / 0.75, 1e-9);
  EXPECT_FALSE(c1.throughput_samples_per_s);  // no batch size given
  EXPECT_NE(c2.provenance.find("label 'ddp' from folder name 'ddp-2gpu'"), std::string::npos) << c2.provenance;
  EXPECT_NE(c2.provenance.find("1 warm-up step"), std::string::npos) << c2.provenance;
}

TEST(TracesAlone, BatchSizeGivesThroughputStrongOrWeak) {
  ScratchDir dir;
  write_job(dir, "t/lm-1gpu", 1, kStart, {{500'000, 400'000, 400'000}});
  write_job(dir, "t/lm-2gpu", 2, kStart + 3'600'000'000, {{500'000, 250'000, 250'000}, {500'000, 250'000, 250'000}});
  IngestOptions strong;
  strong.defaults.global_batch_size = 256;
  auto s = analyze(read(dir, strong), AnalysisOptions{});
  ASSERT_EQ(s.configurations.size(), 2u);
  EXPECT_EQ(s.configurations[0].scaling, "strong");
  EXPECT_NEAR(*s.configurations[0].throughput_samples_per_s, 256 / 0.4, 1e-9);
  EXPECT_NEAR(*s.configurations[1].throughput_samples_per_s, 256 / 0.25, 1e-9);
  EXPECT_NEAR(*s.configurations[1].speedup, 0.4 / 0.25, 1e-9);  // strong: from time

  IngestOptions weak;
  weak.defaults.batch_per_gpu = 32;
  auto w = analyze(read(dir, weak), AnalysisOptions{});
  EXPECT_EQ(w.configurations[1].scaling, "weak");
  EXPECT_EQ(*w.configurations[1].global_batch_size, 64);
  EXPECT_NEAR(*w.configurations[1].throughput_samples_per_s, 64 / 0.25, 1e-9);
  EXPECT_NEAR(*w.configurations[1].speedup, (64 / 0.25) / (32 / 0.4), 1e-9);  // weak: from throughput

  IngestOptions named;
  named.defaults.label = "gpt";
  auto n = read(dir, named);
  for (const auto& run : n.runs) EXPECT_EQ(run.label, "gpt");
}

TEST(TracesAlone, MissingRankIsNamed) {
  ScratchDir dir;
  write_job(dir, "t/ddp-4gpu", 4, kStart, {{300, 100, 100}, {300, 100, 100}, {300, 100, 100}, {300, 100, 100}});
  std::filesystem::remove(dir / "t/ddp-4gpu/rank2.pt.trace.json");
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].breakdown.size(), 3u);
  const auto* d = find_code(study.diagnostics, "missing-ranks");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->path, (dir / "t/ddp-4gpu").string());
  EXPECT_NE(d->message.find("3 of 4 ranks have a trace; missing: 2"), std::string::npos) << d->message;
}

// Two jobs written into one folder (a rerun an hour later): two runs, repeats, and a warning.
TEST(TracesAlone, TwoJobsInOneFolderAreToldApartAndWarned) {
  ScratchDir dir;
  write_job(dir, "t/ddp-2gpu", 2, kStart, {{300, 100, 100}, {300, 100, 100}}, 1, "job-a-rank{}.json");
  write_job(dir, "t/ddp-2gpu", 2, kStart + 3'600'000'000, {{300, 200, 200}, {300, 200, 200}}, 1, "job-b-rank{}.json");
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_EQ(study.runs[0].breakdown.size(), 2u);
  EXPECT_EQ(study.runs[1].breakdown.size(), 2u);
  EXPECT_NE(study.runs[0].run_id, study.runs[1].run_id);
  EXPECT_EQ(count_code(study.diagnostics, "duplicate-trace"), 0u);
  const auto* d = find_code(study.diagnostics, "mixed-jobs");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("2 jobs at world size 2"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("2024-10-27 03:33:20 UTC"), std::string::npos) << d->message;
  auto summary = analyze(study, AnalysisOptions{});
  ASSERT_EQ(summary.configurations.size(), 1u);
  EXPECT_EQ(summary.configurations[0].runs, 2u);
  EXPECT_NEAR(summary.configurations[0].step_time_s->mean, 150e-6, 1e-12);  // steps of both repeats pooled
}

// schedule(repeat=2): each rank's process writes one trace per profiling window, minutes apart,
// with other step numbers and its one baseTimeNanoseconds. One job, not two.
TEST(TracesAlone, ProfilingWindowsOfOneJobStayOneRun) {
  ScratchDir dir;
  const std::int64_t began = kStart - 20'000'000;  // the processes' profilers started 20 s before window 1
  write_job(dir, "t/ddp-2gpu", 2, kStart, {{300, 100}, {300, 100}}, 10, "w1-rank{}.json", 0, began);
  write_job(dir, "t/ddp-2gpu", 2, kStart + 600'000'000, {{100, 100}, {100, 100}}, 110, "w2-rank{}.json", 0, began);
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].breakdown.size(), 4u);
  EXPECT_EQ(count_code(study.diagnostics, "mixed-jobs"), 0u);
  EXPECT_EQ(count_code(study.diagnostics, "duplicate-trace"), 0u);
  EXPECT_EQ(count_code(study.diagnostics, "missing-ranks"), 0u);
}

// A rerun that replaces a rank: ranks 0..3 of job A, then rank 2 again ten minutes later, from a
// new process (another baseTimeNanoseconds) that profiled later steps (it resumed from a
// checkpoint). Its steps alone looked like job A's next profiling window: one job of five traces,
// rank 2 counted twice. Another process is another job.
TEST(TracesAlone, ARerunOfOneRankFromANewProcessIsAnotherJob) {
  ScratchDir dir;
  write_job(dir, "t/ddp-4gpu", 4, kStart, {{300, 100}, {300, 100}, {300, 100}, {300, 100}}, 10, "job-a-rank{}.json");
  write_job(dir, "t/ddp-4gpu", 4, kStart + 600'000'000, {{300, 100}}, 110, "rerun-rank{}.json", 2);
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_EQ(study.runs[0].breakdown.size(), 4u);
  ASSERT_EQ(study.runs[1].breakdown.size(), 1u);
  EXPECT_NE(study.runs[1].breakdown[0].source.find("rerun-rank2.json"), std::string::npos);
  const auto* d = find_code(study.diagnostics, "mixed-jobs");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("2 jobs at world size 4"), std::string::npos) << d->message;
}

// Ranks 4..7 of another job of world size 8, an hour after ranks 0..3 of the first: no rank is
// shared, so nothing made them a rerun, and they joined the first job as its other half.
TEST(TracesAlone, RanksOfAnotherJobSharingNoRankAreAnotherJob) {
  ScratchDir dir;
  write_job(dir, "t/ddp-8gpu", 8, kStart, {{300, 100}, {300, 100}, {300, 100}, {300, 100}}, 1, "a-rank{}.json");
  write_job(dir, "t/ddp-8gpu", 8, kStart + 3'600'000'000, {{300, 100}, {300, 100}, {300, 100}, {300, 100}}, 1, "b-rank{}.json", 4);
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_EQ(study.runs[0].breakdown.size(), 4u);
  EXPECT_EQ(study.runs[1].breakdown.size(), 4u);
  EXPECT_EQ(study.runs[1].breakdown[0].rank, 4);
  EXPECT_NE(find_code(study.diagnostics, "mixed-jobs"), nullptr);
  EXPECT_EQ(count_code(study.diagnostics, "missing-ranks"), 2u);  // each job lacks the other's half
}

// Ranks 4..7 of one job began profiling 90 s after ranks 0..3 (a slow node): no rank shared, but
// together they are ranks 0..7, they profiled the same steps, and within a collective's timeout of
// each other. One job of 8 ranks; it was two jobs of 4 (mixed-jobs, each missing-ranks). Ranks of
// the same steps half an hour and more apart (the test above), or of other steps, stay two jobs.
TEST(TracesAlone, LateRanksOfOneJobStayOneJob) {
  const std::vector<std::vector<std::int64_t>> four(4, {300, 100});
  ScratchDir dir;
  write_job(dir, "t/ddp-8gpu", 8, kStart, four, 10, "a-rank{}.json");
  write_job(dir, "t/ddp-8gpu", 8, kStart + 90'000'000, four, 10, "b-rank{}.json", 4);
  expect_one_job_of(read(dir), 8);
  // Other steps profiled (10-11, then 110-111): not one job's ranks.
  ScratchDir other;
  write_job(other, "t/ddp-8gpu", 8, kStart, four, 10, "a-rank{}.json");
  write_job(other, "t/ddp-8gpu", 8, kStart + 90'000'000, four, 110, "b-rank{}.json", 4);
  auto apart = read(other);
  EXPECT_EQ(apart.runs.size(), 2u);
  EXPECT_NE(find_code(apart.diagnostics, "mixed-jobs"), nullptr);
  // Two whole jobs 90 s apart share every rank: still two jobs.
  ScratchDir whole;
  write_job(whole, "t/ddp-4gpu", 4, kStart, four, 10, "a-rank{}.json");
  write_job(whole, "t/ddp-4gpu", 4, kStart + 90'000'000, four, 10, "b-rank{}.json");
  auto two = read(whole);
  ASSERT_EQ(two.runs.size(), 2u);
  EXPECT_EQ(two.runs[0].breakdown.size(), 4u);
  EXPECT_NE(find_code(two.diagnostics, "mixed-jobs"), nullptr);
}

// Ranks 0..3, 4..5 and 6..7 of one job began profiling 90 s apart each: one run of 8 ranks (it was
// three runs, each missing-ranks). A second group of ranks 4..5 among them could be the job's as well:
// every group stays a run of its own, and that is said.
TEST(TracesAlone, LateRanksInThreeGroupsStayOneJob) {
  const std::vector<std::vector<std::int64_t>> two(2, {300, 100});
  ScratchDir dir;
  write_job(dir, "t/ddp-8gpu", 8, kStart, std::vector<std::vector<std::int64_t>>(4, {300, 100}), 10, "a-rank{}.json");
  write_job(dir, "t/ddp-8gpu", 8, kStart + 90'000'000, two, 10, "b-rank{}.json", 4);
  write_job(dir, "t/ddp-8gpu", 8, kStart + 180'000'000, two, 10, "c-rank{}.json", 6);
  expect_one_job_of(read(dir), 8);
  write_job(dir, "t/ddp-8gpu", 8, kStart + 270'000'000, two, 10, "d-rank{}.json", 4);
  auto unsure = read(dir);
  EXPECT_EQ(unsure.runs.size(), 4u);
  ASSERT_NE(find_code(unsure.diagnostics, "late-ranks-ambiguous"), nullptr);
  EXPECT_NE(find_code(unsure.diagnostics, "late-ranks-ambiguous")->message.find("ranks 4, 5 began profiling in more than one"),
            std::string::npos);
}

// A copy of a rank's trace beside it is the same job: counted once.
TEST(TracesAlone, ACopiedTraceCountsOnce) {
  ScratchDir dir;
  write_job(dir, "t/ddp-2gpu", 2, kStart, {{300, 100, 100}, {300, 100, 100}});
  std::filesystem::copy_file(dir / "t/ddp-2gpu/rank1.pt.trace.json", dir / "t/ddp-2gpu/rank1 (copy).pt.trace.json");
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].breakdown.size(), 2u);
  EXPECT_EQ(count_code(study.diagnostics, "duplicate-trace"), 1u);
  EXPECT_EQ(count_code(study.diagnostics, "mixed-jobs"), 0u);
}

// Traces of different GPUs at one world size in one folder are different jobs.
TEST(TracesAlone, DifferentGpusAtOneWorldSizeAreDifferentRuns) {
  ScratchDir dir;
  KinetoTraceSpec spec;
  spec.world_size = 1;
  spec.step_us = {300, 100, 100};
  dir.write("t/bench/a100.json", kineto_trace(spec));
  spec.device = "NVIDIA H100 80GB HBM3";
  dir.write("t/bench/h100.json", kineto_trace(spec));
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_NE(find_code(study.diagnostics, "mixed-jobs"), nullptr);
  auto summary = analyze(study, AnalysisOptions{});
  EXPECT_EQ(summary.configurations.size(), 2u);  // split by GPU model, not pooled as repeats
}

// A manifest still wins: traces under a scalelens.json belong to its run.
TEST(TracesAlone, AManifestAboveTracesStillDefinesTheRun) {
  ScratchDir dir;
  write_job(dir, "runs/a", 2, kStart, {{300, 100, 100}, {300, 100, 100}});
  dir.write("runs/a/scalelens.json", R"({"label": "mine", "world_size": 2})");
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].label, "mine");
  EXPECT_EQ(study.runs[0].format, "scalelens");
  EXPECT_EQ(count_code(study.diagnostics, "runs-from-traces"), 0u);
}

TEST(TracesAlone, SharedRealTracesFormRunsWithoutAManifest) {
  SCALELENS_REQUIRE_REALDATA(data);
  IngestOptions options;
  options.inputs = {(data / "kineto/dlrm-8rank-v100").string()};
  auto study = ingest(options);
  ASSERT_EQ(study.runs.size(), 1u);
  const auto& run = study.runs[0];
  EXPECT_EQ(run.label, "dlrm-v100");
  EXPECT_EQ(*run.world_size, 8);
  EXPECT_EQ(run.gpu_model, "Tesla V100-SXM2-32GB");
  EXPECT_EQ(run.breakdown.size(), 8u);
  EXPECT_EQ(count_code(study.diagnostics, "missing-ranks"), 0u);
  EXPECT_EQ(count_code(study.diagnostics, "mixed-jobs"), 0u);
  auto summary = analyze(study, AnalysisOptions{});
  ASSERT_EQ(summary.configurations.size(), 1u);
  const auto& c = summary.configurations[0];
  // One ProfilerStep#10 per rank: it cannot be left out as warm-up, and says so.
  ASSERT_TRUE(c.step_time_s.has_value());
  EXPECT_EQ(c.time_from, "step");
  double slowest = 0;
  for (const auto& b : run.breakdown) slowest = std::max(slowest, b.step_times_us.at(0) * 1e-6);
  EXPECT_DOUBLE_EQ(c.step_time_s->mean, slowest);
  EXPECT_NE(find_code(summary.warnings, "warmup-not-excluded"), nullptr);

  // The sampled 128-rank job: 2 traces present, 126 missing, said so.
  options.inputs = {(data / "kineto/hta/sampled-2of128").string()};
  auto sampled = ingest(options);
  ASSERT_EQ(sampled.runs.size(), 1u);
  EXPECT_EQ(*sampled.runs[0].world_size, 128);
  const auto* d = find_code(sampled.diagnostics, "missing-ranks");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("2 of 128 ranks"), std::string::npos) << d->message;
  // Its SendRecv calls cannot be matched (no peer, not an all-to-all): no waiting share, and why.
  const auto sampled_summary = analyze(sampled, {});
  ASSERT_EQ(sampled_summary.runs.size(), 1u);
  EXPECT_FALSE(sampled_summary.runs[0].trace().comm_wait_share.has_value());
  bool said = false;
  for (const auto& w : sampled_summary.warnings)
    said |= w.code == "missing-figure" && w.message.find("communication waiting share not computed") != std::string::npos &&
            w.message.find("SendRecv, no peer recorded") != std::string::npos && w.message.find("and 1 more (scalelens trace lists them)") != std::string::npos;
  EXPECT_TRUE(said);
}

namespace {

// nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,power.draw --format=csv -l 1, from
// 2024/10/27 03:33:20 UTC (kStart) on: `seconds` samples of `gpus` GPUs, GPU g at 90 − 10g % and
// 300 − 50g W, rows of one sample 4 ms apart.
std::string smi_log(int gpus, int seconds) {
  std::string text = "timestamp, index, name, utilization.gpu [%], power.draw [W]\n";
  for (int k = 0; k < seconds; ++k)
    for (int g = 0; g < gpus; ++g)
      text += fmt::format("2024/10/27 03:33:{:02}.{:03}, {}, NVIDIA A100-SXM4-80GB, {} %, {:.2f} W\n", 20 + k, 100 + 4 * g, g,
                          90 - 10 * g, 300.0 - 50 * g);
  return text;
}

}  // namespace

// An nvidia-smi log beside a job's traces holds that job's GPUs: utilization and energy join the run.
TEST(TracesAlone, AnNvidiaSmiLogBesideTracesGivesTheirRunItsGpus) {
  ScratchDir dir;
  write_job(dir, "t/ddp-2gpu", 2, kStart + 2'000'000, {{300, 100, 100}, {300, 100, 100}});
  dir.write("t/ddp-2gpu/gpu.log", smi_log(2, 10));
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].format, "kineto");
  EXPECT_EQ(study.runs[0].gpus.size(), 2u);
  EXPECT_EQ(count_code(study.diagnostics, "no-manifest"), 0u);
  auto summary = analyze(study, AnalysisOptions{});
  const auto& c = summary.configurations.at(0);
  ASSERT_TRUE(c.gpu_util_pct && c.energy_wh);
  EXPECT_NEAR(c.gpu_util_pct->mean, 85, 1e-9);              // (90 + 80) / 2
  EXPECT_NEAR(*c.energy_wh, (300.0 + 250.0) * 9 / 3600, 1e-3);  // 9 s between first and last sample
  EXPECT_TRUE(c.step_time_s.has_value());
}

// Alone, the logs of a folder are a run whose world size is the GPUs they hold.
TEST(TracesAlone, NvidiaSmiLogsAloneAreARunOfTheirGpus) {
  ScratchDir dir;
  dir.write("smi/ddp-4gpu/node1.csv", smi_log(4, 10));
  dir.write("smi/ddp-8gpu/node1.csv", smi_log(4, 10));
  dir.write("smi/ddp-8gpu/node2.csv", smi_log(4, 10));
  auto study = read(dir);
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_EQ(count_code(study.diagnostics, "runs-from-gpu-logs"), 2u);
  EXPECT_EQ(count_code(study.diagnostics, "no-manifest"), 0u);
  std::sort(study.runs.begin(), study.runs.end(), [](auto& a, auto& b) { return *a.world_size < *b.world_size; });
  EXPECT_EQ(study.runs[0].label, "ddp");
  EXPECT_EQ(*study.runs[0].world_size, 4);
  EXPECT_EQ(*study.runs[0].nodes, 1);
  EXPECT_EQ(*study.runs[1].world_size, 8);  // one log per node
  EXPECT_EQ(*study.runs[1].nodes, 2);
  EXPECT_EQ(study.runs[0].format, "nvidia-smi");
  auto summary = analyze(study, AnalysisOptions{});
  ASSERT_EQ(summary.configurations.size(), 2u);
  EXPECT_NEAR(summary.configurations[0].gpu_util_pct->mean, 75, 1e-9);  // (90 + 80 + 70 + 60) / 4
  EXPECT_FALSE(summary.configurations[0].speedup.has_value());          // no time in a GPU log
}
