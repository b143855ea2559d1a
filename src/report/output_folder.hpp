#pragma once
// Writes the report's files into the output folder.
#include <filesystem>
#include <vector>

#include "analysis/summary.hpp"
#include "common/result.hpp"

namespace scalelens {

// Creates `dir` if needed and writes summary.json and summary.csv atomically. Returns the paths.
Result<std::vector<std::filesystem::path>> write_report_files(const Summary& summary, const std::filesystem::path& dir);

}  // namespace scalelens
