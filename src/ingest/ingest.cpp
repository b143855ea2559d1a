#include "ingest/ingest.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/parallel.hpp"
#include "common/user_regex.hpp"
#include "common/walk.hpp"
#include "trace/trace_set.hpp"
#include "ingest/reader.hpp"

namespace scalelens {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kSniffBytes = 64 * 1024;

// Folders that never hold study data: our own output, VCS and package folders.
bool skipped_folder(const fs::path& p) {
  auto name = p.filename().string();
  return name == "scalelens-report" || name == ".git" || name == "node_modules" || name == "__pycache__" ||
         name == ".scalelens-cache";
}

struct Candidate {
  fs::path path;
  std::uintmax_t size = 0;
  int reader = -1;  // index into readers, -1 = not recognized
};

template <class T>
void fill(std::optional<T>& into, const std::optional<T>& from) {
  if (!into && from) into = from;
}

template <class T>
void append(std::vector<T>& into, std::vector<T>& from) {
  into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// Fields the target lacks come from `src`; data is appended.
void merge_run_into(Run& target, Run&& src) {
  if (target.label.empty()) target.label = src.label;
  if (target.run_id.empty()) target.run_id = src.run_id;
  if (target.gpu_model.empty()) target.gpu_model = src.gpu_model;
  if (target.system.empty()) target.system = src.system;
  if (target.benchmark.empty()) target.benchmark = src.benchmark;
  if (target.hosts.empty()) target.hosts = src.hosts;
  fill(target.world_size, src.world_size);
  fill(target.nodes, src.nodes);
  fill(target.gpus_per_node, src.gpus_per_node);
  fill(target.cpus_per_node, src.cpus_per_node);
  fill(target.global_batch_size, src.global_batch_size);
  fill(target.samples_per_epoch, src.samples_per_epoch);
  fill(target.scaling, src.scaling);
  fill(target.start_ns, src.start_ns);
  fill(target.end_ns, src.end_ns);
  fill(target.exit_status, src.exit_status);
  fill(target.sampling_interval_s, src.sampling_interval_s);
  for (auto& [k, v] : src.detected_from) target.detected_from.emplace(k, v);
  for (auto& [k, v] : src.missing) target.missing.emplace(k, v);
  append(target.epochs, src.epochs);
  append(target.steps, src.steps);
  append(target.gpus, src.gpus);
  append(target.host_series, src.host_series);
  append(target.ranks, src.ranks);
  append(target.breakdown, src.breakdown);
}

}  // namespace

Study ingest(const IngestOptions& options) {
  Study study;
  study.inputs = options.inputs;
  auto readers = all_readers();
  std::optional<UserRegex> pattern;
  if (options.pattern) {
    auto compiled = UserRegex::compile(*options.pattern);
    if (!compiled) {
      study.diagnostics.push_back({Severity::error, "bad-pattern",
                                   fmt::format("--pattern '{}' is not a valid regular expression: {}", *options.pattern,
                                               compiled.error().message),
                                   {}, 0, {}});
      return study;
    }
    pattern = std::move(compiled.value());
  }

  // 1. Walk.
  std::vector<Candidate> files;
  for (const auto& input : options.inputs) {
    fs::path root(input);
    std::error_code ec;
    auto st = fs::status(root, ec);
    if (ec || !fs::exists(st)) {
      study.diagnostics.push_back({Severity::error, "missing-input", "no such file or folder", input, 0, {}});
      continue;
    }
    auto consider = [&](const fs::path& p, std::uintmax_t size) {
      if (pattern) {
        auto rel = p.lexically_relative(root).generic_string();
        if (rel.empty() || rel == ".") rel = p.filename().generic_string();
        if (!pattern->search(rel)) return;
      }
      files.push_back({p, size, -1});
    };
    if (fs::is_regular_file(st)) {
      consider(root, fs::file_size(root, ec));
      continue;
    }
    std::vector<UnreadableFolder> unreadable;
    walk_tree(root, [&](const fs::directory_entry& e) {
      std::error_code e2;
      if (e.is_directory(e2)) return !skipped_folder(e.path());
      if (!e.is_regular_file(e2)) {
        if (e.is_symlink(e2) && !fs::exists(e.path(), e2))
          study.diagnostics.push_back({Severity::warning, "unreadable-file", "broken symbolic link; left out", e.path().string(), 0, {}});
        return false;
      }
      consider(e.path(), e.file_size(e2));
      return false;
    }, unreadable);
    for (const auto& u : unreadable)
      study.diagnostics.push_back({Severity::warning, "unreadable-folder", u.reason + "; what is in it is left out", u.path.string(), 0, {}});
    if (!unreadable.empty())
      study.diagnostics.push_back({Severity::warning, "unreadable-folders",
                                   fmt::format("{} folder{} under this input could not be read (listed above); the runs and files in "
                                               "{} are not in this report",
                                               unreadable.size(), unreadable.size() == 1 ? "" : "s", unreadable.size() == 1 ? "it" : "them"),
                                   input, 0, {}});
  }
  std::sort(files.begin(), files.end(), [](const Candidate& a, const Candidate& b) { return a.path < b.path; });
  files.erase(std::unique(files.begin(), files.end(), [](auto& a, auto& b) { return a.path == b.path; }), files.end());
  study.files_seen = files.size();

  const unsigned threads = default_threads(options.threads);
  std::vector<std::vector<Diagnostic>> sniff_diags(files.size());

  // 2. Recognize each file by its first bytes.
  parallel_for(files.size(), threads, [&](std::size_t i) {
    auto head = read_head_inflated(files[i].path, kSniffBytes);
    if (!head) {
      sniff_diags[i].push_back({Severity::warning, "unreadable-file", head.error().message, files[i].path.string(), 0, {}});
      return;
    }
    const std::string& text = head.value();
    for (std::size_t r = 0; r < readers.size(); ++r) {
      if (readers[r]->recognizes(files[i].path, text)) {
        files[i].reader = static_cast<int>(r);
        break;
      }
    }
  }, nullptr);
  for (auto& d : sniff_diags) append(study.diagnostics, d);

  std::vector<std::size_t> manifests, others;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].reader < 0) continue;
    (readers[files[i].reader]->is_manifest() ? manifests : others).push_back(i);
  }
  study.files_read = manifests.size() + others.size();
  for (auto list : {&manifests, &others})
    for (std::size_t i : *list) study.bytes_read += files[i].size;

  // 3. Manifests first: they define the run folders everything else attaches to.
  std::map<fs::path, Run> folder_runs;
  for (std::size_t i : manifests) {
    ReadOutput out;
    readers[files[i].reader]->read(ReadContext{files[i].path, nullptr}, out);
    append(study.diagnostics, out.diagnostics);
    for (auto& run : out.runs) folder_runs.emplace(files[i].path.parent_path(), std::move(run));
  }
  auto enclosing_folder = [&](const fs::path& file) -> const fs::path* {
    for (fs::path dir = file.parent_path();; dir = dir.parent_path()) {
      auto it = folder_runs.find(dir);
      if (it != folder_runs.end()) return &it->first;
      if (!dir.has_relative_path() || dir == dir.parent_path()) return nullptr;
    }
  };

  // 4. Everything else, in parallel, largest first so one big file does not come last.
  std::sort(others.begin(), others.end(), [&](std::size_t a, std::size_t b) { return files[a].size > files[b].size; });
  std::vector<ReadOutput> outputs(others.size());
  std::vector<const fs::path*> owner(others.size());
  parallel_for(others.size(), threads, [&](std::size_t k) {
    const auto& f = files[others[k]];
    owner[k] = enclosing_folder(f.path);
    const Run* header = owner[k] ? &folder_runs.at(*owner[k]) : nullptr;
    readers[f.reader]->read(ReadContext{f.path, header}, outputs[k]);
  }, options.progress);

  // 5. Merge in path order, so the study does not depend on thread timing.
  std::vector<std::size_t> order(others.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return files[others[a]].path < files[others[b]].path; });
  std::vector<Run> standalone;
  for (std::size_t k : order) {
    auto& out = outputs[k];
    const auto& path = files[others[k]].path;
    append(study.diagnostics, out.diagnostics);
    Run* target = owner[k] ? &folder_runs.at(*owner[k]) : nullptr;
    for (auto& run : out.runs) {
      if (target) merge_run_into(*target, std::move(run));
      else standalone.push_back(std::move(run));
    }
    if (out.has_attachment()) {
      if (target) merge_run_into(*target, std::move(out.attach));
      else
        study.diagnostics.push_back({Severity::warning, "no-manifest",
                                     "no scalelens.json above this file, so its label and world size are unknown; "
                                     "write one beside it, e.g. {\"label\": \"ddp\", \"world_size\": 8}",
                                     path.string(), 0, {}});
    }
  }

  // A rank's trace counted once per run (a copied or rerun trace beside it would double its figures).
  for (auto& [dir, run] : folder_runs) {
    std::vector<trace::TraceOfRank> of_rank;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < run.breakdown.size(); ++i)
      if (!run.breakdown[i].from_mpi) {
        of_rank.push_back({dir.string(), run.breakdown[i].rank, run.breakdown[i].steps, run.breakdown[i].source});
        index.push_back(i);
      }
    const auto dropped = trace::duplicate_traces(of_rank, study.diagnostics);
    for (auto i = dropped.rbegin(); i != dropped.rend(); ++i)
      run.breakdown.erase(run.breakdown.begin() + static_cast<std::ptrdiff_t>(index[*i]));
  }

  // 6. One list of runs; a run id seen twice is most likely a copied folder: keep the first.
  std::vector<Run> all;
  for (auto& [dir, run] : folder_runs) all.push_back(std::move(run));
  append(all, standalone);
  std::map<std::string, std::string> seen;
  for (auto& run : all) {
    auto [it, inserted] = seen.emplace(run.run_id, run.path);
    if (!inserted && !run.run_id.empty()) {
      study.diagnostics.push_back({Severity::warning, "duplicate-run-id",
                                   fmt::format("run id '{}' was already read from {}; this copy is left out", run.run_id, it->second),
                                   run.path, 0, {}});
      continue;
    }
    study.runs.push_back(std::move(run));
  }
  return study;
}

}  // namespace scalelens
