#pragma once
// itwinai's profiler averages CSV (interTwin-eu/itwinai torch/profiling/profiler.py): one row per
// torch.profiler key_averages() entry, columns name, node_id, self_cuda_time_total (µs),
// cuda_time_total, cuda_time_total_str, calls, strategy, num_gpus, global_rank; up to v0.3.4-rc1
// also pandas' unnamed index column first. Shared by the MLflow reader (artifact
// torch_profiling_averages/torch_profiling_averages.csv) and the CSV reader (computation-data/,
// communication-data/).
#include <filesystem>
#include <optional>
#include <string_view>

#include "ingest/reader.hpp"

namespace scalelens {

// True when `header_line` is such a file's header.
bool is_profiler_averages_header(std::string_view header_line);

// The sums of one file (files = 1), or nullopt with a warning in `out` when it cannot be read.
std::optional<ProfilerAverages> read_profiler_averages(const std::filesystem::path& file, ReadOutput& out);

}  // namespace scalelens
