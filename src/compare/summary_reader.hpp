#pragma once
// A saved summary.json (scalelens.summary/1 or /2, what `scalelens report` writes) read back into
// the parts of a Summary that a comparison uses: the configurations with their identity and
// figures, the runs' own figures (the repeats), and the curves' scaling models. CI jobs keep only
// that file of a baseline study.
#include <filesystem>
#include <string>

#include "analysis/summary.hpp"
#include "common/result.hpp"

namespace scalelens {

struct SavedSummary {
  Summary summary;
  std::string json;  // the file's text, for the comparison page
};

// Errors name the file and what is wrong with it ("not JSON", "not a scalelens summary", a field
// of the wrong type).
Result<SavedSummary> read_summary_json(const std::filesystem::path& path);
Result<SavedSummary> parse_summary_json(std::string json, const std::string& path_for_messages);

}  // namespace scalelens
