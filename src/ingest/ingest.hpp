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
  std::optional<std::string> pattern;  // RE2 regex searched in paths relative to their input
  unsigned threads = 0;                // 0 = all cores
  // Called as files finish: (done, total). From the calling thread only.
  std::function<void(std::size_t, std::size_t)> progress;
};

Study ingest(const IngestOptions& options);

}  // namespace scalelens
