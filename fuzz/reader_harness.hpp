#pragma once
// Drives one input reader over arbitrary bytes, laid out on disk in the shape that format has (a
// run folder's CSV or JSON, an MLPerf log, an nvidia-smi log, itwinai's CSV pair or MLflow store),
// then analyses what it read, and checks what must hold whatever the bytes: no value beyond the
// physical limits (model/limits.hpp) reaches the study, and every figure of the summary is finite.
// Used by the libFuzzer target (fuzz/input_reader_fuzzer.cpp) and by the unit test that replays
// the seeds and every crash found (tests/unit/fuzz_regressions_test.cpp). Header-only, no gtest.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "compare/compare.hpp"
#include "compare/summary_reader.hpp"
#include "collect/sweep.hpp"
#include "common/file_io.hpp"
#include "ingest/clock_step.hpp"
#include "ingest/reader.hpp"
#include "model/limits.hpp"

namespace scalelens::fuzzing {

// The readers, by the name their corpus folder has (fuzz/corpus/<name>/).
inline const std::vector<std::string>& reader_names() {
  static const std::vector<std::string> names{"run_csv", "manifest", "rank_record", "mlperf",
                                              "nvsmi",   "itwinai_csv", "itwinai_mlflow", "summary_json", "sweep_json",
                                              "gzip"};
  return names;
}

// Multi-file formats take their files from one input, cut at lines holding only this.
inline constexpr std::string_view kPartSeparator = "\n=====\n";

inline std::vector<std::string_view> split_parts(std::string_view input) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto at = input.find(kPartSeparator);
    parts.push_back(input.substr(0, at));
    if (at == std::string_view::npos) break;
    input.remove_prefix(at + kPartSeparator.size());
  }
  return parts;
}

inline void write_file(const std::filesystem::path& p, std::string_view bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// What no input may bring into a study; "" when all holds.
inline std::string broken_invariant(const Study& study, const Summary& summary) {
  namespace L = limits;
  for (const auto& run : study.runs) {
    if (run.world_size && !L::valid_count(*run.world_size, L::kMaxWorldSize)) return fmt::format("world size {}", *run.world_size);
    if (run.nodes && !L::valid_count(*run.nodes, L::kMaxNodes)) return fmt::format("nodes {}", *run.nodes);
    if (run.gpus_per_node && !L::valid_count(*run.gpus_per_node, L::kMaxPerNode)) return fmt::format("gpus per node {}", *run.gpus_per_node);
    if (run.global_batch_size && !L::valid_samples(*run.global_batch_size)) return "global batch size";
    if (run.samples_per_epoch && !L::valid_samples(*run.samples_per_epoch)) return "samples per epoch";
    if (run.sampling_interval_s && !L::valid_sampling_interval(*run.sampling_interval_s))
      return fmt::format("sampling interval {}", *run.sampling_interval_s);
    for (const auto* intervals : {&run.epochs, &run.steps})
      for (const auto& i : *intervals) {
        if (i.end_ns <= i.start_ns) return fmt::format("interval {} ends when or before it starts", i.index);
        if (L::span_ns(i.start_ns, i.end_ns) > static_cast<double>(L::kMaxRunNs)) return fmt::format("interval {} too long", i.index);
        if (i.samples && !L::valid_samples(*i.samples)) return fmt::format("interval {} samples {}", i.index, *i.samples);
      }
    for (const auto& g : run.gpus)
      for (const auto& s : g.samples)
        if (L::bad_power(s.power_w) || L::bad_percent(s.util_pct) || L::bad_percent(s.mem_util_pct) || s.energy_mj < 0 ||
            L::bad_gpu_memory(s.mem_used_bytes))
          return fmt::format("GPU sample at {} beyond limits", s.t_ns);
  }
  // No time is 0 or less, and so no speedup or efficiency (a baseline of zero-length epochs made every other 0).
  for (const auto& r : summary.runs) {
    if (r.run_time_s && !(*r.run_time_s > 0)) return fmt::format("run time {} of {}", *r.run_time_s, r.run_id);
    for (const auto* times : {&r.epoch_times_s, &r.step_times_s})
      for (double t : *times)
        if (!(t > 0)) return fmt::format("an epoch or step time of {} is {}", r.run_id, t);
  }
  auto finite = [](const std::optional<double>& v) { return !v || std::isfinite(*v); };
  for (const auto& c : summary.configurations) {
    if (c.world_size < 1) return fmt::format("configuration {}", c.key());
    if (!finite(c.throughput_samples_per_s) || !finite(c.speedup) || !finite(c.efficiency) || !finite(c.energy_wh) ||
        !finite(c.energy_j_per_sample) || !finite(c.computation_score) || !finite(c.host_energy_wh))
      return fmt::format("a figure of {} is not finite", c.key());
    if (c.epoch_time_s && !std::isfinite(c.epoch_time_s->mean)) return fmt::format("epoch time of {}", c.key());
    if (c.gpu_util_pct && (c.gpu_util_pct->mean < 0 || c.gpu_util_pct->mean > 100))
      return fmt::format("utilization of {} is {}", c.key(), c.gpu_util_pct->mean);
    if (c.computation_score && (*c.computation_score < 0 || *c.computation_score > 1)) return "computation score";
    if ((c.speedup && !(*c.speedup > 0)) || (c.efficiency && !(*c.efficiency > 0))) return fmt::format("speedup of {}", c.key());
  }
  return {};
}

// A saved summary.json (what `scalelens compare` reads back): refused with a reason, or compared
// with itself, where every figure must come out unchanged and every interval hold its estimate.
inline std::string drive_summary_json(std::string_view input) {
  auto saved = parse_summary_json(std::string(input), "summary.json");
  if (!saved) return saved.error().message.empty() ? "refused without a reason" : "";
  const Summary& s = saved.value().summary;
  const Comparison c = compare_summaries(s, s, {});
  for (const auto& cc : c.configurations)
    for (const auto& m : cc.metrics) {
      const auto& e = m.change;
      if (e.rel_change && !std::isfinite(*e.rel_change)) return fmt::format("{} change not finite", m.metric->name);
      if (e.ci_low && e.ci_high && e.rel_change && (*e.ci_low > *e.rel_change + 1e-9 || *e.ci_high < *e.rel_change - 1e-9))
        return fmt::format("{} interval misses its estimate", m.metric->name);
      if (m.verdict == Verdict::regressed || m.verdict == Verdict::improved)
        return fmt::format("{} of {} {} against itself", m.metric->name, cc.label, verdict_name(m.verdict));
    }
  if (!c.only_before.empty() || !c.only_after.empty()) {
    // Only configurations sharing an identity can stay unmatched against themselves.
    for (std::size_t i = 0; i < s.configurations.size(); ++i)
      for (std::size_t j = 0; j < i; ++j) {
        const auto& a = s.configurations[i];
        const auto& b = s.configurations[j];
        if (a.label == b.label && a.system == b.system && a.world_size == b.world_size) return "";
      }
    return "a configuration unmatched against itself";
  }
  return "";
}

// Gzip bytes (every compressed input: traces, logs, CSVs): inflated as a stream, in pieces of a
// size a byte of the input picks, and whole (the output sized from the trailer when plausible, in
// one call); both must accept the same data and give the same text, or both refuse it with a
// reason.
inline std::string drive_gzip(std::string_view input) {
  if (!is_gzip(input)) return "";  // never handed to either: callers check the magic first
  const std::size_t piece = 1 + static_cast<unsigned char>(input[input.size() / 2]) * 37;
  GzipStream stream(input, "fuzz.gz");
  std::string streamed;
  Result<std::size_t> step = std::size_t{0};
  while ((step = stream.read_into(streamed, piece)) && step.value() > 0) {}
  auto whole = gunzip(input, "fuzz.gz");
  if (static_cast<bool>(step) != static_cast<bool>(whole))
    return fmt::format("the stream {} what the whole inflation {} ({})", step ? "accepts" : "refuses",
                       whole ? "accepts" : "refuses", step ? whole.error().message : step.error().message);
  if (!step) return step.error().message.empty() || whole.error().message.empty() ? "refused without a reason" : "";
  if (streamed != whole.value()) return "the stream and the whole inflation give different text";
  return "";
}

// Reads `input` as the format `reader` names, in `scratch` (emptied first), and analyses the
// result. Returns a broken invariant, or "" when all held.
inline std::string drive(std::string_view reader, std::string_view input, const std::filesystem::path& scratch) {
  if (reader == "summary_json") return drive_summary_json(input);
  if (reader == "gzip") return drive_gzip(input);
  if (reader == "sweep_json") {
    // A sweep plan (hand-edited, half-written): refused with a reason, or read with run ids that
    // are single safe path components (they name folders under the study).
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
    std::filesystem::create_directories(scratch);
    write_file(scratch / "sweep.json", input);
    auto plan = sweep::read_plan(scratch / "sweep.json");
    if (!plan) return plan.error().message.empty() ? "refused without a reason" : "";
    for (const auto& e : plan.value().entries)
      if (e.run_id.empty() || e.run_id.find('/') != std::string::npos || e.run_id == "." || e.run_id == "..")
        return fmt::format("run id '{}' is not one folder name", e.run_id);
    return "";
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(scratch, ec);
  fs::create_directories(scratch);
  const auto parts = split_parts(input);
  auto part = [&](std::size_t i) { return i < parts.size() ? parts[i] : std::string_view(); };

  // The run that encloses run-folder files: 20 s, ddp on 2 GPUs.
  Run enclosing;
  enclosing.run_id = "fuzz";
  enclosing.label = "ddp";
  enclosing.format = "scalelens";
  enclosing.path = (scratch / "run").string();
  enclosing.world_size = 2;
  enclosing.start_ns = 1'000'000'000;
  enclosing.end_ns = 21'000'000'000;

  std::unique_ptr<Reader> r;
  std::vector<fs::path> files;  // read in this order
  if (reader == "run_csv") {
    r = make_run_csv_reader();
    files.push_back(scratch / "run/nodes/n01/gpu.csv");
    write_file(files.back(), input);
  } else if (reader == "manifest") {
    r = make_run_manifest_reader();
    files.push_back(scratch / "run/scalelens.json");
    write_file(files.back(), input);
  } else if (reader == "rank_record") {
    r = make_rank_record_reader();
    files.push_back(scratch / "run/ranks/0.json");
    write_file(files.back(), input);
  } else if (reader == "mlperf") {
    r = make_mlperf_reader();
    files.push_back(scratch / "result_1.txt");
    write_file(files.back(), input);
  } else if (reader == "nvsmi") {
    r = make_nvsmi_reader();
    files.push_back(scratch / "run/nodes/n01/smi.csv");
    write_file(files.back(), input);
  } else if (reader == "itwinai_csv") {
    // Part 0: epoch-time file; part 1: its gpu-energy-data file.
    r = make_itwinai_csv_reader();
    files.push_back(scratch / "scalability-metrics/epoch-time/epochtime_ddp_1N.csv");
    files.push_back(scratch / "scalability-metrics/gpu-energy-data/ddp_4.csv");
    write_file(files[0], part(0));
    if (parts.size() > 1) write_file(files[1], part(1));
    else files.pop_back();
  } else if (reader == "itwinai_mlflow") {
    // Parts: experiment meta.yaml, the run's meta.yaml, params/global_world_size,
    // metrics/epoch_time_s, metrics/gpu_power_W, metrics/gpu_utilization_percent.
    r = make_itwinai_mlflow_reader();
    const fs::path exp = scratch / "mllogs/mlflow/1";
    files.push_back(exp / "meta.yaml");
    write_file(files[0], part(0));
    const char* names[] = {"r1/meta.yaml", "r1/params/global_world_size", "r1/metrics/epoch_time_s", "r1/metrics/gpu_power_W",
                           "r1/metrics/gpu_utilization_percent"};
    for (std::size_t i = 0; i < 5 && i + 1 < parts.size(); ++i) write_file(exp / names[i], part(i + 1));
    write_file(exp / "r1/params/strategy", "ddp");
  } else {
    return fmt::format("no reader named '{}'", reader);
  }

  Study study;
  for (const auto& file : files) {
    const std::string head(input.substr(0, 64 * 1024));
    (void)r->recognizes(file, head);  // must not crash either
    ReadContext ctx{file, reader == "mlperf" || reader == "itwinai_csv" || reader == "itwinai_mlflow" ? nullptr : &enclosing};
    ReadOutput out;
    r->read(ctx, out);
    // As ingest does where no clock step moves their end: rows that ended before they started are
    // bad lines their reader said and kept only for a step to take back (clock_step.hpp).
    for (std::vector<Interval>* rows : {&out.attach.epochs, &out.attach.steps})
      rows->erase(std::remove_if(rows->begin(), rows->end(), ended_before_started), rows->end());
    for (auto& run : out.runs) study.runs.push_back(std::move(run));
    if (out.has_attachment()) {
      Run run = enclosing;
      run.epochs = std::move(out.attach.epochs);
      run.steps = std::move(out.attach.steps);
      run.gpus = std::move(out.attach.gpus);
      run.host_series = std::move(out.attach.host_series);
      run.ranks = std::move(out.attach.ranks);
      run.breakdown = std::move(out.attach.breakdown);
      study.runs.push_back(std::move(run));
    }
    for (auto& d : out.diagnostics)
      if (d.path.empty()) return fmt::format("diagnostic '{}' names no file", d.code);
  }
  AnalysisOptions options;
  options.threads = 1;
  const Summary summary = analyze(study, options);
  return broken_invariant(study, summary);
}

}  // namespace scalelens::fuzzing
