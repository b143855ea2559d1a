#pragma once
// Walks the study's folders, asks the readers about each file, reads in parallel and merges the
// results into one Study.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/study.hpp"

namespace scalelens {

struct IngestOptions {
  std::vector<std::string> inputs;   // folders or files
  // RE2 regex searched in paths relative to their input; a run-defining file whose path does not
  // match is still read, and its runs kept when the regex matches their label, run name or experiment.
  std::optional<std::string> pattern;
  unsigned threads = 0;                // 0 = all cores
  // Called as files finish: (done, total). From the calling thread only.
  std::function<void(std::size_t, std::size_t)> progress;
  std::optional<std::string> experiment;  // MLflow runs of this experiment (by name) only
  std::vector<std::string> run_names;     // MLflow train runs with these names only
};

Study ingest(const IngestOptions& options);

}  // namespace scalelens
