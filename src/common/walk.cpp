#include "common/walk.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace scalelens {
namespace fs = std::filesystem;

int compare_as_paths(std::string_view a, std::string_view b) {
  // Written plainly: no doubled separator, none at the end, both relative or both absolute. Then
  // the first byte that differs decides, a separator before any other byte: where one component
  // ends and the other goes on, the shorter comes first, as path's component order has it.
  auto plain = [](std::string_view s) { return s.find("//") == std::string_view::npos && (s.empty() || s.back() != '/'); };
  if (plain(a) && plain(b) && a.starts_with('/') == b.starts_with('/')) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (a[i] == b[i]) continue;
      if (a[i] == '/') return -1;
      if (b[i] == '/') return 1;
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
  }
  const int c = fs::path(a).compare(fs::path(b));
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

void walk_tree(const fs::path& root, const std::function<bool(const fs::directory_entry&)>& visit,
               std::vector<UnreadableFolder>& unreadable) {
  // Folders still to walk as strings, not paths (a path keeps its components apart: a study's
  // thousands of run folders, held at once here, were a few MiB).
  std::vector<std::string> pending{root.native()};
  std::vector<fs::directory_entry> entries;
  while (!pending.empty()) {
    const fs::path dir(std::move(pending.back()));
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
    std::vector<std::string> subfolders;
    for (auto& e : entries) {
      std::error_code e2;
      const bool folder = e.is_directory(e2) && !e.is_symlink(e2);
      if (visit(e) && folder) subfolders.push_back(e.path().native());
      e = fs::directory_entry();  // visited: its path's parts go now, not with the whole folder's
    }
    // Depth first, in name order: pushed in reverse so the first name is walked first.
    pending.insert(pending.end(), subfolders.rbegin(), subfolders.rend());
  }
}

}  // namespace scalelens
