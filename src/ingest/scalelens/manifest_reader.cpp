// scalelens.json (DESIGN.md, "The run folder"): the manifest that makes a folder a run.
#include <simdjson.h>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "ingest/reader.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace {

namespace od = simdjson::ondemand;

std::optional<double> number_of(od::value v) {
  double d;
  if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d)) return d;
  return std::nullopt;
}

std::optional<std::string> string_of(od::value v) {
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return std::nullopt;
}

class ManifestReader final : public Reader {
 public:
  std::string_view name() const override { return "scalelens-manifest"; }
  bool is_manifest() const override { return true; }

  // The contract names the manifest file; a file of another name counts when it is a JSON object
  // that says its schema (the script that wrote it, beside it, says the schema too).
  bool recognizes(const std::filesystem::path& path, std::string_view head) const override {
    if (path.filename() == "scalelens.json") return true;
    return starts_json_object(head) && head.find("\"scalelens.run/") != std::string_view::npos;
  }

  void read(const ReadContext& ctx, ReadOutput& out) const override {
    const auto& path = ctx.file;
    auto folder = path.parent_path();
    Run run;
    run.format = "scalelens";
    run.path = folder.string();
    run.run_id = folder.filename().string();  // unless it writes one; made unique in the study by ingest

    auto text = read_file(path);
    if (!text) {
      out.error("bad-manifest", fmt::format("cannot be read ({}); the run is left out", text.error().message), path);
      run.manifest_unread = true;
      out.runs.push_back(std::move(run));  // keeps the folder's data files from being reported as orphans
      return;
    }
    simdjson::padded_string json(text.value());
    od::parser parser;
    od::document doc;
    od::object obj;
    auto fail = [&](simdjson::error_code e, std::string_view where) {
      out.error("bad-manifest",
                fmt::format("not a valid scalelens.json ({}{}); the run is left out", simdjson::error_message(e), where),
                path);
      run.world_size.reset();
      run.label.clear();
      run.manifest_unread = true;
      out.runs.push_back(std::move(run));
    };
    if (auto e = parser.iterate(json).get(doc)) return fail(e, "");
    // A document cut short fails here too: "the top level must be an object" only where it is not one.
    if (auto e = doc.get_object().get(obj))
      return fail(e, e == simdjson::INCORRECT_TYPE ? ": the top level must be an object" : "");

    for (auto field : obj) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(e, "");
      od::value v;
      if (auto e = field.value().get(v)) return fail(e, fmt::format(" at \"{}\"", key));
      auto bad = [&](std::string_view expected) {
        out.warn("bad-manifest-field", fmt::format("field \"{}\" should be {}; ignored", key, expected), path);
      };
      // Where string_of read nothing: a string there, yet not read, has an escape that names no character.
      auto bad_string = [&] {
        od::json_type type;
        if (v.type().get(type) == simdjson::SUCCESS && type == od::json_type::string)
          out.warn("bad-manifest-field",
                   fmt::format("field \"{}\" is a string with an invalid escape (a lone surrogate such as \\ud800, or a "
                               "malformed \\u); ignored",
                               key),
                   path);
        else
          bad("a string");
      };
      if (key == "schema") {
        auto s = string_of(v);
        if (s && s->rfind("scalelens.run/", 0) != 0) bad("\"scalelens.run/1\"");
      } else if (key == "run_id") {
        // An empty id is no id: taken, every run written so was one run (copies or repeats of "").
        if (auto s = string_of(v); s && !trim(*s).empty()) {
          run.run_id = *s;
          run.run_id_written = true;
        } else {
          if (s) bad("a non-empty string (the run's id is derived from its folder, as when absent)");
          else bad_string();
        }
      } else if (key == "label") {
        if (auto s = string_of(v)) run.label = *s; else bad_string();
      } else if (key == "world_size" || key == "nodes" || key == "gpus_per_node" || key == "cpus_per_node") {
        auto d = number_of(v);
        const auto max = key == "world_size" ? limits::kMaxWorldSize : key == "nodes" ? limits::kMaxNodes
                         : key == "gpus_per_node" ? limits::kMaxPerNode : limits::kMaxCpusPerNode;
        if (!d || !limits::valid_count(*d, static_cast<double>(max))) {
          bad(fmt::format("a whole number from 1 to {}", max));
          continue;
        }
        int n = static_cast<int>(*d);
        (key == "world_size" ? run.world_size : key == "nodes" ? run.nodes : key == "gpus_per_node" ? run.gpus_per_node : run.cpus_per_node) = n;
      } else if (key == "global_batch_size" || key == "samples_per_epoch") {
        auto d = number_of(v);
        if (!d || !limits::valid_samples(*d)) { bad("a number of samples " + limits::samples_range()); continue; }
        (key == "global_batch_size" ? run.global_batch_size : run.samples_per_epoch) = *d;
      } else if (key == "scaling") {
        auto s = string_of(v);
        if (s && (*s == "weak" || *s == "strong")) run.scaling = *s; else bad("\"weak\" or \"strong\"");
      } else if (key == "start_ns" || key == "end_ns") {
        std::int64_t t;
        if (v.get_int64().get(t) != simdjson::SUCCESS || t < 0) { bad("a non-negative integer of nanoseconds"); continue; }
        (key == "start_ns" ? run.start_ns : run.end_ns) = t;
      } else if (key == "exit_status") {
        std::int64_t s;
        // Cut to int, 4294967296 would read as 0: a success.
        const auto status = v.get_int64().get(s) == simdjson::SUCCESS ? limits::exit_status(s) : std::nullopt;
        if (status) run.exit_status = status;
        else bad("an integer exit status");
      } else if (key == "status") {
        // "running" is written at start and replaced at the end: still there, the wrapper never
        // finished (killed, node lost) or the job is still going.
        auto s = string_of(v);
        if (s && *s == "running")
          out.warn("run-not-finished",
                   "the manifest still says \"status\": \"running\": the job is still going, or its scalelens run "
                   "wrapper was killed before the end; its figures cover only what had been written",
                   path);
      } else if (key == "sampling_interval_s") {
        auto d = number_of(v);
        if (d && limits::valid_sampling_interval(*d)) run.sampling_interval_s = *d;
        else bad("a number of seconds " + limits::sampling_interval_range());
      } else if (key == "gpu_model") {
        if (auto s = string_of(v)) run.gpu_model = *s;
      } else if (key == "system") {
        if (auto s = string_of(v)) run.system = *s; else bad_string();
      } else if (key == "launcher") {
        if (auto s = string_of(v)) run.launcher = *s; else bad_string();
      } else if (key == "hosts") {
        od::array arr;
        if (v.get_array().get(arr) != simdjson::SUCCESS) { bad("an array of strings"); continue; }
        for (auto item : arr) {
          std::string_view s;
          if (item.get_string().get(s) == simdjson::SUCCESS) run.hosts.emplace_back(s);
        }
      } else if (key == "missing") {
        od::object d;
        if (v.get_object().get(d) != simdjson::SUCCESS) { bad("an object of strings"); continue; }
        for (auto f : d) {
          std::string_view k, s;
          if (f.unescaped_key().get(k) == simdjson::SUCCESS && f.value().get_string().get(s) == simdjson::SUCCESS)
            run.details_to_fill().missing.emplace(std::string(k), std::string(s));
        }
      } else if (key == "detected_from") {
        od::object d;
        if (v.get_object().get(d) != simdjson::SUCCESS) continue;
        for (auto f : d) {
          std::string_view k, s;
          if (f.unescaped_key().get(k) == simdjson::SUCCESS && f.value().get_string().get(s) == simdjson::SUCCESS)
            run.detected_from.emplace(std::string(k), std::string(s));
        }
      }
      // Unknown fields are kept in the file and ignored here (DESIGN.md).
    }
    if (run.start_ns && run.end_ns && *run.end_ns <= *run.start_ns) {
      out.warn("bad-manifest-field",
               *run.end_ns < *run.start_ns ? "end_ns is before start_ns; run time is left out"
                                           : "end_ns equals start_ns (a run that lasts no time); run time is left out",
               path);
      run.start_ns.reset();
      run.end_ns.reset();
    } else if (run.start_ns && run.end_ns && limits::span_ns(*run.start_ns, *run.end_ns) > static_cast<double>(limits::kMaxRunNs)) {
      out.warn("implausible-value",
               fmt::format("end_ns − start_ns is {:.3g} s, more than any run lasts ({:g} s); run time is left out",
                           limits::span_ns(*run.start_ns, *run.end_ns) * 1e-9, limits::kMaxRunSeconds),
               path);
      run.start_ns.reset();
      run.end_ns.reset();
    }
    // Written by hand (scalelens run records where it found the system): the provenance says so.
    if (!run.system.empty()) run.detected_from.emplace("system", "scalelens.json");
    out.runs.push_back(std::move(run));
  }
};

}  // namespace

std::unique_ptr<Reader> make_run_manifest_reader() { return std::make_unique<ManifestReader>(); }

}  // namespace scalelens
