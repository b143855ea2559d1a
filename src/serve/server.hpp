#pragma once
// `scalelens serve`: the dashboard live over a study folder (like `tensorboard --logdir`).
// Read-only: it serves the embedded page and a JSON API computed from the study, never files.
//   GET /                      the dashboard, with the current data inlined
//   GET /api/summary           summary.json of the study as it is now
//   GET /api/data              the page's data (schema scalelens.report-data/1, series left out)
//   GET /api/series?run=ID     one run's decimated series (GPU util/power per GPU, step times)
//   GET /api/version           {"generation": N}: N grows whenever the study changed on disk
// The study is rescanned when a file's size or modification time changes (polled).
#include <optional>
#include <string>
#include <vector>

#include "analysis/analyze.hpp"

namespace scalelens {

struct ServeOptions {
  std::vector<std::string> inputs;
  std::optional<std::string> pattern;
  AnalysisOptions analysis;
  std::string host = "127.0.0.1";
  int port = 6006;        // 0: any free port (printed)
  double poll_s = 2.0;    // how often the study's files are checked for changes
  bool quiet = false;
};

// Serves until SIGINT or SIGTERM; returns the exit code (0 after a clean shutdown, 1 when the
// address cannot be bound or the server was built without cpp-httplib).
int serve(const ServeOptions& options);

// A fingerprint of every file under `inputs` (path, size, modification time): changes when a run
// is added, removed or written to.
std::size_t study_fingerprint(const std::vector<std::string>& inputs);

}  // namespace scalelens
