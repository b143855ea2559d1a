#pragma once
// Helpers shared by the tests: real-data location, scratch folders, running the binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>

#include "common/text.hpp"

namespace scalelens::testing {

// ../shared/data, from SCALELENS_REALDATA. CI sets it, so there real-data tests cannot skip.
inline std::filesystem::path realdata() {
  const char* env = std::getenv("SCALELENS_REALDATA");
  if (!env || !*env) return {};
  return std::filesystem::absolute(env);
}

#define SCALELENS_REQUIRE_REALDATA(var)                                             \
  const auto var = ::scalelens::testing::realdata();                                \
  if (var.empty()) GTEST_SKIP() << "SCALELENS_REALDATA is not set (CI sets it)"

// The whole test process, and every scalelens it starts, keeps trace summaries in a private
// XDG_CACHE_HOME, never in the real home's ~/.cache; removed at exit.
inline const std::filesystem::path test_cache_home = [] {
  std::random_device rd;
  auto dir = std::filesystem::temp_directory_path() / ("scalelens-test-cache-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(dir);
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  ::unsetenv("SCALELENS_CACHE_DIR");
  static std::filesystem::path remove_at_exit = dir;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(remove_at_exit, ec);
  });
  return dir;
}();

// A fresh folder under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  ScratchDir() {
    (void)test_cache_home;  // odr-used, so that every test binary sets it up
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("scalelens-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }
  // Writes `contents` to `rel`, creating folders.
  std::filesystem::path write(const std::string& rel, const std::string& contents) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << contents;
    return p;
  }

 private:
  std::filesystem::path path_;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Lines of `text` (those holding `containing`, when given): how tests count samples in a CSV.
inline std::size_t count_lines(std::string_view text, std::string_view containing = {}) {
  std::size_t n = 0;
  scalelens::LineCursor lines(text);
  std::string_view line;
  while (lines.next(line))
    if (containing.empty() || line.find(containing) != std::string_view::npos) ++n;
  return n;
}

// Every `"ts": N` and `"dur": N` of a trace's text (numbers as Kineto writes them) replaced by
// `change(key, digits)`: the real traces with their times written another way.
template <class Change>
std::string rewrite_times(std::string_view text, Change change) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  std::size_t at = 0;
  while (true) {
    const std::size_t ts = text.find("\"ts\": ", at), dur = text.find("\"dur\": ", at);
    const std::size_t key = std::min(ts, dur);
    if (key == std::string_view::npos) break;
    const std::size_t value = key + (key == ts ? 6 : 7);
    std::size_t end = value;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '-')) ++end;
    out.append(text.substr(at, value - at));
    out += change(key == ts ? std::string_view("ts") : std::string_view("dur"), text.substr(value, end - value));
    at = end;
  }
  out.append(text.substr(at));
  return out;
}

// The shared DLRM traces (8 V100 ranks, shared/data/kineto/dlrm-8rank-v100) copied into `dir`,
// rank `rank`'s file's text as `change` makes it: the real files with one rank's fault.
template <class Change>
void copy_dlrm_traces(const std::filesystem::path& data, const ScratchDir& dir, int rank, Change change) {
  for (const auto& e : std::filesystem::directory_iterator(data / "kineto" / "dlrm-8rank-v100")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("worker", 0) != 0) continue;
    std::string text = slurp(e.path());
    if (name.rfind("worker" + std::to_string(rank) + "_", 0) == 0) text = change(std::move(text));
    dir.write(name, text);
  }
}

}  // namespace scalelens::testing
