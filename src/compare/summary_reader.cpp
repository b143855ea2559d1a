#include "compare/summary_reader.hpp"

#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <simdjson.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "model/limits.hpp"

namespace scalelens {

namespace {

namespace dom = simdjson::dom;

// The values a figure can take (model/limits.hpp's sense): above `lo` (or from it) up to `hi`.
struct Range {
  double lo, hi;
  bool above_lo;     // lo itself is out: a time, a throughput, a speedup
  std::string says;  // "a number above 0", for the message
  bool holds(double v) const { return (above_lo ? v > lo : v >= lo) && v <= hi; }
};
constexpr double kNoLimit = std::numeric_limits<double>::max();
const Range kPositive{0, kNoLimit, true, "a number above 0"};
const Range kSeconds{0, limits::kMaxRunSeconds, true, fmt::format("a number of seconds above 0 and at most {:g}", limits::kMaxRunSeconds)};
const Range kNonNegative{0, kNoLimit, false, "a number of at least 0"};
const Range kShare{0, 1, false, "a number from 0 to 1"};
const Range kPercent{0, limits::kMaxPercent, false, fmt::format("a number from 0 to {:g}", limits::kMaxPercent)};
const Range kGpuMemoryGib{0, limits::kMaxGpuMemoryBytes / (1ull << 30), false,
                          fmt::format("a number of GiB from 0 to {:g}", limits::kMaxGpuMemoryBytes / (1ull << 30))};

// Reads fields of one object; a field of the wrong type is remembered (the first one) and the
// whole file refused: a summary that is not what scalelens wrote would compare wrong figures.
class Fields {
 public:
  Fields(dom::element e, std::string where, std::string& error) : e_(e), where_(std::move(where)), error_(error) {}

  std::optional<double> number(std::string_view key) {
    dom::element v;
    if (e_[key].get(v) || v.is_null()) return std::nullopt;
    double d;
    if (v.get_double().get(d) || !std::isfinite(d)) return bad(key, "a number"), std::nullopt;
    return d;
  }
  std::optional<int> count(std::string_view key, std::int64_t max) {
    auto d = number(key);
    if (!d) return std::nullopt;
    if (*d < 0 || *d > static_cast<double>(max) || *d != std::floor(*d)) return bad(key, fmt::format("a whole number from 0 to {}", max)), std::nullopt;
    return static_cast<int>(*d);
  }
  std::string text(std::string_view key) {
    dom::element v;
    if (e_[key].get(v) || v.is_null()) return "";
    std::string_view s;
    if (v.get_string().get(s)) return bad(key, "a string"), "";
    return std::string(s);
  }
  bool flag(std::string_view key) {
    bool b = false;
    dom::element v;
    if (e_[key].get(v) || v.is_null()) return false;
    if (v.get_bool().get(b)) bad(key, "true or false");
    return b;
  }
  std::vector<double> numbers(std::string_view key) {
    std::vector<double> out;
    dom::element v;
    if (e_[key].get(v) || v.is_null()) return out;
    dom::array a;
    if (v.get_array().get(a)) return bad(key, "an array of numbers"), out;
    for (auto x : a) {
      double d;
      if (x.get_double().get(d) || !std::isfinite(d)) return bad(key, "an array of numbers"), std::vector<double>{};
      out.push_back(d);
    }
    return out;
  }
  std::optional<dom::element> object(std::string_view key) {
    dom::element v;
    if (e_[key].get(v) || v.is_null()) return std::nullopt;
    if (!v.is_object()) return bad(key, "an object"), std::nullopt;
    return v;
  }
  std::optional<dom::array> array(std::string_view key) {
    dom::element v;
    if (e_[key].get(v) || v.is_null()) return std::nullopt;
    dom::array a;
    if (v.get_array().get(a)) return bad(key, "an array"), std::nullopt;
    return a;
  }
  std::optional<double> mean_of(std::string_view key, const Range& range) {  // {"mean": ...} of a Stat or range
    auto o = object(key);
    if (!o) return std::nullopt;
    return Fields(*o, where_ + "." + std::string(key), error_).number("mean", range);
  }
  // A figure scalelens could have written there: outside it (a time of -1 s, 500 % GPU utilization)
  // it is no measurement, and the file is refused as one of the wrong type is, naming the field.
  std::optional<double> number(std::string_view key, const Range& range) {
    auto d = number(key);
    if (d && !range.holds(*d)) return bad(key, range.says), std::nullopt;
    return d;
  }
  std::vector<double> numbers(std::string_view key, const Range& range) {
    auto out = numbers(key);
    for (double d : out)
      if (!range.holds(d)) return bad(key, fmt::format("an array, each value {}", range.says)), std::vector<double>{};
    return out;
  }

 private:
  void bad(std::string_view key, std::string_view expected) {
    if (error_.empty()) error_ = fmt::format("{}.{} should be {}", where_, key, expected);
  }
  dom::element e_;
  std::string where_;
  std::string& error_;
};

std::optional<Stat> stat_of(Fields& f, std::string_view key) {
  auto m = f.mean_of(key, kSeconds);
  if (!m) return std::nullopt;
  Stat s;
  s.mean = *m;
  return s;
}

}  // namespace

Result<SavedSummary> parse_summary_json(std::string json, const std::string& path) {
  auto fail = [&](const std::string& why) {
    return Error{fmt::format("not a summary scalelens can compare: {} (give a folder of runs or a summary.json "
                             "written by 'scalelens report')",
                             why),
                 path};
  };
  dom::parser parser;
  dom::element root;
  simdjson::padded_string padded(json);
  if (auto e = parser.parse(padded).get(root)) return fail(fmt::format("not JSON ({})", simdjson::error_message(e)));
  if (!root.is_object()) return fail("the top level is not an object");
  std::string error;
  Fields top(root, "summary", error);
  const std::string schema = top.text("schema");
  if (schema.rfind("scalelens.summary/", 0) != 0)
    return fail(schema.empty() ? "it has no \"schema\": \"scalelens.summary/2\"" : fmt::format("its schema is '{}'", schema));
  if (schema != "scalelens.summary/1" && schema != "scalelens.summary/2") {
    // Only a whole version above 2 is newer; /0 or /1-beta were never written by a released scalelens.
    const auto version = parse_int(std::string_view(schema).substr(std::string_view("scalelens.summary/").size()));
    return fail(version && *version > 2
                    ? fmt::format("schema '{}' is newer than this scalelens reads (scalelens.summary/1 and /2)", schema)
                    : fmt::format("schema '{}' is not a version this scalelens knows (it reads scalelens.summary/1 and /2)",
                                  schema));
  }

  SavedSummary saved;
  Summary& s = saved.summary;
  s.baseline = top.text("baseline");
  s.scaling = top.text("scaling");
  if (auto unit = top.text("world_size_unit"); !unit.empty()) s.world_size_unit = unit;

  std::map<std::string, std::size_t> run_index;
  if (auto runs = top.array("runs")) {
    std::size_t i = 0;
    for (auto e : *runs) {
      const std::string where = fmt::format("runs[{}]", i++);
      if (!e.is_object()) return fail(where + " should be an object");
      Fields f(e, where, error);
      RunSummary r;
      r.run_id = f.text("run_id");
      r.label = f.text("label");
      r.curve = f.text("curve");
      r.system = f.text("system");
      r.path = f.text("path");
      r.format = f.text("format");
      if (auto of = f.text("instance_of"); !of.empty()) r.details_to_fill().instance_of = std::move(of);
      r.world_size = f.count("world_size", limits::kMaxWorldSize);
      r.epoch_times_s = f.numbers("epoch_times_s", kSeconds);
      r.run_time_s = f.number("run_time_s", kSeconds);
      r.step_times_s = f.numbers("step_times_s", kSeconds);
      r.throughput_samples_per_s = f.number("throughput_samples_per_s", kPositive);
      if (auto u = f.mean_of("gpu_util_pct", kPercent)) r.gpu_util_pct = RangeStat{*u, *u, *u};
      r.energy_j_per_sample = f.number("energy_j_per_sample", kNonNegative);
      if (auto score = f.number("computation_score", kShare)) r.trace_to_fill().computation_score = score;
      if (auto gib = f.number("peak_gpu_memory_gib", kGpuMemoryGib)) r.peak_gpu_memory_bytes = *gib * (1ull << 30);
      if (!error.empty()) return fail(error);
      // Configurations name their runs by id: one id for two runs would give one's figures to both.
      if (!r.run_id.empty() && !run_index.emplace(r.run_id, s.runs.size()).second)
        return fail(fmt::format("{}.run_id '{}' is another run's too", where, r.run_id));
      s.runs.push_back(std::move(r));
    }
  }

  auto configs = top.array("configurations");
  if (!error.empty()) return fail(error);
  if (!configs) return fail("it has no \"configurations\"");
  std::size_t i = 0;
  for (auto e : *configs) {
    const std::string where = fmt::format("configurations[{}]", i++);
    if (!e.is_object()) return fail(where + " should be an object");
    Fields f(e, where, error);
    ConfigurationSummary c;
    c.label = f.text("label");
    c.system = f.text("system");
    c.curve = f.text("curve");
    if (c.curve.empty()) c.curve = c.label;
    auto p = f.count("world_size", limits::kMaxWorldSize);
    if (!error.empty()) return fail(error);
    if (c.label.empty() || !p || *p < 1) return fail(where + " has no label or world size");
    c.world_size = *p;
    c.runs = static_cast<std::size_t>(f.count("runs", limits::kMaxWorldSize).value_or(0));
    c.scaling = f.text("scaling");
    c.time_from = f.text("time_from");
    c.epoch_time_s = stat_of(f, "epoch_time_s");
    c.run_time_s = stat_of(f, "run_time_s");
    c.step_time_s = stat_of(f, "step_time_s");
    c.throughput_samples_per_s = f.number("throughput_samples_per_s", kPositive);
    c.speedup = f.number("speedup", kPositive);
    c.efficiency = f.number("efficiency", kPositive);
    c.baseline_world_size = f.count("baseline_world_size", limits::kMaxWorldSize);
    c.baseline_label = f.text("baseline_label");
    c.computation_score = f.number("computation_score", kShare);
    c.energy_j_per_sample = f.number("energy_j_per_sample", kNonNegative);
    if (auto gib = f.number("peak_gpu_memory_gib", kGpuMemoryGib)) c.peak_gpu_memory_bytes = *gib * (1ull << 30);
    if (auto u = f.mean_of("gpu_util_pct", kPercent)) c.gpu_util_pct = RangeStat{*u, *u, *u};
    if (auto ids = f.array("run_ids")) {
      for (auto id : *ids) {
        std::string_view v;
        if (id.get_string().get(v)) return fail(where + ".run_ids should be an array of strings");
        if (auto it = run_index.find(std::string(v)); it != run_index.end()) c.run_indices.push_back(it->second);
      }
    }
    if (!error.empty()) return fail(error);
    for (const auto& other : s.configurations)
      if (other.label == c.label && other.system == c.system && other.world_size == c.world_size)
        return fail(fmt::format("{} has the identity (label '{}', system '{}', world size {}) of an earlier one", where, c.label,
                                c.system, c.world_size));
    // A summary without its runs (trimmed by hand) still compares, as one value per configuration:
    // a run made of its means (one repeat, so never more than inconclusive).
    if (c.run_indices.empty()) {
      RunSummary r;
      r.run_id = fmt::format("{}#{} (configuration means)", c.curve, c.world_size);
      r.label = c.label;
      r.curve = c.curve;
      r.system = c.system;
      r.world_size = c.world_size;
      if (c.epoch_time_s) r.epoch_times_s = {c.epoch_time_s->mean};
      if (c.run_time_s) r.run_time_s = c.run_time_s->mean;
      if (c.step_time_s) r.step_times_s = {c.step_time_s->mean};
      r.throughput_samples_per_s = c.throughput_samples_per_s;
      r.gpu_util_pct = c.gpu_util_pct;
      r.energy_j_per_sample = c.energy_j_per_sample;
      if (c.computation_score) r.trace_to_fill().computation_score = c.computation_score;
      r.peak_gpu_memory_bytes = c.peak_gpu_memory_bytes;
      c.run_indices.push_back(s.runs.size());
      s.runs.push_back(std::move(r));
      if (c.runs == 0) c.runs = 1;
    }
    s.configurations.push_back(std::move(c));
  }

  if (auto curves = top.array("curves")) {
    std::size_t k = 0;
    for (auto e : *curves) {
      const std::string where = fmt::format("curves[{}]", k++);
      if (!e.is_object()) return fail(where + " should be an object");
      Fields f(e, where, error);
      CurveModel m;
      m.curve = f.text("curve");
      m.label = f.text("label");
      m.system = f.text("system");
      m.scaling = f.text("scaling");
      m.time_from = f.text("time_from");
      if (auto model = f.object("model")) {
        Fields mf(*model, where + ".model", error);
        ScalingFit fit;
        fit.law = mf.text("law");
        if (auto n = mf.count("n_points", 1 << 20)) fit.n_points = *n;
        if (auto r2 = mf.number("adj_r2")) fit.adj_r2 = *r2;
        if (auto loo = mf.number("loo_rel_error")) fit.loo_rel_error = *loo;
        if (auto terms = mf.array("terms")) {
          std::size_t t = 0;
          for (auto te : *terms) {
            const std::string at = fmt::format("{}.model.terms[{}]", where, t++);
            if (!te.is_object()) return fail(at + " should be an object");
            Fields tf(te, at, error);
            ScalingTerm term;
            term.coef = tf.number("coef").value_or(0);
            term.p_exp = tf.number("p_exp").value_or(0);
            term.log_exp = tf.count("log_exp", 8).value_or(0);
            fit.terms.push_back(term);
          }
        }
        if (auto params = mf.object("params")) {
          dom::object o;
          if (!params->get_object().get(o))
            for (auto [key, value] : o) {
              double d;
              if (!value.get_double().get(d) && std::isfinite(d)) fit.params[std::string(key)] = d;
            }
        }
        m.model.fit = std::move(fit);
      }
      if (!error.empty()) return fail(error);
      s.curves.push_back(std::move(m));
    }
  }
  if (!error.empty()) return fail(error);
  saved.json = std::move(json);
  return saved;
}

Result<SavedSummary> read_summary_json(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return Error{text.error().message, path.string()};
  return parse_summary_json(std::move(text.value()), path.string());
}

}  // namespace scalelens
