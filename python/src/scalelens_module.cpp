// _scalelens: the compiled half of the `scalelens` Python package (python/scalelens/). A thin layer
// over libscalelens: every figure comes from the library, as the CLI's; this file only moves
// arguments in and JSON or columns out. The pure-Python half shapes them into DataFrames.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "analysis/option_rules.hpp"
#include "common/text.hpp"
#include "common/user_regex.hpp"
#include "compare/compare.hpp"
#include "ingest/ingest.hpp"
#include "model/limits.hpp"
#include "report/compare_writers.hpp"
#include "report/output_folder.hpp"
#include "report/report_html.hpp"
#include "report/summary_writers.hpp"
#include "trace/trace_output.hpp"
#include "trace/trace_set.hpp"

namespace py = pybind11;
using namespace scalelens;

namespace {

// Raised as scalelens.InputError / scalelens.UsageError (registered below).
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A study read and analysed once; the Python Study object holds it.
struct LoadedStudy {
  Study study;
  Summary summary;
  std::string summary_json;
};

// A path from Python: the system calls would read it only up to a NUL, while the walk joins the
// whole string, so '/study\0x' listed /study's folders again and again (memory without bound).
const std::string& checked_path(const std::string& path, const char* what) {
  if (path.find('\0') != std::string::npos) throw UsageError(std::string(what) + " '" + printable(path) + "' contains a NUL byte");
  return path;
}

// The errors reading left (a missing input, an unreadable file), for an InputError's message: the
// command line shows them above its own "no usable data".
std::string input_errors(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics)
    if (d.severity == Severity::error || d.code == "missing-input" || d.code == "unreadable-file")
      out += (out.empty() ? "" : "; ") + (d.path.empty() ? d.message : printable(d.path) + ": " + d.message);
  return out.empty() ? out : " (" + out + ")";
}

// A keyword's value under its option's rule (analysis/option_rules.hpp, the command line's too).
template <class Rule, class Value>
void require(const Rule& rule, const Value& value) {
  if (auto bad = option_rules::check(rule, value, option_rules::Spelling::keyword)) throw UsageError(*bad);
}

// The report's options (`scalelens report`'s of the same names) onto the AnalysisOptions the command
// line fills, by the same rules. Counts arrive as Python ints of any size, so they are held to their
// rules before they become ints; the rest is checked on the options filled, as the command line's.
AnalysisOptions analysis_options(std::int64_t warmup_epochs, std::int64_t warmup_steps, const std::string& baseline,
                                 const std::string& scaling, std::optional<std::int64_t> baseline_gpus,
                                 const std::vector<std::int64_t>& predict, const std::string& objective, double min_efficiency,
                                 std::optional<std::int64_t> max_gpus, std::optional<double> carbon_intensity, unsigned threads) {
  require(option_rules::kBaseline, baseline);
  require(option_rules::kScaling, scaling);
  require(option_rules::kWarmupEpochs, warmup_epochs);
  require(option_rules::kWarmupSteps, warmup_steps);
  if (baseline_gpus) require(option_rules::kBaselineGpus, *baseline_gpus);
  for (auto p : predict) require(option_rules::kPredict, p);
  if (max_gpus) require(option_rules::kMaxGpus, *max_gpus);
  AnalysisOptions a;
  a.warmup_epochs = static_cast<int>(warmup_epochs);
  a.warmup_steps = static_cast<int>(warmup_steps);
  a.baseline = option_rules::baseline_kind(baseline);
  if (baseline_gpus) a.baseline_gpus = static_cast<int>(*baseline_gpus);
  if (scaling != "auto") a.scaling = scaling;
  a.predict.assign(predict.begin(), predict.end());
  a.choice.objective = objective;
  a.choice.min_efficiency = min_efficiency;
  if (max_gpus) a.choice.max_gpus = static_cast<int>(*max_gpus);
  a.choice.carbon_g_per_kwh = carbon_intensity;
  a.threads = threads;
  if (auto bad = option_rules::validate(a, option_rules::Spelling::keyword)) throw UsageError(*bad);
  return a;
}

IngestOptions ingest_options(const std::vector<std::string>& inputs, const std::optional<std::string>& pattern,
                             const std::optional<std::string>& experiment, const std::vector<std::string>& run_names,
                             const std::optional<std::string>& label, std::optional<double> global_batch_size,
                             std::optional<double> batch_per_gpu, unsigned threads) {
  if (pattern) {
    auto check = UserRegex::compile(*pattern, "pattern");
    if (!check) throw UsageError(check.error().message);
  }
  if (global_batch_size && batch_per_gpu) throw UsageError("give global_batch_size or batch_per_gpu, not both");
  // As the command line's --global-batch-size and --batch-per-gpu: a NaN would pass any comparison.
  for (auto [name, value] : {std::pair{"global_batch_size", global_batch_size}, std::pair{"batch_per_gpu", batch_per_gpu}})
    if (value && !limits::valid_samples(*value))
      throw UsageError(fmt::format("{} must be a number of samples {}", name, limits::samples_range()));
  IngestOptions in;
  in.inputs = inputs;
  if (pattern) in.pattern = *pattern;
  if (experiment) in.experiment = *experiment;
  in.run_names = run_names;
  in.threads = threads;
  in.keep_samples = true;  // gpu_samples() hands them to Python
  if (label) in.defaults.label = *label;
  if (global_batch_size) in.defaults.global_batch_size = *global_batch_size;
  if (batch_per_gpu) in.defaults.batch_per_gpu = *batch_per_gpu;
  return in;
}

std::unique_ptr<LoadedStudy> load(const std::vector<std::string>& inputs, const std::optional<std::string>& pattern,
                                  const std::optional<std::string>& experiment, const std::vector<std::string>& run_names,
                                  std::int64_t warmup_epochs, std::int64_t warmup_steps, const std::string& baseline,
                                  const std::string& scaling, const std::optional<std::string>& label, std::optional<double> global_batch_size,
                                  std::optional<double> batch_per_gpu, std::optional<std::int64_t> baseline_gpus,
                                  const std::vector<std::int64_t>& predict, const std::string& objective, double min_efficiency,
                                  std::optional<std::int64_t> max_gpus, std::optional<double> carbon_intensity, unsigned threads) {
  if (inputs.empty()) throw UsageError("load() needs at least one folder or file");
  for (const auto& i : inputs) checked_path(i, "input");
  auto in = ingest_options(inputs, pattern, experiment, run_names, label, global_batch_size, batch_per_gpu, threads);
  auto options = analysis_options(warmup_epochs, warmup_steps, baseline, scaling, baseline_gpus, predict, objective,
                                  min_efficiency, max_gpus, carbon_intensity, threads);
  auto out = std::make_unique<LoadedStudy>();
  // Ctrl-C (in a notebook: interrupt the kernel) stops reading between files: the progress
  // callback, on this thread, takes the GIL to look for a pending signal.
  std::atomic<bool> cancel{false};
  in.cancel = &cancel;
  in.progress = [&cancel](std::size_t, std::size_t) {
    py::gil_scoped_acquire locked;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      cancel = true;
    }
  };
  {
    py::gil_scoped_release unlocked;  // reading and analysing run on the library's threads
    out->study = ingest(in);
    if (!out->study.cancelled) {
      out->summary = analyze(out->study, options);
      out->summary_json = render_summary_json(out->summary);
    }
  }
  if (out->study.cancelled) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  for (const auto& d : out->summary.warnings)
    if (d.code == "bad-pattern") throw UsageError(d.message);
  if (out->summary.configurations.empty())
    throw InputError("no usable data: " + std::to_string(out->study.files_seen) + " files seen, " +
                     std::to_string(out->study.files_read) +
                     " recognized, no run with a known label and GPU count (scalelens reads run folders, itwinai MLflow stores "
                     "and CSVs, MLPerf logs, nvidia-smi logs and PyTorch profiler traces)" + input_errors(out->study.diagnostics));
  return out;
}

// Every GPU sample of the study (or of one run), long format: column name → values. NaN where a
// source did not give a reading.
py::dict gpu_samples(const LoadedStudy& s, const std::optional<std::string>& run_id) {
  std::vector<std::string> runs, nodes, uuids, names;
  std::vector<int> gpus;
  std::vector<std::int64_t> t_ns;
  std::vector<double> util, mem_util, mem_used, power, energy, clock, temp;
  bool found = !run_id;
  for (const auto& run : s.study.runs) {
    if (run_id && run.run_id != *run_id) continue;
    found = true;
    for (const auto& g : run.gpus)
      for (const auto& x : g.samples) {
        runs.push_back(run.run_id);
        nodes.push_back(g.node);
        uuids.push_back(g.uuid);
        gpus.push_back(g.index);
        t_ns.push_back(x.t_ns);
        util.push_back(x.util_pct);
        mem_util.push_back(x.mem_util_pct);
        mem_used.push_back(x.mem_used_bytes);
        power.push_back(x.power_w);
        energy.push_back(x.energy_mj);
        clock.push_back(x.sm_clock_mhz);
        temp.push_back(x.temp_c);
      }
  }
  if (!found) throw UsageError("no run '" + *run_id + "' in this study");
  py::dict d;
  d["run_id"] = runs;
  d["node"] = nodes;
  d["gpu"] = gpus;
  d["uuid"] = uuids;
  d["t_ns"] = t_ns;
  d["util_pct"] = util;
  d["mem_util_pct"] = mem_util;
  d["mem_used_bytes"] = mem_used;
  d["power_w"] = power;
  d["energy_mj"] = energy;
  d["sm_clock_mhz"] = clock;
  d["temp_c"] = temp;
  return d;
}

std::string trace_json(const std::vector<std::string>& paths, bool hta, const std::optional<std::string>& comm_kernel_regex,
                       int kernels, unsigned threads, bool cache) {
  if (paths.empty()) throw UsageError("trace() needs at least one folder or file");
  for (const auto& p : paths) checked_path(p, "path");
  if (comm_kernel_regex) {
    auto check = UserRegex::compile(*comm_kernel_regex, "comm_kernel_regex");
    if (!check) throw UsageError(check.error().message);
  }
  trace::TraceSetOptions o;
  for (const auto& p : paths) o.inputs.emplace_back(p);
  if (comm_kernel_regex) o.comm_kernel_regex = *comm_kernel_regex;
  o.threads = threads;
  o.cache = cache;
  std::string json;
  std::size_t ranks = 0;
  std::vector<Diagnostic> diagnostics;
  {
    py::gil_scoped_release unlocked;
    auto set = trace::analyse_traces(o);
    ranks = set.ranks.size();
    diagnostics = set.diagnostics;
    trace::OutputOptions out;
    out.per_step = true;
    out.top_kernels = kernels;
    out.hta = hta;
    json = trace::format_json(set, out);
  }
  if (ranks == 0) throw InputError("no trace could be analysed in the given paths" + input_errors(diagnostics));
  return json;
}

std::string compare_json(const std::string& before, const std::string& after, double threshold, const std::vector<std::string>& metrics,
                         int kernels, std::int64_t warmup_epochs, unsigned threads) {
  if (!(threshold > 0 && threshold < 1)) throw UsageError("threshold must be between 0 and 1 (0.05 for 5%)");
  require(option_rules::kWarmupEpochs, warmup_epochs);
  checked_path(before, "before");
  checked_path(after, "after");
  CompareOptions options;
  options.change.threshold = threshold;
  for (const auto& m : metrics) {
    if (!find_metric(m)) throw UsageError("unknown metric '" + m + "'");
    options.metrics.push_back(m);
  }
  IngestOptions in;
  in.threads = threads;
  AnalysisOptions a;
  a.warmup_epochs = static_cast<int>(warmup_epochs);
  a.threads = threads;
  std::string json;
  {
    py::gil_scoped_release unlocked;
    auto b = load_comparison_side(before, in, a);
    if (!b) throw InputError(b.error().path + ": " + b.error().message + " (the before side)");
    auto c = load_comparison_side(after, in, a);
    if (!c) throw InputError(c.error().path + ": " + c.error().message + " (the after side)");
    Comparison cmp = compare_summaries(b.value().summary, c.value().summary, options);
    cmp.before_name = before;
    cmp.after_name = after;
    if (kernels > 0 && b.value().study && c.value().study) {
      TraceLevelOptions t;
      t.top = static_cast<std::size_t>(kernels);
      t.threads = threads;
      add_trace_level(cmp, b.value().summary, *b.value().study, c.value().summary, *c.value().study, t);
    }
    json = render_compare_json(cmp);
  }
  return json;
}

// A summary.json whose one configuration has every object that summary.json may write as null
// filled in, as its writer writes them: their keys, which Python's configurations() gives as
// columns (None) where a configuration's object is null, from the one place that writes them.
std::string configuration_objects_json() {
  Summary summary;
  ConfigurationSummary& c = summary.configurations.emplace_back();
  c.epoch_time_s = c.run_time_s = c.step_time_s = Stat{};
  c.gpu_util_pct = RangeStat{};
  c.gpu_util_percentiles = Percentiles{};
  c.breakdown_shares = BreakdownShares{};
  c.pop = ConfigurationSummary::Pop{};
  c.lost_time = ConfigurationSummary::LostTime{};
  return render_summary_json(summary);
}

}  // namespace

PYBIND11_MODULE(_scalelens, m) {
  m.doc() = "The compiled half of scalelens: use the `scalelens` package (import scalelens).";
  m.attr("__version__") = SCALELENS_VERSION;
  // C++ exceptions of these types arrive in Python as these classes (UsageError is a ValueError).
  py::register_exception<InputError>(m, "InputError");
  py::register_exception<UsageError>(m, "UsageError", PyExc_ValueError);
  py::class_<LoadedStudy>(m, "LoadedStudy")
      .def("summary_json", [](const LoadedStudy& s) { return s.summary_json; })
      .def("series_json", [](const LoadedStudy& s) { return render_series_json(s.study, s.summary); })
      // The dashboard (report.html) with this study inlined, without the per-run series (a notebook
      // cell stays small): what a notebook shows inline.
      .def("dashboard_html", [](const LoadedStudy& s) { return render_report_html(render_report_data(s.summary_json, "null", "static")); })
      .def("gpu_samples", &gpu_samples, py::arg("run_id") = py::none())
      .def("write_report", [](const LoadedStudy& s, const std::string& dir) {
        checked_path(dir, "output_dir");
        Result<std::vector<std::filesystem::path>> written = Error{"", ""};
        std::string figures_failed;  // what `scalelens report` warns of on stderr
        {
          py::gil_scoped_release unlocked;
          written = write_report_files(s.summary, s.study, dir, &figures_failed);
        }
        if (!written) throw InputError(written.error().path + ": " + written.error().message);
        std::vector<std::string> out;
        for (const auto& p : written.value()) out.push_back(p.string());
        return py::make_tuple(out, figures_failed);
      });
  m.def("load", &load, py::arg("inputs"), py::arg("pattern") = py::none(), py::arg("experiment") = py::none(),
        py::arg("run_names") = std::vector<std::string>{}, py::arg("warmup_epochs") = 1, py::arg("warmup_steps") = 1,
        py::arg("baseline") = "per-label", py::arg("scaling") = "auto", py::arg("label") = py::none(),
        py::arg("global_batch_size") = py::none(), py::arg("batch_per_gpu") = py::none(), py::arg("baseline_gpus") = py::none(),
        py::arg("predict") = std::vector<std::int64_t>{}, py::arg("objective") = ChoiceOptions{}.objective,
        py::arg("min_efficiency") = ChoiceOptions{}.min_efficiency, py::arg("max_gpus") = py::none(),
        py::arg("carbon_intensity") = py::none(), py::arg("threads") = 0u);
  m.def("trace_json", &trace_json, py::arg("paths"), py::arg("hta") = false, py::arg("comm_kernel_regex") = py::none(),
        py::arg("kernels") = 1000000, py::arg("threads") = 0u, py::arg("cache") = true);
  m.def("configuration_objects_json", &configuration_objects_json);
  m.def("compare_json", &compare_json, py::arg("before"), py::arg("after"), py::arg("threshold") = 0.05,
        py::arg("metrics") = std::vector<std::string>{}, py::arg("kernels") = 10, py::arg("warmup_epochs") = 1, py::arg("threads") = 0u);
}
