// MLPerf logging files: lines ":::MLLOG {json}" (mlcommons/logging). One file is one run as seen by
// the rank that logged it; epochs come from epoch_start/epoch_stop with metadata.epoch_num.
// In the MLPerf HPC results layout, <submitter>/results/<system>/<strong|weak>/<benchmark>/
// result_*.txt beside <submitter>/systems/<system>.json, the folders say the scaling mode and the
// system; the files of one weak/ folder are concurrent instances of one run (docs/inputs.md).
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/reader.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace {

namespace od = simdjson::ondemand;
namespace fs = std::filesystem;
constexpr std::string_view kTag = ":::MLLOG";

// A token that gives a system's size: "n64", "128x4", "10x128x4", "82944xA64FX".
bool is_size_token(std::string_view t) {
  std::size_t i = !t.empty() && t[0] == 'n' ? 1 : 0;
  const std::size_t digits = i;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  return i > digits && (i == t.size() || t[i] == 'x');
}

// The machine an MLPerf system name denotes: MLPerf names one system per size
// ("dgxa100_n64_ngc21.09_pytorch", "perlmutter_512x4_ngc21.09_pytorch"), but one scaling curve
// spans sizes of one machine, so the name is cut before its size token ("dgxa100", "perlmutter").
std::string machine_of(std::string_view system_name) {
  // A leading count of nodes written apart, "18 xR750 - 2 xA100 - PCIe - 80 GB" (Clemson, MLPerf
  // HPC v3.0): the rest names the machine.
  if (const auto digits = system_name.find_first_not_of("0123456789"); digits != 0 && digits != std::string_view::npos) {
    const auto x = system_name.find_first_not_of(' ', digits);
    if (x > digits && x != std::string_view::npos && system_name[x] == 'x') {
      const auto rest = trim(system_name.substr(x + 1));
      if (!rest.empty()) return std::string(rest);
    }
  }
  std::string out;
  for (std::size_t begin = 0; begin <= system_name.size();) {
    const auto end = std::min(system_name.find('_', begin), system_name.size());
    const auto part = system_name.substr(begin, end - begin);
    if (is_size_token(part)) break;
    out += (out.empty() ? "" : "_") + std::string(part);
    begin = end + 1;
  }
  if (!out.empty()) return out;
  // The size leads ("32xXE8545x4A100-SXM4-40GB"): what follows it names the machine.
  auto x = system_name.find('x');
  return x != std::string_view::npos && x + 1 < system_name.size() ? std::string(system_name.substr(x + 1))
                                                                     : std::string(system_name);
}

// <submitter>/systems/<system>.json of a <submitter>/results/<system> folder.
fs::path system_file_path(const fs::path& system_dir) {
  return system_dir.parent_path().parent_path() / "systems" / (system_dir.filename().string() + ".json");
}

// Where the results layout places a log: its system folder, scaling mode and benchmark folder.
// MLPerf HPC's <submitter>/results/<system>/<strong|weak>/<benchmark>/, or MLPerf Training's
// <submitter>/results/<system>/<benchmark>/ (no scaling mode).
struct ResultsPlace {
  fs::path system_dir;   // <submitter>/results/<system>
  std::string mode;      // "strong" | "weak"; "" for MLPerf Training's layout
  fs::path benchmark_dir;
  bool pruned = false;   // weak/<benchmark>/pruned_results/: an instance left out of the score
};

std::optional<ResultsPlace> place_in_tree(const fs::path& file) {
  fs::path dir = file.parent_path();
  ResultsPlace place;
  if (dir.filename() == "pruned_results") {
    place.pruned = true;
    dir = dir.parent_path();
  }
  const auto mode = dir.parent_path().filename().string();
  // Training's layout only where its system file is: any folder named results is not one.
  if (!place.pruned && dir.parent_path().parent_path().filename() == "results" && mode != "strong" && mode != "weak") {
    std::error_code ec;
    const fs::path system_dir = dir.parent_path();
    if (!fs::is_regular_file(system_file_path(system_dir), ec)) return std::nullopt;
    place.benchmark_dir = dir;
    place.system_dir = system_dir;
    return place;
  }
  if (mode != "strong" && mode != "weak") return std::nullopt;
  if (dir.parent_path().parent_path().parent_path().filename() != "results") return std::nullopt;
  place.mode = mode;
  place.benchmark_dir = dir;
  place.system_dir = dir.parent_path().parent_path();
  return place;
}

// By the path the log was given by, else by its absolute path: `report .` inside a benchmark folder
// names none of the folders above it (its runs lost their system file, and with it their size).
std::optional<ResultsPlace> results_place(const fs::path& file) {
  if (auto place = place_in_tree(file)) return place;
  std::error_code ec;
  const fs::path absolute = fs::absolute(file, ec).lexically_normal();
  if (ec || absolute == file) return std::nullopt;
  return place_in_tree(absolute);
}

// Fields of <submitter>/systems/<system>.json (all strings in the real files).
struct SystemFile {
  fs::path path;
  std::string system_name, accelerator_model_name;
  // The system's size, where it states one from 1 to the limits: MLPerf Training's logs state none.
  std::optional<int> nodes, per_node;
};

std::optional<SystemFile> system_file(const fs::path& system_dir) {
  SystemFile f;
  f.path = system_file_path(system_dir);
  auto text = read_file(f.path);
  if (!text) return std::nullopt;
  // Parsed whole (DOM) before any field is read: a malformed file's error cannot leave a half-read
  // document that a later field lookup reads through (simdjson's on-demand parser abandons it).
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text.value()).get(doc) || !doc.is_object()) return std::nullopt;
  std::string_view v;
  if (doc["system_name"].get_string().get(v) == simdjson::SUCCESS) f.system_name = v;
  if (doc["accelerator_model_name"].get_string().get(v) == simdjson::SUCCESS) f.accelerator_model_name = v;
  for (auto [key, into, max] : {std::tuple{"number_of_nodes", &f.nodes, limits::kMaxNodes},
                                std::tuple{"accelerators_per_node", &f.per_node, limits::kMaxPerNode}}) {
    simdjson::dom::element value;
    std::string_view text;
    double number = 0;
    if (doc[key].get(value) != simdjson::SUCCESS) continue;
    if (value.get_string().get(text) == simdjson::SUCCESS) {
      if (auto d = parse_double(trim(text))) number = *d;
    } else if (value.get_double().get(number) != simdjson::SUCCESS) {
      continue;
    }
    if (limits::valid_count(number, static_cast<double>(max))) *into = static_cast<int>(number);
  }
  return f;
}

class MlperfReader final : public Reader {
 public:
  std::string_view name() const override { return "mlperf"; }
  bool recognizes(const std::filesystem::path&, std::string_view head) const override {
    return head.find(kTag) != std::string_view::npos;
  }

  // The instance logs of one folder that each stated the job's sizes alike: how many did.
  std::string counted_note(const Diagnostic& said, std::size_t files) const override {
    if (said.code != kInstanceSize) return {};
    return fmt::format("{} weak-scaling instance log{} in this folder state{} the job's size, not the instance's: {}", files,
                       files == 1 ? "" : "s", files == 1 ? "s" : "", said.message);
  }

  void read(const ReadContext& ctx, ReadOutput& out) const override {
    const auto& path = ctx.file;
    auto text = read_file(path);
    if (!text) return out.error("unreadable-file", text.error().message, path);
    // A job's output (slurm-%j.out) may hold several runs one after another: each is read as its own
    // run (read as one, the first was lost and their epochs merged).
    const auto parts = runs_in(text.value());
    if (parts.size() == 1) return read_run(ctx, text.value(), 0, path.string(), out);
    std::string starts;
    for (const auto& part : parts) starts += (starts.empty() ? "" : ", ") + std::to_string(part.run_start_line);
    out.diagnostics.push_back({Severity::note, "mlperf-runs-in-one-file",
                               fmt::format("{} runs in one file (run_start at lines {}), each after the run_stop of the one "
                                           "before: each is read as a run of its own ({}#1, #2, …)",
                                           parts.size(), starts, path.filename().string()),
                               path.string(), parts[1].run_start_line, {}});
    for (std::size_t i = 0; i < parts.size(); ++i)
      read_run(ctx, parts[i].text, parts[i].lines_before, fmt::format("{}#{}", path.string(), i + 1), out);
  }

 private:
  // The runs of a log: a run_start after a run_stop begins another, whose part of the file starts
  // after that run_stop (its own header records come before its run_start). A run_start with no
  // run_stop before it (a restart in one run) begins none.
  struct RunText {
    std::string_view text;
    std::int64_t lines_before = 0, run_start_line = 0;
  };
  static std::vector<RunText> runs_in(std::string_view text) {
    std::vector<RunText> parts{{text, 0, 0}};
    LineCursor lines(text);
    std::string_view line;
    std::size_t part_begin = 0, after_stop = std::string_view::npos;
    std::int64_t lines_at_stop = 0;
    bool started = false;
    while (lines.next(line)) {
      if (line.find(kTag) == std::string_view::npos) continue;
      const bool is_start = line.find("\"run_start\"") != std::string_view::npos;
      if (is_start && started && after_stop != std::string_view::npos) {
        parts.back().text = text.substr(part_begin, after_stop - part_begin);
        part_begin = after_stop;
        parts.push_back({text.substr(part_begin), lines_at_stop, lines.line_no()});
      } else if (is_start && !started) {
        parts.back().run_start_line = lines.line_no();
      }
      if (is_start) started = true, after_stop = std::string_view::npos;
      if (line.find("\"run_stop\"") != std::string_view::npos) after_stop = lines.position(), lines_at_stop = lines.line_no();
    }
    return parts;
  }

  void read_run(const ReadContext& ctx, std::string_view text, std::int64_t lines_before, std::string run_id,
                ReadOutput& out) const {
    Run run;
    run.format = "mlperf";
    run.run_id = std::move(run_id);
    // One of several runs in a file is named as its run, FILE#2, in every message about it, the
    // analysis's too (they name a run by its path), its lines counted in the file: the file's name
    // alone did not tell which run a warning was about.
    run.path = run.run_id;
    const fs::path path(run.path);
    std::optional<double> nodes, per_node, ranks, sequence_length, evaluation_steps;
    std::int64_t nodes_line = 0, per_node_line = 0, ranks_line = 0, run_start_line = 0, run_stop_line = 0;
    std::vector<std::int64_t> epoch_lines;  // of each epoch's epoch_stop
    std::string benchmark, platform;
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> epoch_starts;  // epoch_num → (time_ms, line)
    // An epoch_stop numbered otherwise than the one open epoch_start: how many, and the first.
    struct Renumbered {
      std::int64_t stop_num = 0, start_num = 0, stop_line = 0, start_line = 0;
    } first_renumbered;
    std::size_t renumbered = 0;
    // Epoch numbers already closed: a stop of one of them is another rank's, never another epoch's end.
    std::set<std::int64_t> closed;
    BadLines bad, implausible;
    auto bad_line = [&](std::int64_t line, std::string reason) { bad.add(line, std::move(reason)); };

    od::parser parser;
    LineCursor lines(text, lines_before);
    std::string_view line;
    while (lines.next(line)) {
      auto at = line.find(kTag);
      if (at == std::string_view::npos) continue;  // MLPerf logs interleave plain output
      simdjson::padded_string json(trim(line.substr(at + kTag.size())));
      od::document doc;
      std::string_view key;
      double time_value;  // an integer in real logs, but some loggers write floats
      if (parser.iterate(json).get(doc) || doc["key"].get_string().get(key) ||
          doc["time_ms"].get_double().get(time_value) || !std::isfinite(time_value) || time_value < 0 ||
          time_value > 9e12) {  // ms beyond the year 2255: junk, and its ns would overflow
        bad_line(lines.line_no(), "not a valid :::MLLOG record with a key and a numeric time_ms");
        continue;
      }
      const auto time_ms = static_cast<std::int64_t>(time_value);
      std::string k(key);
      auto number = [&]() -> std::optional<double> {
        double d;
        if (doc["value"].get_double().get(d) == simdjson::SUCCESS) return d;
        return std::nullopt;
      };
      // metadata.epoch_num, looked up once: after an error in a malformed record simdjson abandons
      // the document, and a second lookup reads through a null parser (the fuzzer found it).
      std::optional<double> epoch_value;
      bool epoch_looked_up = false;
      auto epoch_raw = [&]() {
        if (!epoch_looked_up) {
          epoch_looked_up = true;
          double d = 0;
          if (doc["metadata"]["epoch_num"].get_double().get(d) == simdjson::SUCCESS) epoch_value = d;
        }
        return epoch_value;
      };
      // A whole epoch number (1.0, Dell's GNN in Training v4.0, is epoch 1).
      auto epoch_num = [&]() -> std::optional<std::int64_t> {
        const auto d = epoch_raw();
        if (d && *d == std::floor(*d) && std::fabs(*d) < 9e15) return static_cast<std::int64_t>(*d);
        return std::nullopt;
      };
      // Why a record has no epoch number: none, or one that is no whole number (MLPerf Training's
      // GNN numbers its evaluation points by fractions of an epoch, 0.85).
      auto no_epoch_num = [&](std::string_view what) {
        if (const auto d = epoch_raw())
          return fmt::format("{}'s epoch_num {:g} is no whole epoch number (a fraction of an epoch?); left out", what, *d);
        return fmt::format("{} without metadata.epoch_num", what);
      };
      const std::int64_t t_ns = time_ms * 1'000'000;
      if (k == "run_start") run.start_ns = t_ns, run_start_line = lines.line_no();
      else if (k == "run_stop") {
        run.end_ns = t_ns;
        run_stop_line = lines.line_no();
        std::string_view status;
        if (doc["metadata"]["status"].get_string().get(status) == simdjson::SUCCESS) {
          run.exit_status = status == "success" ? 0 : 1;
          if (status != "success") run.detected_from["exit_status"] = fmt::format("run_stop's status \"{}\"", status);
        }
      } else if (k == "number_of_nodes") nodes = number(), nodes_line = lines.line_no();
      else if (k == "accelerators_per_node") per_node = number(), per_node_line = lines.line_no();
      else if (k == "number_of_ranks") ranks = number(), ranks_line = lines.line_no();
      else if (k == "max_sequence_length") sequence_length = number();
      else if (k == "val_every_iters") evaluation_steps = number();
      else if (k == "global_batch_size" || k == "train_samples") {
        // Sample counts beyond physical limits (model/limits.hpp) are left out.
        auto n = number();
        if (n && !limits::valid_samples(*n)) {
          implausible.add(lines.line_no(), fmt::format("{} {:g} is not {}", k, *n, limits::samples_range()));
          n.reset();
        }
        (k == "global_batch_size" ? run.global_batch_size : run.samples_per_epoch) = n;
      }
      else if (k == "submission_benchmark") {
        std::string_view b;
        if (doc["value"].get_string().get(b) == simdjson::SUCCESS) benchmark = b;
      } else if (k == "submission_division") {
        std::string_view d;
        if (doc["value"].get_string().get(d) == simdjson::SUCCESS && !d.empty()) run.details_to_fill().division = d;
      } else if (k == "submission_platform") {
        std::string_view b;
        if (doc["value"].get_string().get(b) == simdjson::SUCCESS) platform = b;
      } else if (k == "instance_id") {
        if (auto id = number()) run.details_to_fill().instance_id = static_cast<int>(*id);
      } else if (k == "epoch_start") {
        if (auto e = epoch_num()) epoch_starts[*e] = {time_ms, lines.line_no()};
        else bad_line(lines.line_no(), no_epoch_num("epoch_start"));
      } else if (k == "epoch_stop") {
        auto e = epoch_num();
        auto it = e ? epoch_starts.find(*e) : epoch_starts.end();
        // MLPerf Training's BERT numbers an epoch's stop by the samples trained (epoch_start 0,
        // epoch_stop 1950366): a stop whose number no start has, while one epoch is open, ends it.
        if (e && it == epoch_starts.end() && epoch_starts.size() == 1 && !closed.contains(*e)) {
          it = epoch_starts.begin();
          if (renumbered++ == 0) first_renumbered = {*e, it->first, lines.line_no(), it->second.second};  // stop, start
        }
        if (it == epoch_starts.end()) {
          bad_line(lines.line_no(), e ? std::string("epoch_stop without a matching epoch_start") : no_epoch_num("epoch_stop"));
        } else if (time_ms <= it->second.first) {
          bad_line(lines.line_no(), time_ms < it->second.first ? "epoch_stop before its epoch_start"
                                                               : "epoch_stop at the time of its epoch_start (an epoch that lasts no time)");
        } else {
          run.epochs.push_back(Interval{0, it->first, it->second.first * 1'000'000, t_ns, std::nullopt});
          epoch_lines.push_back(lines.line_no());
          closed.insert(it->first);
          if (e) closed.insert(*e);
          epoch_starts.erase(it);
        }
      }
    }
    // Counts beyond physical limits (a log declaring 0 nodes, say) are left out: a run of unknown
    // world size is reported apart, never as a configuration of world size 0.
    auto check_count = [&](std::optional<double>& n, std::int64_t line, std::string_view key, std::int64_t max) {
      if (n && !limits::valid_count(*n, static_cast<double>(max))) {
        implausible.add(line, fmt::format("{} {:g} is not a whole number from 1 to {}", key, *n, max));
        n.reset();
      }
    };
    check_count(nodes, nodes_line, "number_of_nodes", limits::kMaxNodes);
    // A CPU-only system (Fugaku: accelerators_per_node 0) has none: true, and no size from it.
    if (per_node && *per_node == 0) per_node.reset();
    check_count(per_node, per_node_line, "accelerators_per_node", limits::kMaxPerNode);
    check_count(ranks, ranks_line, "number_of_ranks", limits::kMaxWorldSize);
    if (!ranks && nodes && per_node && *nodes * *per_node > static_cast<double>(limits::kMaxWorldSize)) {
      implausible.add(per_node_line, fmt::format("number_of_nodes × accelerators_per_node = {:g} is beyond any world size ({})",
                                                 *nodes * *per_node, limits::kMaxWorldSize));
      per_node.reset();
    }
    // A run_stop not after its run_start: the log's run time cannot be (as a manifest's end_ns).
    if (run.start_ns && run.end_ns && *run.end_ns <= *run.start_ns) {
      implausible.add(run_stop_line, fmt::format("run_stop is {} run_start (line {}); it is left out, and with it the run time",
                                                 *run.end_ns < *run.start_ns ? "before" : "at the time of", run_start_line));
      run.end_ns.reset();
    }
    // An epoch longer than its run (run_start..run_stop of the same log), or than any run lasts,
    // cannot be one of its epochs.
    {
      const bool has_run = run.start_ns && run.end_ns;
      const double run_ns = has_run ? limits::span_ns(*run.start_ns, *run.end_ns) : 0;
      const double max_ns = has_run ? std::min(run_ns + static_cast<double>(limits::kIntervalSlackNs),
                                               static_cast<double>(limits::kMaxRunNs))
                                    : static_cast<double>(limits::kMaxRunNs);
      std::size_t kept = 0;
      for (std::size_t i = 0; i < run.epochs.size(); ++i) {
        const auto& e = run.epochs[i];
        if (limits::span_ns(e.start_ns, e.end_ns) > max_ns) {
          implausible.add(epoch_lines[i], fmt::format("epoch {} lasts {:.6g} s, longer than {}; left out", e.index, e.seconds(),
                                                      has_run ? fmt::format("its run ({:.6g} s)", run_ns * 1e-9)
                                                              : std::string("any run lasts")));
          continue;
        }
        epoch_lines[kept] = epoch_lines[i];
        run.epochs[kept++] = e;
      }
      run.epochs.resize(kept);
      epoch_lines.resize(kept);
    }
    if (renumbered > 0)
      out.diagnostics.push_back(
          {Severity::note, "mlperf-epoch-renumbered",
           fmt::format("{} epoch_stop{} numbered otherwise than the one open epoch_start; the first, line {}: epoch_num {} where "
                       "the epoch_start at line {} has {}: taken as that epoch's end (MLPerf Training logs number a "
                       "stop by the samples trained, BERT, or the next epoch, DLRM)",
                       renumbered, renumbered == 1 ? "" : "s", first_renumbered.stop_line, first_renumbered.stop_num,
                       first_renumbered.start_line, first_renumbered.start_num),
           path.string(), first_renumbered.stop_line, {}});
    RepeatedEpochs repeated;
    for (std::size_t i = 0; i < run.epochs.size(); ++i) repeated.add(run.epochs[i].index, epoch_lines[i]);
    repeated.report(out, path);
    // Epoch numbers that count the samples trained: OpenFold (MLPerf HPC v3.0) numbers each epoch,
    // an evaluation interval of val_every_iters × global_batch_size samples, 5760, 11520, … Its
    // train_samples is then the dataset's size, not an epoch's samples (throughput came out 100x
    // too high). Known by the epochs being numbered step, 2 step, 3 step, … with step exactly
    // val_every_iters × global_batch_size, as in all 56 OpenFold logs of hpc_results_v3.0 (a log
    // resumed at epoch 64, or one of every 32nd epoch, has no such interval).
    if (run.epochs.size() >= 2 && run.global_batch_size && evaluation_steps) {
      std::set<std::int64_t> numbers;
      for (const auto& e : run.epochs) numbers.insert(e.index);
      const std::int64_t step = *numbers.begin();
      const double batch = *run.global_batch_size;
      std::int64_t expected = step;
      bool consecutive = numbers.size() >= 2;
      for (std::int64_t n : numbers) consecutive &= n == expected, expected += step;
      const bool counts_samples = consecutive && step > 1 && static_cast<double>(step) == *evaluation_steps * batch;
      if (counts_samples) {
        out.diagnostics.push_back(
            {Severity::note, "mlperf-epochs-count-samples",
             fmt::format("epoch_num counts the samples trained ({}, {}, …: val_every_iters {:g} × global_batch_size {:g}): each "
                         "epoch is an interval of {} samples, which throughput uses{}",
                         step, 2 * step, *evaluation_steps, batch, step,
                         run.samples_per_epoch ? fmt::format(", not train_samples ({:g}, the dataset's size)", *run.samples_per_epoch)
                                               : std::string()),
             path.string(), epoch_lines.front(), {}});
        run.samples_per_epoch = static_cast<double>(step);
      }
    }
    // train_samples that counts tokens: GPT-3 (MLPerf Training) logs 1211105280 = 220 steps × 2688
    // sequences × 2048 tokens (max_sequence_length), so throughput came out in tokens/s, 2048x the
    // sequences/s. GPT-3's alone: GNMT's (sentence pairs, 3860480 = 2048 × 65 × 29) and BERT's
    // (steps × batch) can be such multiples too, and are samples.
    if (benchmark == "gpt3" && run.samples_per_epoch && run.global_batch_size && sequence_length && *sequence_length > 1 &&
        std::fmod(*run.samples_per_epoch, *run.global_batch_size * *sequence_length) == 0) {
      out.diagnostics.push_back(
          {Severity::note, "mlperf-train-samples-in-tokens",
           fmt::format("train_samples {:g} counts tokens (a multiple of global_batch_size {:g} × max_sequence_length {:g}): an "
                       "epoch's samples are taken as {:g} sequences",
                       *run.samples_per_epoch, *run.global_batch_size, *sequence_length, *run.samples_per_epoch / *sequence_length),
           path.string(), 0, {}});
      run.samples_per_epoch = *run.samples_per_epoch / *sequence_length;
    }
    bad.report(out, path);
    implausible.report_implausible(out, path);

    auto whole = [](double d) { return static_cast<int>(d); };
    if (nodes) run.nodes = whole(*nodes);
    if (per_node) run.gpus_per_node = whole(*per_node);
    if (ranks) {
      run.world_size = whole(*ranks);
      run.detected_from["world_size"] = "number_of_ranks";
    } else if (nodes && per_node) {
      run.world_size = whole(*nodes * *per_node);
      run.detected_from["world_size"] = "number_of_nodes*accelerators_per_node";
    }
    if (ctx.enclosing && !ctx.enclosing->label.empty()) run.label = ctx.enclosing->label;
    else run.label = benchmark.empty() ? "mlperf" : benchmark;
    if (!benchmark.empty()) run.details_to_fill().benchmark = benchmark;
    // Where the results layout places the log, found once (it may look for the system file).
    const auto place = results_place(ctx.file);
    place_run(run, path, place, platform, ctx, out);
    if (place && place->pruned) {
      out.diagnostics.push_back({Severity::note, "pruned-instance",
                                 "MLPerf HPC weak-scaling instance pruned by the submitter (pruned_results/); not counted "
                                 "among the run's instances",
                                 path.string(), 0, {}});
      return;
    }
    if (!run.start_ns && run.epochs.empty())
      return out.warn("empty-mlperf", "MLPerf log with neither run_start nor epochs; left out", path);
    // A run's log that ends before its run_stop (the job hit its time limit, the log was cut) or
    // begins after its run_start (the rest of a log split over files): its epochs are timed, its run
    // is not whole, and with no word it was one more repeat.
    if (run_start_line && !run_stop_line)
      out.warn("run-not-finished",
               fmt::format("MLPerf log with a run_start (line {}) but no run_stop after it: the run did not finish or its log "
                           "was cut; it has no run time, and its whole epochs count",
                           run_start_line),
               path, run_start_line);
    else if (!run_start_line)
      out.warn("run-not-finished",
               "MLPerf log without a run_start: a part of a run's log (the rest in another file?); its whole epochs count as "
               "a run of their own",
               path);
    out.runs.push_back(std::move(run));
  }

  // A weak-scaling instance's log may state the whole job's size rather than its own: in MLPerf HPC
  // v3.0, each of NVIDIA's 128 DeepCAM instances on Eos says number_of_ranks 2048 and
  // number_of_nodes 256, the 256 × 8 GPUs of systems/eos_n256…json, where v1.0's said 16 and 2 (its
  // OpenFold instances: 128 ranks, the instance's, but 256 nodes). Summed over the instances that
  // made 262,144 GPUs. An instance as large as its system, among several in its folder, states the
  // job's: each gets an even share, and a nodes count that does not fit its GPUs is made to fit.
  // Said of the folder, in words every instance log stating the same sizes shares: ingest folds them
  // into one note with their count (counted_note; a job's 128 logs made 128 notes).
  static void share_job_size(Run& run, const ResultsPlace& place, const SystemFile& sys, double system_gpus, ReadOutput& out) {
    std::vector<std::string> changed;
    if (run.world_size && *run.world_size >= system_gpus) {
      const int instances = instances_in(place.benchmark_dir);
      if (instances > 1 && *run.world_size % instances == 0) {
        changed.push_back(fmt::format("{}, the whole job's (systems/{} has {:g}), shared by the {} instances: {} each",
                                      count_of(*run.world_size, "GPUs"), sys.path.filename().string(), system_gpus, instances,
                                      *run.world_size / instances));
        run.world_size = *run.world_size / instances;
        run.detected_from["world_size"] += fmt::format(" / {} instances", instances);
      }
    }
    if (run.world_size && run.nodes && run.gpus_per_node && *run.nodes * *run.gpus_per_node != *run.world_size &&
        *run.world_size % *run.gpus_per_node == 0) {
      changed.push_back(fmt::format("number_of_nodes {}, which does not fit {} at {} per node: {}", *run.nodes,
                                    count_of(*run.world_size, "GPUs"), *run.gpus_per_node,
                                    count_of(*run.world_size / *run.gpus_per_node, "nodes")));
      run.nodes = *run.world_size / *run.gpus_per_node;
    }
    if (changed.empty()) return;
    std::string sizes = changed[0];
    if (changed.size() > 1) sizes += "; " + changed[1];
    out.diagnostics.push_back({Severity::note, kInstanceSize, sizes, place.benchmark_dir.string(), 0, {}});
  }

 private:
  static constexpr const char* kInstanceSize = "mlperf-instance-size";

  // The instances of a weak-scaling benchmark folder: its logs, and those the submitter pruned
  // (they ran in the same job).
  static int instances_in(const fs::path& benchmark_dir) {
    int n = 0;
    std::error_code ec;
    for (const auto& dir : {benchmark_dir, benchmark_dir / "pruned_results"})
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (const auto name = it->path().filename().string(); name.starts_with("result_") && it->is_regular_file(ec)) ++n;
    return n;
  }

  // System, GPU model, scaling mode and instance group, from the results layout where the log
  // lies in one, else from the log itself.
  static void place_run(Run& run, const fs::path& path, const std::optional<ResultsPlace>& place, std::string_view platform,
                        const ReadContext& ctx, ReadOutput& out) {
    if (place) {
      if (!place->mode.empty()) run.scaling = place->mode;
      if (auto sys = system_file(place->system_dir)) {
        const auto name = sys->system_name.empty() ? place->system_dir.filename().string() : sys->system_name;
        run.system = machine_of(name);
        run.detected_from["system"] = fmt::format("system_name {} in systems/{}", name, sys->path.filename().string());
        if (run.gpu_model.empty()) run.gpu_model = sys->accelerator_model_name;
        // MLPerf Training's logs state no size: the system file's, where the log gives none (not
        // for a weak-scaling instance, which is a part of the system).
        // Each count is within its limit; their product may not be (1,000,000 × 4096 overflowed int).
        const std::int64_t gpus = sys->nodes && sys->per_node ? std::int64_t{*sys->nodes} * *sys->per_node : 0;
        if (place->mode == "weak" && gpus > 0) share_job_size(run, *place, *sys, static_cast<double>(gpus), out);
        if (!run.world_size && gpus > 0 && gpus <= limits::kMaxWorldSize && place->mode != "weak") {
          run.nodes = sys->nodes;
          run.gpus_per_node = sys->per_node;
          run.world_size = static_cast<int>(gpus);
          run.detected_from["world_size"] =
              fmt::format("number_of_nodes × accelerators_per_node in systems/{}", sys->path.filename().string());
        }
      } else {
        run.system = machine_of(place->system_dir.filename().string());
        run.detected_from["system"] = fmt::format("results folder {}", place->system_dir.filename().string());
      }
    }
    // "512xNVIDIA DGX A100": nodes x platform; the logging package's unset default is a placeholder.
    auto name = platform;
    if (auto x = name.find('x'); x != std::string_view::npos && x > 0 &&
                                 name.substr(0, x).find_first_not_of("0123456789") == std::string_view::npos)
      name = name.substr(x + 1);
    if (run.system.empty() && !name.empty() && name.find("PLACEHOLDER") == std::string_view::npos) {
      run.system = std::string(name);
      run.detected_from["system"] = "submission_platform";
    }
    if (run.system.empty() && ctx.enclosing && !ctx.enclosing->system.empty()) run.system = ctx.enclosing->system;
    if ((place && place->mode == "weak") || run.details().instance_id) {
      run.details_to_fill().instance_of = (place ? place->benchmark_dir : path.parent_path()).string();
      run.scaling = "weak";
    }
  }
};

}  // namespace

std::unique_ptr<Reader> make_mlperf_reader() { return std::make_unique<MlperfReader>(); }

}  // namespace scalelens
