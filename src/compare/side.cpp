// One side of a comparison, from what the user named: a saved summary.json, a report's output
// folder (its summary.json), or inputs that are read and analysed as `scalelens report` would.
#include <fmt/format.h>

#include "compare/compare.hpp"
#include "compare/summary_reader.hpp"
#include "common/file_io.hpp"
#include "common/walk.hpp"
#include "report/summary_writers.hpp"

namespace scalelens {

bool is_saved_summary(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  auto head = read_head(path, 4096);
  return head && head.value().find("\"scalelens.summary/") != std::string::npos;
}

namespace {

Result<ComparisonSide> from_saved(const std::filesystem::path& file) {
  auto saved = read_summary_json(file);
  if (!saved) return saved.error();
  ComparisonSide side;
  side.summary = std::move(saved.value().summary);
  side.summary_json = std::move(saved.value().json);
  return side;
}
}  // namespace

Result<ComparisonSide> load_comparison_side(const std::string& input, IngestOptions in, const AnalysisOptions& analysis_options) {
  const std::filesystem::path path(input);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Error{unreachable_input(path, ec).message, input};
  if (is_saved_summary(path)) return from_saved(path);
  in.inputs = {input};
  Study study = ingest(in);
  Summary summary = analyze(study, analysis_options);
  if (summary.configurations.empty()) {
    // A report's output folder: its summary.json.
    if (is_saved_summary(path / "summary.json")) return from_saved(path / "summary.json");
    return Error{fmt::format("no usable data: no run with a known label and GPU count ({} files seen, {} recognized)", study.files_seen,
                             study.files_read),
                 input};
  }
  ComparisonSide side;
  side.summary_json = render_summary_json(summary);
  side.summary = std::move(summary);
  side.study = std::move(study);
  return side;
}

}  // namespace scalelens
