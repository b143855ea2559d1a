#pragma once
// Writes the report's files into the output folder.
#include <filesystem>
#include <vector>

#include "analysis/summary.hpp"
#include "common/result.hpp"
#include "model/study.hpp"

namespace scalelens {

// Creates `dir` if needed and writes summary.json, summary.csv and report.html (the dashboard with
// the data inlined) atomically, and the static figures into dir/figures/ (gnuplot scripts, data
// and, when gnuplot is installed, SVG/PNG/PDF). Returns the paths written; where gnuplot failed on
// some figures (the rest are drawn), `figures_failed` gets what to tell the user.
Result<std::vector<std::filesystem::path>> write_report_files(const Summary& summary, const Study& study,
                                                              const std::filesystem::path& dir,
                                                              std::string* figures_failed = nullptr);
// The same without the study: report.html has no per-run series and figures/ no breakdown.
Result<std::vector<std::filesystem::path>> write_report_files(const Summary& summary, const std::filesystem::path& dir);

}  // namespace scalelens
