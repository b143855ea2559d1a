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
                                                     const std::filesystem::path& dir, std::string* figures_failed) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create the output folder: {}", ec.message()), dir.string()};
  std::vector<std::filesystem::path> written;
  // The figures (gnuplot, in other processes, its longest part) are made while this thread writes
  // the summaries and the page (a jthread: an error return waits for it, and keeps what it drew).
  FiguresResult figures;
  std::jthread figures_thread([&] { figures = write_figures(summary, dir / "figures"); });
  // summary.json and the page are written as they are rendered, the summary once for both, and
  // the series a batch of runs at a time: a large study's report is never whole in memory
  // (issue 17, part 2).
  const auto summary_path = dir / "summary.json", page_path = dir / "report.html";
  AtomicFileWriter summary_file(summary_path), html(page_path);
  ReportPageWriter page([&](std::string_view piece) { html.write(piece); });
  for (std::string_view piece : report_data_head("static")) page.data(piece);
  write_summary_json(summary, [&](std::string_view piece) {
    summary_file.write(piece);
    page.data(piece);
  });
  summary_file.write("\n");
  if (auto ok = summary_file.commit(); !ok) return ok.error();
  written.push_back(summary_path);
  const auto csv_path = dir / "summary.csv";
  if (auto ok = write_file_atomic(csv_path, render_summary_csv(summary)); !ok) return ok.error();
  written.push_back(csv_path);
  page.data(kReportDataSeriesKey);
  try {
    if (study) render_series_json_to(*study, summary, [&](std::string_view part) { page.data(part); });
    else page.data("null");
  } catch (const std::runtime_error& e) {  // a series set aside in a temporary file could not be read back
    return Error{fmt::format("cannot write the page: {}", e.what()), page_path.string()};
  }
  figures_thread.join();
  const std::string figures_json = figures.json();
  for (std::string_view piece : report_data_tail(figures_json)) page.data(piece);
  page.finish();
  if (auto ok = html.commit(); !ok) return ok.error();
  written.push_back(page_path);
  written.insert(written.end(), figures.written.begin(), figures.written.end());
  if (figures_failed && !figures.failed.empty()) *figures_failed = figures.message;
  return written;
}

}  // namespace

Result<std::vector<std::filesystem::path>> write_report_files(const Summary& summary, const Study& study,
                                                              const std::filesystem::path& dir, std::string* figures_failed) {
  return write_all(summary, &study, dir, figures_failed);
}

Result<std::vector<std::filesystem::path>> write_report_files(const Summary& summary, const std::filesystem::path& dir) {
  return write_all(summary, nullptr, dir, nullptr);
}

}  // namespace scalelens
