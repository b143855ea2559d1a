#include "ingest/itwinai/profiler_averages.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/csv_rows.hpp"

namespace scalelens {

namespace {

// itwinai's computation pattern `.*(?:aten|\sat|c10|autograd)::` (scalability_report/utils.py
// calculate_comp_time, searched anywhere in the name): a PyTorch ATen, c10 or autograd op.
bool is_aten(std::string_view name) {
  for (std::string_view ns : {"aten::", "c10::", "autograd::"})
    if (name.find(ns) != std::string_view::npos) return true;
  for (std::size_t at = name.find("at::"); at != std::string_view::npos; at = name.find("at::", at + 1))
    if (at > 0 && (name[at - 1] == ' ' || name[at - 1] == '\t' || name[at - 1] == '\n' || name[at - 1] == '\r' ||
                   name[at - 1] == '\f' || name[at - 1] == '\v'))
      return true;
  return false;
}

}  // namespace

bool is_profiler_averages_header(std::string_view header_line) {
  std::vector<std::string_view> header;
  split_csv(header_line, header);
  return find_column(header, "name") >= 0 && find_column(header, "self_cuda_time_total") >= 0 &&
         find_column(header, "cuda_time_total") >= 0 && find_column(header, "calls") >= 0;
}

std::optional<ProfilerAverages> read_profiler_averages(const std::filesystem::path& file, ReadOutput& out) {
  auto text = read_file(file);
  if (!text) {
    out.warn("unreadable-file", text.error().message, file);
    return std::nullopt;
  }
  static constexpr std::array<std::string_view, 2> cols{"name", "self_cuda_time_total"};
  ProfilerAverages sums;
  sums.files = 1;
  BadLines bad;
  const bool read = for_each_row(text.value(), cols, cols.size(), out, file, bad, [&](const auto& row, std::int64_t line) {
    auto us = parse_double(row[1]);
    if (!us || *us < 0 || !std::isfinite(*us))
      return bad.add(line, fmt::format("self_cuda_time_total '{}' is not a number of microseconds", trim(row[1])));
    const auto name = trim(row[0]);
    sums.total_us += *us;
    if (name == "ProfilerStep*") sums.profiler_step_us += *us;
    if (is_aten(name)) sums.aten_us += *us;
  }, LastLine::complete);
  if (!read) return std::nullopt;
  bad.report(out, file);
  return sums;
}

}  // namespace scalelens
