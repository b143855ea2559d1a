#pragma once
// Walking a study's folders. Each folder is listed completely and closed before the walk goes
// deeper, so the walk holds one descriptor however deep the tree is (a recursive_directory_iterator
// holds one per level and fails with EMFILE past the open-file limit). A folder that cannot be
// listed (EACCES, EMFILE, ESTALE, EIO), or whose listing fails part way, is reported with the reason
// and the walk goes on with its siblings.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace scalelens {

struct UnreadableFolder {
  std::filesystem::path path;
  std::string reason;  // "cannot list folder: Permission denied"
};

// Orders two paths held as strings as std::filesystem::path orders them on POSIX (component by
// component, a relative path before an absolute one; equal where only repeated separators
// differ), without making a path of either: a path object keeps each component apart (~300 bytes
// a file), which made listing a 10,000-run study half its peak memory (issue 17).
int compare_as_paths(std::string_view a, std::string_view b);

// Calls `visit` for every entry under `root` (not `root` itself), parents before children; folder
// links are not followed. `visit` returns false for a folder not to enter it. Entries of one folder
// come in name order.
void walk_tree(const std::filesystem::path& root, const std::function<bool(const std::filesystem::directory_entry&)>& visit,
               std::vector<UnreadableFolder>& unreadable);

}  // namespace scalelens
