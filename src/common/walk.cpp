#include "common/walk.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace scalelens {
namespace fs = std::filesystem;

void walk_tree(const fs::path& root, const std::function<bool(const fs::directory_entry&)>& visit,
               std::vector<UnreadableFolder>& unreadable) {
  std::vector<fs::path> pending{root};
  std::vector<fs::directory_entry> entries;
  while (!pending.empty()) {
    const fs::path dir = std::move(pending.back());
    pending.pop_back();
    entries.clear();
    std::error_code ec;
    {
      fs::directory_iterator it(dir, ec), end;
      while (!ec && it != end) {
        entries.push_back(*it);
        it.increment(ec);
      }
    }  // closed before anything below it is opened
    if (ec) {
      // What was listed before the failure is still walked; the folder is named either way.
      unreadable.push_back({dir, fmt::format("cannot list folder{}: {}", entries.empty() ? "" : " completely", ec.message())});
    }
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });
    std::vector<fs::path> subfolders;
    for (const auto& e : entries) {
      std::error_code e2;
      const bool folder = e.is_directory(e2) && !e.is_symlink(e2);
      if (visit(e) && folder) subfolders.push_back(e.path());
    }
    // Depth first, in name order: pushed in reverse so the first name is walked first.
    pending.insert(pending.end(), subfolders.rbegin(), subfolders.rend());
  }
}

}  // namespace scalelens
