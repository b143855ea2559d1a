#include "report/output_folder.hpp"

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "report/summary_writers.hpp"

namespace scalelens {

Result<std::vector<std::filesystem::path>> write_report_files(const Summary& summary, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create the output folder: {}", ec.message()), dir.string()};
  std::vector<std::filesystem::path> written;
  for (auto [name, contents] : {std::pair{"summary.json", render_summary_json(summary)},
                                std::pair{"summary.csv", render_summary_csv(summary)}}) {
    auto path = dir / name;
    auto ok = write_file_atomic(path, contents);
    if (!ok) return ok.error();
    written.push_back(path);
  }
  return written;
}

}  // namespace scalelens
