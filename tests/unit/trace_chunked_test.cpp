// The chunked parse (events cut into slices, each its own small document, on several threads)
// must give exactly what one parse of the whole file gives, on every layout, and fall back to the
// whole-file parse whenever a cut lands somewhere odd.
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>

#include "support/test_support.hpp"
#include "trace/kineto.hpp"
#include "trace/kineto_internal.hpp"

namespace scalelens::trace {
namespace {
using scalelens::testing::ScratchDir;

// Compares everything the analysis reads of two parses of one text (or the same error).
void expect_equal(const Result<ParsedTrace>& w, const Result<ParsedTrace>& c) {
  ASSERT_EQ(w.ok(), c.ok()) << (w.ok() ? c.error().message : w.error().message);
  if (!w.ok()) {
    EXPECT_EQ(w.error().message, c.error().message);
    return;
  }
  const auto& x = w.value();
  const auto& y = c.value();
  EXPECT_EQ(x.rank, y.rank);
  EXPECT_EQ(x.world_size, y.world_size);
  EXPECT_EQ(x.hta_rank, y.hta_rank);
  EXPECT_EQ(x.hta_rank_found, y.hta_rank_found);
  EXPECT_EQ(x.device_names, y.device_names);
  EXPECT_EQ(x.any_float_ts, y.any_float_ts);
  EXPECT_EQ(x.total_events, y.total_events);
  ASSERT_EQ(x.events.size(), y.events.size());
  for (std::size_t i = 0; i < x.events.size(); ++i) {
    const auto &e = x.events[i], &f = y.events[i];
    EXPECT_EQ(e.ts_ns, f.ts_ns) << i;
    EXPECT_EQ(e.dur_ns, f.dur_ns) << i;
    EXPECT_EQ(e.stream, f.stream) << i;
    EXPECT_EQ(e.correlation, f.correlation) << i;
    EXPECT_EQ(e.cat, f.cat) << i;
    EXPECT_EQ(e.tid, f.tid) << i;
    EXPECT_EQ(x.names[e.name], y.names[f.name]) << i;
    ASSERT_EQ(e.extra == kNoExtra, f.extra == kNoExtra) << i;
    if (e.extra != kNoExtra) {
      const auto &p = x.collectives[e.extra], &q = y.collectives[f.extra];
      EXPECT_EQ(x.names[p.collective_name], y.names[q.collective_name]);
      EXPECT_EQ(x.names[p.dtype], y.names[q.dtype]);
      EXPECT_EQ(x.names[p.input_type], y.names[q.input_type]);
      EXPECT_EQ(x.names[p.input_dims_json], y.names[q.input_dims_json]);
      EXPECT_EQ(x.names[p.input_types_json], y.names[q.input_types_json]);
      EXPECT_EQ(p.in_msg_nelems, q.in_msg_nelems);
      EXPECT_EQ(p.flops, q.flops);
    }
  }
  ASSERT_EQ(x.steps.size(), y.steps.size());
  for (std::size_t i = 0; i < x.steps.size(); ++i) EXPECT_EQ(x.steps[i].number, y.steps[i].number);
  ASSERT_EQ(x.issues.size(), y.issues.size());
  for (std::size_t i = 0; i < x.issues.size(); ++i) {
    EXPECT_EQ(x.issues[i].code, y.issues[i].code);
    EXPECT_EQ(x.issues[i].message, y.issues[i].message);
    EXPECT_EQ(x.issues[i].count, y.issues[i].count);
  }
}

ParseOptions whole_file() {
  ParseOptions whole;
  whole.chunked = false;
  return whole;
}

// Parses `text` both ways.
void expect_same(const std::string& text, std::size_t chunk_bytes, unsigned threads) {
  std::string a = text, b = text;
  ParseOptions sliced;
  sliced.chunk_bytes = chunk_bytes;
  sliced.threads = threads;
  auto w = parse_kineto(a, "t.json", whole_file());
  auto c = parse_kineto(b, "t.json", sliced);
  EXPECT_EQ(b, text) << "the buffer is restored";
  expect_equal(w, c);
}

// `text` gzipped (in `members` gzip members, cut at arbitrary bytes, as `cat a.gz b.gz` makes) and
// read from the file slice by slice as it inflates, against one parse of the whole text.
void expect_same_streamed(const std::string& text, std::size_t chunk_bytes, unsigned threads, int members = 1) {
  ScratchDir dir;
  std::string command = "cd '" + dir.path().string() + "' && : > t.json.gz";
  for (int m = 0; m < members; ++m) {
    const std::size_t from = text.size() * m / members, to = text.size() * (m + 1) / members;
    dir.write("part" + std::to_string(m), text.substr(from, to - from));
    command += " && gzip -c part" + std::to_string(m) + " >> t.json.gz";
  }
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::string a = text;
  ParseOptions streamed;
  streamed.chunk_bytes = chunk_bytes;
  streamed.threads = threads;
  auto w = parse_kineto(a, (dir / "t.json.gz").string(), whole_file());
  auto c = load_kineto(dir / "t.json.gz", streamed);
  expect_equal(w, c);
}

void expect_same_all_ways(const std::string& text) {
  for (std::size_t chunk : {std::size_t{1}, std::size_t{50}, std::size_t{1} << 20})
    for (unsigned threads : {1u, 3u}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + " threads " + std::to_string(threads));
      expect_same(text, chunk, threads);
      expect_same_streamed(text, chunk, threads, threads == 3 ? 2 : 1);
    }
}

const std::string kEvents = R"(
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {"flops": 2000, "Input type": ["c10::BFloat16", ""], "rank": 9}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 7, "tid": 4294967301, "ts": 1, "dur": 2, "args": {"Input Dims": [[4], [2, 3], [3, 4], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1.5, "dur": 2, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "gemm \"quoted\" }, {", "ts": 10, "dur": 40, "args": {"stream": 7, "correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "ts": 30, "dur": 40, "args": {"stream": 9, "correlation": 2, "Collective name": "allreduce", "In msg nelems": 10, "dtype": "Float", "list": [{"a": 1}, {"b": 2}]}},
  {"ph": "X", "cat": "kernel", "name": "bad", "ts": 30, "dur": -4, "args": {"stream": 9, "correlation": 2}},
  {"ph": "i", "cat": "kernel", "name": "nodur", "ts": 31, "args": {"stream": 9}},
  {"ph": "X", "cat": "kernel", "name": "gemm \"quoted\" }, {", "ts": 60, "dur": 5, "args": {"stream": 7}}
])";

TEST(TraceChunked, SameAsWholeWithTraceEventsFirst) {
  expect_same_all_ways(R"({"traceEvents": [)" + kEvents + R"(], "distributedInfo": {"rank": 1, "world_size": 2},
  "deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}, {"name": "NVIDIA A100-SXM4-80GB"}]})");
}

TEST(TraceChunked, SameAsWholeWithHeaderAndTrailer) {
  expect_same_all_ways(R"({"schemaVersion": 1, "deviceProperties": [{"name": "NVIDIA H100 80GB HBM3"}, {"name": "x"}],
  "distributedInfo": {"rank": 4, "world_size": 8}, "traceEvents": [)" + kEvents + R"(], "traceName": "t", "baseTimeNanoseconds": 1}
)");
}

TEST(TraceChunked, SameAsWholeOnOddLayouts) {
  // Minified (no whitespace to cut at), empty array, a key named like the array in a string,
  // a nested traceEvents key before the real one, and two traceEvents arrays.
  expect_same_all_ways(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"a","ts":1,"dur":2,"args":{"stream":7,"correlation":1}},{"ph":"X","cat":"kernel","name":"b","ts":3,"dur":2}]})");
  expect_same_all_ways(R"({"traceEvents": [ ], "distributedInfo": {"rank": 2}})");
  expect_same_all_ways(R"({"note": "traceEvents", "traceEvents": [)" + kEvents + "]}");
  expect_same_all_ways(R"({"meta": {"traceEvents": [{"x": 1}, {"y": 2}]}, "traceEvents": [)" + kEvents + "]}");
  expect_same_all_ways(R"({"traceEvents": [)" + kEvents + R"(], "traceEvents": [)" + kEvents + "]}");
  expect_same_all_ways(R"({"traceEvents": [)" + kEvents + R"(, 7, "x"]})");
}

TEST(TraceChunked, SameErrorsAsWholeOnBadInput) {
  const std::string good = R"({"distributedInfo": {"rank": 1}, "traceEvents": [)" + kEvents + "]}";
  for (std::size_t cut : {good.size() - 1, good.size() - 3, good.size() / 2, std::size_t{40}}) expect_same_all_ways(good.substr(0, cut));
  expect_same_all_ways(R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}}, {"ph": "X"}]})");
  expect_same_all_ways(R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}, {"ph": "X"]})");
  expect_same_all_ways(R"({"traceEvents": 5})");
  expect_same_all_ways(R"({"other": [{"a": 1}, {"b": 2}]})");
  expect_same_all_ways("[1, 2]");
  expect_same_all_ways("");
  // Content after the document: a second trace appended to the first, or stray brackets.
  expect_same_all_ways(good + "\n" + good);
  expect_same_all_ways(good + "\n[]\n");
  expect_same_all_ways("[" + kEvents.substr(kEvents.find('{')) + "\n" + good);
}

TEST(TraceChunked, MappedFileGivesTheSameEvents) {
  ScratchDir dir;
  std::string text = R"({"distributedInfo": {"rank": 1}, "traceEvents": [)";
  // ~300 kB of events so that the slices span many pages (and pages are handed back).
  for (int i = 0; i < 3000; ++i)
    text += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 17) + R"(", "ts": )" + std::to_string(i * 10) +
            R"(, "dur": 5, "args": {"stream": 7, "correlation": )" + std::to_string(i) + "}},\n  ";
  text += R"({"ph": "X", "cat": "Trace", "name": "end", "ts": 0, "dur": 30000}]})";
  auto path = dir.write("big.json", text);
  ParseOptions sliced;
  sliced.chunk_bytes = 10000;
  sliced.threads = 2;
  auto c = load_kineto(path, sliced);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c.value().events.size(), 3001u);
  for (int i = 0; i < 3000; ++i) {
    EXPECT_EQ(c.value().events[i].ts_ns, i * 10'000);
    EXPECT_EQ(c.value().names[c.value().events[i].name], "k" + std::to_string(i % 17));
  }
  EXPECT_EQ(scalelens::testing::slurp(path), text) << "the file is never written";
}

// Slices are merged as they are parsed into events reserved from the density seen so far: a dense
// beginning reserves room the rest does not fill (address space only, bounded by the text), and a
// sparse beginning makes the events grow again; both give what one parse of the whole file gives.
TEST(TraceChunked, EventsReservedFromTheFirstSlicesAreBoundedAndRightEitherWay) {
  // Dense: 31 bytes an event, denser than Kineto writes; sparse: a profiler's event with long args.
  auto dense = [](int i) { return R"({"ph":"X","ts":)" + std::to_string(10000 + i) + R"(,"dur":5}, )"; };
  auto sparse = [](int i) {
    return R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 5) + R"(", "ts": )" + std::to_string(10000 + i) +
           R"(, "dur": 5, "args": {"note": ")" + std::string(600, 'x') + R"("}},)" + "\n  ";
  };
  for (bool dense_first : {true, false}) {
    SCOPED_TRACE(dense_first ? "dense events first" : "sparse events first");
    std::string text = R"({"traceEvents": [)";
    for (int i = 0; i < 4000; ++i) text += (i < 400) == dense_first ? dense(i) : sparse(i);
    text += R"({"ph": "X", "ts": 0, "dur": 1}]})";
    for (unsigned threads : {1u, 3u}) expect_same(text, 8000, threads);
    std::string buffer = text;
    ParseOptions sliced;
    sliced.chunk_bytes = 8000;
    auto parsed = parse_kineto(buffer, "t.json", sliced);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    ASSERT_EQ(parsed.value().events.size(), 4001u);
    EXPECT_LE(parsed.value().events.capacity(), text.size() / 32 + 1) << "reserved beyond one event per 32 bytes";
    // Streamed from gzip, where the text's length is a guess from the ratio inflated so far.
    for (unsigned threads : {1u, 3u}) expect_same_streamed(text, 8000, threads);
    ScratchDir dir;
    dir.write("t.json", text);
    ASSERT_EQ(std::system(("gzip '" + (dir / "t.json").string() + "'").c_str()), 0);
    auto streamed = load_kineto(dir / "t.json.gz", sliced);
    ASSERT_TRUE(streamed.ok()) << streamed.error().message;
    ASSERT_EQ(streamed.value().events.size(), 4001u);
    EXPECT_LE(streamed.value().events.capacity(), text.size() / 32 + 1) << "streamed: reserved beyond one event per 32 bytes";
  }
}

// Slices finish in any order on several threads; the merged trace must be the one of file order:
// names interned in the order the parts give them, collectives renumbered, issues counted under
// the first part's message, steps in order. Parts handed over in reverse and shuffled, merged as
// they come (text length known) or at the end (not known), against parts handed over in order.
TEST(TraceChunked, PartsMergeInFileOrderWhateverOrderTheyFinishIn) {
  auto part = [](int i) {
    ParsedTrace p;
    p.names = {"", "kernel-" + std::to_string(i % 3), "nccl:all_reduce", "k" + std::to_string(i)};
    for (int e = 0; e < 50; ++e) {
      TraceEvent ev;
      ev.ts_ns = i * 1000 + e;
      ev.dur_ns = 5;
      ev.name = static_cast<std::uint32_t>(1 + (e + i) % 3);
      if (e % 10 == 0) {
        ev.extra = static_cast<std::uint32_t>(p.collectives.size());
        CollectiveArgs c;
        c.collective_name = 2;
        c.in_msg_nelems = i * 100 + e;
        p.collectives.push_back(c);
      }
      p.events.push_back(ev);
    }
    p.steps.push_back({i, i * 1000, 50});
    p.total_events = 60;
    p.issues.push_back({"bad-number", "a number in part " + std::to_string(i), 2});
    if (i % 2) p.issues.push_back({"huge-number", "a huge number in part " + std::to_string(i), 1});
    return p;
  };
  constexpr int kParts = 12;
  auto merge = [&](const std::vector<int>& order, std::size_t events_bytes) {
    detail::PartsInOrder parts("t.json", events_bytes);
    for (int i : order) parts.add(static_cast<std::size_t>(i), part(i), 4000);
    ParsedTrace head, tail;
    return parts.finish(kParts * 4000, head, tail, std::vector<std::optional<std::int64_t>>(kParts), std::nullopt, std::nullopt);
  };
  std::vector<int> in_order(kParts), reversed(kParts), shuffled(kParts);
  for (int i = 0; i < kParts; ++i) in_order[i] = i, reversed[i] = kParts - 1 - i;
  shuffled = in_order;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(5));
  const ParsedTrace expected = merge(in_order, 0);
  ASSERT_EQ(expected.events.size(), kParts * 50u);
  const std::vector<std::string> first_names{"", "kernel-0", "nccl:all_reduce", "k0", "kernel-1", "k1", "kernel-2", "k2", "k3"};
  ASSERT_GE(expected.names.size(), first_names.size());
  EXPECT_EQ(std::vector<std::string>(expected.names.begin(), expected.names.begin() + 9), first_names)
      << "each part's names after the earlier parts'";
  EXPECT_EQ(expected.collectives[expected.events[60].extra].in_msg_nelems, 110) << "part 1's collectives renumbered";
  EXPECT_EQ(expected.issues.size(), 2u);
  EXPECT_EQ(expected.issues[0].message, "a number in part 0");
  EXPECT_EQ(expected.issues[0].count, 2 * kParts);
  EXPECT_EQ(expected.issues[1].message, "a huge number in part 1");
  for (const auto& order : {in_order, reversed, shuffled})
    for (std::size_t events_bytes : {std::size_t{0}, std::size_t{kParts * 4000}, std::size_t{4000}}) {
      SCOPED_TRACE("first part handed over " + std::to_string(order[0]) + ", text length " + std::to_string(events_bytes));
      const ParsedTrace merged = merge(order, events_bytes);
      EXPECT_EQ(merged.names, expected.names);
      expect_equal(expected, merged);
    }
}

TEST(TraceChunked, GzipStreamedSameAsWholeAcrossInflatePieces) {
  // ~3 MB of events: the stream inflates 1 MiB at a time, so cuts are searched across pieces.
  std::string text = R"({"schemaVersion": 1, "distributedInfo": {"rank": 3, "world_size": 4}, "traceEvents": [)";
  for (int i = 0; i < 25000; ++i)
    text += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 17) + R"(", "ts": )" + std::to_string(i * 10) +
            R"(, "dur": 5, "args": {"stream": 7, "correlation": )" + std::to_string(i) + "}},\n  ";
  text += R"({"ph": "X", "cat": "Trace", "name": "end", "ts": 0, "dur": 300000}], "baseTimeNanoseconds": 17})";
  for (std::size_t chunk : {std::size_t{4096}, std::size_t{1} << 20, std::size_t{3} << 20})
    for (unsigned threads : {1u, 2u}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + " threads " + std::to_string(threads));
      expect_same_streamed(text, chunk, threads, 3);
    }
}

TEST(TraceChunked, RealTracesSameAsWhole) {
  SCALELENS_REQUIRE_REALDATA(data);
  for (const char* rel : {"kineto/hta/resnet-ddp-rank0of2-a100.json.gz", "kineto/hta/ns-timestamps-v100.pt.trace.json.gz",
                          "kineto/hta/amd-mi250-rocm6.json.gz", "kineto/hta/cpu-only.pt.trace.json.gz",
                          "kineto/hta/triton.json.gz", "kineto/hta/no-distributed-info.json.gz",
                          "kineto/hta/sampled-2of128/sampled_rank-1.json.gz"}) {
    SCOPED_TRACE(rel);
    auto bytes = load_trace_bytes(data / rel);
    ASSERT_TRUE(bytes.ok());
    expect_same(bytes.value(), 64 * 1024, 2);
  }
}

TEST(TraceChunked, RealGzippedTracesStreamedSameAsWhole) {
  SCALELENS_REQUIRE_REALDATA(data);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(data / "kineto")) {
    if (entry.path().extension() != ".gz") continue;
    SCOPED_TRACE(entry.path().string());
    auto bytes = load_trace_bytes(entry.path());
    ASSERT_TRUE(bytes.ok());
    ParseOptions streamed;
    streamed.threads = 2;
    expect_equal(parse_kineto(bytes.value(), entry.path().string(), whole_file()), load_kineto(entry.path(), streamed));
  }
}

}  // namespace
}  // namespace scalelens::trace
