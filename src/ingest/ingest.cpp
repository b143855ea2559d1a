#include "ingest/ingest.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>


#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "analysis/series_figures.hpp"
#include "common/file_io.hpp"
#include "common/parallel.hpp"
#include "common/process_memory.hpp"
#include "common/text.hpp"
#include "common/user_regex.hpp"
#include "common/walk.hpp"
#include "common/byte_codec.hpp"
#include "distribute/process_group.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/clock_step.hpp"
#include "ingest/read_output_codec.hpp"
#include "trace/trace_set.hpp"
#include "ingest/reader.hpp"
#include "ingest/trace_runs.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kSniffBytes = 64 * 1024;

// Folders that never hold study data: our own output, VCS and package folders.
bool skipped_folder(const fs::path& p) {
  auto name = p.filename().string();
  // .sweep: `scalelens sweep`'s job scripts, job logs and the failed attempts it reran.
  return name == "scalelens-report" || name == ".git" || name == "node_modules" || name == "__pycache__" ||
         name == ".scalelens-cache" || name == ".sweep";
}

struct Candidate {
  // A string, not an fs::path: a path keeps each of its components apart, ~280 bytes for a file of
  // a run folder, which made the list of files a tenth of a 10,000-run study's memory.
  std::string path;
  std::uintmax_t size = 0;
  std::uintmax_t weight = 0;  // about the content's size, for sharing files among processes
  int reader = -1;  // index into readers, -1 = not recognized
  // False when --pattern did not match the path: the file is then read only when it defines named
  // runs (below), and only its runs whose names match are kept.
  bool path_matched = true;
  bool gpu_series = false;  // the reader attaches GPU series to its folder's run
  bool epochs = false;      // the reader attaches epochs to its folder's run
  bool steps = false;       // the reader attaches steps to its folder's run
};

template <class T>
void fill(std::optional<T>& into, const std::optional<T>& from) {
  if (!into && from) into = from;
}

template <class T>
void append(std::vector<T>& into, std::vector<T>& from) {
  if (into.empty()) {  // take its storage rather than move each element into a second array
    into.swap(from);
    return;
  }
  into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// What a file adds to its run: what the run lacks of what the file states, and its data after the
// run's own.
void merge_data_into(Run& target, RunData&& src) {
  if (target.gpu_model.empty()) target.gpu_model = src.gpu_model;
  fill(target.world_size, src.world_size);
  // A table is made only from a folder's one epoch log (tabulate_epochs, below): other epochs
  // beside it could not be added to its rows exactly, so meeting any is a fault of this program.
  auto has_epochs = [](const RunData& d) { return !d.epochs.empty() || !d.epoch_table.empty(); };
  if ((!src.epoch_table.empty() && has_epochs(target)) || (!target.epoch_table.empty() && has_epochs(src)))
    throw std::logic_error("a run's epochs tabulated as its one epoch log was read met more epochs: " + target.path);
  append(target.epochs, src.epochs);
  append(target.epoch_table, src.epoch_table);
  // Steps likewise (tabulate_steps).
  if ((src.step_table && (target.step_table || !target.steps.empty())) || (target.step_table && !src.steps.empty()))
    throw std::logic_error("a run's steps tabulated as its one step log was read met more steps: " + target.path);
  append(target.steps, src.steps);
  if (src.step_table) target.step_table = std::move(src.step_table);
  // A digest is made only where its folder has no other GPU source (summarize_gpus, below): GPUs
  // merged beside one would be left out of the run's figures, so that is a fault of this program.
  if ((src.gpu_digest && target.has_gpus()) || (target.gpu_digest && !src.gpus.empty()))
    throw std::logic_error("a run's GPUs summarized as they were read met more GPUs: " + target.path);
  append(target.gpus, src.gpus);
  if (src.gpu_digest) target.gpu_digest = std::move(src.gpu_digest);
  append(target.host_series, src.host_series);
  append(target.ranks, src.ranks);
  append(target.breakdown, src.breakdown);
}

// Fields the target lacks come from `src`; data is appended. `src` is spent: what it gives is moved.
void merge_run_into(Run& target, Run&& src) {
  if (target.label.empty()) target.label = std::move(src.label);
  if (target.run_id.empty()) target.run_id = std::move(src.run_id);
  if (target.system.empty()) target.system = std::move(src.system);
  if (target.hosts.empty()) target.hosts = std::move(src.hosts);
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
  target.manifest_unread |= src.manifest_unread;
  if (src.details_part.filled()) {  // the target's details are made only where the source has some
    const RunDetails& from = src.details();
    RunDetails& into = target.details_to_fill();
    if (into.benchmark.empty()) into.benchmark = from.benchmark;
    if (into.experiment.empty()) into.experiment = from.experiment;
    if (into.run_name.empty()) into.run_name = from.run_name;
    for (auto& [k, v] : from.missing) into.missing.emplace(k, v);
    if (from.profiler_averages) add_to(into.profiler_averages, *from.profiler_averages);
  }
  merge_data_into(target, std::move(src));
}

// Readers whose runs carry names that their paths may not (an MLflow store's paths are numeric
// ids): --pattern may select their runs by label, run name or experiment.
bool defines_named_runs(std::string_view reader) {
  return reader == "itwinai_mlflow" || reader == "itwinai_csv" || reader == "mlperf";
}

// The manifest's fields that are defaults for runs found below it, filled where a run lacks them.
void fill_defaults(Run& run, const Run& manifest) {
  if (run.label.empty()) run.label = manifest.label;
  if (run.gpu_model.empty()) run.gpu_model = manifest.gpu_model;
  if (run.system.empty()) run.system = manifest.system;
  fill(run.world_size, manifest.world_size);
  fill(run.gpus_per_node, manifest.gpus_per_node);
  fill(run.cpus_per_node, manifest.cpus_per_node);
  fill(run.global_batch_size, manifest.global_batch_size);
  fill(run.samples_per_epoch, manifest.samples_per_epoch);
  fill(run.scaling, manifest.scaling);
  if (run.world_size && !run.detected_from.count("world_size") && manifest.world_size)
    run.detected_from["world_size"] = "scalelens.json above it";
  // Where the world size would have come from a manifest that could not be read, its error says so.
  run.manifest_unread |= manifest.manifest_unread;
}

// A hand-written scalelens.json that states no world size or time (`{"label": "mix"}`): to traces
// that state their own world size it supplies defaults, it does not make them one run.
bool defaults_for_traces(const Run& manifest) { return !manifest.world_size && !manifest.start_ns; }

// Whether a trace is below such a manifest's folder, not in it (or in a per-rank subfolder of it):
// traces beside a manifest are its run's, whatever it leaves out (its run_id, nodes, exit status).
bool trace_below_manifest(const std::string& trace, const Run& manifest) {
  return defaults_for_traces(manifest) && run_folder_of(trace) != fs::path(manifest.path);
}

// Where a run folder's epochs (from `folder_file`) and a log's in it (`log`, from `log_file`) differ,
// `epoch-sources-disagree` with both figures: the number of epochs, the mean of each epoch's
// longest rank, and where the log's last epoch ends after the run's stated end.
void say_epoch_sources_disagree(const Run& folder, const std::string& folder_file, const Run& log,
                                const std::string& log_file, std::vector<Diagnostic>& diagnostics) {
  struct Figures {
    std::size_t epochs = 0;
    double mean_s = 0;
    std::int64_t last_end_ns = std::numeric_limits<std::int64_t>::min();
  };
  auto figures_of = [](const std::vector<Interval>& intervals) {
    std::map<std::int64_t, double> longest;
    Figures f;
    for (const auto& e : intervals) {
      longest[e.index] = std::max(longest[e.index], e.seconds());
      f.last_end_ns = std::max(f.last_end_ns, e.end_ns);
    }
    for (const auto& [index, s] : longest) f.mean_s += s;
    f.epochs = longest.size();
    if (f.epochs) f.mean_s /= static_cast<double>(f.epochs);
    return f;
  };
  // The folder's figure is its slowest rank's, an MLPerf log's rank 0's: a straggler alone makes
  // them differ by a few %, another run's epochs (10 s against 15 s) by far more.
  constexpr double kTolerance = 0.10;
  const Figures own = figures_of(folder.epochs), other = figures_of(log.epochs);
  if (std::abs(own.mean_s - other.mean_s) <= kTolerance * std::max(own.mean_s, other.mean_s)) return;
  std::string after_end;
  if (folder.end_ns && other.last_end_ns > *folder.end_ns)
    after_end = fmt::format(", its last ending {:.4g} s after the run's end in its scalelens.json",
                            static_cast<double>(other.last_end_ns - *folder.end_ns) * 1e-9);
  diagnostics.push_back(
      {Severity::warning, "epoch-sources-disagree",
       fmt::format("the run's epochs in {} ({} epoch{}, {:.4g} s each on average) and in {} ({} epoch{}, {:.4g} s{}) "
                   "differ by more than a straggler explains (the folder's are the slowest rank's, a log's rank 0's); "
                   "the run folder's own are used. They may be of different runs, or time different things",
                   folder_file, own.epochs, own.epochs == 1 ? "" : "s", own.mean_s, log_file, other.epochs,
                   other.epochs == 1 ? "" : "s", other.mean_s, after_end),
       folder.path, 0, {}});
}

bool run_has_data(const Run& r) {
  return r.RunData::has_data() || r.details().profiler_averages || r.start_ns || r.end_ns;
}

// itwinai writes its profiler traces to profiler-traces/<train run name>/torch-traces/: the run
// name they belong to, or "".
std::string itwinai_trace_run_name(const fs::path& file) {
  const fs::path dir = file.parent_path();
  if (dir.filename() != "torch-traces") return {};
  const fs::path named = dir.parent_path();
  if (named.parent_path().filename() != "profiler-traces") return {};
  return named.filename().string();
}

// Every file under the inputs, with the reader that recognizes it (by its first bytes), in path
// order; outside --pattern's paths only the files that define named runs.
std::vector<Candidate> find_candidates(const IngestOptions& options, const std::optional<UserRegex>& pattern,
                                       const std::vector<std::unique_ptr<Reader>>& readers, unsigned threads,
                                       std::vector<Diagnostic>& diagnostics) {
  auto matches = [&](const std::string& text) { return pattern->search(text); };
  // Held as strings and ordered as paths are (by component): a path object per file was most of
  // a large study's peak memory (common/walk.hpp, compare_as_paths).
  std::vector<Candidate> files;
  std::vector<FileIdentity> identities;  // per file
  for (std::size_t input_index = 0; input_index < options.inputs.size(); ++input_index) {
    const auto& input = options.inputs[input_index];
    fs::path root(input);
    std::error_code ec;
    auto st = fs::status(root, ec);
    if (ec || !fs::exists(st)) {
      diagnostics.push_back(unreachable_input(root, ec));
      continue;
    }
    // One stat for its size and its identity (a link's target's: the file read).
    auto consider = [&](const fs::path& p) {
      bool matched = true;
      if (pattern) {
        auto rel = p.lexically_relative(root).generic_string();
        if (rel.empty() || rel == ".") rel = p.filename().generic_string();
        matched = matches(rel);
      }
      std::uintmax_t size = 0;
      identities.push_back(file_identity(p.native(), input_index, size));
      files.push_back({p.native(), size, size, -1, matched, false});
    };
    if (fs::is_regular_file(st)) {
      consider(root);
      continue;
    }
    // A pipe or device is read once at most, and each file here is read twice (sniffed, then read).
    if (!fs::is_directory(st)) {
      diagnostics.push_back({Severity::error, "unreadable-file",
                             fmt::format("{}, not a file or folder scalelens can read; left out", special_file_kind(st.type())),
                             input, 0, {}});
      continue;
    }
    std::vector<UnreadableFolder> unreadable;
    std::vector<FolderLeftOut> reached_again;
    walk_tree(root, [&](const fs::directory_entry& e) {
      std::error_code e2;
      if (e.is_directory(e2)) return !skipped_folder(e.path());
      if (!e.is_regular_file(e2)) {
        if (e.is_symlink(e2) && !fs::exists(e.path(), e2))
          diagnostics.push_back({Severity::warning, "unreadable-file",
                                 e2 == std::errc::too_many_symbolic_link_levels ? "symbolic link that loops; left out"
                                                                                : "broken symbolic link; left out",
                                 e.path().string(), 0, {}});
        else if (const auto type = e.status(e2).type(); !e2 && type != fs::file_type::not_found)
          diagnostics.push_back({Severity::warning, "unreadable-file",
                                 fmt::format("{}, not a regular file; left out", special_file_kind(type)), e.path().string(), 0, {}});
        return false;
      }
      consider(e.path());
      return false;
    }, &unreadable, &reached_again);
    for (auto& d : left_out_diagnostics(reached_again)) diagnostics.push_back(std::move(d));
    for (const auto& u : unreadable)
      diagnostics.push_back({Severity::warning, "unreadable-folder", u.reason + "; what is in it is left out", u.path.string(), 0, {}});
    if (!unreadable.empty())
      diagnostics.push_back({Severity::warning, "unreadable-folders",
                                   fmt::format("{} folder{} under this input could not be read (listed above); the runs and files in "
                                               "{} are not in this report",
                                               unreadable.size(), unreadable.size() == 1 ? "" : "s", unreadable.size() == 1 ? "it" : "them"),
                                   input, 0, {}});
  }
  drop_files_reached_twice(files, identities, options.inputs, diagnostics,
                           [](const Candidate& f) -> std::string_view { return f.path; });
  std::sort(files.begin(), files.end(), [](const Candidate& a, const Candidate& b) { return compare_as_paths(a.path, b.path) < 0; });
  files.erase(std::unique(files.begin(), files.end(),
                          [](const Candidate& a, const Candidate& b) { return compare_as_paths(a.path, b.path) == 0; }),
              files.end());

  // Files that could not be read, by their place (few: a list per file was 24 bytes a file).
  std::mutex unreadable_lock;
  std::vector<std::pair<std::size_t, Diagnostic>> unreadable;

  // Recognize each file by its first bytes.
  parallel_for(files.size(), threads, [&](std::size_t i) {
    const fs::path path(files[i].path);
    auto head = read_head_inflated(path, kSniffBytes);
    // A manifest known by its name (scalelens.json) is one though it cannot be read: its reader
    // names the file and why, and its folder's files stay its run's ("no scalelens.json above
    // this file" said there was none).
    if (!head)
      for (std::size_t r = 0; r < readers.size(); ++r)
        if (readers[r]->is_manifest() && readers[r]->recognizes(path, {})) {
          files[i].reader = static_cast<int>(r);
          return;
        }
    if (!head) {
      const std::lock_guard lock(unreadable_lock);
      unreadable.emplace_back(i, Diagnostic{Severity::warning, "unreadable-file", head.error().message, files[i].path, 0, {}});
      return;
    }
    const std::string& text = head.value();
    for (std::size_t r = 0; r < readers.size(); ++r) {
      if (readers[r]->recognizes(path, text)) {
        files[i].reader = static_cast<int>(r);
        files[i].gpu_series = readers[r]->attaches_gpu_series(text);
        files[i].epochs = readers[r]->attaches_epochs(text);
        files[i].steps = readers[r]->attaches_steps(text);
        break;
      }
    }
  }, nullptr);
  std::sort(unreadable.begin(), unreadable.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [i, d] : unreadable)
    if (files[i].path_matched) diagnostics.push_back(std::move(d));
  // Outside --pattern's paths, only files that define named runs stay (their runs are matched by name).
  std::erase_if(files, [&](const Candidate& f) {
    return !f.path_matched && (f.reader < 0 || !defines_named_runs(readers[f.reader]->name()));
  });
  files.shrink_to_fit();  // held through reading: not the doubled room it grew in
  return files;
}

// The first process's list of files to every other process of a group, so that all share the same
// items (and only one walks the tree and reads the files' first bytes).
void share_candidates(ProcessGroup& group, std::vector<Candidate>& files) {
  std::string bytes;
  if (group.rank() == 0) {
    ByteWriter out(bytes);
    out(static_cast<std::uint64_t>(files.size()));
    for (const auto& f : files) out(f.path, f.size, f.weight, f.reader, f.path_matched, f.gpu_series, f.epochs, f.steps);
  }
  group.broadcast(bytes);
  if (group.rank() == 0) return;
  ByteReader in(bytes);
  std::uint64_t n = 0;
  in(n);
  files.clear();
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
    Candidate f;
    in(f.path, f.size, f.weight, f.reader, f.path_matched, f.gpu_series, f.epochs, f.steps);
    files.push_back(std::move(f));
  }
  if (!in.ok() || !in.at_end()) group.abort("the list of files from process 0 arrived garbled");
}

// A run folder's id where its manifest writes none: its path below the input it was found under
// (the outermost, where inputs nest), so that study/ddp/1gpu and study/fsdp/1gpu are two runs; its
// folder's name where the input is the folder (or its manifest) itself.
std::string id_from_path(const Run& run, const std::vector<std::string>& inputs) {
  const fs::path folder(run.path);
  std::string id;
  for (const auto& input : inputs) {
    const auto rel = folder.lexically_relative(fs::path(input)).generic_string();
    if (rel.empty() || rel == "." || rel.rfind("..", 0) == 0) continue;
    if (rel.size() > id.size()) id = rel;
  }
  return id.empty() ? folder.filename().string() : id;
}

// What the readers said, into the study's diagnostics in the order they come, where what files read
// apart said alike of one place (the same in every field: each weak-scaling instance log of an
// MLPerf folder that states the job's size) is said once, where the first said it. Only the
// readers': ingest's own notes on several runs of one folder may read alike (two jobs' traces in it).
class ReadDiagnostics {
 public:
  ReadDiagnostics(std::vector<Diagnostic>& into, const std::vector<std::unique_ptr<Reader>>& readers)
      : into_(into), readers_(readers), said_(SameWords{&into}) {}
  void add(std::vector<Diagnostic>& said) {
    for (auto& d : said) {
      const auto it = said_.lower_bound(d);
      if (it != said_.end() && !said_.key_comp()(d, it->first)) {
        ++it->second;
        continue;
      }
      into_.push_back(std::move(d));
      said_.emplace_hint(it, into_.size() - 1, 1);
    }
    said.clear();
  }
  // Once all is read: a note whose words count the files that said it (Reader::counted_note) says
  // how many.
  void count_who_said_it() {
    for (const auto& [at, files] : said_)
      for (const auto& reader : readers_)
        if (auto words = reader->counted_note(into_[at], files); !words.empty()) {
          into_[at].message = std::move(words);  // no longer a key: said_ is cleared, compared no more
          break;
        }
    said_.clear();
  }

 private:
  // Orders what was said by its words in every field, the said kept where it is (`into_`, found by
  // its place) or still to be kept (a Diagnostic): no text is copied to compare it.
  struct SameWords {
    using is_transparent = void;
    const std::vector<Diagnostic>* into;
    static auto fields(const Diagnostic& d) { return std::tie(d.severity, d.code, d.message, d.path, d.line, d.configuration); }
    const Diagnostic& at(std::size_t i) const { return (*into)[i]; }
    const Diagnostic& at(const Diagnostic& d) const { return d; }
    bool operator()(const auto& a, const auto& b) const { return fields(at(a)) < fields(at(b)); }
  };
  std::vector<Diagnostic>& into_;
  const std::vector<std::unique_ptr<Reader>>& readers_;
  std::map<std::size_t, std::size_t, SameWords> said_;  // where in `into_` each thing said is → by how many files
};

// Whether two texts both state something, and not the same.
bool texts_differ(const std::string& x, const std::string& y) { return !x.empty() && !y.empty() && x != y; }

// Two runs of one written id are one run read twice (a copied folder) unless what identifies a run
// differs where both state it: SLURM's slurm-<job>.<step> repeats across clusters.
bool same_identity(const Run& a, const Run& b) {
  auto values_differ = [](const auto& x, const auto& y) { return x && y && *x != *y; };
  return !texts_differ(a.system, b.system) && !texts_differ(a.label, b.label) && !values_differ(a.world_size, b.world_size) &&
         !values_differ(a.start_ns, b.start_ns) && !values_differ(a.end_ns, b.end_ns);
}

EpochSpan span_of(const std::vector<Interval>& epochs) {
  if (epochs.empty()) return {};
  EpochSpan span{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  for (const auto& e : epochs) span.first = std::min(span.first, e.start_ns), span.last = std::max(span.last, e.end_ns);
  return span;
}

// What a run folder's files left as they were read that copies of it are found by: its epochs'
// span, and the sum of its node logs' hashes (ReadOutput::samples_hash; summed, so that the order
// its files were read in does not matter; 0: no log with samples).
struct AsRead {
  EpochSpan epochs;
  std::uint64_t samples = 0;
};

// What makes runs evidently one execution, whatever their ids, cheaply (no sample is compared):
// each instant it stated on the wall clock, a key apiece (its start, its end), so that a copy that
// lacks one (a manifest without start_ns) meets the run it copies on the other; its epochs' first
// start and last end (its epochs log, read alike in both), and each traced rank with when its
// profiling began, so that a copy whose manifest states neither instant meets the run it copies
// whatever that one states. Empty where the run states none on the wall clock. Two runs never start
// or end at one instant, to the nanosecond (a manifest, MLflow) or millisecond (MLPerf, whose
// concurrent instances evidently_one tells apart); their epochs and traces never start at one
// either. A start of 0 and an end of the duration (a hand-written manifest) are no instants:
// repeats of one length have them alike.
// Foreign logs (MLPerf's millisecond stamps, which logs written alike share) keep both instants
// in one key, as before; traces alone are keyed by their ranks' starts.
// A run folder's GPU and host logs, by their hash: the same samples are one execution's (a run that
// states no instant, copied), as no two executions sample alike.
enum ExecutionKey : std::int64_t { kByStart, kByEnd, kByEpochs, kByTraces, kByStartAndEnd, kBySamples };
std::vector<std::vector<std::int64_t>> execution_keys(const Run& run, AsRead as_read) {
  std::vector<std::vector<std::int64_t>> keys;
  const bool start = run.start_ns && limits::wall_clock_ns(*run.start_ns), end = run.end_ns && limits::wall_clock_ns(*run.end_ns);
  const bool manifest = run.format == "scalelens";
  if (start && end) keys.push_back({kByStartAndEnd, *run.start_ns, *run.end_ns});
  if (!manifest && !keys.empty()) return keys;
  if (manifest) {
    if (start) keys.push_back({kByStart, *run.start_ns});
    if (end) keys.push_back({kByEnd, *run.end_ns});
    if (as_read.samples) keys.push_back({kBySamples, static_cast<std::int64_t>(as_read.samples)});
    const EpochSpan span = run.epochs.empty() ? as_read.epochs : span_of(run.epochs);
    if (limits::wall_clock_ns(span.first) && limits::wall_clock_ns(span.last)) keys.push_back({kByEpochs, span.first, span.last});
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;  // in rank order, so the traces' order does not matter
  for (const auto& b : run.breakdown) {
    if (!b.start_ns || !limits::wall_clock_ns(*b.start_ns)) return keys;
    pairs.emplace_back(b.rank, *b.start_ns);
  }
  if (pairs.empty()) return keys;
  std::sort(pairs.begin(), pairs.end());
  std::vector<std::int64_t> key{kByTraces};
  for (const auto& [rank, at] : pairs) key.push_back(rank), key.push_back(at);
  keys.push_back(std::move(key));
  return keys;
}

// A run's epochs as rows, whichever way it holds them (a folder's only epochs log is held as a table
// where its manifest states its start and end, as intervals where not).
std::vector<EpochRow> epoch_rows(const Run& run) {
  return run.epochs.empty() ? run.epoch_table : tabulate_epochs(run.epochs);
}

// Whether two runs of one execution key are one execution: nothing else that is already in memory
// tells them apart (a run's own sizes, GPUs, MLPerf instance, start and end, epochs), each compared
// where both have it.
bool evidently_one(const Run& a, const Run& b) {
  auto values_differ = [](const auto& x, const auto& y) { return x && y && *x != *y; };
  if ((a.world_size && b.world_size && *a.world_size != *b.world_size) || texts_differ(a.gpu_model, b.gpu_model) ||
      values_differ(a.start_ns, b.start_ns) || values_differ(a.end_ns, b.end_ns))
    return false;
  const RunDetails &da = a.details(), &db = b.details();
  if (texts_differ(da.benchmark, db.benchmark) || da.instance_id != db.instance_id) return false;
  auto same_interval = [](const Interval& x, const Interval& y) {
    return x.rank == y.rank && x.index == y.index && x.start_ns == y.start_ns && x.end_ns == y.end_ns;
  };
  auto same_row = [](const EpochRow& x, const EpochRow& y) { return x.seconds == y.seconds; };
  if (a.steps.size() != b.steps.size()) return false;
  if (a.epochs.empty() != b.epochs.empty()) {  // one held as a table: compared as tables
    const auto x = epoch_rows(a), y = epoch_rows(b);
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), same_row);
  }
  return std::equal(a.epochs.begin(), a.epochs.end(), b.epochs.begin(), b.epochs.end(), same_interval) &&
         std::equal(a.epoch_table.begin(), a.epoch_table.end(), b.epoch_table.begin(), b.epoch_table.end(), same_row);
}

// The GPUs a run's samples name by UUID (empty where none does).
std::set<std::string> gpu_uuids(const Run& run) {
  std::set<std::string> uuids;
  for (const auto& g : run.gpus)
    if (!g.uuid.empty()) uuids.insert(g.uuid);
  return uuids;
}

// What a manifest states of its run's clock, for the words of `duplicate-run`.
int instants_stated(const Run& run) { return (run.start_ns ? 1 : 0) + (run.end_ns ? 1 : 0); }

// How two copies of one run (`kept`, and `copy`, the one left out) share the instants that found them, and
// which of the two lacks which (every case true: either, both, or neither may lack each).
std::string shared_instants(const Run& kept, const Run& copy, std::int64_t by) {
  std::vector<std::string> same, copy_lacks, kept_lacks, neither;
  for (const auto& [name, of] : {std::pair{"start", &Run::start_ns}, std::pair{"end", &Run::end_ns}}) {
    const bool in_kept = (kept.*of).has_value(), in_copy = (copy.*of).has_value();
    (in_kept && in_copy ? same : in_kept ? copy_lacks : in_copy ? kept_lacks : neither).push_back(name);
  }
  auto words = [](const std::vector<std::string>& instants, std::string_view joined) {  // in start, end order
    return instants.size() == 2 ? fmt::format("{}{}{}", instants[0], joined, instants[1]) : instants.front();
  };
  std::string text = !same.empty()     ? fmt::format("the same {}, to the last digit", words(same, " and "))
                     : by == kByTraces ? "its traced ranks began profiling at the same instants"
                     : by == kBySamples ? "GPU and host logs of the same content, node by node"
                                       : "the same epochs' first start and last end, to the last digit";
  if (kept.format != "scalelens" && copy.format != "scalelens") return text;  // foreign logs and traces state no manifest's clock
  if (!copy_lacks.empty()) text += fmt::format("; this one states no {}", words(copy_lacks, " or "));
  if (!kept_lacks.empty()) text += fmt::format("; {} states no {}", kept.path, words(kept_lacks, " or "));
  if (!neither.empty())
    text += fmt::format("; neither states {}", neither.size() == 2 ? "a start or an end" : neither.front() == "start" ? "a start" : "an end");
  return text;
}

// Runs read twice are counted once, the first in path order kept (a copy that states more of its
// start and end before one that states less, which would take the run time with it): a copy that
// kept its written id and its identity (`duplicate-run-id`), and a copy evidently of one execution
// whatever its id (a folder copied without a run_id, a copied MLPerf log or trace folder:
// `duplicate-run`). `as_read`: by run folder (Run::folder), what its files left as read.
void drop_copies(std::vector<Run>& all, const std::vector<AsRead>& as_read, std::vector<Diagnostic>& diagnostics) {
  constexpr std::size_t kKept = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> copy_of(all.size(), kKept);  // the kept run each copy repeats
  std::vector<std::int64_t> by_execution(all.size(), -1);  // the ExecutionKey a copy was found by
  // The first in path order is kept (folders' runs lie before files' runs in `all`: a copied MLPerf
  // log in a run folder of its own would otherwise be kept over the log it copies).
  auto in_path_order = [&](std::size_t a, std::size_t b) {
    if (const int clock_a = instants_stated(all[a]), clock_b = instants_stated(all[b]); clock_a != clock_b) return clock_a > clock_b;
    const int c = compare_as_paths(all[a].path, all[b].path);
    return c != 0 ? c < 0 : a < b;
  };
  {
    // Places sorted by id rather than a map of ids (that map was ~200 bytes a run at the end of
    // reading, when every run is held).
    std::vector<std::size_t> by_id;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].run_id_written && !all[i].run_id.empty()) by_id.push_back(i);
    std::sort(by_id.begin(), by_id.end(), [&](std::size_t a, std::size_t b) {
      if (const int c = all[a].run_id.compare(all[b].run_id)) return c < 0;
      return in_path_order(a, b);
    });
    for (std::size_t begin = 0, end = 0; begin < by_id.size(); begin = end) {
      for (end = begin + 1; end < by_id.size() && all[by_id[end]].run_id == all[by_id[begin]].run_id; ++end) {
        for (std::size_t k = begin; k < end; ++k)
          if (copy_of[by_id[k]] == kKept && same_identity(all[by_id[k]], all[by_id[end]])) {
            copy_of[by_id[end]] = by_id[k];
            break;
          }
      }
    }
  }
  // One kind of key at a time, in the kinds' order, as one sort of every key by kind first met
  // them: a run's keys together, each a block of its own, were the heap's peak at the end of
  // reading (4.4 MB at 10,000 runs; issue 17, part 2). A run found a copy by one kind is neither
  // matched nor matched against by the next, as it was skipped among all keys.
  static_assert(kByStart < kByEnd && kByEnd < kByEpochs && kByEpochs < kByTraces && kByTraces < kByStartAndEnd &&
                kByStartAndEnd < kBySamples);
  for (const ExecutionKey kind : {kByStart, kByEnd, kByEpochs, kByTraces, kByStartAndEnd, kBySamples}) {
    std::vector<std::pair<std::vector<std::int64_t>, std::size_t>> keyed;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (copy_of[i] == kKept)
        for (auto& key : execution_keys(all[i], all[i].folder < as_read.size() ? as_read[all[i].folder] : AsRead{}))
          if (key.front() == kind) keyed.emplace_back(std::move(key), i);
    std::sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return in_path_order(a.second, b.second);
    });
    for (std::size_t begin = 0, end = 0; begin < keyed.size(); begin = end) {
      for (end = begin + 1; end < keyed.size() && keyed[end].first == keyed[begin].first; ++end) {
        const Run& run = all[keyed[end].second];
        if (copy_of[keyed[end].second] != kKept) continue;  // met already by another of its keys
        for (std::size_t k = begin; k < end; ++k) {
          const Run& first = all[keyed[k].second];
          // Two ids their sources wrote say two runs (scalelens run writes one for every run, and a
          // copy keeps it): test data stamped alike is not taken for copies.
          if (copy_of[keyed[k].second] != kKept || (first.run_id_written && run.run_id_written) || !evidently_one(first, run))
            continue;
          // Samples alone are no instant: the copy states the same configuration as well.
          if (keyed[end].first.front() == kBySamples &&
              (!same_identity(first, run) || (first.global_batch_size && run.global_batch_size &&
                                              *first.global_batch_size != *run.global_batch_size)))
            continue;
          const auto a = gpu_uuids(first), b = gpu_uuids(run);
          if (!a.empty() && !b.empty() && a != b) continue;
          copy_of[keyed[end].second] = keyed[k].second;
          by_execution[keyed[end].second] = keyed[end].first.front();
          break;
        }
      }
    }
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (copy_of[i] == kKept) continue;
    const Run& first = all[copy_of[i]];
    if (by_execution[i] < 0) {
      diagnostics.push_back({Severity::warning, "duplicate-run-id",
                             fmt::format("run id '{}' was already read from {}; this copy is left out", all[i].run_id, first.path),
                             all[i].path, 0, {}});
      continue;
    }
    const Run& copy = all[i];
    const std::string same = shared_instants(first, copy, by_execution[i]);
    diagnostics.push_back({Severity::warning, "duplicate-run",
                           fmt::format("the same run as {} ({}{}): a copy, counted once; this one is left out", first.path, same,
                                       gpu_uuids(copy).empty() ? "" : ", on the same GPUs"),
                           copy.path, 0, {}});
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (copy_of[i] != kKept) continue;
    if (i != kept) all[kept] = std::move(all[i]);
    ++kept;
  }
  all.erase(all.begin() + static_cast<std::ptrdiff_t>(kept), all.end());
}

// Runs that share an id and are not copies (SLURM ids repeat across clusters; a derived id may meet
// another) are told apart, so that the summary's run ids are unique: a written id shared by several
// runs becomes `<id>@<system>` for each where the systems tell them apart, else `<id>@<path>`, with a
// note; a derived id becomes the run's path as read.
void tell_shared_ids_apart(std::vector<Run>& all, std::vector<Diagnostic>& diagnostics) {
  std::vector<std::size_t> by_id(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) by_id[i] = i;
  std::stable_sort(by_id.begin(), by_id.end(), [&](std::size_t a, std::size_t b) { return all[a].run_id < all[b].run_id; });
  bool renamed = false;
  for (std::size_t begin = 0, end = 0; begin < by_id.size(); begin = end) {
    for (end = begin + 1; end < by_id.size() && all[by_id[end]].run_id == all[by_id[begin]].run_id; ++end) {
    }
    if (end - begin < 2 || all[by_id[begin]].run_id.empty()) continue;
    renamed = true;
    const std::string id = all[by_id[begin]].run_id;
    std::vector<Run*> written;
    std::set<std::string> systems;
    for (std::size_t k = begin; k < end; ++k) {
      Run& run = all[by_id[k]];
      if (!run.run_id_written) {
        run.run_id = run.path;
        continue;
      }
      written.push_back(&run);
      systems.insert(run.system);
    }
    if (written.size() < 2) continue;
    const bool by_system = systems.size() == written.size() && !systems.count("");
    std::string names;
    for (Run* run : written) {
      run->run_id = id + "@" + (by_system ? run->system : run->path);
      names += fmt::format("{}'{}' ({})", names.empty() ? "" : ", ", run->run_id, run->path);
    }
    diagnostics.push_back({Severity::note, "run-id-shared",
                           fmt::format("run id '{}' is written by {} runs that are not copies of one another (their system, "
                                       "label, world size, start or end differ): each is read, as {}",
                                       id, written.size(), names),
                           written.front()->path, 0, {}});
  }
  if (!renamed) return;
  // A new id may meet one taken (a path that is another run's written id): numbered until none does.
  for (bool again = true; again;) {
    again = false;
    std::stable_sort(by_id.begin(), by_id.end(), [&](std::size_t a, std::size_t b) { return all[a].run_id < all[b].run_id; });
    for (std::size_t j = 1; j < by_id.size(); ++j)
      if (!all[by_id[j]].run_id.empty() && all[by_id[j]].run_id == all[by_id[j - 1]].run_id) {
        all[by_id[j]].run_id += fmt::format("#{}", j);
        again = true;
      }
  }
}

}  // namespace

Study ingest(const IngestOptions& options) {
  Study study;
  study.inputs = options.inputs;
  auto readers = all_readers();
  std::optional<UserRegex> pattern;
  if (options.pattern) {
    auto compiled = UserRegex::compile(*options.pattern, "--pattern");
    if (!compiled) {
      study.diagnostics.push_back({Severity::error, "bad-pattern", compiled.error().message, {}, 0, {}});
      return study;
    }
    pattern = std::move(compiled.value());
  }
  auto matches = [&](const std::string& text) { return pattern->search(text); };

  // 1. Walk and recognize (the first process of a group only: the others get its list).
  ProcessGroup& group = options.group ? *options.group : single_process();
  const unsigned threads = default_threads(options.threads);
  std::vector<Candidate> files;
  if (group.rank() == 0) files = find_candidates(options, pattern, readers, threads, study.diagnostics);
  // What each file holds, about (a gzipped file's trailer says): for sharing files among processes,
  // and for step logs' shares of the page's budget (below).
  if (group.rank() == 0)
    parallel_for(files.size(), threads, [&](std::size_t i) {
      if (files[i].reader >= 0 && (group.size() > 1 || files[i].steps))
        files[i].weight = content_size_estimate(files[i].path, files[i].size);
    });
  if (group.size() > 1) share_candidates(group, files);
  study.files_seen = files.size();

  std::vector<std::size_t> manifests, others;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].reader < 0) continue;
    (readers[files[i].reader]->is_manifest() ? manifests : others).push_back(i);
  }
  study.files_read = manifests.size() + others.size();
  for (auto list : {&manifests, &others})
    for (std::size_t i : *list) study.bytes_read += files[i].size;

  // 3. Manifests first: they define the run folders everything else attaches to. Read in their
  // folders' order, so that the runs lie in one array in that order and become the study's list in
  // place: a study of many runs is not held twice (issue 17, part 2).
  // Their warnings keep the files' order, as before the runs were read in folders' order.
  struct ManifestFolder {
    fs::path folder;
    std::size_t file;      // in files
    std::size_t position;  // in manifests, the files' order
  };
  std::vector<ManifestFolder> manifest_folders;
  manifest_folders.reserve(manifests.size());
  for (std::size_t k = 0; k < manifests.size(); ++k)
    manifest_folders.push_back({fs::path(files[manifests[k]].path).parent_path(), manifests[k], k});
  std::stable_sort(manifest_folders.begin(), manifest_folders.end(),
                   [](const auto& a, const auto& b) { return a.folder < b.folder; });
  std::map<fs::path, std::size_t> folder_runs;  // folder -> its run in folder_run_list
  std::vector<Run> folder_run_list;
  folder_run_list.reserve(manifests.size());
  std::vector<std::vector<Diagnostic>> manifest_diagnostics(manifests.size());
  std::vector<std::size_t> folder_run_manifest;  // per run in folder_run_list: its manifest, in files
  for (auto& [folder, i, position] : manifest_folders) {
    ReadOutput out;
    readers[files[i].reader]->read(ReadContext{files[i].path, nullptr}, out);
    manifest_diagnostics[position] = std::move(out.diagnostics);
    for (auto& run : out.runs) {
      auto [it, first] = folder_runs.emplace(folder, folder_run_list.size());
      if (first) {
        run.folder = static_cast<std::uint32_t>(folder_run_list.size());
        folder_run_list.push_back(std::move(run));
        folder_run_manifest.push_back(i);
        continue;
      }
      // A folder is one run: a second manifest there (a file of another name that says the
      // run schema) would silently not count, so say which one does.
      manifest_diagnostics[position].push_back(
          {Severity::warning, "duplicate-manifest",
           fmt::format("a second run manifest in its folder; the run is {}'s, this one is left out",
                       fs::path(files[folder_run_manifest[it->second]].path).filename().string()),
           files[i].path});
    }
  }
  decltype(folder_run_manifest)().swap(folder_run_manifest);
  decltype(manifest_folders)().swap(manifest_folders);
  // The manifests' paths are not needed again (their runs hold their folders): not held through reading.
  for (std::size_t i : manifests) std::string().swap(files[i].path);
  ReadDiagnostics read_diagnostics(study.diagnostics, readers);
  for (auto& diagnostics : manifest_diagnostics) read_diagnostics.add(diagnostics);
  decltype(manifest_diagnostics)().swap(manifest_diagnostics);
  constexpr std::size_t kNoRun = std::numeric_limits<std::size_t>::max();  // a file in no run folder

  // 4. Everything else, in parallel (across the group's processes too), in batches of whole run
  // folders (IngestOptions::files_per_batch), each largest first so one big file does not come last.
  std::sort(others.begin(), others.end(), [&](std::size_t a, std::size_t b) { return files[a].size > files[b].size; });
  // Outputs are merged in path order (that of `files`), so the study does not depend on thread timing.
  std::vector<std::size_t> order(others.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return others[a] < others[b]; });
  // The files still to read, largest first (a file's place here is its k below). The list of every
  // file found, manifests and files no reader knows among them, goes before reading rather than at
  // its end: 56 bytes a file found, held through every batch (issue 17, part 2).
  std::vector<Candidate> to_read;
  to_read.reserve(others.size());
  for (std::size_t i : others) to_read.push_back(std::move(files[i]));
  decltype(files)().swap(files);
  decltype(others)().swap(others);
  decltype(manifests)().swap(manifests);
  std::vector<std::size_t> owner(to_read.size());
  {
    // The run folder a file lies in (the nearest above it), as its run's place in folder_run_list.
    auto enclosing_run = [&](const fs::path& file) -> std::size_t {
      for (fs::path dir = file.parent_path();; dir = dir.parent_path()) {
        auto it = folder_runs.find(dir);
        if (it != folder_runs.end()) return it->second;
        if (!dir.has_relative_path() || dir == dir.parent_path()) return kNoRun;
      }
    };
    for (std::size_t k = 0; k < to_read.size(); ++k) owner[k] = enclosing_run(to_read[k].path);
  }
  // From here on a file's run is its place in folder_run_list: the map of folders (each path held
  // as its parts, a few hundred bytes a run) goes before the files are read (issue 17, part 2).
  // Nothing is lost: a folder run's path is its folder's, and the runs lie in the folders' order.
  decltype(folder_runs)().swap(folder_runs);
  auto folder_run = [&](std::size_t r) -> Run& { return folder_run_list[r]; };
  // Samples reduced as they are read where the run's window is final: stated by its scalelens.json
  // (what is merged in later only fills what a run lacks), and the file's data goes to that run
  // (itwinai's trace folders go to the MLflow run of their name, whose window is its own). GPU
  // logs share one chart budget, so that charts take about the same memory whatever the study's
  // size; each series keeps its share whether it is reduced or kept, so the charts are the same.
  auto window_of = [&](std::size_t k) -> std::optional<std::pair<std::int64_t, std::int64_t>> {
    const Run* run = owner[k] != kNoRun ? &folder_run(owner[k]) : nullptr;
    if (options.keep_samples || !run || !run->start_ns || !run->end_ns ||
        !itwinai_trace_run_name(to_read[k].path).empty())
      return std::nullopt;
    return std::pair{*run->start_ns, *run->end_ns};
  };
  std::size_t gpu_files = 0;
  for (const auto& f : to_read) gpu_files += f.gpu_series;
  // Run folders whose GPU log may be summarized as it is read (IngestOptions::summarize_gpus): one
  // GPU log, and no file whose runs would be merged into the folder's run (they may fill what its
  // GPU figures depend on: its label, window, world size, sampling interval). Likewise their epochs
  // and steps are tabulated as they are read where one file gives them all (EpochRow, StepTable).
  struct FolderFiles {
    std::uint32_t gpu_logs = 0, epoch_logs = 0, step_logs = 0, run_files = 0;
  };
  const bool by_folder = options.summarize_gpus || options.tabulate_epochs || options.tabulate_steps;
  std::vector<FolderFiles> folder_files(by_folder ? folder_run_list.size() : 0);
  std::uintmax_t step_log_bytes = 0;  // of the run folders' step logs, inflated: each log's share of the page's budget
  for (std::size_t k = 0; k < to_read.size() && by_folder; ++k)
    if (owner[k] != kNoRun) {
      auto& f = folder_files[owner[k]];
      if (to_read[k].steps) step_log_bytes += to_read[k].weight;
      f.gpu_logs += to_read[k].gpu_series;
      f.epoch_logs += to_read[k].epochs;
      f.step_logs += to_read[k].steps;
      f.run_files += defines_named_runs(readers[to_read[k].reader]->name());
    }
  // Also after a clock step placed them anew (move_stepped_ends, below). Rows that ended before
  // they started (clock_step.hpp) are bad lines, said so by their reader, where they are tabulated.
  auto tabulate_rows = [&](std::size_t k, ReadOutput& out) {
    auto rows_of = [](const std::vector<Interval>& rows) {
      return std::any_of(rows.begin(), rows.end(), [](const Interval& row) { return !ended_before_started(row); });
    };
    auto drop_ended_early = [](std::vector<Interval>& rows) {
      rows.erase(std::remove_if(rows.begin(), rows.end(), ended_before_started), rows.end());
    };
    // A folder's only epoch log: its epochs as their summary reads them, a row per epoch rather
    // than an interval per rank and epoch, before the next file is read (issue 17, part 2).
    // Not where a rank lies beyond the run's world size: the summary names the ranks it saw
    // (`ranks-beyond-world-size`), which a table no longer holds.
    auto ranks_within = [&](const std::vector<Interval>& epochs) {
      const auto& world = folder_run(owner[k]).world_size;
      return !world || std::all_of(epochs.begin(), epochs.end(),
                                   [&](const Interval& e) { return e.rank < *world || ended_before_started(e); });
    };
    // Nor where its manifest states not both its start and end: its epochs' times are then the span
    // its GPU logs are checked against (run_metrics.cpp, span_to_check), which a table no longer holds.
    auto window_stated = [&] { return folder_run(owner[k]).start_ns && folder_run(owner[k]).end_ns; };
    if (options.tabulate_epochs && rows_of(out.attach.epochs) && owner[k] != kNoRun &&
        folder_files[owner[k]].epoch_logs == 1 && folder_files[owner[k]].run_files == 0 && ranks_within(out.attach.epochs) &&
        window_stated()) {
      drop_ended_early(out.attach.epochs);
      out.attach.epoch_table = tabulate_epochs(out.attach.epochs);
      out.tabulated_epochs = span_of(out.attach.epochs);
      std::vector<Interval>().swap(out.attach.epochs);
    }
    // Likewise its only step log: a row per step, and each rank's chart within the log's share of
    // the page's budget, in proportion to its size (inflated) among the run folders' step logs, so
    // that a rank's chart gets about what the page gives every chart where the ranks log alike.
    if (options.tabulate_steps && rows_of(out.attach.steps) && owner[k] != kNoRun &&
        folder_files[owner[k]].step_logs == 1 && folder_files[owner[k]].run_files == 0) {
      drop_ended_early(out.attach.steps);
      auto table = std::make_shared<StepTable>(tabulate_steps(out.attach.steps));
      std::size_t log_points = 0;  // no budget: kChartPointsPerSeries a rank
      if (options.step_chart_point_budget && step_log_bytes) {
        // In whole points, exactly (budget x size may pass 64 bits), so that logs of one size get
        // exactly budget / logs.
        __extension__ using Wide = unsigned __int128;
        log_points = std::max<std::size_t>(
            1, static_cast<std::size_t>(Wide{options.step_chart_point_budget} * to_read[k].weight / step_log_bytes));
      }
      table->ranks = rank_step_charts(out.attach.steps, log_points);
      out.attach.step_table = std::move(table);
      std::vector<Interval>().swap(out.attach.steps);
    }
  };
  auto reduce_samples = [&](std::size_t k, ReadOutput& out) {
    tabulate_rows(k, out);
    if (to_read[k].gpu_series)
      for (auto& g : out.attach.gpus)
        g.chart_points = chart_points_per_series(options.gpu_chart_point_budget, gpu_files * out.attach.gpus.size());
    // Not a log that finds the run's end stamped on its stepped clock: that end may move (below).
    const auto window = window_of(k);
    if (!window || out.end_step_ns > 0) return;
    for (auto& h : out.attach.host_series) reduce_host_series(h, window->first, window->second);
    for (auto& g : out.attach.gpus)
      reduce_gpu_series(g, window->first, window->second, g.chart_points ? g.chart_points : kChartPointsPerSeries);
    if (!options.summarize_gpus || !to_read[k].gpu_series || out.attach.gpus.empty()) return;
    const Run& run = folder_run(owner[k]);
    const FolderFiles& folder = folder_files[owner[k]];
    if (run.world_size && folder.gpu_logs == 1 && folder.run_files == 0) options.summarize_gpus(run, out.attach);
  };
  auto read_other = [&](std::size_t k) {
    ReadOutput out;
    const Run* header = owner[k] != kNoRun ? &folder_run(owner[k]) : nullptr;
    readers[to_read[k].reader]->read(ReadContext{to_read[k].path, header}, out);
    reduce_samples(k, out);
    return out;
  };
  // A run folder is plain when its files only add data to its run: none defines runs (those are
  // weighed against every file's runs, below) and none is an itwinai trace (linked by run name once
  // every run is known). A plain folder's files are merged into its run as soon as their batch is
  // read; the others' outputs are held for the merge below.
  // Nor is one whose manifest states no world size or time and that holds traces in folders below
  // its own: they may form runs of their own, below that manifest of defaults (6).
  std::vector<char> plain(folder_run_list.size(), 1);
  std::vector<char> below_manifest(to_read.size(), 0);  // per file: a trace below its manifest of defaults (asked once)
  for (std::size_t k = 0; k < to_read.size(); ++k) {
    if (owner[k] == kNoRun) continue;
    const std::string_view reader = readers[to_read[k].reader]->name();
    below_manifest[k] = reader == "kineto" && trace_below_manifest(to_read[k].path, folder_run(owner[k]));
    if (defines_named_runs(reader) || !itwinai_trace_run_name(to_read[k].path).empty() || below_manifest[k])
      plain[owner[k]] = 0;
  }
  std::vector<std::size_t> last_file_of(folder_run_list.size(), 0);  // a run folder's last file in that order
  for (std::size_t p = 0; p < order.size(); ++p)
    if (owner[order[p]] != kNoRun) last_file_of[owner[order[p]]] = p;
  // The times a run's other files stamped on a node after its clock stepped back (epochs, steps,
  // ranks' records), for move_stepped_ends (below), where the log places the step among them
  // (StepWindow): moved forward by the step as the run's end is; each file's rows said
  // as they are taken, and those it cannot place left out, not read across two clocks. Before the
  // end moves: a file read again reads as it was read first. Gives how many ranks' records moved.
  auto place_after_step = [&](std::size_t r, const ReadOutput& evidence, const std::string& log, std::size_t begin,
                              std::size_t end, auto& output_at) {
    Run& run = folder_run(r);
    const StepWindow& window = evidence.end_step_window;
    const std::int64_t start = *run.start_ns;
    const std::optional<std::int64_t> stated_end = run.end_ns;
    const double step_s = static_cast<double>(window.step_ns) * 1e-9;
    std::size_t ranks_moved = 0;
    // The log as the run folder names it (nodes/<host>/gpu.csv).
    std::string log_in_run = std::filesystem::path(log).lexically_relative(run.path).string();
    if (log_in_run.empty()) log_in_run = log;
    for (std::size_t p = begin; p < end; ++p) {
      const std::size_t k = order[p];
      if (owner[k] != r) continue;
      ReadOutput& out = *output_at(p);
      for (RankRecord& rank : out.attach.ranks) {
        // Its end stamped with the run's (scalelens run stamps both at once) moves with it.
        auto after = [&](std::int64_t t) { return window.step_ns > 0 && side_of(t, window) == StepSide::after; };
        const bool end_moves = rank.end_ns && (rank.end_ns == stated_end || after(*rank.end_ns));
        const bool start_moves = rank.start_ns && after(*rank.start_ns);
        if (end_moves) *rank.end_ns += window.step_ns;
        if (start_moves) *rank.start_ns += window.step_ns;
        ranks_moved += end_moves || start_moves;
      }
      const bool tabulated = !out.attach.epoch_table.empty() || out.attach.step_table;
      if (out.attach.epochs.empty() && out.attach.steps.empty() && !tabulated) continue;
      const std::string& path = to_read[k].path;
      if (window.step_ns == 0) {
        out.warn("clock-stepped",
                 fmt::format("the node's clock stepped back more than once while the run ran ({}, from line {}): which "
                             "of this file's times were stamped after a step cannot be told from their values; they are "
                             "read as written, and a time across a step is short by it",
                             log_in_run, evidence.end_step_line),
                 path);
        continue;
      }
      // Tabulated as it was read, it holds no times: its rows again (keeping them all until every
      // node log is read held a batch's rows, twice the memory of a study of large step logs).
      if (tabulated) {
        ReadOutput again;
        readers[to_read[k].reader]->read(ReadContext{path, &run}, again);
        out.attach.epochs = std::move(again.attach.epochs);
        out.attach.steps = std::move(again.attach.steps);
        out.attach.epoch_table.clear();
        out.attach.step_table.reset();
      }
      for (std::vector<Interval>* rows : {&out.attach.epochs, &out.attach.steps}) {
        if (rows->empty()) continue;
        const bool epochs = rows == &out.attach.epochs;
        const std::string_view what = epochs ? "epoch" : "step";
        auto name = [&](const Interval& row) { return fmt::format("{} {} of rank {}", what, row.index, row.rank); };
        auto length_s = [](const Interval& row) { return static_cast<double>(row.end_ns - row.start_ns) * 1e-9; };
        const PlacedRows placed = place_rows_after_step(*rows, window);
        const std::string_view plural = epochs ? "epochs" : "steps";
        // The reader said the rows that ended before they started as bad lines: those within which
        // the step fell are read, and its warning counts the others (or goes).
        if (placed.taken_back > 0) {
          auto said = std::find_if(out.diagnostics.begin(), out.diagnostics.end(),
                                   [&](const Diagnostic& d) { return d.code == "bad-lines" && d.path == path; });
          const std::int64_t left = said == out.diagnostics.end() ? 0 : BadLines::count_said(said->message) -
                                                                             static_cast<std::int64_t>(placed.taken_back);
          if (said != out.diagnostics.end() && left <= 0) {
            out.diagnostics.erase(said);
          } else if (said != out.diagnostics.end() && BadLines::reason_said(said->message) == kEndBeforeStart &&
                     placed.first_ended_early_taken_back) {  // its first line is read now; which is first then is not kept
            said->message = fmt::format("{} skipped after line {}, within which the clock's step back fell (read, as "
                                        "the others that ended before they started by the step)",
                                        count_of(left, "lines"), said->line);
            said->line = 0;
          } else if (said != out.diagnostics.end()) {
            said->message = BadLines::skipped(left, fmt::format("line {}", said->line), BadLines::reason_said(said->message));
          }
        }
        // The stamps the clock passed both before and after the step, in seconds into the run.
        const std::string twice = fmt::format("between {:.4g} s and {:.4g} s into the run, which the clock passed both "
                                              "before and after the step",
                                              static_cast<double>(window.new_from_ns - start) * 1e-9,
                                              static_cast<double>(window.old_until_ns - start) * 1e-9);
        if (placed.moved > 0 || placed.by_lengths > 0) {
          std::string example;
          if (const auto& taken = placed.example_taken; taken && length_s(*taken) != length_s(*placed.example_written))
            example = fmt::format(" ({} lasts {:.4g} s, not {:.4g} s)", name(*taken), length_s(*taken), length_s(*placed.example_written));
          std::string by_lengths;
          if (placed.by_lengths > 0)
            by_lengths = fmt::format("; placed by the lengths of the rank's other {}, as stamped {}: {}", plural, twice,
                                     count_of(static_cast<long long>(placed.by_lengths), plural));
          out.warn("clock-stepped",
                   fmt::format("the node's clock stepped back {:.3g} s while the run ran ({}, line {}): times stamped "
                               "after the step are taken {:.3g} s later, on the clock the run's start was stamped with, "
                               "as the log's samples after the step are: those of {}{}{}",
                               step_s, log_in_run, evidence.end_step_line, step_s,
                               count_of(static_cast<long long>(placed.moved), plural), example, by_lengths),
                   path);
        }
        if (!placed.left_out.empty()) {
          std::vector<std::string> names;
          for (std::size_t i = 0; i < placed.left_out.size() && i < 10; ++i) names.push_back(name(placed.left_out[i]));
          out.warn("clock-stepped",
                   fmt::format("the node's clock stepped back {:.3g} s while the run ran ({}, line {}): {} stamped {} "
                               "cannot be placed on either side of it (nor by the order of their rank's times, nor by "
                               "the lengths of their rank's other {}): left out, not read across two clocks ({})",
                               step_s, log_in_run, evidence.end_step_line,
                               count_of(static_cast<long long>(placed.left_out.size()), plural), twice, plural,
                               list_first(names, placed.left_out.size())),
                   path);
        }
      }
      tabulate_rows(k, out);
    }
    return ranks_moved;
  };
  // A run whose end_ns a node's log finds stamped on its clock after it stepped back
  // (ReadOutput::end_step_ns): moved forward by the step onto the clock its start was stamped with,
  // as the log's later samples are, where every GPU and host log of the run finds it so by the same
  // step (one node's gpu.csv and host.csv); another node's logs were summarized over the end as
  // stated where they were read (and so that the figures do not depend on whether samples are
  // kept, the end is left where the run has any, as where logs disagree). Said either way. A run
  // folder's files are read in one batch, so all of them are among these.
  auto move_stepped_ends = [&](std::size_t begin, std::size_t end, auto& output_at) {
    // A log of a run without an end finds its clock stepped back (ReadOutput::end_step_line): its
    // other times are placed all the same, where every GPU and host log of the run steps alike.
    auto steps_without_end = [&](std::size_t p) {
      return owner[order[p]] != kNoRun && !folder_run(owner[order[p]]).end_ns && output_at(p)->end_step_line > 0;
    };
    std::map<std::size_t, std::vector<std::size_t>> asking;  // run → the positions of its logs that find it
    for (std::size_t p = begin; p < end; ++p)
      if (owner[order[p]] != kNoRun && (output_at(p)->end_step_ns > 0 || steps_without_end(p)))
        asking[owner[order[p]]].push_back(p);
    for (const auto& [r, positions] : asking) {
      Run& run = folder_run(r);
      ReadOutput& first = *output_at(positions.front());
      const bool without_end = !run.end_ns;
      const std::int64_t step = without_end ? first.end_step_window.step_ns : first.end_step_ns;
      bool all_logs_agree = run.gpus.empty() && run.host_series.empty();
      for (std::size_t p = begin; p < end && all_logs_agree; ++p) {
        const ReadOutput& out = *output_at(p);
        if (owner[order[p]] == r && (!out.attach.gpus.empty() || !out.attach.host_series.empty()))
          all_logs_agree = without_end ? steps_without_end(p) && out.end_step_window.step_ns == step : out.end_step_ns == step;
      }
      const std::string& log = to_read[order[positions.front()]].path;
      if (without_end) {  // nothing to move but those times (another node's logs: read as written)
        if (all_logs_agree) place_after_step(r, first, log, begin, end, output_at);
        continue;
      }
      const std::int64_t start = *run.start_ns, stated = *run.end_ns;
      const double step_s = static_cast<double>(step) * 1e-9, stated_s = static_cast<double>(stated - start) * 1e-9;
      if (all_logs_agree) {
        const std::size_t ranks_moved = place_after_step(r, first, log, begin, end, output_at);
        run.end_ns = stated + step;
        first.warn("clock-stepped",
                   fmt::format("the node's clock stepped back {:.3g} s while the run ran (at line {}): scalelens.json's "
                               "end_ns{}, stamped after the step, is taken {:.3g} s later, on the clock the run's start was "
                               "stamped with, as the log's samples after the step are (the run {:.4g} s, not {:.4g} s)",
                               step_s, first.end_step_line,
                               ranks_moved ? fmt::format(" (and that of {} in ranks/)", count_of(static_cast<long long>(ranks_moved), "ranks")) : "",
                               step_s, stated_s + step_s, stated_s),
                   log, first.end_step_line);
      } else {
        first.warn("clock-stepped",
                   fmt::format("the node's clock stepped back {:.3g} s while the run ran (at line {}): scalelens.json's "
                               "end_ns was stamped after the step, {:.3g} s early on the clock the run's start was stamped "
                               "with, but is left as stated (the run's GPU or host logs of another node do not find it "
                               "so): the run's time ({:.4g} s) and energy leave out its last {:.3g} s; the node's epochs "
                               "and steps stamped after the step are read as written",
                               step_s, first.end_step_line, step_s, stated_s, step_s),
                   log, first.end_step_line);
      }
    }
  };
  std::vector<std::unique_ptr<ReadOutput>> held(to_read.size());      // outputs merged below, not in their batch
  std::vector<AsRead> as_read(folder_run_list.size());  // by run folder (Run::folder)
  // The warnings of outputs merged in their batch, by file: only files that have any (a list per
  // file was 24 bytes a file of a large study, nearly all empty).
  std::map<std::size_t, std::vector<Diagnostic>> merged_diagnostics;
  // Batches of whole folders in path order: a batch ends only where no folder it touched has a file
  // after it (a run folder may hold another's). A group of processes reads every file in one batch.
  const std::size_t per_batch = group.size() == 1 && options.files_per_batch ? options.files_per_batch : order.size();
  std::size_t begin = 0;
  do {
    std::size_t end = begin, reach = 0;
    while (end < order.size()) {
      if (owner[order[end]] != kNoRun) reach = std::max(reach, last_file_of[owner[order[end]]]);
      ++end;
      if (end - begin >= per_batch && reach < end) break;
    }
    std::vector<std::size_t> batch(order.begin() + static_cast<std::ptrdiff_t>(begin),
                                   order.begin() + static_cast<std::ptrdiff_t>(end));
    std::sort(batch.begin(), batch.end());  // largest first (others are by size), so one big file does not come last
    SharedWork<ReadOutput> work;
    // Shared out by content, not by size on disk (a gzipped file holds several times its size); only
    // rank 0 knows the files, so it weighs them and the list it sends carries the weights.
    for (std::size_t k : batch) work.sizes.push_back(to_read[k].weight);
    work.threads = threads;
    work.work = [&](std::size_t j) { return read_other(batch[j]); };
    work.name = [&](std::size_t j) { return to_read[batch[j]].path; };
    work.names_are_files = true;
    work.encode = encode_read_output;
    work.decode = decode_read_output;
    if (per_batch >= order.size())  // one batch: (done, of this process's share), as before batches
      work.progress = options.progress;
    else if (options.progress)  // one process: one count over every batch
      work.progress = [&, before = begin](std::size_t done, std::size_t) { options.progress(before + done, to_read.size()); };
    work.cancel = options.cancel;
    auto read = shared_for(group, work);
    if (group.rank() != 0) return Study{};  // rank 0 has every file's output and makes the study
    if (options.cancel && options.cancel->load()) {
      study.cancelled = true;
      return study;
    }
    auto output_at = [&](std::size_t p) -> auto& {  // each is set (nothing was cancelled)
      return read[static_cast<std::size_t>(std::lower_bound(batch.begin(), batch.end(), order[p]) - batch.begin())];
    };
    move_stepped_ends(begin, end, output_at);
    for (std::size_t p = begin; p < end; ++p) {
      const std::size_t k = order[p];
      auto& out = output_at(p);
      // Rows that ended before they started and no clock step explains: bad lines, said so by their reader.
      for (std::vector<Interval>* rows : {&out->attach.epochs, &out->attach.steps})
        rows->erase(std::remove_if(rows->begin(), rows->end(), ended_before_started), rows->end());
      if (owner[k] != kNoRun && out->tabulated_epochs.last) as_read[owner[k]].epochs = out->tabulated_epochs;
      if (owner[k] != kNoRun) as_read[owner[k]].samples += out->samples_hash;
      if (owner[k] == kNoRun || !plain[owner[k]]) {
        held[k] = std::make_unique<ReadOutput>(std::move(*out));
      } else {  // what the merge below does with a plain folder's file (it defines no run)
        if (!out->diagnostics.empty()) merged_diagnostics[k] = std::move(out->diagnostics);
        if (out->has_attachment()) merge_data_into(folder_run(owner[k]), std::move(out->attach));
        // Its path is not read again: let it go, so the next batch's data fills its place rather
        // than new memory (a file of a run folder held its path until the end of reading).
        std::string().swap(to_read[k].path);
      }
      out.reset();
    }
    if (options.give_back_between_batches && end < order.size()) give_back_freed_memory();
    begin = end;
  } while (begin < order.size());

  // 5. Which runs are kept: --pattern by name (for files whose path it did not match), then
  // --experiment and --run-names, which select MLflow runs as itwinai's own report does.
  std::set<std::string> experiments_seen, run_names_seen;
  for (std::size_t k = 0; k < held.size(); ++k) {
    if (!held[k]) continue;
    auto& runs = held[k]->runs;
    const bool by_name = !to_read[k].path_matched;
    runs.erase(std::remove_if(runs.begin(), runs.end(),
                              [&](const Run& run) {
                                const RunDetails& names = run.details();
                                if (by_name && !matches(run.label) && !matches(names.run_name) &&
                                    !matches(names.experiment) && !matches(names.experiment + "/" + names.run_name))
                                  return true;
                                if (run.format != "itwinai-mlflow") return false;
                                experiments_seen.insert(names.experiment);
                                if (options.experiment && names.experiment != *options.experiment) return true;
                                run_names_seen.insert(names.run_name);
                                return !options.run_names.empty() &&
                                       std::find(options.run_names.begin(), options.run_names.end(), names.run_name) ==
                                           options.run_names.end();
                              }),
               runs.end());
  }
  if (options.experiment && !experiments_seen.count(*options.experiment)) {
    std::string names;
    for (const auto& e : experiments_seen) names += (names.empty() ? "'" : ", '") + e + "'";
    study.diagnostics.push_back({Severity::warning, "experiment-not-found",
                                 fmt::format("--experiment '{}': no MLflow experiment of that name was found{}", *options.experiment,
                                             names.empty() ? std::string(" (no MLflow store was read)") : "; found: " + names),
                                 {}, 0, {}});
  }
  for (const auto& name : options.run_names)
    if (!run_names_seen.count(name))
      study.diagnostics.push_back({Severity::warning, "run-name-not-found",
                                   fmt::format("--run-names: no MLflow run named '{}'{}", name,
                                               options.experiment ? " in experiment '" + *options.experiment + "'" : ""),
                                   {}, 0, {}});

  // A manifest above several runs that their own files define (an MLflow store, a folder of
  // itwinai CSVs) holds defaults for them; above exactly one (a run folder's own MLPerf log) it is
  // that run.
  std::vector<std::size_t> runs_below(folder_run_list.size(), 0);
  for (std::size_t k = 0; k < held.size(); ++k)
    if (owner[k] != kNoRun && held[k]) runs_below[owner[k]] += held[k]->runs.size();

  // 6. Merge in path order; the warnings of files merged in their batch keep their place.
  std::vector<Run> standalone;
  std::vector<bool> defaults_only(folder_run_list.size(), false);
  std::vector<std::pair<std::size_t, std::string>> itwinai_traces;  // (output, run name), linked below
  std::vector<LooseInput> loose_traces;  // Kineto traces without a scalelens.json: runs of their own
  std::map<std::size_t, std::vector<LooseInput>> traces_below_defaults;  // by the manifest above them
  std::map<std::size_t, std::vector<LooseInput>> gpu_logs_below_defaults;  // likewise, nvidia-smi logs
  // The one run (an MLPerf log) with epochs in a run folder, by folder; and the file that gave the
  // folder its own epochs (its epochs.csv).
  struct RunFromFile {
    std::string file;
    Run run;
  };
  std::map<std::size_t, std::vector<RunFromFile>> epochs_beside;
  std::map<std::size_t, std::string> epoch_file;
  std::vector<LooseInput> loose_gpu_logs;  // nvidia-smi logs without one: their traces' run, or a run
  for (std::size_t k : order) {
    if (!held[k]) {
      if (auto it = merged_diagnostics.find(k); it != merged_diagnostics.end()) read_diagnostics.add(it->second);
      continue;
    }
    auto& out = *held[k];
    const auto& path = to_read[k].path;
    const std::string_view reader = readers[to_read[k].reader]->name();
    read_diagnostics.add(out.diagnostics);
    Run* target = owner[k] != kNoRun ? &folder_run(owner[k]) : nullptr;
    for (auto& run : out.runs) {
      if (target && runs_below[owner[k]] == 1) {
        // Its epochs are weighed against the folder's own once all of these are in (below).
        if (!run.epochs.empty()) epochs_beside[owner[k]].push_back({path, std::move(run)});
        else merge_run_into(*target, std::move(run));
        continue;
      }
      if (target) {
        fill_defaults(run, *target);
        defaults_only[owner[k]] = true;
      }
      standalone.push_back(std::move(run));
    }
    if (!out.has_attachment()) {
      held[k].reset();  // merged: let it go now, so the study and its outputs are not held together
      continue;
    }
    if (auto name = itwinai_trace_run_name(path); !name.empty() && (!target || runs_below[owner[k]] > 1)) {
      itwinai_traces.emplace_back(k, name);
      continue;  // linked to its MLflow run below, once every run is known
    } else if (const bool own_world = reader == "kineto" && out.attach.breakdown.size() == 1 &&
                                      out.attach.breakdown.front().world_size;
               target && own_world && below_manifest[k] && defaults_for_traces(*target)) {
      // (Its manifest asked again: a log beside it, merged since, may have given it a world size.)
      // Merged into such a manifest's run, the traces of several jobs below it became one run:
      // they form runs as they would without it (DESIGN.md), unless its folder holds data of its
      // own (below).
      traces_below_defaults[owner[k]].push_back({path, std::move(out.attach)});
    } else if (target && reader == "nvsmi" && !out.attach.gpus.empty() && defaults_for_traces(*target)) {
      gpu_logs_below_defaults[owner[k]].push_back({path, std::move(out.attach)});  // the GPUs of those traces' runs
    } else if (target) {
      if (!out.attach.epochs.empty() && !epoch_file.count(owner[k])) epoch_file[owner[k]] = path;
      merge_data_into(*target, std::move(out.attach));
    } else if (own_world) {
      loose_traces.push_back({path, std::move(out.attach)});
    } else if (reader == "nvsmi" && !out.attach.gpus.empty()) {
      loose_gpu_logs.push_back({path, std::move(out.attach)});
    } else if (reader == "kineto") {
      study.diagnostics.push_back({Severity::warning, "no-manifest",
                                   fmt::format("a trace without a world size (distributedInfo.world_size missing, or not a "
                                               "whole number from 1 to {}) and no scalelens.json above it, so its run is "
                                               "unknown; write one beside it, e.g. {{\"label\": \"ddp\", \"world_size\": 8}}",
                                               limits::kMaxWorldSize),
                                   path, 0, {}});
    } else {
      study.diagnostics.push_back({Severity::warning, "no-manifest",
                                   "no scalelens.json above this file, so its label and world size are unknown; "
                                   "write one beside it, e.g. {\"label\": \"ddp\", \"world_size\": 8}",
                                   path, 0, {}});
    }
    held[k].reset();
  }
  read_diagnostics.count_who_said_it();
  // itwinai's traces belong to the MLflow train run of that name.
  for (auto& [k, name] : itwinai_traces) {
    const auto& path = to_read[k].path;
    std::vector<Run*> named;
    for (auto& run : standalone)
      if (run.format == "itwinai-mlflow" && run.details().run_name == name) named.push_back(&run);
    if (named.size() == 1) {
      merge_data_into(*named[0], std::move(held[k]->attach));
      continue;
    }
    if (owner[k] != kNoRun && named.empty()) {
      merge_data_into(folder_run(owner[k]), std::move(held[k]->attach));
      continue;
    }
    study.diagnostics.push_back(
        {Severity::warning, named.empty() ? "no-manifest" : "ambiguous-trace",
         named.empty() ? fmt::format("itwinai profiler trace of run '{}', but no MLflow run of that name was read (and no "
                                     "scalelens.json is above it); left out",
                                     name)
                       : fmt::format("itwinai profiler trace of run '{}', but {} MLflow runs have that name; it cannot tell "
                                     "which, so it is left out",
                                     name, named.size()),
         path, 0, {}});
  }
  decltype(held)().swap(held);  // all of it is merged by now: the emptied outputs go
  decltype(merged_diagnostics)().swap(merged_diagnostics);
  decltype(to_read)().swap(to_read);  // and the files read (paths are most of a small run's memory)

  // A run folder's own epochs (its epochs.csv) and those of a log in it (an MLPerf log of the same
  // job) are one run's: the folder's are used, the log's only where the folder has none. Where both
  // have epochs and their mean epoch times differ by more than 10%, that is said with both files'
  // figures (merged, the longer of each epoch silently made 10 s epochs 15 s).
  for (auto& [r, logs] : epochs_beside) {
    Run& target = folder_run_list[r];
    for (auto& [file, run] : logs) {
      if (!target.epochs.empty()) {
        say_epoch_sources_disagree(target, epoch_file.count(r) ? epoch_file[r] : target.path, run, file, study.diagnostics);
        std::vector<Interval>().swap(run.epochs);
      }
      merge_run_into(target, std::move(run));
    }
  }
  decltype(epochs_beside)().swap(epochs_beside);

  // Traces below a manifest of defaults: runs of their own as without it, with its label (else
  // --label) and what else it states. Where its folder holds a run's own data (epochs.csv beside a
  // minimal `{"label": "ddp"}`), they are that run's traces, as before.
  // Its nvidia-smi logs go with those traces, as they would without it ("Traces alone"); with no
  // such traces, or with data of its own, they are its run's, as before.
  std::set<std::size_t> traces_form_runs;  // the manifests of defaults with no data of their own
  for (const auto& [r, traces] : traces_below_defaults)
    if (!run_has_data(folder_run_list[r])) traces_form_runs.insert(r);
  for (auto& [r, logs] : gpu_logs_below_defaults) {
    Run& manifest = folder_run_list[r];
    const bool to_trace_runs = traces_form_runs.count(r) > 0;
    for (auto& log : logs) {
      if (to_trace_runs) loose_gpu_logs.push_back(std::move(log));
      else merge_data_into(manifest, std::move(log.data));
    }
  }
  decltype(gpu_logs_below_defaults)().swap(gpu_logs_below_defaults);
  std::vector<Run> trace_runs;
  for (auto& [r, traces] : traces_below_defaults) {
    Run& manifest = folder_run_list[r];
    if (!traces_form_runs.count(r)) {
      for (auto& t : traces) merge_data_into(manifest, std::move(t.data));
      continue;
    }
    defaults_only[r] = true;
    const bool labelled = !manifest.label.empty();
    auto runs = runs_from_traces(std::move(traces), labelled ? std::optional<std::string>(manifest.label) : options.defaults.label,
                                 study.diagnostics, labelled ? "the scalelens.json above them" : "--label");
    for (auto& run : runs) fill_defaults(run, manifest);
    append(trace_runs, runs);
  }
  decltype(traces_below_defaults)().swap(traces_below_defaults);

  // A manifest whose folder held only other runs' data defined no run of its own.
  std::vector<bool> no_run(folder_run_list.size(), false);
  for (std::size_t r = 0; r < folder_run_list.size(); ++r)
    if (defaults_only[r] && !run_has_data(folder_run_list[r])) no_run[r] = true;

  // A rank's trace counted once per run (a copied or rerun trace beside it would double its figures).
  for (std::size_t r = 0; r < folder_run_list.size(); ++r)
    if (!no_run[r]) drop_duplicate_traces(folder_run_list[r], folder_run_list[r].path, study.diagnostics);
  std::erase_if(folder_run_list, [&](const Run& run) { return no_run[run.folder]; });

  {
    auto runs = runs_from_traces(std::move(loose_traces), options.defaults.label, study.diagnostics);
    append(trace_runs, runs);
  }
  attach_gpu_logs(std::move(loose_gpu_logs), trace_runs, folder_run_list, options.defaults.label, study.diagnostics);
  append(standalone, trace_runs);

  // Two MLflow experiments in one study: the experiment is part of each run's identity.
  std::set<std::string> experiments;
  for (const auto& run : standalone)
    if (!run.details().experiment.empty()) experiments.insert(run.details().experiment);
  if (experiments.size() > 1)
    for (auto& run : standalone)
      if (!run.details().experiment.empty()) run.label = run.details().experiment + "/" + run.label;

  // 7. One list of runs; a run read twice (a copied folder or file) counts once, and runs that share
  // an id without being copies are told apart. The folders' runs are that list already; the copies
  // are dropped in place: a study of many runs is not held twice (issue 17, part 2).
  for (auto& run : folder_run_list)
    if (!run.run_id_written) run.run_id = id_from_path(run, options.inputs);
  std::vector<Run> all = std::move(folder_run_list);
  if (!standalone.empty()) all.reserve(all.size() + standalone.size());  // exactly, not doubled
  append(all, standalone);
  decltype(standalone)().swap(standalone);
  drop_copies(all, as_read, study.diagnostics);
  tell_shared_ids_apart(all, study.diagnostics);
  study.runs = std::move(all);
  // The batch the user stated, where a run states none.
  for (auto& run : study.runs) {
    if (run.global_batch_size || !run.world_size) continue;
    if (options.defaults.global_batch_size) {
      run.global_batch_size = options.defaults.global_batch_size;
      fill(run.scaling, std::optional<std::string>("strong"));
      run.detected_from["global_batch_size"] = "--global-batch-size";
    } else if (options.defaults.batch_per_gpu) {
      // Per GPU the run is placed at: 8 ranks seen in a run stated at 4 ran 8 GPUs' batches.
      run.global_batch_size = *options.defaults.batch_per_gpu * *placed_world_size(run);
      fill(run.scaling, std::optional<std::string>("weak"));
      run.detected_from["global_batch_size"] = "--batch-per-gpu x world size";
    }
  }
  return study;
}

}  // namespace scalelens
