#pragma once
// The study in a scratch folder as `scalelens report` reads it (one thread), for tests of what the
// readers make of files.
#include "ingest/ingest.hpp"
#include "support/test_support.hpp"

namespace scalelens::testing {

// keep_samples: every GPU sample kept, as the Python API asks, instead of reduced as it is read.
inline Study read_study(const ScratchDir& dir, bool keep_samples = false) {
  IngestOptions options{{dir.path().string()}, {}, 1, {}};
  options.keep_samples = keep_samples;
  return ingest(options);
}

}  // namespace scalelens::testing
