#include "ingest/trace_runs.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <re2/re2.h>

#include "common/text.hpp"
#include "trace/trace_set.hpp"

namespace scalelens {
namespace fs = std::filesystem;

namespace {

bool is_rank_folder(const std::string& name) {
  static const RE2 pattern(R"((?i)(?:rank|worker|proc|process|local_rank|device|gpu)[-_]?\d+)");
  return RE2::FullMatch(name, pattern);
}

// A token of a folder name that says how many GPUs, nodes or which repeat, not what ran.
bool is_count_token(const std::string& token) {
  static const RE2 pattern(
      R"((?i)\d+|\d+(?:gpus?|g|ranks?|procs?|workers?|nodes?|n|x|p|way)|)"
      R"((?:n|np|ws|world|worldsize|gpus?|ranks?|nodes?|p|x)\d+|(?:run|rep|repeat|repetition|seed|trial|try|job)\d+)");
  return RE2::FullMatch(token, pattern);
}

std::string strip_counts(const std::string& name) {
  std::string out, token, sep;
  auto flush = [&] {
    if (!token.empty() && !is_count_token(token)) out += (out.empty() ? "" : sep) + token;
    token.clear();
    sep.clear();
  };
  for (char ch : name) {
    if (ch == '-' || ch == '_' || ch == '.' || ch == ' ') {
      if (!token.empty()) flush();
      sep += ch;
    } else {
      token += ch;
    }
  }
  flush();
  return out;
}

const RankBreakdown& part_of(const LooseInput& t) { return t.data.breakdown.front(); }

}  // namespace

void drop_duplicate_traces(Run& run, const std::string& group, std::vector<Diagnostic>& diagnostics) {
  std::vector<trace::TraceOfRank> of_rank;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < run.breakdown.size(); ++i) {
    const auto& b = run.breakdown[i];
    if (b.from_mpi) continue;
    of_rank.push_back({group, b.rank, b.steps, b.source, b.step_numbers, b.busy_us});
    index.push_back(i);
  }
  const auto dropped = trace::duplicate_traces(of_rank, diagnostics);
  for (auto i = dropped.rbegin(); i != dropped.rend(); ++i)
    run.breakdown.erase(run.breakdown.begin() + static_cast<std::ptrdiff_t>(index[*i]));
}

fs::path run_folder_of(const fs::path& trace_file) {
  fs::path dir = trace_file.parent_path();
  if (dir.empty()) dir = ".";  // a file named without a folder: the working folder
  while (dir.has_parent_path() && dir != dir.parent_path() && is_rank_folder(dir.filename().string()))
    dir = dir.parent_path();
  return dir;
}

std::string label_from_folder(const fs::path& folder) {
  // From the absolute path, so that the parent's name does not depend on how the folder was
  // written ("8" from inside its parent has one): lexically, as the user named it (links kept).
  std::error_code ec;
  fs::path dir = fs::absolute(folder.empty() ? fs::path(".") : folder, ec);
  if (ec) dir = folder;
  dir = dir.lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // a trailing separator
  for (; !dir.empty(); dir = dir.parent_path()) {
    if (auto label = strip_counts(dir.filename().string()); !label.empty()) return label;
    if (dir == dir.parent_path()) break;
  }
  return "traces";
}

std::vector<Run> runs_from_traces(std::vector<LooseInput> traces, const std::optional<std::string>& label,
                                  std::vector<Diagnostic>& diagnostics, std::string_view label_from) {
  // (run folder, world size, backend, GPU model) → traces: the ranks of one job share all four.
  std::map<std::tuple<fs::path, int, std::string, std::string>, std::vector<LooseInput*>> groups;
  std::map<std::pair<fs::path, int>, std::set<std::string>> setups_of;
  for (auto& t : traces) {
    const auto& b = part_of(t);
    const auto folder = run_folder_of(t.file);
    groups[{folder, *b.world_size, b.backend, t.data.gpu_model}].push_back(&t);
    setups_of[{folder, *b.world_size}].insert(fmt::format("{} on {}", b.backend.empty() ? "no backend" : b.backend,
                                                          t.data.gpu_model.empty() ? "an unnamed device" : t.data.gpu_model));
  }
  for (const auto& [where, setups] : setups_of)
    if (setups.size() > 1) {
      std::string names;
      for (const auto& s : setups) names += (names.empty() ? "" : "; ") + s;
      diagnostics.push_back({Severity::warning, "mixed-jobs",
                             fmt::format("its traces of world size {} come from {} different setups ({}): they are "
                                         "different jobs, each reported as a run of its own",
                                         where.second, setups.size(), names),
                             where.first.string(), 0, {}});
    }

  std::vector<Run> runs;
  for (auto& [key, members] : groups) {
    const auto& [folder, world_size, backend, gpu_model] = key;
    std::vector<trace::TraceStart> starts;
    for (const auto* t : members) {
      const auto& b = part_of(*t);
      starts.push_back({b.rank, b.start_ns, &b.step_numbers, t->file.string(), b.base_time_ns});
    }
    std::vector<std::vector<LooseInput*>> jobs;
    std::vector<std::string> unsure;
    for (const auto& job : trace::split_into_jobs(starts, world_size, &unsure)) {
      jobs.emplace_back();
      for (std::size_t i : job) jobs.back().push_back(members[i]);
    }
    for (auto& said : unsure) diagnostics.push_back({Severity::warning, "late-ranks-ambiguous", std::move(said), folder.string(), 0, {}});
    if (jobs.size() > 1) {
      std::string when;
      for (const auto& job : jobs)
        when += (when.empty() ? "" : ", ") + (part_of(*job.front()).start_ns ? trace::unix_time_text(*part_of(*job.front()).start_ns)
                                                                            : std::string("an unknown time"));
      diagnostics.push_back({Severity::warning, "mixed-jobs",
                             fmt::format("traces of {} jobs at world size {} in one folder, told apart by when profiling began "
                                         "({}); each is reported as one run, repeats of one configuration. If they are not "
                                         "repeats, give each job a folder of its own",
                                         jobs.size(), world_size, when),
                             folder.string(), 0, {}});
    }
    const std::string run_label = label ? *label : label_from_folder(folder);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      Run run;
      run.format = "kineto";
      run.path = folder.string();
      run.run_id = fmt::format("{}#{}{}{}{}{}", folder.string(), world_size, backend.empty() ? "" : "-", backend,
                               gpu_model.empty() ? "" : "-", gpu_model);
      if (jobs.size() > 1) run.run_id += fmt::format("#job{}", j + 1);
      run.label = run_label;
      run.world_size = world_size;
      run.detected_from["world_size"] = "distributedInfo of its traces";
      run.detected_from["label"] = label ? std::string(label_from) : fmt::format("folder name '{}' without counts (--label to set it)",
                                                                   folder.filename().string());
      run.detected_from["run"] = fmt::format("traces of one folder and world size{}", jobs.size() > 1 ? ", one job by start time" : "");
      for (auto* t : jobs[j]) {
        if (run.gpu_model.empty()) run.gpu_model = t->data.gpu_model;
        for (auto& b : t->data.breakdown) run.breakdown.push_back(std::move(b));
      }
      drop_duplicate_traces(run, run.path, diagnostics);
      // Ranks 0..N-1, each once.
      std::set<int> present, beyond;
      for (const auto& b : run.breakdown) (b.rank < world_size ? present : beyond).insert(b.rank);
      std::vector<int> missing;
      std::size_t missing_count = 0;
      for (int r = 0; r < world_size; ++r)
        if (!present.count(r) && ++missing_count <= 10) missing.push_back(r);
      if (missing_count > 0 || !beyond.empty()) {
        std::string text = fmt::format("{} of {} ranks have a trace", present.size(), world_size);
        if (missing_count) text += "; missing: " + list_ranks(missing, missing_count);
        if (!beyond.empty())
          text += fmt::format("; rank {} beyond world size {}",
                              list_ranks({beyond.begin(), beyond.end()}, beyond.size()), world_size);
        diagnostics.push_back({Severity::warning, "missing-ranks",
                               text + ". Its figures are over the ranks present; the slowest rank (step time) may be one "
                                      "of those missing",
                               folder.string(), 0, {}});
      }
      runs.push_back(std::move(run));
    }
    diagnostics.push_back({Severity::note, "runs-from-traces",
                           fmt::format("{} trace{} of world size {}{} form {} run{} labelled '{}' ({}); no scalelens.json "
                                       "is needed, one beside them would state more (samples per epoch, system)",
                                       members.size(), members.size() == 1 ? "" : "s", world_size,
                                       backend.empty() ? "" : " (" + backend + ")", jobs.size(), jobs.size() == 1 ? "" : "s",
                                       run_label, label ? fmt::format("from {}", label_from) : "from the folder name; --label NAME sets it"),
                           folder.string(), 0, {}});
  }
  return runs;
}

void attach_gpu_logs(std::vector<LooseInput> logs, std::vector<Run>& runs, const std::vector<Run>& folder_runs,
                     const std::optional<std::string>& label, std::vector<Diagnostic>& diagnostics) {
  // Several logs in one folder are one per node: where their node is the folder's name for all of
  // them (no nodes/<host>/ layout), the file name (without extensions) tells the nodes apart.
  std::map<fs::path, std::vector<LooseInput*>> in_folder;
  for (auto& log : logs) in_folder[log.file.parent_path()].push_back(&log);
  for (auto& [dir, members] : in_folder) {
    std::set<std::string> nodes;
    for (auto* log : members)
      for (const auto& g : log->data.gpus) nodes.insert(g.node);
    if (members.size() < 2 || nodes.size() >= members.size()) continue;
    for (auto* log : members) {
      std::string stem = log->file.filename().string();
      stem = stem.substr(0, stem.find('.'));
      for (auto& g : log->data.gpus) g.node = stem;
    }
  }
  std::map<fs::path, std::vector<LooseInput*>> own_runs;  // folder → logs that form a run of their own
  for (auto& log : logs) {
    if (log.data.gpus.empty()) continue;
    std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = std::numeric_limits<std::int64_t>::min();
    for (const auto& g : log.data.gpus)
      if (!g.samples.empty()) {
        first = std::min(first, g.samples.front().t_ns);
        last = std::max(last, g.samples.back().t_ns);
      }
    // The trace runs of its folder or of a folder above it (nodes/<host>/gpu.csv beside rank traces).
    Run* best = nullptr;
    double best_distance = 0;
    for (fs::path dir = run_folder_of(log.file); !dir.empty(); dir = dir.parent_path()) {
      for (auto& run : runs) {
        if (run.format != "kineto" || run.path != dir.string()) continue;
        std::optional<std::int64_t> start;
        for (const auto& b : run.breakdown)
          if (b.start_ns) start = start ? std::min(*start, *b.start_ns) : *b.start_ns;
        double distance = 0;  // 0 inside the log's span (or when either time is unknown)
        if (start && first <= last && (*start < first || *start > last))
          distance = static_cast<double>(*start < first ? first - *start : *start - last);
        if (!best || distance < best_distance) {
          best = &run;
          best_distance = distance;
        }
      }
      if (best || dir == dir.parent_path()) break;
    }
    if (best) {
      for (auto& g : log.data.gpus) best->gpus.push_back(std::move(g));
      best->detected_from.emplace("gpus", "nvidia-smi log beside its traces");
      continue;
    }
    own_runs[run_folder_of(log.file)].push_back(&log);
  }
  // The folders of the runs below each such folder, by name, before any run of logs is added: each
  // run asks the folders above it (a relative path's last is "."), not every folder each run.
  std::map<fs::path, std::set<std::string>> runs_below;
  for (const std::vector<Run>* list : {&std::as_const(runs), &folder_runs})
    for (const auto& run : *list) {
      const fs::path path(run.path);
      for (fs::path dir = path.parent_path();; dir = dir.parent_path()) {
        if (dir.empty()) dir = ".";
        if (own_runs.contains(dir))
          if (const fs::path rel = path.lexically_relative(dir); !rel.empty() && rel != "." && *rel.begin() != "..")
            runs_below[dir].insert(rel.begin()->string());
        if (dir == "." || dir == dir.parent_path()) break;
      }
    }
  for (auto& [folder, members] : own_runs) {
    if (auto below = runs_below.find(folder); below != runs_below.end()) {
      const std::vector<std::string> names(below->second.begin(), below->second.end());
      for (auto* log : members)
        diagnostics.push_back({Severity::warning, "gpu-log-not-assigned",
                               fmt::format("an nvidia-smi log beside run folders ({}), in none of them: which run's GPUs "
                                           "it logged cannot be told, so it is left out (it is no run of its own); put "
                                           "each run's log in that run's folder",
                                           list_first(names, names.size(), 3)),
                               log->file.string(), 0, {}});
      continue;
    }
    Run run;
    run.format = "nvidia-smi";
    run.path = folder.string();
    run.run_id = folder.string() + "#nvidia-smi";
    run.label = label ? *label : label_from_folder(folder);
    std::set<std::string> nodes, gpus;
    for (auto* log : members)
      for (auto& g : log->data.gpus) {
        nodes.insert(g.node);
        gpus.insert(g.node + "/" + (g.uuid.empty() ? std::to_string(g.index) : g.uuid));
        if (run.gpu_model.empty()) run.gpu_model = g.name;
        run.gpus.push_back(std::move(g));
      }
    run.world_size = static_cast<int>(gpus.size());
    run.nodes = static_cast<int>(nodes.size());
    if (nodes.size() == 1) run.gpus_per_node = run.world_size;
    run.detected_from["world_size"] = "the GPUs in its nvidia-smi logs";
    run.detected_from["label"] = label ? "--label" : fmt::format("folder name '{}' without counts (--label to set it)",
                                                                 folder.filename().string());
    run.detected_from["run"] = "the nvidia-smi logs of one folder";
    diagnostics.push_back({Severity::note, "runs-from-gpu-logs",
                           fmt::format("{} nvidia-smi log{} with {} GPU{} on {} node{} form a run labelled '{}' ({}); it "
                                       "has GPU utilization and energy but no time: a scalelens.json beside them, or the "
                                       "job's profiler traces, would give one",
                                       members.size(), members.size() == 1 ? "" : "s", gpus.size(), gpus.size() == 1 ? "" : "s",
                                       nodes.size(), nodes.size() == 1 ? "" : "s", run.label,
                                       label ? "from --label" : "from the folder name; --label NAME sets it"),
                           folder.string(), 0, {}});
    runs.push_back(std::move(run));
  }
}

}  // namespace scalelens
