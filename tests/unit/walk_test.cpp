#include "common/walk.hpp"

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

using namespace scalelens;
using scalelens::testing::ScratchDir;
namespace fs = std::filesystem;

namespace {

// Paths as a study's inputs and walks make them, and the ways they are written oddly: components
// from bytes that sort around the separator ('-', '.', '0', 'A', '_', 'a', '~', a UTF-8 byte),
// prefixes of one another, absolute and relative, doubled and trailing separators, "." and "..".
std::string generated_path(std::mt19937& rng) {
  static const std::vector<std::string> parts{"a", "a-b", "a.b", "ab", "a0", "A", "_", "~x", "r\xc3\xa9", "run-0001",
                                              "run-0010", "run-001", ".", "..", "epochs.csv", "gpu.csv", "a b"};
  std::string p;
  const int form = static_cast<int>(rng() % 12);
  if (form == 0) p = "/";
  if (form == 3) p = "//";  // on POSIX a root directory, not a root name
  if (form == 4) p = "///";
  const int n = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) {
    if (i) p += (form == 1 && rng() % 3 == 0) ? "//" : "/";
    p += parts[rng() % parts.size()];
  }
  if (form == 2) p += "/";
  if (form == 5) p += "//";
  return p;
}

}  // namespace

// The order (and the sameness) of two paths held as strings is the one std::filesystem::path gives
// them, for every pair of a large generated set: files are listed, merged and told apart by it.
TEST(Walk, PathsHeldAsStringsCompareAsPathsDo) {
  std::mt19937 rng(2026);
  std::vector<std::string> paths;
  for (int i = 0; i < 800; ++i) paths.push_back(generated_path(rng));
  paths.insert(paths.end(), {"", "/", "//", "a", "a/", "a//", "a//b", "a/b", "/a/b", "//a/b", "a/b/", "a-b/c", "a/b-c", "a.b",
                             "a/b.c", "a/b!", "a/./b"});
  std::size_t equal = 0, bytes_disagree = 0;
  for (const auto& a : paths)
    for (const auto& b : paths) {
      const int want = fs::path(a).compare(fs::path(b));
      const int got = compare_as_paths(a, b);
      ASSERT_EQ(got, want < 0 ? -1 : want > 0 ? 1 : 0) << "'" << a << "' against '" << b << "'";
      equal += got == 0 && a != b;
      bytes_disagree += got != 0 && (a < b) != (got < 0);
    }
  // The set holds both kinds of pair a byte comparison gets wrong: written differently but the same
  // path ("a//b", "a/b"), and different paths whose bytes order them otherwise ("a-b/c", "a/b").
  EXPECT_GT(equal, 0u);
  EXPECT_GT(bytes_disagree, 0u);
  EXPECT_LT(compare_as_paths("a/b", "a-b/c"), 0);  // as paths: "a" before "a-b"; as bytes, '/' after '-'
}

// A tree walked and sorted as the study's files are: the same order as sorting path objects.
TEST(Walk, AWalkedTreeSortedAsStringsIsInPathOrder) {
  ScratchDir dir;
  for (const char* f : {"a/x.csv", "a-b/y.csv", "a/b/z.csv", "a.b/w.csv", "ab/v.csv", "a/b-c/u.csv", "a/b/c/t.csv"})
    dir.write(f, "x\n");
  std::vector<std::string> found;
  std::vector<UnreadableFolder> unreadable;
  std::vector<FolderLeftOut> left_out;
  walk_tree(dir.path(), [&](const fs::directory_entry& e) {
    if (e.is_regular_file()) found.push_back(e.path().native());
    return true;
  }, unreadable, left_out);
  EXPECT_TRUE(unreadable.empty());
  EXPECT_TRUE(left_out.empty());
  std::vector<fs::path> as_paths(found.begin(), found.end());
  std::sort(as_paths.begin(), as_paths.end());
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return compare_as_paths(a, b) < 0; });
  ASSERT_EQ(found.size(), 7u);
  for (std::size_t i = 0; i < found.size(); ++i) EXPECT_EQ(found[i], as_paths[i].native());
}

namespace {

// The files a walk of `root` visits, relative to it, and the folders it left out.
struct Walked {
  std::vector<std::string> files;
  std::vector<FolderLeftOut> left_out;
};
Walked walk_files(const fs::path& root) {
  Walked w;
  std::vector<UnreadableFolder> unreadable;
  walk_tree(root, [&](const fs::directory_entry& e) {
    if (e.is_regular_file()) w.files.push_back(e.path().lexically_relative(root).generic_string());
    return true;
  }, unreadable, w.left_out);
  EXPECT_TRUE(unreadable.empty());
  return w;
}

}  // namespace

// A study assembled from links to run folders (study/ddp-1 -> ../real/ddp-1), and a run whose
// nodes/ is a link to where the node logs are kept: the linked folders' files are walked, under
// the links' names (they were skipped without a word).
TEST(Walk, LinksToFoldersAreFollowed) {
  ScratchDir dir;
  dir.write("real/ddp-1/epochs.csv", "x\n");
  dir.write("real/ddp-1/nodes/node0/gpu.csv", "x\n");
  dir.write("kept/nodes-of-ddp-2/node0/gpu.csv", "x\n");
  dir.write("study/ddp-2/epochs.csv", "x\n");
  fs::create_directory_symlink("../real/ddp-1", dir / "study/ddp-1");
  fs::create_directory_symlink("../../kept/nodes-of-ddp-2", dir / "study/ddp-2/nodes");
  const auto w = walk_files(dir / "study");
  EXPECT_EQ(w.files, (std::vector<std::string>{"ddp-1/epochs.csv", "ddp-1/nodes/node0/gpu.csv", "ddp-2/epochs.csv",
                                               "ddp-2/nodes/node0/gpu.csv"}));
  EXPECT_TRUE(w.left_out.empty());
}

// A link to a folder above it would loop: it is left out, named with the folder it leads back to
// (by device and inode, whatever the link's spelling), and the walk ends.
TEST(Walk, ALinkBackToAFolderAboveItIsLeftOutAsALoop) {
  ScratchDir dir;
  dir.write("study/run/epochs.csv", "x\n");
  fs::create_directory_symlink("..", dir / "study/run/up");
  fs::create_directory_symlink(dir / "study/run", dir / "study/run/self");
  const auto w = walk_files(dir / "study");
  EXPECT_EQ(w.files, (std::vector<std::string>{"run/epochs.csv"}));
  ASSERT_EQ(w.left_out.size(), 2u);
  EXPECT_EQ(w.left_out[0].path, dir / "study/run/self");
  EXPECT_EQ(w.left_out[0].reached_as, dir / "study/run");
  EXPECT_TRUE(w.left_out[0].loops);
  EXPECT_EQ(w.left_out[1].path, dir / "study/run/up");
  EXPECT_EQ(w.left_out[1].reached_as, dir / "study");
  EXPECT_TRUE(w.left_out[1].loops);
  EXPECT_TRUE(w.left_out[1].link);
  EXPECT_EQ(folder_left_out(w.left_out[1]).message, "symbolic link that loops (to " + (dir / "study").string() + ", a folder above it); left out");
}

// A link to the folder above the input is no loop by itself (that folder is not on the walk's
// path) and is walked; the input met again inside it is what would loop, and is named as a folder
// reached through a link, not as a link.
TEST(Walk, ALinkAboveTheInputIsWalkedUntilItLeadsBackIn) {
  ScratchDir dir;
  dir.write("study/run/epochs.csv", "x\n");
  dir.write("beside/epochs.csv", "x\n");
  fs::create_directory_symlink("../..", dir / "study/run/out");
  const auto w = walk_files(dir / "study");
  EXPECT_EQ(w.files, (std::vector<std::string>{"run/epochs.csv", "run/out/beside/epochs.csv"}));
  ASSERT_EQ(w.left_out.size(), 1u);
  EXPECT_EQ(w.left_out[0].path, dir / "study/run/out/study");
  EXPECT_EQ(w.left_out[0].reached_as, dir / "study");
  EXPECT_TRUE(w.left_out[0].loops);
  EXPECT_FALSE(w.left_out[0].link);
  EXPECT_EQ(folder_left_out(w.left_out[0]).message,
            "the folder " + (dir / "study").string() + " again, reached through a symbolic link above it: it would loop; left out");
}

// One folder reached through two links (or a link and its own place) is walked once, where the
// walk meets it first; the other path is named, not walked again.
TEST(Walk, AFolderReachedTwiceIsWalkedOnce) {
  ScratchDir dir;
  dir.write("study/real/ddp-1/epochs.csv", "x\n");
  fs::create_directory_symlink("real/ddp-1", dir / "study/a-link");
  fs::create_directory_symlink("real/ddp-1", dir / "study/b-link");
  const auto w = walk_files(dir / "study");
  EXPECT_EQ(w.files, (std::vector<std::string>{"a-link/epochs.csv"}));
  ASSERT_EQ(w.left_out.size(), 2u);
  EXPECT_EQ(w.left_out[0].path, dir / "study/b-link");
  EXPECT_EQ(w.left_out[0].reached_as, dir / "study/a-link");
  EXPECT_FALSE(w.left_out[0].loops);
  EXPECT_EQ(w.left_out[1].path, dir / "study/real/ddp-1");
  EXPECT_EQ(w.left_out[1].reached_as, dir / "study/a-link");
  EXPECT_FALSE(w.left_out[1].loops);
}
