#pragma once
// What `scalelens trace` prints: a table for people, JSON (schema scalelens.trace/1) for tools.
#include <string>

#include "trace/trace_set.hpp"

namespace scalelens::trace {

struct OutputOptions {
  bool per_step = false;  // --steps: one row per rank and profiler step
  int top_kernels = 0;    // --kernels N: top N kernels by time, per type
  bool hta = false;       // --hta: HTA's figures beside ours
  int instances = 20;     // --instances N: matched collective calls listed (JSON), the longest transfers first
  int top_ops = 0;        // --ops N: roofline of the top N ops by GPU time (table); JSON lists 10 when 0
};

std::string format_table(const TraceSet& set, const OutputOptions& options);
std::string format_json(const TraceSet& set, const OutputOptions& options);

}  // namespace scalelens::trace
