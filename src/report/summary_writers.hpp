#pragma once
// Renderers of a Summary: summary.json (schema scalelens.summary/2), summary.csv and the terminal
// table. They only format; every figure comes computed from analysis.
#include <functional>
#include <string>
#include <string_view>

#include "analysis/summary.hpp"

namespace scalelens {

inline constexpr const char* kSummarySchema = "scalelens.summary/2";

std::string render_summary_json(const Summary& summary);
// The same without its final newline, handed to `sink` in pieces as it is written (a large study's
// summary is never whole in memory).
void write_summary_json(const Summary& summary, const std::function<void(std::string_view)>& sink);
std::string render_summary_csv(const Summary& summary);

struct TableStyle {
  bool color = false;  // ANSI colours, only on a terminal
};
// One row per configuration; columns with no data in any row are left out.
std::string render_table(const Summary& summary, const TableStyle& style = {});
// Warnings and notes, one per line, "warning: path:line: message [code]".
std::string render_diagnostics(const Summary& summary, const TableStyle& style = {});
std::string render_diagnostics(const std::vector<Diagnostic>& diagnostics, const TableStyle& style = {});

// A figure with 3 significant digits (more for large values), as people read them.
std::string human_number(double v);

}  // namespace scalelens
