// MLPerf logging files: lines ":::MLLOG {json}" (mlcommons/logging). One file is one run as seen by
// the rank that logged it; epochs come from epoch_start/epoch_stop with metadata.epoch_num.
#include <simdjson.h>

#include <map>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/reader.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace {

namespace od = simdjson::ondemand;
constexpr std::string_view kTag = ":::MLLOG";

class MlperfReader final : public Reader {
 public:
  std::string_view name() const override { return "mlperf"; }
  bool recognizes(const std::filesystem::path&, std::string_view head) const override {
    return head.find(kTag) != std::string_view::npos;
  }

  void read(const ReadContext& ctx, ReadOutput& out) const override {
    const auto& path = ctx.file;
    auto text = read_file(path);
    if (!text) return out.error("unreadable-file", text.error().message, path);

    Run run;
    run.format = "mlperf";
    run.path = path.string();
    run.run_id = path.string();
    std::optional<double> nodes, per_node, ranks;
    std::int64_t nodes_line = 0, per_node_line = 0, ranks_line = 0;
    std::vector<std::int64_t> epoch_lines;  // of each epoch's epoch_stop
    std::string benchmark;
    std::map<std::int64_t, std::int64_t> epoch_start_ms;
    BadLines bad, implausible;
    auto bad_line = [&](std::int64_t line, std::string reason) { bad.add(line, std::move(reason)); };

    od::parser parser;
    LineCursor lines(text.value());
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
          time_value > 1e13) {  // ms beyond the year 2286: junk, and its ns would overflow
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
      auto epoch_num = [&]() -> std::optional<std::int64_t> {
        std::int64_t e;
        if (doc["metadata"]["epoch_num"].get_int64().get(e) == simdjson::SUCCESS) return e;
        return std::nullopt;
      };
      const std::int64_t t_ns = time_ms * 1'000'000;
      if (k == "run_start") run.start_ns = t_ns;
      else if (k == "run_stop") {
        run.end_ns = t_ns;
        std::string_view status;
        if (doc["metadata"]["status"].get_string().get(status) == simdjson::SUCCESS)
          run.exit_status = status == "success" ? 0 : 1;
      } else if (k == "number_of_nodes") nodes = number(), nodes_line = lines.line_no();
      else if (k == "accelerators_per_node") per_node = number(), per_node_line = lines.line_no();
      else if (k == "number_of_ranks") ranks = number(), ranks_line = lines.line_no();
      else if (k == "global_batch_size" || k == "train_samples") {
        // Sample counts beyond physical limits (model/limits.hpp) are left out.
        auto n = number();
        if (n && !limits::valid_samples(*n)) {
          implausible.add(lines.line_no(), fmt::format("{} {:g} is not from 1 to {:g}", k, *n, limits::kMaxSamples));
          n.reset();
        }
        (k == "global_batch_size" ? run.global_batch_size : run.samples_per_epoch) = n;
      }
      else if (k == "submission_benchmark") {
        std::string_view b;
        if (doc["value"].get_string().get(b) == simdjson::SUCCESS) benchmark = b;
      } else if (k == "epoch_start") {
        if (auto e = epoch_num()) epoch_start_ms[*e] = time_ms;
        else bad_line(lines.line_no(), "epoch_start without metadata.epoch_num");
      } else if (k == "epoch_stop") {
        auto e = epoch_num();
        auto it = e ? epoch_start_ms.find(*e) : epoch_start_ms.end();
        if (it == epoch_start_ms.end()) {
          bad_line(lines.line_no(), "epoch_stop without a matching epoch_start");
        } else if (time_ms < it->second) {
          bad_line(lines.line_no(), "epoch_stop before its epoch_start");
        } else {
          run.epochs.push_back(Interval{0, *e, it->second * 1'000'000, t_ns, std::nullopt});
          epoch_lines.push_back(lines.line_no());
          epoch_start_ms.erase(it);
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
    check_count(per_node, per_node_line, "accelerators_per_node", limits::kMaxPerNode);
    check_count(ranks, ranks_line, "number_of_ranks", limits::kMaxWorldSize);
    if (!ranks && nodes && per_node && *nodes * *per_node > static_cast<double>(limits::kMaxWorldSize)) {
      implausible.add(per_node_line, fmt::format("number_of_nodes × accelerators_per_node = {:g} is beyond any world size ({})",
                                                 *nodes * *per_node, limits::kMaxWorldSize));
      per_node.reset();
    }
    // An epoch longer than its run (run_start..run_stop of the same log) cannot be one of its epochs.
    if (run.start_ns && run.end_ns && *run.end_ns >= *run.start_ns) {
      const double run_ns = limits::span_ns(*run.start_ns, *run.end_ns);
      std::size_t kept = 0;
      for (std::size_t i = 0; i < run.epochs.size(); ++i) {
        const auto& e = run.epochs[i];
        if (limits::span_ns(e.start_ns, e.end_ns) > run_ns + static_cast<double>(limits::kIntervalSlackNs)) {
          implausible.add(epoch_lines[i], fmt::format("epoch {} lasts {:.6g} s, longer than its run ({:.6g} s); left out", e.index,
                                                      e.seconds(), run_ns * 1e-9));
          continue;
        }
        run.epochs[kept++] = e;
      }
      run.epochs.resize(kept);
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
    if (!run.start_ns && run.epochs.empty())
      return out.warn("empty-mlperf", "MLPerf log with neither run_start nor epochs; left out", path);
    out.runs.push_back(std::move(run));
  }
};

}  // namespace

std::unique_ptr<Reader> make_mlperf_reader() { return std::make_unique<MlperfReader>(); }

}  // namespace scalelens
