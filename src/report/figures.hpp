#pragma once
// Static figures for papers (figures/*.svg|png|pdf): a gnuplot script (.gp) and its data (.dat)
// per figure, rendered with gnuplot when it is installed. Without gnuplot the scripts and data are
// still written and the result says how to render them.
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "model/study.hpp"

namespace scalelens {

struct FiguresResult {
  std::vector<std::filesystem::path> written;  // .gp, .dat and rendered files
  std::vector<std::string> figures;             // names with data: "speedup", "efficiency", ...
  std::vector<std::string> skipped;             // names without data in this study
  bool rendered = false;                         // gnuplot ran and succeeded for every figure
  std::string gnuplot;                           // its path, "" when not found
  std::string message;                           // for the report: what was done, how to render
  std::vector<std::string> failed;               // figures gnuplot could not draw
  std::string json() const;                      // the "figures" object of the report data
};

// Writes `dir`/<name>.gp and .dat for each figure with data and runs gnuplot on them (unless
// SCALELENS_NO_GNUPLOT is set or gnuplot is not on PATH). Every figure is the summary's: they
// draw what summary.json states.
FiguresResult write_figures(const Summary& summary, const std::filesystem::path& dir);

// Runs `gnuplot` on the scripts (file names in `dir`) in `processes` processes (0: one per core),
// several per process with `reset session` between them; the scripts of a process that fails are
// drawn again one per process. Pictures left empty by a failure are removed.
struct RenderedFigures {
  std::vector<std::filesystem::path> pictures;  // the .svg, .png and .pdf files drawn
  bool all_drawn = true;                        // every script succeeded
  std::vector<std::string> failed;              // the scripts gnuplot stopped on
};
RenderedFigures render_gnuplot_scripts(const std::string& gnuplot, const std::filesystem::path& dir,
                                       const std::vector<std::string>& scripts, std::size_t processes = 0);

// A string as a gnuplot single-quoted literal ('' doubles a quote).
std::string gnuplot_quote(const std::string& s);

}  // namespace scalelens
