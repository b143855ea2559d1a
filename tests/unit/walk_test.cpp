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
  walk_tree(dir.path(), [&](const fs::directory_entry& e) {
    if (e.is_regular_file()) found.push_back(e.path().native());
    return true;
  }, unreadable);
  EXPECT_TRUE(unreadable.empty());
  std::vector<fs::path> as_paths(found.begin(), found.end());
  std::sort(as_paths.begin(), as_paths.end());
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return compare_as_paths(a, b) < 0; });
  ASSERT_EQ(found.size(), 7u);
  for (std::size_t i = 0; i < found.size(); ++i) EXPECT_EQ(found[i], as_paths[i].native());
}
