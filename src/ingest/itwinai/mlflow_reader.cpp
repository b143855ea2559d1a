// itwinai's MLflow file store (docs/DESIGN.md, "Inputs"): mllogs/mlflow/<experiment_id>/ holds the
// experiment's meta.yaml (artifact_location, experiment_id, name, lifecycle_stage) and one folder
// per run: meta.yaml (run_id, run_name, start_time/end_time in ms, status, lifecycle_stage),
// params/<name> (raw value), metrics/<name> (lines "timestamp_ms value step"), tags/<name>.
//
// How itwinai fills it (interTwin-eu/itwinai: torch/trainer.py _run_worker, torch/monitoring/
// monitoring.py, torch/mlflow.py get_*_by_parent):
//   train run (named by the user; with Ray: tune run -> one trial run per trial)
//     worker runs "worker_<rank>" / "worker_0 (main)", tag mlflow.parentRunId = train run, with
//       params strategy, global_rank, global_world_size, probing_interval, the hyperparameters;
//       metric epoch_time_s (main worker only, step = epoch);
//       metrics gpu_power_W and gpu_utilization_percent (each rank its own GPU, step = whole
//       seconds since monitoring began; MLflow adds the real time of each sample in ms);
//       artifact torch_profiling_averages/torch_profiling_averages.csv (each logging rank's
//       profiler key averages; summed into the run's ProfilerAverages).
// One scalelens Run per train run, with its worker runs folded in; with Ray each trial is a run of
// its own (trials may differ in hyperparameters, and pooling their epochs would mix them).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/itwinai/profiler_averages.hpp"
#include "ingest/reader.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace fs = std::filesystem;

namespace {

using Fields = std::map<std::string, std::string, std::less<>>;

// Milliseconds since 1970 beyond the year 2255 are junk, and their nanoseconds would overflow.
constexpr std::int64_t kMaxMs = 9'000'000'000'000;  // × 1e6 stays within int64

// One "key: value" of a meta.yaml; quotes around the scalar removed, null as empty.
void add_meta_field(Fields& out, std::string_view item) {
  auto colon = item.find(':');
  if (colon == std::string_view::npos) return;
  auto value = trim(item.substr(colon + 1));
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front())
    value = value.substr(1, value.size() - 2);
  if (value == "null") value = {};
  out.emplace(std::string(trim(item.substr(0, colon))), std::string(value));
}

struct MetaYaml {
  Fields fields;
  std::string problem;  // why the text is not a meta.yaml scalelens can read; empty when it is
};

// An MLflow meta.yaml: the top-level "key: value" lines yaml.safe_dump writes, or the same mapping
// in flow style ({key: value, ...}, possibly over several lines), which yaml.safe_load reads alike.
// Only scalars are needed (ids, times, status, names); a flow collection value ([] for tags) is kept
// as written. Anything else is named with `problem`, never guessed at.
MetaYaml parse_meta_yaml(std::string_view text) {
  MetaYaml out;
  const auto body = trim(text);
  if (body.empty()) {
    out.problem = "it is empty";
    return out;
  }
  if (body.front() == '{') {
    // Split at the commas of the outer mapping, outside quotes and nested [] or {}.
    std::string item;
    int depth = 0;
    char quote = 0;
    bool closed = false;
    for (std::size_t i = 1; i < body.size() && !closed; ++i) {
      const char c = body[i];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      } else if (c == '}' || (c == ',' && depth == 0)) {
        add_meta_field(out.fields, item);
        item.clear();
        closed = c == '}';
        continue;
      }
      // A line break inside a flow mapping folds into a space.
      item += c == '\n' || c == '\r' ? ' ' : c;
    }
    if (!closed) out.problem = "its flow mapping '{' is never closed with '}'";
    return out;
  }
  LineCursor lines(text);
  std::string_view line;
  while (lines.next(line)) {
    if (line.empty() || line.front() == ' ' || line.front() == '-' || line.front() == '#') continue;
    add_meta_field(out.fields, line);
  }
  if (out.fields.empty()) out.problem = "it holds no 'key: value' line";
  return out;
}

std::string get(const Fields& f, std::string_view key) {
  auto it = f.find(key);
  return it == f.end() ? std::string() : it->second;
}

// Files of a folder (params/, tags/): name -> trimmed content.
Fields read_folder(const fs::path& dir) {
  Fields out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    if (auto text = read_file(it->path())) out.emplace(it->path().filename().string(), std::string(trim(text.value())));
  }
  return out;
}

struct MetricPoint {
  std::int64_t t_ms = 0;
  double value = 0;
  std::int64_t step = 0;
  std::int64_t line = 0;
};

// metrics/<name>: "timestamp value step" per line (older MLflow: no step).
std::vector<MetricPoint> read_metric(const fs::path& file, ReadOutput& out) {
  std::vector<MetricPoint> points;
  auto text = read_file(file);
  if (!text) return points;  // the metric was not logged by this run
  if (trim(text.value()).empty()) {
    // MLflow creates a metric file by appending its first line: an empty one is a write cut short.
    const bool epochs = file.filename() == "epoch_time_s";
    out.warn(epochs ? "no-epochs" : "no-samples",
             fmt::format("metric file is empty (MLflow writes one only by appending a 'timestamp value step' line, and "
                         "refuses an empty one: a write cut short, by a full disk or a killed job); {}",
                         epochs ? "this run has no epoch time (a curve whose baseline has none is timed by run time)"
                                : "this GPU has no samples of it"),
             file);
    return points;
  }
  LineCursor lines(text.value());
  std::string_view line;
  std::vector<std::string_view> f;
  BadLines bad;
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    split_csv(trim(line), f, ' ');
    std::optional<std::int64_t> t, step = 0;
    std::optional<double> v;
    if (f.size() == 2 || f.size() == 3) {
      t = parse_int(f[0]);
      v = parse_double(f[1]);
      if (f.size() == 3) step = parse_int(f[2]);
    }
    if (!t || !v || !step || *t < 0 || *t > kMaxMs) {
      bad.add(lines.line_no(), fmt::format("'{}' is not 'timestamp value step' with finite numbers", trim(line)));
      continue;
    }
    points.push_back({*t, *v, *step, lines.line_no()});
  }
  bad.report(out, file);
  return points;
}

struct MlflowRun {
  fs::path dir;
  Fields meta, params, tags;
  std::string id() const { return get(meta, "run_id").empty() ? get(meta, "run_uuid") : get(meta, "run_id"); }
  std::string name() const { return get(tags, "mlflow.runName").empty() ? get(meta, "run_name") : get(tags, "mlflow.runName"); }
  std::string parent() const { return get(tags, "mlflow.parentRunId"); }
  std::optional<std::int64_t> ms(std::string_view key) const {
    auto v = parse_int(get(meta, key));
    return v && *v >= 0 && *v <= kMaxMs ? v : std::nullopt;
  }
  // global_rank param; else the N of itwinai's run name "worker_N"; else 0 (the main worker).
  int rank() const {
    if (auto r = parse_int(get(params, "global_rank"))) return static_cast<int>(*r);
    auto n = name();
    if (n.rfind("worker_", 0) == 0) {
      auto digits = std::string_view(n).substr(7);
      digits = digits.substr(0, digits.find_first_not_of("0123456789"));
      if (auto r = parse_int(digits)) return static_cast<int>(*r);
    }
    return 0;
  }
};

// MLflow RunStatus, written as its number (1 RUNNING, 2 SCHEDULED, 3 FINISHED, 4 FAILED, 5 KILLED)
// or, by some versions, its name.
std::string status_name(const std::string& s) {
  static const std::map<std::string, std::string, std::less<>> kNames{
      {"1", "RUNNING"}, {"2", "SCHEDULED"}, {"3", "FINISHED"}, {"4", "FAILED"}, {"5", "KILLED"}};
  auto it = kNames.find(s);
  return it == kNames.end() ? s : it->second;
}

bool is_deleted(const Fields& meta) { return get(meta, "lifecycle_stage") == "deleted"; }

class ItwinaiMlflowReader final : public Reader {
 public:
  std::string_view name() const override { return "itwinai_mlflow"; }

  // The experiment's meta.yaml; the experiment is read as a whole from it. Also MLflow's
  // database-backed store (an SQLite file such as mlflow.db), only to say that it is not read.
  bool recognizes(const fs::path& path, std::string_view head) const override {
    if (is_sqlite_store(path, head)) return true;
    if (path.filename() != "meta.yaml") return false;
    auto meta = parse_meta_yaml(head);
    if (meta.fields.count("artifact_location") && !meta.fields.count("run_id") && !meta.fields.count("run_uuid")) return true;
    // An experiment's meta.yaml that cannot be read (empty: a write cut short) beside folders of
    // MLflow runs: read, so that it is named and its runs are not lost without a word.
    return !meta.problem.empty() && holds_mlflow_runs(path.parent_path());
  }

  void read(const ReadContext& ctx, ReadOutput& out) const override {
    auto head = read_head(ctx.file, 16);
    if (head && is_sqlite_store(ctx.file, head.value()))
      return out.warn("mlflow-database-store",
                      "an SQLite database, as MLflow's database-backed store (--backend-store-uri sqlite:///...) "
                      "writes; scalelens reads MLflow file stores only (mlruns/ or itwinai's mllogs/mlflow folder, "
                      "local), not database or remote (--tracking-uri http://...) stores; left out",
                      ctx.file);
    auto text = read_file(ctx.file);
    if (!text) {
      out.warn("unreadable-file", text.error().message, ctx.file);
      return;
    }
    const fs::path exp_dir = ctx.file.parent_path();
    const MetaYaml experiment_meta = parse_meta_yaml(text.value());
    const Fields& experiment = experiment_meta.fields;
    if (!experiment_meta.problem.empty())
      out.warn("unreadable-file",
               fmt::format("MLflow experiment meta.yaml: {}; its runs are read without the experiment's name and "
                           "lifecycle stage (--experiment cannot select them; a deleted experiment would be counted)",
                           experiment_meta.problem),
               ctx.file);
    if (is_deleted(experiment)) {
      out.diagnostics.push_back({Severity::note, "deleted-experiment", "MLflow experiment marked deleted; left out",
                                 ctx.file.string(), 0, {}});
      return;
    }

    const bool manifest_unread = ctx.enclosing && ctx.enclosing->manifest_unread;
    // Every live run of the experiment, by id.
    std::map<std::string, MlflowRun> runs;
    std::set<std::string> deleted;
    std::set<std::string> unreadable;  // folders (MLflow names them by run id) whose meta.yaml cannot be read
    std::error_code ec;
    for (fs::directory_iterator it(exp_dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_directory(ec)) continue;
      const fs::path meta_file = it->path() / "meta.yaml";
      std::error_code exists_ec;
      if (!fs::exists(meta_file, exists_ec)) continue;  // not a run folder (e.g. the experiment's tags/)
      // A run whose meta.yaml cannot be read is left out, as MLflow skips it ("Malformed run"): its
      // lifecycle stage (deleted or not) and its times are unknown.
      auto unreadable_meta = [&](const std::string& why) {
        unreadable.insert(it->path().filename().string());
        // Its tags are files of their own: say whose worker it was, so that its job's missing GPU
        // data is not put down to log_on_workers.
        const auto parent_id = get(read_folder(it->path() / "tags"), "mlflow.parentRunId");
        out.warn("unreadable-file",
                 fmt::format("MLflow run meta.yaml: {}; the run in {} is left out, as MLflow leaves it out (its epochs "
                             "and GPU data are not counted{})",
                             why, it->path().filename().string(),
                             parent_id.empty() ? ", and runs nested under it have no parent"
                                               : fmt::format("; run '{}' it is nested under lacks them: a partial-gpu-data "
                                                             "warning for it comes from this, not from log_on_workers",
                                                             parent_id)),
                 meta_file);
      };
      auto meta_text = read_file(meta_file);
      if (!meta_text) {
        unreadable_meta(meta_text.error().message);
        continue;
      }
      auto meta = parse_meta_yaml(meta_text.value());
      if (!meta.problem.empty()) {
        unreadable_meta(meta.problem);
        continue;
      }
      MlflowRun r{it->path(), std::move(meta.fields), {}, {}};
      if (r.id().empty()) {
        unreadable_meta("it has no run_id (nor run_uuid)");
        continue;
      }
      if (is_deleted(r.meta)) {
        deleted.insert(r.id());
        continue;
      }
      r.params = read_folder(it->path() / "params");
      r.tags = read_folder(it->path() / "tags");
      runs.emplace(r.id(), std::move(r));
    }
    // The workers of a deleted run go with it.
    for (bool removed = true; removed;) {
      removed = false;
      for (auto it = runs.begin(); it != runs.end();) {
        if (deleted.count(it->second.parent())) {
          deleted.insert(it->first);
          it = runs.erase(it);
          removed = true;
        } else {
          ++it;
        }
      }
    }
    if (!deleted.empty())
      out.diagnostics.push_back({Severity::note, "deleted-runs",
                                 fmt::format("{} MLflow run{} marked deleted, or part of one; left out", deleted.size(),
                                             deleted.size() == 1 ? "" : "s"),
                                 exp_dir.string(), 0, {}});

    std::map<std::string, std::vector<std::string>> children;
    std::vector<std::string> top;
    // Runs nested under a run the store does not hold, by that parent's id.
    std::map<std::string, std::vector<std::string>> orphans;
    for (const auto& [id, r] : runs) {
      if (r.parent().empty()) top.push_back(id);
      else if (runs.count(r.parent())) children[r.parent()].push_back(id);
      else orphans[r.parent()].push_back(id);
    }
    auto has_children = [&](const std::string& id) { return children.count(id) > 0; };
    auto collect = [&](const std::string& root) {
      std::vector<const MlflowRun*> group;
      std::vector<std::string> todo{root};
      while (!todo.empty()) {
        auto id = todo.back();
        todo.pop_back();
        group.push_back(&runs.at(id));
        if (auto c = children.find(id); c != children.end()) todo.insert(todo.end(), c->second.begin(), c->second.end());
      }
      // The train run first, then its workers by rank, so output does not depend on run ids.
      std::stable_sort(group.begin() + 1, group.end(),
                       [](const MlflowRun* a, const MlflowRun* b) { return a->rank() < b->rank(); });
      return group;
    };

    // itwinai's worker runs are parts of one job, reached only through their train run (its report
    // searches tags.mlflow.parentRunId under the train run it is given). Without that run (deleted and
    // removed by `mlflow gc`, or not copied) they are no job of any study: each would count as a run
    // of its own, a fraction of the job's GPUs timed as the whole. Left out, as the workers of a
    // deleted run are.
    for (const auto& [parent, ids] : orphans) {
      std::vector<std::string> names;
      std::size_t nested = 0;
      for (const auto& id : ids) {
        // A run with workers of its own (a Ray trial whose tune run is gone) is a training run: read.
        if (has_children(id)) {
          add_run(collect(id), get(experiment, "name"), manifest_unread, out);
          continue;
        }
        const auto group = collect(id);
        nested += group.size();
        names.push_back(fmt::format("{} ('{}')", runs.at(id).dir.filename().string(), runs.at(id).name()));
      }
      if (names.empty()) continue;
      out.warn("orphan-runs",
               fmt::format("MLflow run{} {} {} nested under run '{}' (tag mlflow.parentRunId), {}. A nested run (an itwinai "
                           "worker) is only a part of its training run, so {} {} left out{}",
                           names.size() == 1 ? "" : "s", fmt::join(names, ", "), names.size() == 1 ? "is" : "are", parent,
                           unreadable.count(parent) ? "whose meta.yaml cannot be read (above)"
                                                    : "which this store does not hold: deleted and removed by `mlflow gc`, "
                                                      "or not copied",
                           nested == 1 ? "it" : "they", nested == 1 ? "is" : "are",
                           nested > names.size() ? fmt::format(" with the {} runs nested under them", nested - names.size()) : ""),
               exp_dir);
    }

    for (const auto& id : top) {
      const auto& kids = children[id];
      // With Ray, the top run is a tune run whose children are trials, each with its workers.
      if (std::any_of(kids.begin(), kids.end(), has_children)) {
        for (const auto& kid : kids)
          if (has_children(kid)) add_run(collect(kid), get(experiment, "name"), manifest_unread, out);
      } else {
        add_run(collect(id), get(experiment, "name"), manifest_unread, out);
      }
    }
  }

 private:
  // Whether `dir` holds a folder with an MLflow run's meta.yaml (one with a run_id): an experiment.
  static bool holds_mlflow_runs(const fs::path& dir) {
    std::error_code ec;
    int looked = 0;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end && looked < 64; it.increment(ec), ++looked) {
      if (!it->is_directory(ec)) continue;
      auto head = read_head(it->path() / "meta.yaml", 4096);
      if (!head) continue;
      auto fields = parse_meta_yaml(head.value()).fields;
      if (fields.count("run_id") || fields.count("run_uuid")) return true;
    }
    return false;
  }

  static bool is_sqlite_store(const fs::path& path, std::string_view head) {
    const auto ext = path.extension().string();
    return (ext == ".db" || ext == ".sqlite") && head.substr(0, 16) == std::string_view("SQLite format 3\0", 16);
  }

  // One train run (group[0]) and its worker runs -> one Run.
  // `manifest_unread`: a scalelens.json above the store could not be read, which its `bad-manifest`
  // error says once: a run without a world size then says nothing more of it.
  static void add_run(const std::vector<const MlflowRun*>& group, const std::string& experiment, bool manifest_unread,
                      ReadOutput& out) {
    const MlflowRun& train = *group[0];
    Run run;
    run.format = "itwinai-mlflow";
    run.run_id = train.id();
    run.run_id_written = true;
    run.path = train.dir.string();
    run.details_to_fill().experiment = experiment;
    run.details_to_fill().run_name = train.name();

    // Params logged by every worker; they must agree.
    auto param = [&](std::string_view key) -> std::string {
      std::string value;
      for (const auto* r : group) {
        auto v = get(r->params, key);
        if (v.empty()) continue;
        if (value.empty()) value = v;
        else if (v != value)
          out.warn("inconsistent-param",
                   fmt::format("param '{}' is '{}' in one run and '{}' in another of the same training run; the first "
                               "is used",
                               key, value, v),
                   r->dir / "params" / std::string(key));
      }
      return value;
    };
    run.label = param("strategy");
    const std::string world_size_text = param("global_world_size");
    if (auto ws = parse_int(world_size_text); ws && *ws > 0) {
      if (*ws <= limits::kMaxWorldSize) {
        run.world_size = static_cast<int>(*ws);
        run.detected_from["world_size"] = "MLflow param global_world_size";
      } else {
        out.warn("implausible-value",
                 fmt::format("param global_world_size {} is beyond any machine (at most {}); the world size is left unknown", *ws,
                             limits::kMaxWorldSize),
                 train.dir / "params" / "global_world_size");
      }
    }
    if (auto interval = parse_double(param("probing_interval")); interval && limits::valid_sampling_interval(*interval))
      run.sampling_interval_s = *interval;
    else if (interval)
      out.warn("implausible-value",
               fmt::format("param probing_interval {:g} s is not {} s; left out", *interval, limits::sampling_interval_range()),
               train.dir / "params" / "probing_interval");

    // The train run itself is ended as soon as its workers start, so the run spans all of them.
    bool all_finished = true, any_failed = false, any_open = false;
    for (const auto* r : group) {
      if (auto s = r->ms("start_time")) run.start_ns = std::min(run.start_ns.value_or(*s * 1'000'000), *s * 1'000'000);
      if (auto e = r->ms("end_time")) run.end_ns = std::max(run.end_ns.value_or(*e * 1'000'000), *e * 1'000'000);
      auto status = status_name(get(r->meta, "status"));
      all_finished &= status == "FINISHED";
      any_failed |= status == "FAILED" || status == "KILLED";
      any_open |= status == "RUNNING" || status == "SCHEDULED";
    }
    if (any_open) {  // still running, or it died without telling MLflow
      run.end_ns.reset();
      out.warn("run-not-finished",
               "an MLflow run of it is still RUNNING or SCHEDULED: the job is still going, or it died without telling "
               "MLflow; its figures cover only what had been logged",
               train.dir / "meta.yaml");
    }
    if (any_failed) {
      run.exit_status = 1;
      run.detected_from["exit_status"] = "an MLflow run of it ended FAILED or KILLED";
    } else if (all_finished) {
      run.exit_status = 0;
    }

    for (const auto* r : group) {
      const int rank = r->rank();
      // One rank logs epoch_time_s; an epoch it logs again (a job restarted from a checkpoint) counts
      // once, its time the longest, as in the other readers (docs/inputs.md).
      RepeatedEpochs repeated;
      for (const auto& p : read_metric(r->dir / "metrics" / "epoch_time_s", out)) {
        if (!limits::lasts_some_time(p.value) || p.value > limits::kMaxRunSeconds) {
          out.warn("bad-epoch-time", fmt::format("epoch_time_s {} of epoch {} is not a duration; left out", p.value, p.step),
                   r->dir / "metrics" / "epoch_time_s");
          continue;
        }
        // An epoch longer than its whole run (the MLflow runs' start..end) cannot be one of it.
        if (run.start_ns && run.end_ns &&
            p.value * 1e9 > limits::span_ns(*run.start_ns, *run.end_ns) + static_cast<double>(limits::kIntervalSlackNs)) {
          out.warn("implausible-value",
                   fmt::format("epoch_time_s {:g} of epoch {} is longer than its run ({:.6g} s); left out", p.value, p.step,
                               limits::span_ns(*run.start_ns, *run.end_ns) * 1e-9),
                   r->dir / "metrics" / "epoch_time_s");
          continue;
        }
        // Logged right after the epoch ends: its timestamp is the end, its value the length.
        const std::int64_t end = p.t_ms * 1'000'000;
        run.epochs.push_back({rank, p.step, end - std::llround(p.value * 1e9), end, std::nullopt});
        repeated.add(p.step, p.line, p.value);
      }
      repeated.report(out, r->dir / "metrics" / "epoch_time_s");
      add_gpu_series(*r, rank, run, out);
      const fs::path averages = r->dir / "artifacts" / "torch_profiling_averages" / "torch_profiling_averages.csv";
      std::error_code ec;
      if (fs::is_regular_file(averages, ec)) {
        if (auto sums = read_profiler_averages(averages, out)) add_to(run.details_to_fill().profiler_averages, *sums);
      }
    }
    std::sort(run.epochs.begin(), run.epochs.end(),
              [](const Interval& a, const Interval& b) { return std::tie(a.index, a.rank) < std::tie(b.index, b.rank); });

    if (run.label.empty() && !run.world_size && run.epochs.empty() && run.gpus.empty()) {
      out.diagnostics.push_back({Severity::note, "not-itwinai",
                                 fmt::format("MLflow run '{}' has no itwinai scalability data (params strategy, "
                                             "global_world_size; metrics epoch_time_s, gpu_power_W); left out",
                                             train.name()),
                                 train.dir.string(), 0, {}});
      return;
    }
    if (!run.world_size && !manifest_unread)
      out.warn("unknown-world-size",
               fmt::format("MLflow run has {}, so speedup and efficiency cannot be computed for it; log "
                           "the param, or write {{\"world_size\": N}} in a scalelens.json above the store (a default for "
                           "every run below it that lacks one)",
                           world_size_text.empty() ? std::string("no param global_world_size")
                                                   : fmt::format("param global_world_size '{}', not a whole number from 1 to {}",
                                                                 world_size_text, limits::kMaxWorldSize)),
               train.dir);
    out.runs.push_back(std::move(run));
  }

  // gpu_power_W and gpu_utilization_percent of one worker: the GPU of its rank. Samples are paired by
  // step and placed at MLflow's real timestamps. A step logged again (a monitor restarted with the
  // job counts its steps from 0 again) is a reading of its own: the n-th power reading of a step
  // pairs with the n-th utilization reading of it (pairing by step alone overwrote the first).
  static void add_gpu_series(const MlflowRun& r, int rank, Run& run, ReadOutput& out) {
    auto power = read_metric(r.dir / "metrics" / "gpu_power_W", out);
    auto util = read_metric(r.dir / "metrics" / "gpu_utilization_percent", out);
    if (power.empty() && util.empty()) return;
    std::map<std::pair<std::int64_t, int>, GpuSample> by_step;  // (step, its n-th reading in its file)
    std::map<std::int64_t, int> seen_power, seen_util;
    auto place = [&](const MetricPoint& p, std::map<std::int64_t, int>& seen) -> GpuSample& {
      auto [it, inserted] = by_step.try_emplace({p.step, seen[p.step]++});
      if (inserted) it->second.t_ns = p.t_ms * 1'000'000;
      return it->second;
    };
    // Beyond float's range (the model stores floats) a reading is junk: left missing.
    auto as_float = [](double v) { return std::abs(v) > 1e30 ? kMissing : static_cast<float>(v); };
    // Readings beyond physical limits (model/limits.hpp) are left out: one warning per metric file.
    auto check = [&](const std::vector<MetricPoint>& points, bool is_power, const char* name) {
      std::size_t count = 0;
      const MetricPoint* first = nullptr;
      for (const auto& p : points)
        if (is_power ? limits::bad_power(p.value) : limits::bad_percent(p.value))
          if (count++ == 0) first = &p;
      if (count)
        out.warn("implausible-value",
                 fmt::format("{} value{} beyond physical limits left out; the first, step {}: {:g} is outside {}", count,
                             count == 1 ? "" : "s", first->step, first->value,
                             is_power ? fmt::format("0…{:g} W per GPU", limits::kMaxGpuPowerW) : std::string("0…100 %")),
                 r.dir / "metrics" / name);
    };
    check(power, true, "gpu_power_W");
    check(util, false, "gpu_utilization_percent");
    for (const auto& p : power) place(p, seen_power).power_w = limits::bad_power(p.value) ? kMissing : as_float(p.value);
    for (const auto& p : util) place(p, seen_util).util_pct = limits::bad_percent(p.value) ? kMissing : as_float(p.value);
    GpuSeries g;
    // The GPU's host and device number are not logged; ranks tell the GPUs of a run apart.
    g.index = rank;
    g.source = r.dir.string();
    for (auto& [step, s] : by_step) g.samples.push_back(s);
    std::stable_sort(g.samples.begin(), g.samples.end(),
                     [](const GpuSample& a, const GpuSample& b) { return a.t_ns < b.t_ns; });
    run.gpus.push_back(std::move(g));
  }
};

}  // namespace

std::unique_ptr<Reader> make_itwinai_mlflow_reader() { return std::make_unique<ItwinaiMlflowReader>(); }

}  // namespace scalelens
