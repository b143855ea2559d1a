// Summaries cached in the user's cache folder: a second analysis of unchanged files parses
// nothing, any change to a file (or the regex) parses it again, the trace's folder is never
// written to, and no link planted in the cache folder is followed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "support/test_support.hpp"
#include "trace/trace_cache.hpp"
#include "trace/trace_output.hpp"
#include "trace/trace_set.hpp"

namespace scalelens::trace {
namespace {
using scalelens::testing::ScratchDir;
namespace fs = std::filesystem;

const char* kTrace = R"json({"schemaVersion": 1, "distributedInfo": {"rank": 3, "world_size": 4},
"deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}],
"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
 {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "ts": 0, "dur": 20},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 21, "dur": 3, "args": {"flops": 1000000, "Input type": ["c10::BFloat16"]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 22, "dur": 2, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 24, "dur": 2, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 30, "dur": 40, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "ts": 50, "dur": 40, "args": {"stream": 20, "correlation": 2, "In msg nelems": 1000, "dtype": "Float"}},
 {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": 300}
]})json";

TraceSet analyse_dir(const fs::path& dir, bool cache = true) {
  TraceSetOptions o;
  o.inputs = {dir};
  o.cache = cache;
  o.threads = 1;
  return analyse_traces(o);
}

TEST(TraceCache, SecondRunReadsTheSummaryWithoutParsing) {
  ScratchDir dir;
  dir.write("rank3.json", kTrace);
  const auto before = parse_count();
  auto first = analyse_dir(dir.path());
  EXPECT_EQ(parse_count(), before + 1);
  ASSERT_EQ(first.ranks.size(), 1u);
  EXPECT_FALSE(first.ranks[0].cached);
  auto cached = cache_file(dir / "rank3.json", "");
  ASSERT_TRUE(cached);
  EXPECT_TRUE(fs::exists(*cached));
  EXPECT_EQ(cached->parent_path(), scalelens::testing::test_cache_home / "scalelens" / "traces") << "XDG_CACHE_HOME/scalelens";
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1) << "nothing beside the trace";

  auto second = analyse_dir(dir.path());
  EXPECT_EQ(parse_count(), before + 1) << "the cache hit parses nothing";
  ASSERT_EQ(second.ranks.size(), 1u) << "the cache folder is not taken for a trace";
  EXPECT_EQ(second.files_considered, 1u);
  EXPECT_TRUE(second.ranks[0].cached);
  EXPECT_EQ(second.files_cached, 1u);
  // Everything printed is the same, but for the "cached" flags.
  OutputOptions all{true, 10, true};
  auto strip = [](std::string s) {
    for (auto [from, to] : {std::pair<std::string, std::string>{"\"cached\": true", "\"cached\": false"},
                            {"\"files_cached\": 1", "\"files_cached\": 0"}})
      for (auto p = s.find(from); p != std::string::npos; p = s.find(from)) s.replace(p, from.size(), to);
    return s;
  };
  EXPECT_EQ(strip(format_json(second, all)), format_json(first, all));
  EXPECT_EQ(format_table(second, all), format_table(first, all));
}

TEST(TraceCache, ChangedFileOrRegexOrNoCacheParsesAgain) {
  ScratchDir dir;
  auto path = dir.write("rank3.json", kTrace);
  CommMatcher comm;
  ASSERT_TRUE(analyse_file(path, comm, "", {}).ok());
  const auto before = parse_count();
  ASSERT_TRUE(analyse_file(path, comm, "", {}).value().cached);
  EXPECT_EQ(parse_count(), before);

  // Same size, new content and mtime: "rank": 3 becomes "rank": 2.
  std::string changed = kTrace;
  changed.replace(changed.find("\"rank\": 3"), 9, "\"rank\": 2");
  std::ofstream(path, std::ios::binary) << changed;
  auto again = analyse_file(path, comm, "", {});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again.value().cached);
  EXPECT_EQ(again.value().rank, 2);
  EXPECT_EQ(parse_count(), before + 1);

  CommMatcher other(UserRegex::compile("^gemm", "--comm-kernel-regex").value());
  auto by_regex = analyse_file(path, other, "^gemm", {});
  EXPECT_FALSE(by_regex.value().cached) << "another regex has its own cache file";
  EXPECT_TRUE(analyse_file(path, comm, "", {}).value().cached);
  EXPECT_FALSE(analyse_file(path, comm, "", CacheOptions{false}).value().cached);

  ::setenv("SCALELENS_NO_CACHE", "1", 1);
  EXPECT_FALSE(analyse_file(path, comm, "", {}).value().cached);
  ::unsetenv("SCALELENS_NO_CACHE");
}

TEST(TraceCache, ReadOnlyTraceFolderStillCachesElsewhereAndIsNotTouched) {
  ScratchDir dir;
  auto path = dir.write("ro/rank3.json", kTrace);
  fs::permissions(dir / "ro", fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  CommMatcher comm;
  auto r = analyse_file(path, comm, "", {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(fs::exists(dir / "ro" / kCacheFolder));
  EXPECT_TRUE(analyse_file(path, comm, "", {}).value().cached) << "cached under XDG_CACHE_HOME all the same";
  fs::permissions(dir / "ro", fs::perms::owner_all, fs::perm_options::add);  // so that ScratchDir can remove it
}

TEST(TraceCache, ReadOnlyCacheFolderMeansNoCache) {
  ScratchDir dir, cache_root;
  auto path = dir.write("rank3.json", kTrace);
  fs::permissions(cache_root.path(), fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  CommMatcher comm;
  CacheOptions options{true, cache_root.path()};
  ASSERT_TRUE(analyse_file(path, comm, "", options).ok());
  EXPECT_FALSE(analyse_file(path, comm, "", options).value().cached);
  EXPECT_TRUE(fs::is_empty(cache_root.path())) << "not even as root";
  fs::permissions(cache_root.path(), fs::perms::owner_all, fs::perm_options::add);
}

// Someone who can write into a shared cache folder plants links where the cache writes: the
// link to a folder is not entered, and a link at a cache file's name is replaced, not written
// through. Their targets stay as they were.
TEST(TraceCache, PlantedLinksAreNotFollowed) {
  ScratchDir dir, cache_root, victim;
  auto path = dir.write("rank3.json", kTrace);
  CommMatcher comm;
  fs::create_directory_symlink(victim.path(), cache_root / "traces");
  CacheOptions options{true, cache_root.path()};
  ASSERT_TRUE(analyse_file(path, comm, "", options).ok());
  EXPECT_TRUE(fs::is_empty(victim.path())) << "nothing written through the linked folder";
  EXPECT_FALSE(analyse_file(path, comm, "", options).value().cached);

  fs::remove(cache_root / "traces");
  auto target = victim.write("precious.txt", "keep me\n");
  auto where = cache_file(path, "", options);
  ASSERT_TRUE(where);
  fs::create_directories(where->parent_path());
  fs::create_symlink(target, *where);
  ASSERT_TRUE(analyse_file(path, comm, "", options).ok());
  EXPECT_EQ(scalelens::testing::slurp(target), "keep me\n");
  EXPECT_FALSE(fs::is_symlink(*where)) << "the link was replaced by the cache file";
  EXPECT_TRUE(analyse_file(path, comm, "", options).value().cached);

  // An old-style cache folder beside the traces, linked elsewhere, is neither read nor written.
  fs::create_directory_symlink(victim.path(), dir / kCacheFolder);
  ASSERT_TRUE(analyse_file(path, comm, "", CacheOptions{true, cache_root.path()}).ok());
  EXPECT_EQ(std::distance(fs::directory_iterator(victim.path()), fs::directory_iterator()), 1);
}

TEST(TraceCache, CacheFolderFromTheEnvironment) {
  ScratchDir dir, chosen;
  auto path = dir.write("rank3.json", kTrace);
  ::setenv("SCALELENS_CACHE_DIR", chosen.path().c_str(), 1);
  EXPECT_EQ(default_cache_dir(), chosen.path());
  auto where = cache_file(path, "");
  ::unsetenv("SCALELENS_CACHE_DIR");
  ASSERT_TRUE(where);
  EXPECT_EQ(where->parent_path(), chosen / "traces");
  EXPECT_EQ(default_cache_dir(), scalelens::testing::test_cache_home / "scalelens");
  const std::string xdg = std::getenv("XDG_CACHE_HOME");
  ::unsetenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (home && *home) EXPECT_EQ(default_cache_dir(), fs::path(home) / ".cache" / "scalelens");
  ::setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
}

// Two traces of one rank without profiler steps count as one; an empty one (`{"traceEvents": []}`)
// was kept over the one with GPU work for being the newer.
TEST(TraceSetDuplicates, AnEmptyTraceIsNotKeptOverOneWithGpuWork) {
  ScratchDir dir;
  std::string no_step = kTrace;
  const auto step = no_step.find(R"( {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1")");
  no_step.erase(step, no_step.find('\n', step) + 1 - step);
  dir.write("a/rank3.json", no_step);
  ::usleep(20000);
  dir.write("a/rank3-empty.json", R"({"distributedInfo": {"rank": 3, "world_size": 4}, "traceEvents": []})");
  auto set = analyse_dir(dir / "a", false);
  ASSERT_EQ(set.ranks.size(), 1u);
  EXPECT_EQ(fs::path(set.ranks[0].file).filename(), "rank3.json");
}

// A trace analysed once, so that its summary is in the cache: the trace's path and its entry's.
std::pair<fs::path, fs::path> analysed_and_cached(const ScratchDir& dir) {
  auto path = dir.write("rank3.json", kTrace);
  EXPECT_TRUE(analyse_file(path, CommMatcher(), "", {}).ok());
  auto cache = cache_file(path, "");
  EXPECT_TRUE(cache);
  return {path, cache.value_or(fs::path())};
}

TEST(TraceCache, CorruptCacheFileIsIgnored) {
  ScratchDir dir;
  const auto [path, cache] = analysed_and_cached(dir);
  CommMatcher comm;
  auto text = scalelens::testing::slurp(cache);
  std::ofstream(cache, std::ios::binary) << text.substr(0, text.size() / 2);
  auto r = analyse_file(path, comm, "", {});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().cached);
  EXPECT_EQ(r.value().rank, 3);
}

// A hunt edited cache entries: a step of -14 ms, comp of 1e300, a rank of 2^32 + 5 (read as 5), a
// world size of 0 (a configuration of 0 GPUs in report), a count of -1 (read as 2^64 - 1) were all
// shown as measured. An entry outside what a trace can hold is a miss: the trace is parsed again.
TEST(TraceCache, AnEntryNoTraceCouldGiveIsAMiss) {
  ScratchDir dir;
  const auto [path, cache] = analysed_and_cached(dir);
  CommMatcher comm;
  const std::string good = scalelens::testing::slurp(cache);
  ASSERT_TRUE(analyse_file(path, comm, "", {}).value().cached);
  for (auto [from, to] : {std::pair<std::string, std::string>{"\"step_time_us\":100", "\"step_time_us\":-14455"},
                          {"\"comp_us\":40", "\"comp_us\":1e300"},
                          {"\"rank\":3", "\"rank\":4294967301"},
                          {"\"rank\":3", "\"rank\":-7"},
                          {"\"world_size\":4", "\"world_size\":0"},
                          {"\"steps_analysed\":1", "\"steps_analysed\":2147483651"},
                          {"\"count\":1", "\"count\":-1"}}) {
    std::string bad = good;
    const auto at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bad.replace(at, from.size(), to);
    std::ofstream(cache, std::ios::binary) << bad;
    auto r = analyse_file(path, comm, "", {});
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r.value().cached) << to;
    EXPECT_EQ(r.value().rank, 3) << to;
    EXPECT_EQ(r.value().world_size, 4) << to;
  }
}

// A trace rewritten in place with its size and mtime put back kept its old summary; the key holds
// the status change time, which nothing sets back.
TEST(TraceCache, ARewriteWithItsTimePutBackIsSeen) {
  ScratchDir dir;
  // Past the two MiB whose CRCs the key holds: the step is edited in the middle of 3 MB.
  std::string filler;
  for (int i = 0; i < 25000; ++i) filler += R"({"ph": "X", "cat": "cpu_op", "name": "pad", "ts": 1, "dur": 1},)";
  std::string big = kTrace;
  const auto events = big.find("[\n") + 2;
  big.insert(events, filler);
  big.insert(big.find(R"( {"ph": "X", "cat": "Trace")"), filler);
  auto path = dir.write("rank3.json", big);
  CommMatcher comm;
  ASSERT_TRUE(analyse_file(path, comm, "", {}).ok());
  ASSERT_TRUE(analyse_file(path, comm, "", {}).value().cached);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  std::string changed = big;
  changed.replace(changed.find("\"dur\": 100"), 10, "\"dur\": 200");  // same size, the middle of the file
  ASSERT_GT(changed.find("\"dur\": 200"), std::size_t{1} << 20);
  ASSERT_GT(changed.size() - changed.find("\"dur\": 200"), std::size_t{1} << 20);
  ::usleep(20000);
  std::ofstream(path, std::ios::binary) << changed;
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  auto r = analyse_file(path, comm, "", {});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().cached);
  EXPECT_NEAR(r.value().total.step_time_us, 200, 1e-9);
}

// A pipe planted at a cache entry's name blocked the open for ever; a trace that became a pipe after
// it was listed did too. Neither is waited on; a pipe named on the command line is read.
TEST(TraceCache, APipeIsWaitedOnOnlyWhereItWasNamed) {
  ScratchDir dir;
  const auto [path, cache] = analysed_and_cached(dir);
  CommMatcher comm;
  fs::remove(cache);
  ASSERT_EQ(::mkfifo(cache.c_str(), 0600), 0);
  auto r = analyse_file(path, comm, "", {});  // returns: the planted pipe is no entry
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().cached);
  fs::remove(cache);
  const auto pipe = dir / "rank0.json";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  auto refused = load_kineto(pipe, ParseOptions{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("a named pipe (FIFO), not a regular file"), std::string::npos) << refused.error().message;
}

// A cache file's name is the FNV-1a (64-bit, from the basis its names were first made with:
// 1469598103934665603, the standard's short of its last digit) of the key written in it: a name
// made another way orphans every summary already cached.
TEST(TraceCache, TheFileNameIsTheHashOfTheKeyInIt) {
  ScratchDir dir;
  auto path = dir.write("rank3.json", kTrace);
  analyse_dir(dir.path());
  auto cached = cache_file(path, "");
  ASSERT_TRUE(cached && fs::exists(*cached));
  const std::string text = scalelens::testing::slurp(*cached);
  const auto from = text.find("\"key\":"), to = text.find(",\"summary\":");
  ASSERT_NE(from, std::string::npos) << text;
  ASSERT_NE(to, std::string::npos) << text;
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text.substr(from + 6, to - from - 6)) h = (h ^ c) * 1099511628211ULL;
  EXPECT_EQ(cached->filename().string(), fmt::format("{:016x}.summary.json", h));
}

TEST(TraceCache, SummaryRoundTripsExactly) {
  ScratchDir dir;
  auto path = dir.write("rank3.json", kTrace);
  auto r = analyse_file(path, CommMatcher(), "", CacheOptions{false});
  ASSERT_TRUE(r.ok());
  auto json = summary_to_json(r.value());
  auto back = summary_from_json(json);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(summary_to_json(*back), json);
  auto paced = r.value();
  paced.gpu_paced = !paced.gpu_paced;  // the one field whose every value the traces above do not give
  auto paced_back = summary_from_json(summary_to_json(paced));
  ASSERT_TRUE(paced_back.has_value());
  EXPECT_EQ(paced_back->gpu_paced, paced.gpu_paced);
  // The process's baseTimeNanoseconds tells jobs apart (split_into_jobs): kept by the cache.
  auto based = r.value();
  based.base_time_ns = 1'711'964'646'000'000'000;
  auto based_back = summary_from_json(summary_to_json(based));
  ASSERT_TRUE(based_back.has_value());
  EXPECT_EQ(based_back->base_time_ns, based.base_time_ns);
  EXPECT_FALSE(summary_from_json("{}").has_value());
  EXPECT_FALSE(summary_from_json("not json").has_value());
}

}  // namespace
}  // namespace scalelens::trace
