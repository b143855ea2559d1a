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
  }, &unreadable, &left_out);
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
  }, &unreadable, &w.left_out);
  EXPECT_TRUE(unreadable.empty());
  return w;
}

}  // namespace

// Links to folders are not followed (a run's `dataset -> /usr` made a report walk and sniff all of
// /usr) but named, in one note, never skipped without a word; a linked folder given as the input is
// walked.
TEST(Walk, LinksToFoldersAreNamedNotFollowed) {
  ScratchDir dir;
  dir.write("real/ddp-1/epochs.csv", "x\n");
  dir.write("kept/nodes-of-ddp-2/node0/gpu.csv", "x\n");
  dir.write("study/ddp-2/epochs.csv", "x\n");
  fs::create_directory_symlink("../real/ddp-1", dir / "study/ddp-1");
  fs::create_directory_symlink("../../kept/nodes-of-ddp-2", dir / "study/ddp-2/nodes");
  fs::create_directory_symlink("/usr", dir / "study/ddp-2/dataset");
  fs::create_directory_symlink(".", dir / "study/here");
  const auto w = walk_files(dir / "study");
  EXPECT_EQ(w.files, (std::vector<std::string>{"ddp-2/epochs.csv"}));
  ASSERT_EQ(w.left_out.size(), 4u);
  EXPECT_EQ(w.left_out[0].path, dir / "study/ddp-1");
  EXPECT_EQ(w.left_out[3].path, dir / "study/ddp-2/nodes");
  for (const auto& f : w.left_out) EXPECT_TRUE(f.not_followed && !f.loops);
  const auto said = left_out_diagnostics(w.left_out);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].severity, Severity::note);
  EXPECT_EQ(said[0].code, "links-not-followed");
  EXPECT_EQ(said[0].path, (dir / "study/ddp-1").string());
  EXPECT_NE(said[0].message.find("4 symbolic links to folders were not followed"), std::string::npos) << said[0].message;
  EXPECT_NE(said[0].message.find(" and 1 more"), std::string::npos) << said[0].message;
  EXPECT_EQ(walk_files(dir / "study/ddp-1").files, (std::vector<std::string>{"epochs.csv"}));
}
