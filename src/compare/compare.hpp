#pragma once
// Two studies compared (DESIGN.md, "Comparing studies"): configurations matched by identity
// (label, system, world size), per metric the relative change with its confidence interval and a
// verdict, the scaling models' parameters side by side, and what could not be matched.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analyze.hpp"
#include "analysis/summary.hpp"
#include "common/result.hpp"
#include "ingest/ingest.hpp"
#include "common/diagnostics.hpp"
#include "compare/change.hpp"
#include "compare/trace_diff.hpp"

namespace scalelens {

inline constexpr const char* kCompareSchema = "scalelens.compare/1";

// The metrics a comparison knows, in the order they are shown.
struct MetricInfo {
  const char* name;   // as --metric and the JSON name it
  const char* title;  // as people read it
  const char* unit;
  Better better;
};
const std::vector<MetricInfo>& compare_metrics();
// A name or alias of --metric ("time", "efficiency", "energy", "util", ...); nullptr when unknown.
const MetricInfo* find_metric(std::string_view name);

struct CompareOptions {
  ChangeOptions change;          // threshold, confidence, bootstrap
  std::vector<std::string> metrics;  // names (compare_metrics()); empty: every one
  // --match: a label or system of `before` that is called otherwise in `after`.
  std::map<std::string, std::string> label_renames, system_renames;
};

struct MetricComparison {
  const MetricInfo* metric = nullptr;
  std::string detail;  // e.g. "per epoch" for time
  ChangeEstimate change;
  Verdict verdict = Verdict::inconclusive;
  std::string note;    // why inconclusive, how many repeats would decide it; how a figure was formed
};

struct ConfigurationComparison {
  std::string label, label_after, system, system_after;
  int world_size = 0;
  std::string curve;  // the before side's curve
  std::size_t runs_before = 0, runs_after = 0;
  std::size_t before_index = 0, after_index = 0;  // into each Summary's configurations
  std::vector<MetricComparison> metrics;
  Verdict worst() const;  // the most severe of its metrics' verdicts; unchanged when none
  std::string name() const;  // "ddp 8 GPUs", "ddp→ddp-new @ sys 8 GPUs"
};

// A fitted scaling model's parameter on both sides ("serial fraction 2.1% → 3.4%").
struct ParameterChange {
  std::string name, title;
  std::optional<double> before, after;
  bool percent = false;
};
struct CurveComparison {
  std::string curve, curve_after;
  std::string law_before, law_after;          // "" when the side has no model
  std::string formula_before, formula_after;
  std::vector<ParameterChange> parameters;
  std::string sentence;  // "serial fraction 2.1% → 3.4%; law Amdahl → USL"
};

struct Comparison {
  std::string before_name, after_name;  // the inputs, as given
  std::string world_size_unit = "GPUs";
  double threshold = 0.05, confidence = 0.95;
  std::vector<ConfigurationComparison> configurations;  // most severe first, then by label and size
  std::vector<std::string> only_before, only_after;     // configurations without a match, by name
  std::vector<CurveComparison> curves;
  std::vector<TraceDiff> traces;  // matched configurations with GPU traces on both sides
  std::vector<Diagnostic> warnings;
  std::size_t count(Verdict v) const;  // metrics with that verdict over every configuration
};

Comparison compare_summaries(const Summary& before, const Summary& after, const CompareOptions& options);

// The --match values no configuration has on its side (OLD before, NEW after), one sentence each
// naming the option, the side and the value, what that side has, and the data its reading left out
// (a deleted MLflow experiment's label is in none of its configurations). Empty when every one pairs.
std::vector<std::string> unknown_match_names(const Summary& before, const Summary& after, const CompareOptions& options);

// The trace level: for every matched configuration with GPU traces on both sides (studies read from
// folders), the kernels' and collectives' changes (the `top` largest) and each rank's exposed
// communication and idle time. The traces are analysed again (their cached summaries hold every
// kernel).
struct TraceLevelOptions {
  std::size_t top = 10;
  unsigned threads = 0;
  bool cache = true;
  std::filesystem::path cache_dir;
};
void add_trace_level(Comparison& comparison, const Summary& before, const Study& before_study, const Summary& after,
                     const Study& after_study, const TraceLevelOptions& options);

// One side of a comparison: a study read from folders (anything `report` reads), or a summary.json
// saved earlier (also a report's output folder, by its summary.json). Errors name the input and
// why nothing could be used.
struct ComparisonSide {
  Summary summary;
  std::string summary_json;
  std::optional<Study> study;  // when read from folders (the trace level needs it)
};
Result<ComparisonSide> load_comparison_side(const std::string& input, IngestOptions ingest_options,
                                            const AnalysisOptions& analysis_options);
// Whether a file is a summary.json that `scalelens report` wrote (by its schema).
bool is_saved_summary(const std::filesystem::path& path);

}  // namespace scalelens
