#include "common/walk.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

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

namespace {

// A folder's identity whatever path reaches it (links, bind mounts).
struct FolderId {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FolderId&) const = default;
};
struct FolderIdHash {
  std::size_t operator()(const FolderId& id) const { return std::hash<std::uint64_t>()(id.inode * 31 + id.device); }
};

std::optional<FolderId> folder_id(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  return FolderId{st.st_dev, st.st_ino};
}

}  // namespace

void walk_tree(const fs::path& root, const std::function<bool(const fs::directory_entry&)>& visit,
               std::vector<UnreadableFolder>* unreadable, std::vector<FolderLeftOut>* left_out) {
  // Folders still to walk as strings, not paths (a path keeps its components apart: a study's
  // thousands of run folders, held at once here, were a few MiB), with their depth below root.
  struct Pending {
    std::string path;
    std::size_t depth;
    std::optional<FolderId> id;
  };
  std::vector<Pending> pending{{root.native(), 0, folder_id(root)}};
  // Every folder taken to be walked, by identity, and the path it is walked under: a folder reached
  // again (through a bind mount) is left out, so nothing is read twice and nothing loops. Held only
  // while walking, before any file is read.
  std::unordered_map<FolderId, std::string, FolderIdHash> taken;
  if (pending[0].id) taken.emplace(*pending[0].id, root.native());
  std::vector<std::pair<FolderId, std::string>> current_path;  // the folders from root down to the one listed
  std::vector<fs::directory_entry> entries;
  while (!pending.empty()) {
    Pending next = std::move(pending.back());
    pending.pop_back();
    const fs::path dir(std::move(next.path));
    current_path.resize(std::min(current_path.size(), next.depth));
    current_path.emplace_back(next.id.value_or(FolderId{}), dir.native());
    entries.clear();
    std::error_code ec;
    {
      fs::directory_iterator it(dir, ec), end;
      while (!ec && it != end) {
        entries.push_back(*it);
        it.increment(ec);
      }
    }  // closed before anything below it is opened
    if (ec && unreadable) {
      // What was listed before the failure is still walked; the folder is named either way.
      unreadable->push_back({dir, fmt::format("cannot list folder{}: {}", entries.empty() ? "" : " completely", ec.message())});
    }
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return compare_as_paths(a.path().native(), b.path().native()) < 0; });
    std::vector<Pending> subfolders;
    for (auto& e : entries) {
      std::error_code e2;
      const bool folder = e.is_directory(e2);
      if (folder && e.is_symlink(e2)) {
        // Not followed, as find(1) and os.walk do not: a run's link to its dataset, environment or
        // checkpoints can be a whole file system to sniff (`dataset -> /usr` made a report walk all
        // of /usr). Named instead; a linked folder given as an input is read.
        if (left_out) left_out->push_back({e.path(), {}, false, true});
        e = fs::directory_entry();
        continue;
      }
      std::optional<FolderId> id;
      if (folder && (id = folder_id(e.path()))) {
        // Reached again without a link (a bind mount): above it, it would loop; elsewhere, read once.
        auto above = std::find_if(current_path.begin(), current_path.end(), [&](const auto& f) { return f.first == *id; });
        if (above != current_path.end()) {
          if (left_out) left_out->push_back({e.path(), above->second, true});
          e = fs::directory_entry();
          continue;
        }
        if (auto seen = taken.find(*id); seen != taken.end()) {
          if (left_out) left_out->push_back({e.path(), seen->second, false});
          e = fs::directory_entry();
          continue;
        }
      }
      if (visit(e) && folder) {
        if (id) taken.emplace(*id, e.path().native());
        subfolders.push_back({e.path().native(), next.depth + 1, id});
      }
      e = fs::directory_entry();  // visited: its path's parts go now, not with the whole folder's
    }
    // Depth first, in name order: pushed in reverse so the first name is walked first.
    pending.insert(pending.end(), std::make_move_iterator(subfolders.rbegin()), std::make_move_iterator(subfolders.rend()));
  }
}

std::vector<Diagnostic> left_out_diagnostics(const std::vector<FolderLeftOut>& left_out) {
  std::vector<Diagnostic> out;
  std::vector<std::string> not_followed;
  for (const auto& folder : left_out) {
    if (folder.not_followed)
      not_followed.push_back(folder.path.string());
    else if (folder.loops)
      out.push_back({Severity::warning, "unreadable-file",
                     fmt::format("the folder {} again (a bind mount leads back to it): it would loop; left out", folder.reached_as.string()),
                     folder.path.string(), 0, {}});
    else
      out.push_back({Severity::note, "folder-reached-twice",
                     fmt::format("the same folder as {} (a bind mount leads to one of them); read once, there", folder.reached_as.string()),
                     folder.path.string(), 0, {}});
  }
  if (!not_followed.empty()) {
    constexpr std::size_t kNamed = 3;
    std::string named;
    for (std::size_t i = 0; i < std::min(kNamed, not_followed.size()); ++i) named += (i ? ", " : "") + not_followed[i];
    if (not_followed.size() > kNamed) named += fmt::format(" and {} more", not_followed.size() - kNamed);
    out.push_back({Severity::note, "links-not-followed",
                   fmt::format("{} symbolic link{} not followed (a run's link to its dataset or environment can be a whole file "
                               "system): {}; give a linked folder as an input to read it (a study of links: `study/*`)",
                               not_followed.size(), not_followed.size() == 1 ? " to a folder was" : "s to folders were", named),
                   not_followed.front(), 0, {}});
  }
  return out;
}

FileIdentity file_identity(const std::string& path, std::size_t input) {
  std::uintmax_t size = 0;
  return file_identity(path, input, size);
}

FileIdentity file_identity(const std::string& path, std::size_t input, std::uintmax_t& size) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    size = static_cast<std::uintmax_t>(-1);
    return {0, 0, input};
  }
  size = static_cast<std::uintmax_t>(st.st_size);
  return {st.st_dev, st.st_ino, input};
}

std::vector<char> files_reached_twice(const std::vector<std::string_view>& paths, const std::vector<FileIdentity>& identities,
                                      const std::vector<std::string>& inputs, std::vector<Diagnostic>& diagnostics) {
  std::vector<std::size_t> order(paths.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(identities[a].device, identities[a].inode) < std::tie(identities[b].device, identities[b].inode);
  });
  struct Reached {
    std::size_t files = 0;
    std::string example, kept;  // one file left out, and its spelling that is read
  };
  std::map<std::pair<std::size_t, std::size_t>, Reached> reached;  // (input left out, input read) -> files
  std::vector<char> drop(paths.size(), 0);
  for (std::size_t begin = 0, end = 0; begin < order.size(); begin = end) {
    const FileIdentity& first = identities[order[begin]];
    for (end = begin + 1; end < order.size() && identities[order[end]].device == first.device &&
                          identities[order[end]].inode == first.inode;
         ++end) {
      const std::size_t i = order[end];
      if ((first.device == 0 && first.inode == 0) || compare_as_paths(paths[i], paths[order[begin]]) == 0)
        continue;
      drop[i] = 1;
      auto& r = reached[{identities[i].input, first.input}];
      if (r.files++ == 0) r.example = paths[i], r.kept = paths[order[begin]];
    }
  }
  for (const auto& [which, r] : reached)
    diagnostics.push_back(
        {Severity::note, "file-reached-twice",
         fmt::format("{} file{} reached here {} already read under another spelling (e.g. {} is {}, through another "
                     "spelling of its folder or a link); each is read once, as {}",
                     r.files, r.files == 1 ? "" : "s", r.files == 1 ? "was" : "were", r.example, r.kept,
                     which.first == which.second ? "first reached" : "input " + inputs[which.second] + " reached it"),
         inputs[which.first], 0, {}});
  return drop;
}

Diagnostic unreachable_input(const fs::path& input, std::error_code ec) {
  if (ec == std::errc::too_many_symbolic_link_levels)
    return {Severity::error, "unreadable-file", "symbolic link that loops; left out", input.string(), 0, {}};
  if (!ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
    std::error_code link_ec;
    if (fs::is_symlink(fs::symlink_status(input, link_ec)))
      return {Severity::error, "missing-input",
              fmt::format("broken symbolic link (to {}, which does not exist)", fs::read_symlink(input, link_ec).string()),
              input.string(), 0, {}};
    return {Severity::error, "missing-input", "no such file or folder", input.string(), 0, {}};
  }
  return {Severity::error, "unreadable-input", fmt::format("cannot be reached: {}; left out", ec.message()), input.string(), 0, {}};
}

}  // namespace scalelens
