#pragma once
// Walking a study's folders. Each folder is listed completely and closed before the walk goes
// deeper, so the walk holds one descriptor however deep the tree is (a recursive_directory_iterator
// holds one per level and fails with EMFILE past the open-file limit). A folder that cannot be
// listed (EACCES, EMFILE, ESTALE, EIO), or whose listing fails part way, is reported with the reason
// and the walk goes on with its siblings. Links to folders are not followed but named (a run's link
// to its dataset can be a whole file system), as find(1) and os.walk do; a folder is walked once,
// however many bind mounts lead to it.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostics.hpp"

namespace scalelens {

struct UnreadableFolder {
  std::filesystem::path path;
  std::string reason;  // "cannot list folder: Permission denied"
};

// A folder the walk did not enter: a link to one, or one it had reached already (a bind mount).
struct FolderLeftOut {
  std::filesystem::path path;        // as the walk met it
  std::filesystem::path reached_as;  // the same folder, where the walk took it
  bool loops = false;  // reached_as is a folder above path: entering it would loop
  bool not_followed = false;  // a link to a folder: not walked
};

// Orders two paths held as strings as std::filesystem::path orders them on POSIX (component by
// component, a relative path before an absolute one; equal where only repeated separators
// differ), without making a path of either: a path object keeps each component apart (~300 bytes
// a file), which made listing a 10,000-run study half its peak memory (issue 17).
int compare_as_paths(std::string_view a, std::string_view b);

// Calls `visit` for every entry under `root` (not `root` itself), parents before children; links to
// folders go to `left_out`, not followed. `visit` returns false for a folder not to enter it.
// Entries of one folder come in name order. A folder already taken (by device and inode: above it,
// which would loop, or anywhere else in the walk) is not visited again: it goes to `left_out`.
// `unreadable` and `left_out` may be null where the caller does not name them (another walk does).
void walk_tree(const std::filesystem::path& root, const std::function<bool(const std::filesystem::directory_entry&)>& visit,
               std::vector<UnreadableFolder>* unreadable = nullptr, std::vector<FolderLeftOut>* left_out = nullptr);

// What the folders the walk left out are to the user: one that would loop (warning
// `unreadable-file`), the note `folder-reached-twice` naming where it was read, and one note
// `links-not-followed` naming the links to folders not walked.
std::vector<Diagnostic> left_out_diagnostics(const std::vector<FolderLeftOut>& left_out);

// What a file is on disk (device and inode; 0 and 0 where stat failed), and the input that reached it.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  std::size_t input = 0;
};
FileIdentity file_identity(const std::string& path, std::size_t input);  // by stat(2)
// The same, with the file's size (-1 where stat failed) from the same stat.
FileIdentity file_identity(const std::string& path, std::size_t input, std::uintmax_t& size);

// Of `paths` (with their `identities`), those reached under a second spelling (`study` and
// `$PWD/study` or `./study`, a link to it or to a folder above it): a mask of the ones to leave out,
// each file read once, as the first input reached it, with a note `file-reached-twice` per pair of
// inputs. The same spelling twice (a folder given with its parent) is one path, merged by the
// caller.
std::vector<char> files_reached_twice(const std::vector<std::string_view>& paths, const std::vector<FileIdentity>& identities,
                                      const std::vector<std::string>& inputs, std::vector<Diagnostic>& diagnostics);

// `files` (with their `identities`; `path_of` a file's path) without those files_reached_twice
// leaves out, in their order, compacted in place.
template <class File, class PathOf>
void drop_files_reached_twice(std::vector<File>& files, const std::vector<FileIdentity>& identities,
                              const std::vector<std::string>& inputs, std::vector<Diagnostic>& diagnostics, PathOf path_of) {
  std::vector<std::string_view> paths;
  paths.reserve(files.size());
  for (const auto& f : files) paths.push_back(path_of(f));
  const std::vector<char> drop = files_reached_twice(paths, identities, inputs, diagnostics);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (drop[i]) continue;
    if (i != kept) files[kept] = std::move(files[i]);  // a string moved onto itself is emptied
    ++kept;
  }
  files.erase(files.begin() + static_cast<std::ptrdiff_t>(kept), files.end());
}

// The error for an input given by name whose status cannot be had (`ec`, from std::filesystem::
// status): `missing-input` where nothing is there (a broken link named so), else the real reason:
// `unreadable-file` for a link that loops, `unreadable-input` with the system's reason (a folder
// above it closed to this user: "Permission denied").
Diagnostic unreachable_input(const std::filesystem::path& input, std::error_code ec);

}  // namespace scalelens
