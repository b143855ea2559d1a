#include "report/compare_writers.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/json.hpp"
#include "common/text.hpp"
#include "report/report_html.hpp"

namespace scalelens {

std::string signed_percent(std::optional<double> f) {
  if (!f || !std::isfinite(*f)) return "-";
  const double v = 100 * *f;
  return std::fabs(v) < 0.05 ? "0.0%" : fmt::format("{:+.1f}%", v);
}

namespace {

struct Row {
  const ConfigurationComparison* config;
  const MetricComparison* metric;
};

// Every (configuration, metric), the most severe first; ties keep the configurations' order.
std::vector<Row> rows_of(const Comparison& c) {
  std::vector<Row> rows;
  for (const auto& cc : c.configurations)
    for (const auto& m : cc.metrics) rows.push_back({&cc, &m});
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return severity_of(a.metric->verdict) > severity_of(b.metric->verdict); });
  return rows;
}

std::string metric_title(const MetricComparison& m) {
  return m.detail.empty() ? m.metric->title : fmt::format("{} {}", m.metric->title, m.detail);
}

std::string value_text(const MetricInfo& metric, std::optional<double> v) {
  if (!v) return "-";
  const std::string name = metric.name;
  if (name == "efficiency") return fmt::format("{:.1f}%", 100 * *v);
  if (name == "computation_score") return fmt::format("{:.3f}", *v);
  if (name == "gpu_util") return fmt::format("{:.1f}%", *v);
  return human_number(*v) + (metric.unit[0] ? std::string(" ") + metric.unit : "");
}

std::string interval_text(const ChangeEstimate& e) {
  if (!e.ci_low || !e.ci_high) return "-";
  return fmt::format("[{}, {}]", signed_percent(e.ci_low), signed_percent(e.ci_high));
}

std::string config_title(const ConfigurationComparison& cc, const Comparison& c) {
  return fmt::format("{} {}", cc.name(), count_of(cc.world_size, c.world_size_unit));
}

std::string parameter_text(const ParameterChange& p) {
  auto v = [&](std::optional<double> x) {
    if (!x) return std::string("-");
    return p.percent ? human_number(100 * *x) + "%" : human_number(*x);
  };
  return fmt::format("{} {} → {}", p.title, v(p.before), v(p.after));
}

std::string curve_sentence(const CurveComparison& cc) {
  std::vector<std::string> parts;
  auto law = [](const std::string& l, const std::string& formula) {
    return formula.empty() ? std::string("no model") : l.empty() ? std::string("another form") : l;
  };
  if (cc.law_before != cc.law_after || cc.formula_before.empty() != cc.formula_after.empty())
    parts.push_back(fmt::format("law {} → {}", law(cc.law_before, cc.formula_before), law(cc.law_after, cc.formula_after)));
  for (const auto& p : cc.parameters) parts.push_back(parameter_text(p));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string counts_text(const Comparison& c) {
  return fmt::format("{} regressed, {} improved, {} unchanged, {} inconclusive", c.count(Verdict::regressed),
                     c.count(Verdict::improved), c.count(Verdict::unchanged), c.count(Verdict::inconclusive));
}

// Columns aligned by display width; `right` per column. `decorate` wraps a cell's text after the
// widths are taken (colour codes have no width).
std::string aligned(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right, const std::string& indent = "",
                    const std::function<std::string(std::size_t, std::size_t, const std::string&)>& decorate = {}) {
  if (rows.empty()) return "";
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& r : rows)
    for (std::size_t k = 0; k < r.size(); ++k) width[k] = std::max(width[k], display_width(r[k]));
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    std::string line = indent;
    for (std::size_t k = 0; k < r.size(); ++k) {
      const std::string fill(width[k] - display_width(r[k]), ' ');
      const std::string text = decorate ? decorate(i, k, r[k]) : r[k];
      line += right[k] ? fill + text : text + (k + 1 < r.size() ? fill : "");
      if (k + 1 < r.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string short_name(const std::string& name, std::size_t max = 72) { return cut_text(name, max); }

// "5%", "0.5%": the threshold as people wrote it.
std::string threshold_text(double t) { return human_number(100 * t) + "%"; }

std::string ms(double us) { return human_number(us / 1000); }

std::string kernel_status(const KernelDelta& k) { return k.added() ? "new" : k.vanished() ? "gone" : ""; }

// "+0.474", "-0.002" ms; "unchanged" where the time is the same, never "+0".
std::string change_text(const KernelDelta& k) {
  if (!k.changed()) return "unchanged";
  return (k.delta_us() >= 0 ? "+" : "") + ms(k.delta_us());
}

// "; 240 kernels unchanged" in the trace level's heading.
std::string unchanged_text(const TraceDiff& t) {
  return fmt::format("{} kernel{} unchanged", t.unchanged, t.unchanged == 1 ? "" : "s");
}

}  // namespace

std::string render_compare_table(const Comparison& c, const TableStyle& style) {
  std::string out = fmt::format("Comparing {} (before) with {} (after): change = after / before − 1, {:.0f}% confidence "
                                "interval over the repeats, threshold ±{}\n",
                                printable(c.before_name), printable(c.after_name), 100 * c.confidence,
                                threshold_text(c.threshold));
  auto colour = [&](Verdict v, const std::string& s) {
    if (!style.color) return s;
    const char* code = v == Verdict::regressed ? "31" : v == Verdict::improved ? "32" : v == Verdict::inconclusive ? "33" : "0";
    return fmt::format("\x1b[{}m{}\x1b[0m", code, s);
  };
  std::vector<std::vector<std::string>> table = {{"configuration", "metric", "before", "after", "change", "95% CI", "verdict", "note"}};
  const auto rows = rows_of(c);
  for (const auto& r : rows) {
    const auto& m = *r.metric;
    table.push_back({printable(config_title(*r.config, c)), metric_title(m), value_text(*m.metric, m.change.before),
                     value_text(*m.metric, m.change.after), signed_percent(m.change.rel_change), interval_text(m.change),
                     std::string(verdict_name(m.verdict)), printable(m.note)});
  }
  if (rows.empty()) {
    out += "No metric could be compared.\n";
  } else {
    out += aligned(table, {false, false, true, true, true, true, false, false}, "",
                   [&](std::size_t row, std::size_t col, const std::string& text) {
                     return row > 0 && col == 6 ? colour(rows[row - 1].metric->verdict, text) : text;
                   });
  }
  for (const auto& name : c.only_before) out += fmt::format("only before (no match after): {}\n", printable(name));
  for (const auto& name : c.only_after) out += fmt::format("only after (no match before): {}\n", printable(name));
  bool said_models = false;
  for (const auto& cc : c.curves) {
    const auto sentence = curve_sentence(cc);
    if (sentence.empty()) continue;
    if (!said_models) out += "Scaling models:\n";
    said_models = true;
    out += fmt::format("  {}: {}\n", printable(cc.curve), sentence);
  }
  for (const auto& t : c.traces) {
    out += fmt::format("Trace level, {} (ms per rank and profiled step; {} rank{} x {:.3g} steps before, {} x {:.3g} after): "
                       "GPU kernel time {} → {} ms; {} new kernel{}, {} gone, {}\n",
                       printable(t.configuration), t.ranks_before, t.ranks_before == 1 ? "" : "s", t.steps_before,
                       t.ranks_after, t.steps_after, ms(t.gpu_before_us), ms(t.gpu_after_us), t.added, t.added == 1 ? "" : "s",
                       t.vanished, unchanged_text(t));
    if (t.kernels.empty()) {
      out += "  no kernel's time changed\n";
    } else {
      std::vector<std::vector<std::string>> k = {{"kernel", "before", "after", "change", ""}};
      for (const auto& d : t.kernels)
        k.push_back({printable(short_name(d.name)), ms(d.before_us), ms(d.after_us), change_text(d), kernel_status(d)});
      out += aligned(k, {false, true, true, true, false}, "  ");
    }
    if (!t.collectives.empty()) {
      std::vector<std::vector<std::string>> col = {{"collective", "before", "after", "change"}};
      for (const auto& d : t.collectives)
        col.push_back({printable(d.name), ms(d.before_us), ms(d.after_us), change_text(d)});
      out += aligned(col, {false, true, true, true}, "  ");
    }
    std::vector<std::vector<std::string>> rk = {{"rank", "exposed comm before", "after", "idle before", "after"}};
    auto o = [](std::optional<double> us) { return us ? ms(*us) : std::string("-"); };
    for (const auto& d : t.ranks)
      rk.push_back({std::to_string(d.rank), o(d.exposed_comm_before_us), o(d.exposed_comm_after_us), o(d.idle_before_us),
                    o(d.idle_after_us)});
    out += aligned(rk, {true, true, true, true, true}, "  ");
  }
  out += counts_text(c) + ".\n";
  return out;
}

std::string render_compare_json(const Comparison& c) {
  JsonWriter w;
  w.begin_object().key("schema").value(kCompareSchema).key("scalelens_version").value(SCALELENS_VERSION);
  w.key("before").value(c.before_name).key("after").value(c.after_name);
  w.key("threshold").value(c.threshold).key("confidence").value(c.confidence).key("world_size_unit").value(c.world_size_unit);
  w.key("verdicts").begin_object();
  for (Verdict v : {Verdict::regressed, Verdict::improved, Verdict::unchanged, Verdict::inconclusive})
    w.key(verdict_name(v)).value(c.count(v));
  w.end_object();
  w.key("configurations").begin_array();
  for (const auto& cc : c.configurations) {
    w.begin_object().key("label").value(cc.label).key("label_after").value(cc.label_after);
    w.key("system").value(cc.system).key("system_after").value(cc.system_after).key("world_size").value(cc.world_size);
    w.key("runs_before").value(cc.runs_before).key("runs_after").value(cc.runs_after);
    w.key("verdict").value(verdict_name(cc.worst())).key("metrics").begin_array();
    for (const auto& m : cc.metrics) {
      const auto& e = m.change;
      w.begin_object().key("metric").value(m.metric->name).key("detail").value(m.detail).key("unit").value(m.metric->unit);
      w.key("better").value(m.metric->better == Better::lower ? "lower" : "higher");
      w.key("before").value(e.before).key("after").value(e.after).key("n_before").value(e.n_before).key("n_after").value(e.n_after);
      w.key("rel_change").value(e.rel_change).key("ci_low").value(e.ci_low).key("ci_high").value(e.ci_high);
      w.key("method").value(e.method).key("verdict").value(verdict_name(m.verdict)).key("note").value(m.note).end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  w.key("unmatched").begin_object().key("before").begin_array();
  for (const auto& n : c.only_before) w.value(n);
  w.end_array().key("after").begin_array();
  for (const auto& n : c.only_after) w.value(n);
  w.end_array().end_object();
  w.key("curves").begin_array();
  for (const auto& cc : c.curves) {
    w.begin_object().key("curve").value(cc.curve).key("curve_after").value(cc.curve_after);
    w.key("law_before").value(cc.law_before).key("law_after").value(cc.law_after);
    w.key("formula_before").value(cc.formula_before).key("formula_after").value(cc.formula_after);
    w.key("parameters").begin_array();
    for (const auto& p : cc.parameters)
      w.begin_object().key("name").value(p.name).key("before").value(p.before).key("after").value(p.after).end_object();
    w.end_array().key("sentence").value(curve_sentence(cc)).end_object();
  }
  w.end_array();
  w.key("traces").begin_array();
  for (const auto& t : c.traces) {
    w.begin_object().key("configuration").value(t.configuration).key("world_size").value(t.world_size);
    w.key("ranks_before").value(t.ranks_before).key("ranks_after").value(t.ranks_after);
    w.key("steps_before").value(t.steps_before).key("steps_after").value(t.steps_after);
    w.key("gpu_us_before").value(t.gpu_before_us).key("gpu_us_after").value(t.gpu_after_us);
    w.key("kernels_new").value(t.added).key("kernels_gone").value(t.vanished).key("kernels_unchanged").value(t.unchanged);
    for (const auto* list : {&t.kernels, &t.collectives}) {
      w.key(list == &t.kernels ? "kernels" : "collectives").begin_array();
      for (const auto& k : *list) {
        w.begin_object().key("name").value(k.name).key("communication").value(k.communication);
        w.key("before_us").value(k.before_us).key("after_us").value(k.after_us).key("delta_us").value(k.delta_us());
        w.key("calls_before").value(k.calls_before).key("calls_after").value(k.calls_after);
        w.key("status").value(k.added() ? "new" : k.vanished() ? "gone" : "both").end_object();
      }
      w.end_array();
    }
    w.key("ranks").begin_array();
    for (const auto& r : t.ranks) {
      w.begin_object().key("rank").value(r.rank).key("exposed_comm_us_before").value(r.exposed_comm_before_us);
      w.key("exposed_comm_us_after").value(r.exposed_comm_after_us).key("idle_us_before").value(r.idle_before_us);
      w.key("idle_us_after").value(r.idle_after_us).end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& d : c.warnings)
  {
    w.begin_object()
        .key("severity")
        .value(d.severity == Severity::note ? "note" : d.severity == Severity::error ? "error" : "warning")
        .key("code")
        .value(d.code)
        .key("message")
        .value(d.message);
    if (!d.path.empty()) w.key("path").value(d.path);
    if (d.line > 0) w.key("line").value(static_cast<std::int64_t>(d.line));
    w.end_object();
  }
  w.end_array().end_object();
  auto out = w.take();
  out += '\n';
  return out;
}

namespace {

// Text in a markdown table cell or line, as text: markdown's and HTML's special characters escaped
// (a label cannot open a comment, a tag or a code span in the pull request), newlines flattened.
std::string cell(std::string_view s) {
  std::string out;
  const std::string text = valid_utf8(s);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    switch (ch) {
      case '\\': out += "\\\\"; break;
      case '|': out += "\\|"; break;
      case '`': out += "&#96;"; break;
      case '*': out += "\\*"; break;
      case '_': out += "\\_"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      // Brackets escaped: a label "[x](https://…)" or "![p](…)" must not become a live link or a
      // tracking image in a pull request's comment.
      case '[': out += "\\["; break;
      case ']': out += "\\]"; break;
      // An @name would notify that user; an entity keeps the text and breaks the mention ("label @
      // system", a curve's name, mentions no one and stays as it is).
      case '@': out += i + 1 < text.size() && std::isalnum(static_cast<unsigned char>(text[i + 1])) ? "&#64;" : "@"; break;
      default:
        // Controls (ESC, line breaks; C1's U+0080..U+009F, CSI among them) would reach the terminal
        // or break the table row.
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
          out += ' ';
        } else if (static_cast<unsigned char>(ch) == 0xC2 && i + 1 < text.size() &&
                   static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
          out += ' ';
          ++i;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

const char* mark(Verdict v) {
  switch (v) {
    case Verdict::regressed: return "❌ **regressed**";
    case Verdict::improved: return "✅ improved";
    case Verdict::unchanged: return "unchanged";
    case Verdict::inconclusive: return "❔ inconclusive";
  }
  return "";
}

std::string xml(std::string_view text) {
  std::string out;
  for (char ch : valid_utf8(text)) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') out += "?";
        else out += ch;
    }
  }
  return out;
}

}  // namespace

std::string render_compare_markdown(const Comparison& c) {
  const std::size_t regressed = c.count(Verdict::regressed);
  std::string out = fmt::format("### scalelens compare: {}{}\n\n", regressed ? "❌ " : "", counts_text(c));
  out += fmt::format("{} → {}; change = after / before − 1 with its {:.0f}% confidence interval over the repeats; "
                     "threshold ±{}.\n\n",
                     cell(c.before_name), cell(c.after_name), 100 * c.confidence, threshold_text(c.threshold));
  const auto rows = rows_of(c);
  if (!rows.empty()) {
    out += "| configuration | metric | before | after | change | 95% CI | verdict | note |\n";
    out += "|---|---|--:|--:|--:|--:|---|---|\n";
    for (const auto& r : rows) {
      const auto& m = *r.metric;
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(config_title(*r.config, c)), cell(metric_title(m)),
                         value_text(*m.metric, m.change.before), value_text(*m.metric, m.change.after),
                         signed_percent(m.change.rel_change), interval_text(m.change), mark(m.verdict), cell(m.note));
    }
    out += "\n";
  }
  if (!c.only_before.empty() || !c.only_after.empty()) {
    out += "**Not matched** (compared with nothing):\n";
    for (const auto& n : c.only_before) out += fmt::format("- only before: {}\n", cell(n));
    for (const auto& n : c.only_after) out += fmt::format("- only after: {}\n", cell(n));
    out += "\n";
  }
  for (const auto& cc : c.curves)
    if (auto s = curve_sentence(cc); !s.empty()) out += fmt::format("**Scaling model** of {}: {}\n\n", cell(cc.curve), cell(s));
  for (const auto& t : c.traces) {
    out += fmt::format("<details><summary>Trace level, {}: GPU kernel time {} → {} ms per rank and step; {}</summary>\n\n",
                       cell(t.configuration), ms(t.gpu_before_us), ms(t.gpu_after_us), unchanged_text(t));
    if (t.kernels.empty()) {
      out += "No kernel's time changed.\n";
    } else {
      out += "| kernel | before ms | after ms | change ms | |\n|---|--:|--:|--:|---|\n";
      for (const auto& k : t.kernels)
        out += fmt::format("| {} | {} | {} | {} | {} |\n", cell(short_name(k.name)), ms(k.before_us), ms(k.after_us),
                           change_text(k), kernel_status(k));
    }
    out += "\n</details>\n\n";
  }
  return out;
}

std::string render_compare_junit(const Comparison& c, const CompareRenderOptions& options) {
  std::size_t tests = 0, failures = 0, skipped = 0;
  std::string cases;
  auto fails = [&](Verdict v) { return v == Verdict::regressed || (options.fail_on_inconclusive && v == Verdict::inconclusive); };
  for (const auto& cc : c.configurations) {
    const std::string cls = "scalelens." + config_title(cc, c);
    for (const auto& m : cc.metrics) {
      ++tests;
      const auto& e = m.change;
      const std::string what = fmt::format("{}: {} → {}, change {} (95% CI {}), threshold ±{}", verdict_name(m.verdict),
                                           value_text(*m.metric, e.before), value_text(*m.metric, e.after),
                                           signed_percent(e.rel_change), interval_text(e), threshold_text(c.threshold));
      cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\">", xml(cls), xml(metric_title(m)));
      if (fails(m.verdict)) {
        ++failures;
        cases += fmt::format("<failure type=\"{}\" message=\"{}\">{}</failure>", verdict_name(m.verdict), xml(what),
                             xml(what + (m.note.empty() ? "" : "; " + m.note)));
      } else if (m.verdict == Verdict::inconclusive) {
        ++skipped;
        cases += fmt::format("<skipped message=\"{}\"/>", xml(what + (m.note.empty() ? "" : "; " + m.note)));
      } else {
        cases += fmt::format("<system-out>{}</system-out>", xml(what));
      }
      cases += "</testcase>\n";
    }
  }
  // Unmatched configurations: listed, never dropped; skipped (nothing to compare them with).
  // A configuration gone from the after study fails a strict gate (its runs may all have crashed).
  for (const auto* list : {&c.only_before, &c.only_after})
    for (const auto& n : *list) {
      ++tests;
      const bool before_only = list == &c.only_before;
      const std::string what = fmt::format("only {}: no match {}", before_only ? "before" : "after", before_only ? "after" : "before");
      cases += fmt::format("    <testcase classname=\"scalelens.{}\" name=\"matched\">", xml(n));
      if (before_only && options.fail_on_inconclusive) {
        ++failures;
        cases += fmt::format("<failure type=\"unmatched\" message=\"{}\">{}</failure>", xml(what), xml(what));
      } else {
        ++skipped;
        cases += fmt::format("<skipped message=\"{}\"/>", xml(what));
      }
      cases += "</testcase>\n";
    }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"scalelens compare\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n", tests, failures, skipped);
  out += fmt::format("  <testsuite name=\"{} vs {}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n", xml(c.before_name),
                     xml(c.after_name), tests, failures, skipped);
  out += cases;
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string render_compare_html(const Comparison& c, std::string_view before_summary_json, std::string_view after_summary_json,
                                std::string_view after_series_json) {
  JsonWriter extra;
  extra.begin_object().key("before").raw(before_summary_json).key("comparison").raw(render_compare_json(c)).end_object();
  return render_report_html(render_report_data(after_summary_json, after_series_json, "static", {}, extra.str()));
}

}  // namespace scalelens
