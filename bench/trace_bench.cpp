// Trace analysis speed on the shared large Kineto trace (53.7 MB inflated, 216 k events):
// inflate, parse (simdjson On-Demand), analyse, and all together. SCALELENS_REALDATA must point at
// shared/data; results go to bench/RESULTS.md ("Trace analysis").
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "trace/breakdown.hpp"
#include "trace/collectives.hpp"
#include "trace/kineto.hpp"
#include "trace/roofline.hpp"

namespace {
namespace fs = std::filesystem;
using namespace scalelens::trace;

fs::path large_trace() {
  const char* env = std::getenv("SCALELENS_REALDATA");
  return fs::path(env ? env : "../shared/data") / "kineto" / "hta" / "v100-rank1of2-large.json.gz";
}

void BM_Inflate(benchmark::State& state) {
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto b = load_trace_bytes(large_trace());
    if (!b) {
      state.SkipWithError(b.error().message.c_str());
      return;
    }
    bytes = b.value().size();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}
BENCHMARK(BM_Inflate)->Unit(benchmark::kMillisecond);

// Arg 0: one parse of the whole document; N > 0: slices of 1 MiB on N threads.
void BM_Parse(benchmark::State& state) {
  auto original = load_trace_bytes(large_trace());
  if (!original) {
    state.SkipWithError(original.error().message.c_str());
    return;
  }
  ParseOptions options;
  options.chunked = state.range(0) > 0;
  options.threads = static_cast<unsigned>(std::max<std::int64_t>(1, state.range(0)));
  for (auto _ : state) {
    auto parsed = parse_kineto(original.value(), "large", options);
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(original.value().size()) * state.iterations());
}
BENCHMARK(BM_Parse)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_Analyse(benchmark::State& state) {
  auto parsed = load_kineto(large_trace());
  if (!parsed) {
    state.SkipWithError(parsed.error().message.c_str());
    return;
  }
  CommMatcher comm;
  for (auto _ : state) benchmark::DoNotOptimize(analyse(parsed.value(), comm));
  state.counters["events"] = static_cast<double>(parsed.value().events.size());
}
BENCHMARK(BM_Analyse)->Unit(benchmark::kMillisecond);

void BM_LoadParseAnalyse(benchmark::State& state) {
  CommMatcher comm;
  for (auto _ : state) {
    auto parsed = load_kineto(large_trace());
    if (!parsed) {
      state.SkipWithError(parsed.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(analyse(parsed.value(), comm));
  }
}
BENCHMARK(BM_LoadParseAnalyse)->Unit(benchmark::kMillisecond);

// Matching collectives across ranks (issue 20), against BM_LoadParseAnalyse: the large trace's
// summary as two ranks of one job (the same calls on both, rank 1's 3 µs later), so that every
// call is matched. Wait/transfer are computed once per job over the summaries, not per event.
void BM_MatchCollectives(benchmark::State& state) {
  auto parsed = load_kineto(large_trace());
  if (!parsed) {
    state.SkipWithError(parsed.error().message.c_str());
    return;
  }
  std::vector<RankSummary> ranks(2, analyse(parsed.value(), CommMatcher()));
  ranks[0].rank = 0;
  ranks[1].rank = 1;
  for (auto& c : ranks[1].calls) c.start_ns += 3000;
  for (auto& r : ranks)
    if (!r.start_ns) r.start_ns = 0;  // its clock is Unix µs; say so for the matcher
  std::size_t matched = 0;
  for (auto _ : state) {
    auto m = match_collectives(ranks);
    matched = m.instances.size();
    benchmark::DoNotOptimize(m);
  }
  state.counters["calls"] = static_cast<double>(matched);
}
BENCHMARK(BM_MatchCollectives)->Unit(benchmark::kMillisecond);

// Rank 0's cross-rank work at scale (issue 17: the 4,096-trace estimate in docs/parallel.md):
// the large trace's collective calls as N ranks of one job, every call matched across all N. The
// ranks share eight copies of the calls (each 0-7 µs later), so memory stays that of the matching.
void BM_MatchCollectivesAcrossRanks(benchmark::State& state) {
  auto parsed = load_kineto(large_trace());
  if (!parsed) {
    state.SkipWithError(parsed.error().message.c_str());
    return;
  }
  const auto summary = analyse(parsed.value(), CommMatcher());
  std::vector<std::vector<scalelens::CollectiveCall>> variants(8, summary.calls);
  for (std::size_t v = 0; v < variants.size(); ++v)
    for (auto& c : variants[v]) c.start_ns += static_cast<std::int64_t>(v) * 1000;
  const int n = static_cast<int>(state.range(0));
  std::vector<RankCalls> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(RankCalls{r, true, &variants[static_cast<std::size_t>(r) % variants.size()]});
  std::size_t matched = 0;
  for (auto _ : state) {
    auto m = match_collectives(ranks);
    matched = m.instances.size();
    benchmark::DoNotOptimize(m);
  }
  state.counters["calls_per_rank"] = static_cast<double>(summary.calls.size());
  state.counters["matched"] = static_cast<double>(matched);
  state.counters["ns_per_rank_call"] = benchmark::Counter(static_cast<double>(n) * static_cast<double>(summary.calls.size()) *
                                                              static_cast<double>(state.iterations()),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MatchCollectivesAcrossRanks)->Arg(8)->Arg(64)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond);

// The roofline per operator (issue 20 §2) on the traces that record shapes: the 8 DLRM ranks.
// BM_DlrmLoadParseAnalyse is the whole per-trace work (attribution included); BM_DlrmAttributeOps
// the attribution of GPU work to the shaped ops alone, over the same parsed traces.
std::vector<fs::path> dlrm_traces() {
  const char* env = std::getenv("SCALELENS_REALDATA");
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(env ? env : "../shared/data") / "kineto" / "dlrm-8rank-v100", ec))
    if (e.path().filename().string().ends_with(".pt.trace.json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void BM_DlrmLoadParseAnalyse(benchmark::State& state) {
  const auto files = dlrm_traces();
  CommMatcher comm;
  for (auto _ : state)
    for (const auto& f : files) {
      auto parsed = load_kineto(f);
      if (!parsed) {
        state.SkipWithError(parsed.error().message.c_str());
        return;
      }
      benchmark::DoNotOptimize(analyse(parsed.value(), comm));
    }
}
BENCHMARK(BM_DlrmLoadParseAnalyse)->Unit(benchmark::kMillisecond);

void BM_DlrmAttributeOps(benchmark::State& state) {
  std::vector<ParsedTrace> traces;
  for (const auto& f : dlrm_traces()) {
    auto parsed = load_kineto(f);
    if (!parsed) {
      state.SkipWithError(parsed.error().message.c_str());
      return;
    }
    traces.push_back(std::move(parsed.value()));
  }
  CommMatcher comm;
  std::size_t ops = 0;
  for (auto _ : state)
    for (const auto& t : traces) {
      std::size_t shaped = 0;
      auto figures = attribute_ops(
          t, [](std::int64_t) { return true; }, [&](std::uint32_t name) { return comm.is_comm(t.names[name]); }, shaped);
      ops = figures.size();
      benchmark::DoNotOptimize(figures);
    }
  state.counters["op_signatures_last_rank"] = static_cast<double>(ops);
}
BENCHMARK(BM_DlrmAttributeOps)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
