// itwinai's older `scalability-metrics/` CSV layouts (docs/DESIGN.md, "Inputs"; docs/inputs.md,
// "itwinai"), as itwinai writes them (interTwin-eu/itwinai: loggers.py EpochTimeTracker,
// torch/monitoring/monitoring.py, torch/profiling/profiler.py):
//   v0.2.3-v0.3.0, flat:        scalability-metrics/epoch-time/epochtime_{strategy}_{N}N.csv
//                                scalability-metrics/gpu-energy-data/{strategy}_{num_global_gpus}.csv
//                                scalability-metrics/communication-data/{strategy}_{num_gpus}_{rank}.csv
//   v0.3.1-v0.3.3, per run:      scalability-metrics/<run_id>/{epoch-time,gpu-energy-data,computation-data}/...
//   v0.3.4-rc1 and later, per run: scalability-metrics/<run_name>/epoch-time/epochtime_{strategy}_{W}N.csv
//                                (GPU data in MLflow) and .../computation-data/
// Columns:
//   epoch-time      epoch_id,time,name,nodes    time = seconds of that epoch, name = strategy, nodes =
//                                               SLURM_NNODES ("unk" or -1 when unset); from v0.3.4-rc1
//                   epoch_id,time,name,workers  workers = global world size. Written by the main worker
//                                               only: these are rank 0's epoch times
//   gpu-energy-data sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval
//                                               one row per GPU and sample, nodes' rows gathered one node
//                                               after another; power W, utilization %, interval s; no times
//   computation-data / communication-data: profiler key averages (profiler_averages.hpp)
// The files of one folder that belong to one run are paired by strategy and GPU count (below).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/csv_rows.hpp"
#include "ingest/itwinai/profiler_averages.hpp"
#include "ingest/reader.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kEpochDir = "epoch-time";
constexpr std::string_view kEnergyDir = "gpu-energy-data";
constexpr std::array<std::string_view, 2> kAveragesDirs{"computation-data", "communication-data"};
constexpr std::size_t kSniffBytes = 64 * 1024;
// Beyond this a time is junk, and its nanoseconds would overflow.
constexpr double kMaxSeconds = limits::kMaxRunSeconds;

enum class Kind { none, epoch_time, energy, averages, backup };

const std::vector<std::string_view> kEpochColumns{"epoch_id", "time", "name"};
const std::vector<std::string_view> kEnergyColumns{"sample_idx", "local_rank", "node_idx", "num_global_gpus",
                                                   "strategy", "probing_interval", "utilization", "power"};

bool has_all(const std::vector<std::string_view>& header, const std::vector<std::string_view>& names) {
  for (auto n : names)
    if (find_column(header, n) < 0) return false;
  return true;
}

bool in_averages_dir(const fs::path& file) {
  const auto dir = file.parent_path().filename().string();
  return std::find(kAveragesDirs.begin(), kAveragesDirs.end(), dir) != kAveragesDirs.end();
}

Kind kind_of_header(const fs::path& file, std::string_view line) {
  std::vector<std::string_view> header;
  split_csv(line, header);
  // `generate-scalability-report --do-backup` (itwinai v0.3.x) writes every run's rows of the
  // report into one file under backup-scalability-metrics/, through pandas' to_csv with its index:
  // a first column without a name. Read as a run, it was one more repeat holding all of them.
  const bool indexed = !header.empty() && trim(header[0]).empty();
  if (indexed && (has_all(header, kEnergyColumns) || has_all(header, kEpochColumns))) return Kind::backup;
  if (has_all(header, kEnergyColumns)) return Kind::energy;
  // `nodes` until v0.3.4-rc1 renamed it `workers` (and changed its meaning to GPUs).
  if (has_all(header, kEpochColumns) && (find_column(header, "nodes") >= 0 || find_column(header, "workers") >= 0))
    return Kind::epoch_time;
  // Profiler averages only in itwinai's folders: MLflow's copy is read with its run.
  if (in_averages_dir(file) && is_profiler_averages_header(line)) return Kind::averages;
  return Kind::none;
}

// What a file's header and first data row say about its run.
struct Sniff {
  fs::path path;
  Kind kind = Kind::none;
  std::string strategy;
  std::optional<int> nodes, workers;  // epoch-time
  std::optional<int> gpus;            // energy: num_global_gpus; averages: num_gpus
};

Sniff sniff(const fs::path& path) {
  Sniff s{path, Kind::none, {}, {}, {}, {}};
  auto head = read_head_inflated(path, kSniffBytes);  // BOM dropped, as the other readers see the file
  if (!head) return s;
  LineCursor lines(head.value());
  std::string_view line;
  if (!lines.next(line)) return s;
  s.kind = kind_of_header(path, line);
  if (s.kind == Kind::none) return s;
  std::vector<std::string_view> header, row;
  split_csv(line, header);
  auto positive = [](std::string_view v) -> std::optional<int> {
    auto n = parse_int(trim(v));
    return n && *n > 0 && *n < 100'000'000 ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
  };
  while (lines.next(line)) {
    split_csv(line, row);
    if (row.size() != header.size()) continue;
    auto field = [&](std::string_view name) {
      int c = find_column(header, name);
      return c < 0 ? std::string_view{} : trim(row[c]);
    };
    switch (s.kind) {
      case Kind::epoch_time:
        s.strategy = std::string(field("name"));
        s.nodes = positive(field("nodes"));  // "unk" or -1 where SLURM_NNODES was not set
        s.workers = positive(field("workers"));
        break;
      case Kind::energy:
        s.strategy = std::string(field("strategy"));
        s.gpus = positive(field("num_global_gpus"));
        break;
      default:
        s.strategy = std::string(field("strategy"));
        s.gpus = positive(field("num_gpus"));
        break;
    }
    break;
  }
  return s;
}

// Distinct node_idx values of an energy file (its rows are gathered node after node, so the
// first bytes do not show them all).
int energy_file_nodes(const fs::path& path) {
  auto text = read_file(path);
  if (!text) return 0;
  LineCursor lines(text.value());
  std::string_view line;
  std::vector<std::string_view> fields;
  if (!lines.next(line)) return 0;
  split_csv(line, fields);
  const int col = find_column(fields, "node_idx");
  std::set<std::int64_t> nodes;
  while (col >= 0 && lines.next(line)) {
    split_csv(line, fields);
    if (static_cast<int>(fields.size()) > col)
      if (auto n = parse_int(trim(fields[col]))) nodes.insert(*n);
  }
  return static_cast<int>(nodes.size());
}

// One run of an itwinai scalability-metrics folder: the file that defines it and the others that
// belong to it.
struct PlannedRun {
  fs::path defining;
  std::optional<fs::path> epoch_file, energy_file;
  std::vector<fs::path> averages_files;
  std::string strategy;
  std::optional<int> world_size;
  std::string world_size_from;
};

struct FolderPlan {
  std::vector<PlannedRun> runs;
};

std::vector<Sniff> sniff_folder(const fs::path& dir, Kind kind) {
  std::vector<Sniff> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    auto s = sniff(it->path());
    if (s.kind == kind) found.push_back(std::move(s));
  }
  std::sort(found.begin(), found.end(), [](const Sniff& a, const Sniff& b) { return a.path < b.path; });
  return found;
}

// Pairs the files of `root` (the folder above epoch-time/, gpu-energy-data/, ...). One epoch-time
// and one energy file of a strategy are one run (itwinai's per-run folders); where a strategy has
// several (the flat layout, one file per scale), an epoch-time file pairs with the energy file of
// its strategy and GPU count: `workers`, or nodes x GPUs per node (from the manifest above, else
// the energy file's distinct node_idx must equal the nodes). Profiler averages join the run of
// their strategy and num_gpus; without one they are a run of their own.
FolderPlan plan_folder(const fs::path& root, const Run* manifest) {
  FolderPlan plan;
  auto epochs = sniff_folder(root / kEpochDir, Kind::epoch_time);
  auto energies = sniff_folder(root / kEnergyDir, Kind::energy);
  std::vector<bool> energy_used(energies.size(), false);
  const std::optional<int> per_node = manifest ? manifest->gpus_per_node : std::nullopt;
  std::map<std::string, int> epochs_of, energies_of;
  for (const auto& e : epochs) ++epochs_of[e.strategy];
  for (const auto& e : energies) ++energies_of[e.strategy];
  std::map<std::size_t, int> node_counts;  // energy index -> distinct nodes, read when needed
  auto nodes_of = [&](std::size_t i) {
    auto it = node_counts.find(i);
    if (it == node_counts.end()) it = node_counts.emplace(i, energy_file_nodes(energies[i].path)).first;
    return it->second;
  };

  for (const auto& e : epochs) {
    PlannedRun run{e.path, e.path, std::nullopt, {}, e.strategy, std::nullopt, {}};
    std::vector<std::size_t> matches;
    for (std::size_t i = 0; i < energies.size(); ++i) {
      if (energy_used[i] || energies[i].strategy != e.strategy || e.strategy.empty()) continue;
      const auto& g = energies[i].gpus;
      bool same = false;
      if (epochs_of[e.strategy] == 1 && energies_of[e.strategy] == 1) same = true;
      else if (e.workers) same = g == e.workers;
      else if (e.nodes && per_node) same = g && *g == *e.nodes * *per_node;
      else if (e.nodes) same = nodes_of(i) == *e.nodes;
      if (same) matches.push_back(i);
    }
    if (matches.size() == 1) {
      energy_used[matches[0]] = true;
      run.energy_file = energies[matches[0]].path;
      if (energies[matches[0]].gpus) {
        run.world_size = energies[matches[0]].gpus;
        run.world_size_from = fmt::format("num_global_gpus in {}", energies[matches[0]].path.filename().string());
      }
    }
    if (!run.world_size && e.workers) {
      run.world_size = e.workers;
      run.world_size_from = "workers in the epoch-time file (itwinai v0.3.4-rc1 and later: the global world size)";
    } else if (!run.world_size && e.nodes && per_node) {
      run.world_size = *e.nodes * *per_node;
      run.world_size_from = "nodes in the epoch-time file x gpus_per_node in scalelens.json";
    } else if (!run.world_size && manifest && manifest->world_size) {
      run.world_size = manifest->world_size;
      run.world_size_from = "scalelens.json above the epoch-time file";
    }
    plan.runs.push_back(std::move(run));
  }
  for (std::size_t i = 0; i < energies.size(); ++i) {
    if (energy_used[i]) continue;
    plan.runs.push_back({energies[i].path, std::nullopt, energies[i].path, {}, energies[i].strategy, energies[i].gpus,
                         fmt::format("num_global_gpus in {}", energies[i].path.filename().string())});
  }
  for (auto dir : kAveragesDirs) {
    for (auto& a : sniff_folder(root / dir, Kind::averages)) {
      auto it = std::find_if(plan.runs.begin(), plan.runs.end(), [&](const PlannedRun& r) {
        return r.strategy == a.strategy && r.world_size == a.gpus;
      });
      if (it == plan.runs.end()) {
        plan.runs.push_back({a.path, std::nullopt, std::nullopt, {}, a.strategy, a.gpus,
                             fmt::format("num_gpus in {}", a.path.filename().string())});
        it = std::prev(plan.runs.end());
      }
      it->averages_files.push_back(a.path);
    }
  }
  return plan;
}

bool in_itwinai_folder(const fs::path& file) {
  const auto dir = file.parent_path().filename().string();
  return dir == kEpochDir || dir == kEnergyDir || in_averages_dir(file);
}

// "<folder above epoch-time/>/<file stem>": unique per run, and the same for copies of one study.
std::string run_id_of(const fs::path& file) {
  return fmt::format("{}/{}", file.parent_path().parent_path().filename().string(), file.stem().string());
}

struct EpochFile {
  std::string name;
  std::optional<int> nodes;
  std::vector<Interval> epochs;
};

std::optional<EpochFile> parse_epoch_file(const fs::path& path, ReadOutput& out) {
  auto text = read_file(path);
  if (!text) {
    out.warn("unreadable-file", text.error().message, path);
    return std::nullopt;
  }
  static constexpr std::array<std::string_view, 4> cols{"epoch_id", "time", "name", "nodes"};
  EpochFile f;
  BadLines bad, implausible;
  RepeatedEpochs repeated;
  // Written whole at the end of training, so a last line without its newline is still complete.
  // `nodes` is absent from v0.3.4-rc1 on (`workers`, read by the plan, took its place).
  const bool read = for_each_row(text.value(), cols, 3, out, path, bad, [&](const auto& row, std::int64_t line) {
    auto epoch = parse_int(row[0]);
    auto seconds = parse_double(row[1]);
    if (!epoch || !seconds || *seconds < 0 || *seconds > kMaxSeconds)
      return bad.add(line, fmt::format("epoch_id '{}' or time '{}' is not a number of seconds", trim(row[0]), trim(row[1])));
    if (!limits::lasts_some_time(*seconds))
      return implausible.add(line, fmt::format("epoch {} lasts {:g} s, no time once in nanoseconds; the line is left out", *epoch, *seconds));
    if (f.name.empty()) {
      f.name = std::string(trim(row[2]));
      // SLURM_NNODES, or "unk"/-1 where it was not set.
      if (auto n = parse_int(row[3]); n && *n > 0) {
        if (*n <= limits::kMaxNodes) f.nodes = static_cast<int>(*n);
        else implausible.add(line, fmt::format("nodes {} is beyond any machine (at most {})", *n, limits::kMaxNodes));
      }
    }
    // The file gives durations only (model: start 0, end = duration).
    f.epochs.push_back({0, *epoch, 0, std::llround(*seconds * 1e9), std::nullopt});
    repeated.add(*epoch, line);
  }, LastLine::complete);
  if (!read) return std::nullopt;
  bad.report(out, path);
  implausible.report_implausible(out, path);
  repeated.report(out, path);
  return f;
}

struct EnergyFile {
  std::string strategy;
  std::optional<int> world_size;
  std::optional<double> interval_s;
  int nodes = 0, gpus_per_node = 0;
  std::vector<GpuSeries> gpus;
};

std::optional<EnergyFile> parse_energy_file(const fs::path& path, ReadOutput& out) {
  auto text = read_file(path);
  if (!text) {
    out.warn("unreadable-file", text.error().message, path);
    return std::nullopt;
  }
  static constexpr std::array<std::string_view, 8> cols{"sample_idx", "utilization", "power", "local_rank",
                                                        "node_idx", "num_global_gpus", "strategy", "probing_interval"};
  enum { c_sample, c_util, c_power, c_local, c_node, c_world, c_strategy, c_interval };
  EnergyFile f;
  BadLines bad, implausible;
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> series_of;  // (node_idx, local_rank)
  std::set<std::int64_t> nodes, local_ranks;
  // Empty = missing (pandas writes NaN so); anything else must be a number.
  auto measure = [](std::string_view v, float& into) {
    v = trim(v);
    if (v.empty()) return true;
    auto d = parse_double(v);
    if (!d || std::abs(*d) > 1e30) return false;  // beyond float's range: junk
    into = static_cast<float>(*d);
    return true;
  };
  const bool read = for_each_row(text.value(), cols, cols.size(), out, path, bad, [&](const auto& row, std::int64_t line) {
    auto sample_idx = parse_int(row[c_sample]);
    auto local = parse_int(row[c_local]);
    auto node = parse_int(row[c_node]);
    auto world = parse_int(row[c_world]);
    auto interval = parse_double(row[c_interval]);
    GpuSample s;
    if (!sample_idx || !local || !node || !world || !interval || *sample_idx < 0 || *local < 0 || *node < 0 ||
        *interval <= 0 || static_cast<double>(*sample_idx) * *interval > kMaxSeconds ||
        !measure(row[c_util], s.util_pct) || !measure(row[c_power], s.power_w))
      return bad.add(line, "a field is not a number");
    // Readings and counts beyond physical limits (model/limits.hpp) are left out, the rest kept.
    // Each sample counts for the probing interval in the energy: one that cannot be leaves the line out.
    if (!limits::valid_sampling_interval(*interval))
      return implausible.add(line, fmt::format("probing_interval {:g} s is not {} s; the line is left out", *interval,
                                               limits::sampling_interval_range()));
    if (limits::bad_power(s.power_w)) {
      implausible.add(line, fmt::format("power {:g} is outside 0…{:g} W per GPU", s.power_w, limits::kMaxGpuPowerW));
      s.power_w = kMissing;
    }
    if (limits::bad_percent(s.util_pct)) {
      implausible.add(line, fmt::format("utilization {:g} is outside 0…100 %", s.util_pct));
      s.util_pct = kMissing;
    }
    if (*local >= limits::kMaxPerNode || *node >= limits::kMaxNodes)
      return implausible.add(line, fmt::format("local_rank {} or node_idx {} is beyond any machine; the line is left out", *local, *node));
    if (f.strategy.empty()) {
      f.strategy = std::string(trim(row[c_strategy]));
      if (limits::valid_count(static_cast<double>(*world), static_cast<double>(limits::kMaxWorldSize)))
        f.world_size = static_cast<int>(*world);
      else
        implausible.add(line, fmt::format("num_global_gpus {} is not from 1 to {}; the world size is left unknown", *world,
                                          limits::kMaxWorldSize));
      f.interval_s = *interval;
    }
    // No timestamps in this format: sample_idx × probing_interval from the start of monitoring.
    s.t_ns = std::llround(static_cast<double>(*sample_idx) * *interval * 1e9);
    auto [it, inserted] = series_of.emplace(std::pair(*node, *local), f.gpus.size());
    if (inserted) {
      GpuSeries g;
      // The file has node numbers, not host names; "node<i>" keeps GPUs of different nodes apart.
      g.node = fmt::format("node{}", *node);
      g.index = static_cast<int>(*local);
      g.source = path.string();
      g.nominal_timestamps = true;
      f.gpus.push_back(std::move(g));
    }
    f.gpus[it->second].samples.push_back(s);
    nodes.insert(*node);
    local_ranks.insert(*local);
  }, LastLine::complete);
  if (!read) return std::nullopt;
  bad.report(out, path);
  implausible.report_implausible(out, path);
  for (auto& g : f.gpus)
    std::stable_sort(g.samples.begin(), g.samples.end(),
                     [](const GpuSample& a, const GpuSample& b) { return a.t_ns < b.t_ns; });
  f.nodes = static_cast<int>(nodes.size());
  f.gpus_per_node = static_cast<int>(local_ranks.size());
  return f;
}

void add_energy(Run& run, EnergyFile&& e, const fs::path& path) {
  if (e.world_size) {
    run.world_size = e.world_size;
    run.detected_from["world_size"] = fmt::format("num_global_gpus in {}", path.filename().string());
  }
  if (!run.nodes && e.nodes > 0) run.nodes = e.nodes;
  if (e.gpus_per_node > 0) run.gpus_per_node = e.gpus_per_node;
  run.sampling_interval_s = e.interval_s;
  for (auto& g : e.gpus) run.gpus.push_back(std::move(g));
}

class ItwinaiCsvReader final : public Reader {
 public:
  std::string_view name() const override { return "itwinai_csv"; }

  bool recognizes(const fs::path& path, std::string_view head) const override {
    LineCursor lines(head);
    std::string_view first;
    return lines.next(first) && kind_of_header(path, first) != Kind::none;
  }

  void read(const ReadContext& ctx, ReadOutput& out) const override {
    if (sniff(ctx.file).kind == Kind::backup) {
      out.diagnostics.push_back({Severity::note, "itwinai-backup",
                                 "a backup of the rows of every run that itwinai's generate-scalability-report --do-backup "
                                 "read (a pandas index first); left out: the runs are read from their own files",
                                 ctx.file.string(), 0, {}});
      return;
    }
    PlannedRun planned;
    if (in_itwinai_folder(ctx.file)) {
      auto plan = plan_folder(ctx.file.parent_path().parent_path(), ctx.enclosing);
      auto it = std::find_if(plan.runs.begin(), plan.runs.end(), [&](const PlannedRun& r) { return r.defining == ctx.file; });
      if (it == plan.runs.end()) return;  // read with the file that defines its run
      planned = std::move(*it);
      // One run in the folder: the folder is the run (itwinai's per-run layout).
      if (plan.runs.size() == 1 && (planned.energy_file || !planned.averages_files.empty()) && planned.epoch_file)
        planned.defining = ctx.file.parent_path().parent_path();
    } else {
      // Outside itwinai's folder names: the file alone.
      auto s = sniff(ctx.file);
      planned.defining = ctx.file;
      planned.strategy = s.strategy;
      if (s.kind == Kind::epoch_time) planned.epoch_file = ctx.file;
      else if (s.kind == Kind::energy) planned.energy_file = ctx.file;
      else planned.averages_files.push_back(ctx.file);
      if (s.kind != Kind::epoch_time) planned.world_size = s.gpus;
      else if (s.workers) planned.world_size = s.workers;
      planned.world_size_from = planned.world_size ? "the file's own column" : "";
    }

    Run run;
    run.format = "itwinai-csv";
    run.label = planned.strategy;
    run.path = planned.defining.string();
    run.run_id = run_id_of(planned.epoch_file ? *planned.epoch_file
                           : planned.energy_file ? *planned.energy_file
                                                 : planned.averages_files.front());
    if (planned.epoch_file) {
      auto epochs = parse_epoch_file(*planned.epoch_file, out);
      if (!epochs) return;
      if (epochs->epochs.empty() && !planned.energy_file) {
        out.warn("no-epochs", "itwinai epoch-time file without a usable epoch line; left out", *planned.epoch_file);
        return;
      }
      if (!epochs->name.empty()) run.label = epochs->name;
      run.nodes = epochs->nodes;
      run.epochs = std::move(epochs->epochs);
    }
    if (planned.energy_file)
      if (auto energy = parse_energy_file(*planned.energy_file, out)) add_energy(run, std::move(*energy), *planned.energy_file);
    if (!run.world_size && planned.world_size) {
      run.world_size = planned.world_size;
      run.detected_from["world_size"] = planned.world_size_from;
    }
    for (const auto& f : planned.averages_files) {
      if (auto sums = read_profiler_averages(f, out)) add_to(run.details_to_fill().profiler_averages, *sums);
    }
    // A scalelens.json above it that could not be read says so itself (`bad-manifest`), once.
    if (!run.world_size && !(ctx.enclosing && ctx.enclosing->manifest_unread))
      out.warn("unknown-world-size",
               "world size unknown: an itwinai epoch-time file records the node count but not the GPUs per node, "
               "and no gpu-energy-data file of its strategy and node count, nor a scalelens.json above it with "
               "gpus_per_node, gives it, so speedup, efficiency and per-GPU throughput cannot be computed for this "
               "run; write a scalelens.json above it, e.g. {\"gpus_per_node\": 4}",
               planned.epoch_file ? *planned.epoch_file : ctx.file);
    out.runs.push_back(std::move(run));
  }
};

}  // namespace

std::unique_ptr<Reader> make_itwinai_csv_reader() { return std::make_unique<ItwinaiCsvReader>(); }

}  // namespace scalelens
