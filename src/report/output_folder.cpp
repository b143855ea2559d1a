#include "report/output_folder.hpp"

#include <thread>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "report/figures.hpp"
#include "report/report_html.hpp"
#include "report/summary_writers.hpp"

namespace scalelens {

namespace {

Result<std::vector<std::filesystem::path>> write_all(const Summary& summary, const Study* study,
                                                     const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create the output folder: {}", ec.message()), dir.string()};
  std::vector<std::filesystem::path> written;
  const std::string summary_json = render_summary_json(summary);
  const std::string summary_csv = render_summary_csv(summary);
  for (auto [name, contents] : {std::pair<const char*, std::string_view>{"summary.json", summary_json},
                                std::pair<const char*, std::string_view>{"summary.csv", summary_csv}}) {
    auto path = dir / name;
    auto ok = write_file_atomic(path, contents);
    if (!ok) return ok.error();
    written.push_back(path);
  }
  // The figures (gnuplot, in other processes) are made while this thread renders the series.
  FiguresResult figures;
  std::thread figures_thread([&] { figures = write_figures(summary, study, dir / "figures"); });
  const std::vector<std::string> series = study ? render_series_json_parts(*study, summary) : std::vector<std::string>{"null"};
  figures_thread.join();
  // Written in pieces: a large study's page is not joined in memory (issue 17, part 2).
  const std::string figures_json = figures.json();
  auto path = dir / "report.html";
  auto ok = write_file_atomic(path, report_html_pieces(report_data_pieces(summary_json, std::vector<std::string_view>(series.begin(), series.end()), "static", figures_json)));
  if (!ok) return ok.error();
  written.push_back(path);
  written.insert(written.end(), figures.written.begin(), figures.written.end());
  return written;
}

}  // namespace

Result<std::vector<std::filesystem::path>> write_report_files(const Summary& summary, const Study& study,
                                                              const std::filesystem::path& dir) {
  return write_all(summary, &study, dir);
}

Result<std::vector<std::filesystem::path>> write_report_files(const Summary& summary, const std::filesystem::path& dir) {
  return write_all(summary, nullptr, dir);
}

}  // namespace scalelens
