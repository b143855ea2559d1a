// Summaries cached beside the traces: a second analysis of unchanged files parses nothing, any
// change to a file (or the regex) parses it again, and the cache is never taken for a trace.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
  EXPECT_TRUE(fs::exists(cache_file(dir / "rank3.json", "")));

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

  CommMatcher other(UserRegex::compile("^gemm").value());
  auto by_regex = analyse_file(path, other, "^gemm", {});
  EXPECT_FALSE(by_regex.value().cached) << "another regex has its own cache file";
  EXPECT_TRUE(analyse_file(path, comm, "", {}).value().cached);
  EXPECT_FALSE(analyse_file(path, comm, "", CacheOptions{false}).value().cached);

  ::setenv("SCALELENS_NO_CACHE", "1", 1);
  EXPECT_FALSE(analyse_file(path, comm, "", {}).value().cached);
  ::unsetenv("SCALELENS_NO_CACHE");
}

TEST(TraceCache, ReadOnlyFolderMeansNoCacheSilently) {
  ScratchDir dir;
  auto path = dir.write("ro/rank3.json", kTrace);
  fs::permissions(dir / "ro", fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  CommMatcher comm;
  auto r = analyse_file(path, comm, "", {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(fs::exists(dir / "ro" / kCacheFolder)) << "not even as root";
  EXPECT_FALSE(analyse_file(path, comm, "", {}).value().cached);
  fs::permissions(dir / "ro", fs::perms::owner_all, fs::perm_options::add);  // so that ScratchDir can remove it
}

TEST(TraceCache, CorruptCacheFileIsIgnored) {
  ScratchDir dir;
  auto path = dir.write("rank3.json", kTrace);
  CommMatcher comm;
  ASSERT_TRUE(analyse_file(path, comm, "", {}).ok());
  auto cache = cache_file(path, "");
  auto text = scalelens::testing::slurp(cache);
  std::ofstream(cache, std::ios::binary) << text.substr(0, text.size() / 2);
  auto r = analyse_file(path, comm, "", {});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().cached);
  EXPECT_EQ(r.value().rank, 3);
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
  EXPECT_FALSE(summary_from_json("{}").has_value());
  EXPECT_FALSE(summary_from_json("not json").has_value());
}

}  // namespace
}  // namespace scalelens::trace
