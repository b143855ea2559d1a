#include "common/walk.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace scalelens {
namespace fs = std::filesystem;

int compare_as_paths(std::string_view a, std::string_view b) {
  // A relative path before an absolute one. Then the first byte that differs decides, a separator
  // before any other byte (where one component ends and the other goes on, the shorter comes
  // first), a run of separators counting as one (path's components skip them) and one at the end
  // as an empty last component, as path has it.
  const bool absolute_a = a.starts_with('/'), absolute_b = b.starts_with('/');
  if (absolute_a != absolute_b) return absolute_a ? 1 : -1;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const char x = a[i++], y = b[j++];
    if (x != y) {
      if (x == '/') return -1;
      if (y == '/') return 1;
      return static_cast<unsigned char>(x) < static_cast<unsigned char>(y) ? -1 : 1;
    }
    if (x == '/') {
      while (i < a.size() && a[i] == '/') ++i;
      while (j < b.size() && b[j] == '/') ++j;
    }
  }
  return i < a.size() ? 1 : j < b.size() ? -1 : 0;
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
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return compare_as_paths(a.path().native(), b.path().native()) < 0; });
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
