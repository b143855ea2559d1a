// Bad Kineto input never crashes: each case gives a clear message naming the file and, where it
// can, the byte offset; single bad events are left out and counted, the rest still analysed.
#include <zlib.h>

#include <string>

#include <fmt/format.h>

#include "support/test_support.hpp"
#include "trace/breakdown.hpp"
#include "trace/kineto.hpp"
#include "trace/trace_set.hpp"

namespace scalelens::trace {
namespace {
using scalelens::testing::ScratchDir;

const std::string kGood = R"({"distributedInfo": {"rank": 1, "world_size": 2}, "deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}],
"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 10, "dur": 40, "args": {"stream": 7, "correlation": 1}}
]})";

Result<ParsedTrace> parse(std::string text) { return parse_kineto(text, "t.json"); }

const ParseIssue* issue(const ParsedTrace& t, const std::string& code) {
  for (const auto& i : t.issues)
    if (i.code == code) return &i;
  return nullptr;
}

std::string gzip(const std::string& data) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(TraceParser, KeepsTheFieldsTheAnalysisNeeds) {
  auto r = parse(kGood);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& t = r.value();
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.world_size, 2);
  ASSERT_EQ(t.device_names.size(), 1u);
  EXPECT_EQ(t.device_names[0], "NVIDIA A100-SXM4-80GB");
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[2].cat, EventCat::kernel);
  EXPECT_EQ(t.events[2].ts_ns, 10'000);
  EXPECT_EQ(t.events[2].dur_ns, 40'000);
  EXPECT_EQ(t.events[2].stream, 7);
  EXPECT_EQ(t.events[2].correlation, 1);
  EXPECT_EQ(t.names[t.events[2].name], "gemm");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].number, 3);
  EXPECT_FALSE(t.any_float_ts);
}

TEST(TraceParser, TruncatedJsonIsAnErrorSayingSo) {
  auto r = parse(kGood.substr(0, kGood.size() - 40));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().path, "t.json");
}

// A file holding a trace and more after it (two traces appended into one file) was read as its
// first trace alone, with no warning: the rest of the file is an error, whatever follows.
TEST(TraceParser, ContentAfterTheDocumentIsAnErrorSayingSo) {
  auto two = parse(kGood + "\n" + kGood);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().message, fmt::format("invalid JSON: content after the end of the document, at byte {}", kGood.size() + 1));
  EXPECT_EQ(two.error().path, "t.json");
  auto brackets = parse(kGood + "\n[]\n");
  ASSERT_FALSE(brackets.ok());
  EXPECT_EQ(brackets.error().message, "invalid JSON: the document opens with '{' but the file ends with ']': content after the "
                                      "document (two documents in one file?), or the file was cut just after that ']'");
  auto events = parse("[" + kGood.substr(kGood.find("{\"ph\"")) + "\n");  // an array of events, then the closing brace
  ASSERT_FALSE(events.ok());
  EXPECT_NE(events.error().message.find("opens with '['"), std::string::npos) << events.error().message;
  EXPECT_TRUE(parse(kGood + "\n \n\t").ok());  // blanks after it are nothing
}

// HTA takes a trace's rank from the first "rank" in its text; one outside the ranks any job has
// (distributedInfo.rank -1 read so) is not a rank: the file name says which it is, with a warning.
TEST(TraceParser, RankTextBeyondAnyJobIsTakenFromTheFileName) {
  // 2^40 and 2^70 once fell through int and read as "no rank in the trace".
  for (const char* rank : {"-1", "2147483647", "1099511627776", "1180591620717411303424", "-1180591620717411303424"}) {
    std::string text = kGood;
    text.replace(text.find("\"rank\": 1"), std::string_view("\"rank\": 1").size(), std::string("\"rank\": ") + rank);
    auto r = parse_kineto(text, "worker3.pt.trace.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_FALSE(r.value().rank);
    const RankSummary s = analyse(r.value(), CommMatcher());
    EXPECT_EQ(s.rank, 3) << rank;
    EXPECT_FALSE(s.rank_known);
    ASSERT_FALSE(s.warnings.empty());
    const std::string shown = rank == std::string_view("1180591620717411303424")    ? "beyond 2^63"
                              : rank == std::string_view("-1180591620717411303424") ? "below -2^63"
                                                                                     : rank;
    EXPECT_EQ(s.warnings[0], fmt::format("the trace's rank {} is not from 0 to 9999999; taken as 3 from the file name", shown));
  }
}

// A ProfilerStep of "dur": 0 made a step time of 0 in the summary, which compare then refused.
TEST(TraceParser, AStepThatLastsNoTimeIsNoStep) {
  std::string text = kGood;
  text.replace(text.find("\"dur\": 100"), std::string_view("\"dur\": 100").size(), "\"dur\": 0");
  auto r = parse(text);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r.value().steps.empty());
  ASSERT_NE(issue(r.value(), "zero-dur-step"), nullptr);
  EXPECT_EQ(issue(r.value(), "zero-dur-step")->message.rfind("a ProfilerStep lasts no time (\"dur\": 0); it is no step and is left out", 0), 0u);
}

TEST(TraceParser, NoTraceEventsIsAnError) {
  auto r = parse(R"({"schemaVersion": 1, "deviceProperties": []})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("traceEvents"), std::string::npos) << r.error().message;
  EXPECT_FALSE(parse("[1, 2, 3]").ok());
}

TEST(TraceParser, ChromeTraceArrayFormatIsReadAsTheEventsAlone) {
  // PyTorch 1.13's CPU-only profiler writes the events as a bare array (Chrome's "array format").
  const std::string text = R"([{"name": "ProfilerStep#1", "ph": "X", "ts": 375, "dur": 15039, "tid": 1, "pid": "CPU functions", "args": {}},
 {"name": "aten::mm", "ph": "X", "ts": 400, "dur": 120, "tid": 1, "pid": "CPU functions", "args": {}}])";
  EXPECT_TRUE(looks_like_kineto(text.substr(0, 80)));
  EXPECT_FALSE(looks_like_kineto("[1, 2, 3]"));
  EXPECT_FALSE(looks_like_kineto(R"([{"epoch": 1, "loss": 0.3}])"));
  auto r = parse(text);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& t = r.value();
  EXPECT_EQ(t.total_events, 2u);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].number, 1);
  EXPECT_FALSE(t.rank.has_value());
  EXPECT_TRUE(t.device_names.empty());
  auto empty = parse("[]");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("no trace events"), std::string::npos) << empty.error().message;
}

TEST(TraceParser, BadEventsAreLeftOutAndCountedWithTheirOffset) {
  std::string text = R"({"traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "a", "dur": 5, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "b", "ts": 5, "args": {"stream": 7, "correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "c", "ts": 5, "dur": -3, "args": {"stream": 7, "correlation": 3}},
 {"ph": "X", "cat": "kernel", "name": "d", "ts": 123456789012345678901234567890, "dur": 1, "args": {"stream": 7, "correlation": 4}},
 {"ph": "X", "cat": "kernel", "name": "e", "ts": 9, "dur": 1, "args": {"stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "ok", "ts": 20, "dur": 2, "args": {"stream": 7, "correlation": 6}}
]})";
  auto r = parse(text);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& t = r.value();
  EXPECT_NE(issue(t, "missing-ts"), nullptr);
  EXPECT_NE(issue(t, "missing-dur"), nullptr);
  ASSERT_NE(issue(t, "negative-dur"), nullptr);
  EXPECT_NE(issue(t, "negative-dur")->message.find("byte " + std::to_string(text.find("-3"))), std::string::npos)
      << issue(t, "negative-dur")->message;
  EXPECT_NE(issue(t, "huge-number"), nullptr);
  EXPECT_NE(issue(t, "kernel-without-correlation"), nullptr);
  ASSERT_EQ(t.events.size(), 2u);  // "e" (kept, counted apart later) and "ok"
  EXPECT_EQ(t.names[t.events[1].name], "ok");
}

TEST(TraceParser, NonUtf8TextIsAnErrorWithItsOffset) {
  std::string text = kGood;
  auto pos = text.find("gemm");
  text[pos + 1] = static_cast<char>(0xff);
  auto r = parse(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("UTF-8 at byte " + std::to_string(pos + 1)), std::string::npos) << r.error().message;
}

TEST(TraceParser, GzipIsInflatedAndTruncatedGzipIsNamed) {
  ScratchDir dir;
  auto good = dir.write("good.json.gz", gzip(kGood));
  auto parsed = load_kineto(good);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed.value().events.size(), 3u);
  auto gz = gzip(kGood);
  auto cut = dir.write("cut.json.gz", gz.substr(0, gz.size() / 2));
  auto r = load_kineto(cut);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("truncated gzip"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().path, cut.string());
}

TEST(TraceParser, OneBadRankDoesNotStopTheOthers) {
  ScratchDir dir;
  dir.write("rank1.json", kGood);
  dir.write("rank0.json", kGood.substr(0, 100));
  TraceSetOptions options;
  options.inputs = {dir / "rank0.json", dir / "rank1.json"};
  auto set = analyse_traces(options);
  ASSERT_EQ(set.ranks.size(), 1u);
  EXPECT_EQ(set.ranks[0].rank, 1);
  ASSERT_FALSE(set.diagnostics.empty());
  EXPECT_EQ(set.diagnostics[0].path, (dir / "rank0.json").string());
}

TEST(TraceParser, HtaRankIsTheFirstRankTextElseZero) {
  auto r = parse(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "x", "ts": 1, "dur": 1, "args": {"rank" : 5}}]})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().hta_rank, 5);
  EXPECT_FALSE(r.value().rank.has_value());  // not from distributedInfo
  auto none = parse(R"({"traceEvents": []})");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none.value().hta_rank, 0);
}

}  // namespace
}  // namespace scalelens::trace
