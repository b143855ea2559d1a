#pragma once
// Renderers of a Comparison (compare/compare.hpp): the terminal table sorted by severity, JSON
// (schema scalelens.compare/1), markdown for a pull-request comment, JUnit XML for CI systems
// (one test case per configuration and metric) and the HTML page with both studies overlaid.
#include <string>
#include <string_view>

#include "compare/compare.hpp"
#include "report/summary_writers.hpp"

namespace scalelens {

// Inconclusive counts as a failure (JUnit) and for the exit code under --fail-on inconclusive.
struct CompareRenderOptions {
  bool fail_on_inconclusive = false;
};

std::string render_compare_table(const Comparison& c, const TableStyle& style = {});
std::string render_compare_json(const Comparison& c);
std::string render_compare_markdown(const Comparison& c);
std::string render_compare_junit(const Comparison& c, const CompareRenderOptions& options = {});
// The dashboard with the after study as its study (and its runs' series for the drill-down, when it
// was read from folders; else "null"), the before study's summary beside it and the comparison:
// the scaling charts draw both, the table carries the verdicts.
std::string render_compare_html(const Comparison& c, std::string_view before_summary_json, std::string_view after_summary_json,
                                std::string_view after_series_json = "null");

// "+10.0%"; "−" for none.
std::string signed_percent(std::optional<double> fraction);

}  // namespace scalelens
