#pragma once
// `scalelens serve`: the dashboard live over a study folder (like `tensorboard --logdir`).
// Read-only: it serves the embedded page and a JSON API computed from the study, never files.
//   GET /                      the dashboard, with the current data inlined
//   GET /api/summary           summary.json of the study as it is now
//   GET /api/data              the page's data (schema scalelens.report-data/1, series left out)
//   GET /api/series?run=ID     one run's decimated series (GPU util/power per GPU, step times)
//   GET /api/version           {"generation": N}: N grows whenever the study changed on disk
// The study is read again when anything under the inputs changes: inotify tells (an idle server
// does not wake up), or, on network file systems (where other machines' writes are invisible to
// inotify), past the inotify watch limit, or with --watch poll, polling with backoff.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"

namespace scalelens {

struct ServeOptions {
  std::vector<std::string> inputs;
  std::optional<std::string> pattern;
  StudyDefaults defaults;
  AnalysisOptions analysis;
  std::string host = "127.0.0.1";
  int port = 6006;        // 0: any free port (printed)
  double poll_s = 2.0;    // at most one re-read per poll_s; the first polling period
  std::string watch = "auto";  // auto (inotify unless on a network file system), inotify, poll
  bool quiet = false;
};

// Serves until SIGINT or SIGTERM; returns the exit code (0 after a clean shutdown, 1 when the
// address cannot be bound or the server was built without cpp-httplib, 2 when an input does not
// exist).
int serve(const ServeOptions& options);

// A fingerprint of every file under `inputs` (path, size, modification time): changes when a run
// is added, removed or written to.
std::size_t study_fingerprint(const std::vector<std::string>& inputs);

// Tells when the study may have changed: inotify on every folder under the inputs (new folders
// are watched as they appear), else polling of study_fingerprint() with backoff.
class StudyWatcher {
 public:
  StudyWatcher(const std::vector<std::string>& inputs, const std::string& mode, double poll_s);
  ~StudyWatcher();
  StudyWatcher(const StudyWatcher&) = delete;
  StudyWatcher& operator=(const StudyWatcher&) = delete;
  // Blocks until something changed (true) or stop() was called (false).
  bool wait_for_change();
  void stop();  // from any thread
  bool polling() const { return inotify_fd_ < 0; }
  const std::string& how() const { return how_; }  // "inotify on N folders", or why it polls

 private:
  void watch_tree(const std::filesystem::path& root);
  bool read_events();
  void poll_from_now(const std::string& why);
  bool wait(double seconds);  // false when stopped

  std::vector<std::string> inputs_;
  double poll_s_, period_s_;
  int inotify_fd_ = -1, stop_fd_ = -1;
  std::map<int, std::filesystem::path> watches_;
  std::vector<std::filesystem::path> roots_;  // the folders watched for the inputs (a file input's folder)
  std::string how_, watch_error_;
  bool polling_reason_ = false;
  std::size_t fingerprint_ = 0;
  std::chrono::steady_clock::time_point last_change_{};
};

}  // namespace scalelens
