#pragma once
// The study in a scratch folder as `scalelens report` reads it, for tests of what the readers make
// of files.
#include "ingest/ingest.hpp"
#include "report/report_html.hpp"
#include "support/test_support.hpp"

namespace scalelens::testing {

// One thread, each GPU kept as a record (the report summarizes a run folder's GPU log as it is
// read: read_study_as_report). keep_samples: every GPU sample kept, as the Python API asks,
// instead of reduced as it is read.
inline Study read_study(const ScratchDir& dir, bool keep_samples = false) {
  IngestOptions options{{dir.path().string()}, {}, 1, {}};
  options.keep_samples = keep_samples;
  return ingest(options);
}

// Exactly as `scalelens report` reads it, run folders' GPU logs summarized (GpuDigest) and their
// epochs and steps tabulated (EpochRow, StepTable) as they are read, on `threads` threads; with `spill`, their page
// series set aside there, as the report does in one process.
inline Study read_study_as_report(const ScratchDir& dir, unsigned threads = 2,
                                  const std::shared_ptr<TextSpill>& spill = nullptr) {
  IngestOptions options{{dir.path().string()}, {}, threads, {}};
  options.summarize_gpus = [spill](const Run& run, RunData& log) { summarize_gpu_log(run, log, spill); };
  options.tabulate_epochs = true;
  options.tabulate_steps = true;
  return ingest(options);
}

}  // namespace scalelens::testing
