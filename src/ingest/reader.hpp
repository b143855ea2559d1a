#pragma once
// The one interface every input format implements. A reader is chosen by a file's content (its
// first bytes), never by a file-name pattern; see ingest.hpp for how files are walked and how what
// a reader returns is merged into the study.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostics.hpp"
#include "model/study.hpp"

namespace scalelens {

struct ReadContext {
  std::filesystem::path file;
  // Header of the run whose scalelens.json is nearest above `file` (label, world size, start/end,
  // ...; its data vectors are empty), or null. Foreign files take missing labels from it.
  const Run* enclosing = nullptr;
};

// A node's clock that stepped back `step_ns` once, as its log places it: a stamp up to
// `new_from_ns` is on the clock it stepped from (before the step), one after `old_until_ns` on the
// clock it stepped to (after it: `step_ns` early); one between may be either. step_ns 0: none.
struct StepWindow {
  std::int64_t step_ns = 0, new_from_ns = 0, old_until_ns = 0;
};

// A run's epochs' first start and last end ({0, 0}: none).
struct EpochSpan {
  std::int64_t first = 0, last = 0;
};

struct ReadOutput {
  // Runs this file defines (an MLPerf log, an MLflow experiment). Inside a scalelens run folder
  // they are merged into that run instead.
  std::vector<Run> runs;
  // Data for the enclosing run (epochs, steps, GPU and host series, ranks, breakdowns, and the
  // world size and GPU model the file states). Without an enclosing run it is dropped with a
  // warning naming the file (or, for traces and GPU logs, makes a run of its own).
  RunData attach;
  std::vector<Diagnostic> diagnostics;
  // A log of a collected run (gpu.csv, host.csv) whose node's clock stepped back while it sampled,
  // at whose end the run's end_ns lies as written: that end was stamped on the stepped clock. The
  // step (> 0; 0: none) to move it by onto the clock the run began with, and the log's line where
  // the clock stepped; ingest alone may move a run's end (its other files' samples were summarized
  // over it).
  std::int64_t end_step_ns = 0, end_step_line = 0;
  // Where that step lies among the node's stamps (an empty window where the log stepped more than
  // once): for ingest to place the run's other times stamped on that node (epochs, steps, ranks).
  StepWindow end_step_window;
  // Where its epochs were tabulated as read (ingest, EpochRow): their span, which the table no longer
  // holds and a copy of the run lacking its manifest's clock is found by.
  EpochSpan tabulated_epochs;
  // A hash of a node's GPU or host log that holds samples (its content and node; 0: none), which a
  // copy of a run that states no instant is found by (ingest), in place of the samples themselves.
  std::uint64_t samples_hash = 0;

  void warn(std::string code, std::string message, const std::filesystem::path& path, std::int64_t line = 0) {
    diagnostics.push_back({Severity::warning, std::move(code), std::move(message), path.string(), line, {}});
  }
  void error(std::string code, std::string message, const std::filesystem::path& path, std::int64_t line = 0) {
    diagnostics.push_back({Severity::error, std::move(code), std::move(message), path.string(), line, {}});
  }
  bool has_attachment() const { return attach.has_data(); }
};

// A file's first bytes open a JSON object (after blanks): what readers that recognize a JSON file by
// a string in it check first, since the program or script that writes such files holds the string too.
inline bool starts_json_object(std::string_view head) {
  const auto at = head.find_first_not_of(" \t\r\n");
  return at != std::string_view::npos && head[at] == '{';
}

class Reader {
 public:
  virtual ~Reader() = default;
  virtual std::string_view name() const = 0;
  // True when `head` (up to the first 64 KiB of the file, gzip already inflated) is this format.
  virtual bool recognizes(const std::filesystem::path& path, std::string_view head) const = 0;
  virtual void read(const ReadContext& ctx, ReadOutput& out) const = 0;
  // The words of a note this reader says of one place once per file, alike (`said`), once ingest
  // says it once for all `files` that said it: how many did. Empty for a note said as it was.
  virtual std::string counted_note(const Diagnostic& /*said*/, std::size_t /*files*/) const { return {}; }
  // True when the file (of this format, by its first bytes) holds GPU samples that it attaches to
  // its folder's run (gpu.csv, nvidia-smi logs): ingest shares the chart budget among those files.
  virtual bool attaches_gpu_series(std::string_view /*head*/) const { return false; }
  // True when the file attaches epochs to its folder's run (epochs.csv). Every reader that does
  // must say so: a run folder's only such file is tabulated as it is read (ingest, EpochRow).
  virtual bool attaches_epochs(std::string_view /*head*/) const { return false; }
  // Likewise for steps (steps.csv): a run folder's only step log is tabulated as it is read (StepTable).
  virtual bool attaches_steps(std::string_view /*head*/) const { return false; }
  // Manifest readers run first so that every other file can see its enclosing run.
  virtual bool is_manifest() const { return false; }
};

// Every reader, in the order they are asked; the first that recognizes a file reads it.
std::vector<std::unique_ptr<Reader>> all_readers();

// Factories, one per format folder.
std::unique_ptr<Reader> make_run_manifest_reader();   // ingest/scalelens
std::unique_ptr<Reader> make_run_csv_reader();        // ingest/scalelens: epochs/steps/gpu/host.csv
std::unique_ptr<Reader> make_rank_record_reader();    // ingest/scalelens: ranks/<rank>.json
std::unique_ptr<Reader> make_mlperf_reader();         // ingest/mlperf
std::unique_ptr<Reader> make_itwinai_mlflow_reader(); // ingest/itwinai
std::unique_ptr<Reader> make_itwinai_csv_reader();    // ingest/itwinai
std::unique_ptr<Reader> make_nvsmi_reader();          // ingest/nvsmi
std::unique_ptr<Reader> make_kineto_reader();         // trace/kineto_reader.cpp: Kineto traces

}  // namespace scalelens
