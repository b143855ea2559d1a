// itwinai's older `scalability-metrics/` CSV layout (docs/DESIGN.md, "Inputs"), as itwinai writes it
// (interTwin-eu/itwinai: loggers.py EpochTimeTracker, torch/monitoring/monitoring.py):
//   [scalability-metrics/<run_id>/]epoch-time/epochtime_{strategy}_{N}N.csv
//       epoch_id,time,name,nodes     time = seconds of that epoch, name = strategy, nodes =
//                                    SLURM_NNODES ("unk" or -1 when unset); written by the main
//                                    worker only, so these are rank 0's epoch times
//   [scalability-metrics/<run_id>/]gpu-energy-data/{strategy}_{num_global_gpus}.csv
//       sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval
//                                    one row per GPU and sample; power in W, utilization in %,
//                                    probing_interval in s; no timestamps
// Each file is one run. When the epoch-time and gpu-energy-data folders beside each other hold
// exactly one file each for a strategy (itwinai's per-run layout), the two are one run, defined
// by the epoch-time file: it then also gets its world size from num_global_gpus.
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
#include "ingest/reader.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kEpochDir = "epoch-time";
constexpr std::string_view kEnergyDir = "gpu-energy-data";
constexpr std::size_t kSniffBytes = 64 * 1024;
// Beyond this a time is junk, and its nanoseconds would overflow.
constexpr double kMaxSeconds = limits::kMaxRunSeconds;

enum class Kind { none, epoch_time, energy };

const std::vector<std::string_view> kEpochColumns{"epoch_id", "time", "name", "nodes"};
const std::vector<std::string_view> kEnergyColumns{"sample_idx", "local_rank", "node_idx", "num_global_gpus",
                                                   "strategy", "probing_interval", "utilization", "power"};

bool has_all(const std::vector<std::string_view>& header, const std::vector<std::string_view>& names) {
  for (auto n : names)
    if (find_column(header, n) < 0) return false;
  return true;
}

Kind kind_of_header(std::string_view line) {
  std::vector<std::string_view> header;
  split_csv(line, header);
  if (has_all(header, kEnergyColumns)) return Kind::energy;
  if (has_all(header, kEpochColumns)) return Kind::epoch_time;
  return Kind::none;
}

// Kind and strategy of a file, from its header and first data row.
struct Sniff {
  Kind kind = Kind::none;
  std::string strategy;
};

Sniff sniff(const fs::path& path) {
  auto head = read_head_inflated(path, kSniffBytes);  // BOM dropped, as the other readers see the file
  if (!head) return {};
  LineCursor lines(head.value());
  std::string_view line;
  if (!lines.next(line)) return {};
  Sniff s{kind_of_header(line), {}};
  if (s.kind == Kind::none) return s;
  std::vector<std::string_view> header, row;
  split_csv(line, header);
  int col = find_column(header, s.kind == Kind::energy ? "strategy" : "name");
  while (lines.next(line)) {
    split_csv(line, row);
    if (row.size() == header.size()) {
      s.strategy = std::string(trim(row[col]));
      break;
    }
  }
  return s;
}

// The epoch-time and energy files of one run, when the layout pairs them unambiguously.
struct Pair {
  fs::path epoch_file, energy_file;
};

std::optional<Pair> find_pair(const fs::path& file, const std::string& strategy) {
  if (strategy.empty()) return std::nullopt;
  const fs::path root = file.parent_path().parent_path();
  auto same_strategy = [&](std::string_view dir, Kind kind) {
    std::vector<fs::path> found;
    std::error_code ec;
    for (fs::directory_iterator it(root / dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      auto s = sniff(it->path());
      if (s.kind == kind && s.strategy == strategy) found.push_back(it->path());
    }
    return found;
  };
  auto epochs = same_strategy(kEpochDir, Kind::epoch_time);
  auto energies = same_strategy(kEnergyDir, Kind::energy);
  if (epochs.size() != 1 || energies.size() != 1) return std::nullopt;
  std::error_code ec;
  if (!fs::equivalent(file, epochs[0], ec) && !fs::equivalent(file, energies[0], ec)) return std::nullopt;
  return Pair{epochs[0], energies[0]};
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
  // Written whole at the end of training, so a last line without its newline is still complete.
  const bool read = for_each_row(text.value(), cols, cols.size(), out, path, bad, [&](const auto& row, std::int64_t line) {
    auto epoch = parse_int(row[0]);
    auto seconds = parse_double(row[1]);
    if (!epoch || !seconds || *seconds < 0 || *seconds > kMaxSeconds)
      return bad.add(line, fmt::format("epoch_id '{}' or time '{}' is not a number of seconds", trim(row[0]), trim(row[1])));
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
  }, LastLine::complete);
  if (!read) return std::nullopt;
  bad.report(out, path);
  implausible.report_implausible(out, path);
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

  bool recognizes(const fs::path&, std::string_view head) const override {
    LineCursor lines(head);
    std::string_view first;
    return lines.next(first) && kind_of_header(first) != Kind::none;
  }

  void read(const ReadContext& ctx, ReadOutput& out) const override {
    auto s = sniff(ctx.file);
    auto pair = find_pair(ctx.file, s.strategy);
    if (s.kind == Kind::energy) {
      if (pair) return;  // read with its epoch-time file, as one run
      read_energy_only(ctx, out);
      return;
    }
    auto epochs = parse_epoch_file(ctx.file, out);
    if (!epochs) return;
    if (epochs->epochs.empty() && !pair) {
      out.warn("no-epochs", "itwinai epoch-time file without a usable epoch line; left out", ctx.file);
      return;
    }
    Run run;
    run.format = "itwinai-csv";
    run.label = epochs->name.empty() ? s.strategy : epochs->name;
    run.nodes = epochs->nodes;
    run.epochs = std::move(epochs->epochs);
    run.run_id = run_id_of(ctx.file);
    run.path = ctx.file.string();
    if (pair) {
      run.path = ctx.file.parent_path().parent_path().string();  // the folder of both files
      if (auto energy = parse_energy_file(pair->energy_file, out)) add_energy(run, std::move(*energy), pair->energy_file);
    }
    if (!run.world_size) fill_world_size_from_manifest(ctx, run, out);
    out.runs.push_back(std::move(run));
  }

 private:
  static void read_energy_only(const ReadContext& ctx, ReadOutput& out) {
    auto energy = parse_energy_file(ctx.file, out);
    if (!energy) return;
    Run run;
    run.format = "itwinai-csv";
    run.run_id = run_id_of(ctx.file);
    run.path = ctx.file.string();
    run.label = energy->strategy;
    add_energy(run, std::move(*energy), ctx.file);
    out.runs.push_back(std::move(run));
  }

  // Epoch-time files record the node count but not the GPUs per node.
  static void fill_world_size_from_manifest(const ReadContext& ctx, Run& run, ReadOutput& out) {
    const Run* m = ctx.enclosing;
    if (m && m->world_size) {
      run.world_size = m->world_size;
      run.detected_from["world_size"] = "scalelens.json above the epoch-time file";
    } else if (m && m->gpus_per_node && run.nodes) {
      run.world_size = *run.nodes * *m->gpus_per_node;
      run.detected_from["world_size"] = "nodes in the epoch-time file × gpus_per_node in scalelens.json";
    } else {
      out.warn("unknown-world-size",
               "world size unknown: an itwinai epoch-time file records the node count but not the GPUs per node, "
               "and no matching gpu-energy-data file or scalelens.json gives it, so speedup, efficiency and "
               "per-GPU throughput cannot be computed for this run; write a scalelens.json above it, e.g. "
               "{\"label\": \"" + run.label + "\", \"world_size\": 8}",
               ctx.file);
    }
  }
};

}  // namespace

std::unique_ptr<Reader> make_itwinai_csv_reader() { return std::make_unique<ItwinaiCsvReader>(); }

}  // namespace scalelens
