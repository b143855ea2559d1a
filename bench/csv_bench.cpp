// Reading one node's gpu.csv of the generated study that bench/report_speed.sh reports on (8 GPUs ×
// 3,600 samples, 3 MB): the row parser alone, on one thread, from the page cache. Needs the study:
// run bench/report_speed.sh first, or point SCALELENS_BENCH_GPU_CSV at any gpu.csv.
// Results go to bench/RESULTS.md ("Samples reduced as they are read").
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "analysis/series_figures.hpp"
#include "common/process_memory.hpp"
#include "ingest/reader.hpp"

namespace {
namespace fs = std::filesystem;

fs::path gpu_csv() {
  const char* env = std::getenv("SCALELENS_BENCH_GPU_CSV");
  return env ? fs::path(env) : fs::path("/tmp/scalelens-bench-study-1000-8-3600/run-0000/nodes/node0/gpu.csv");
}

// The reader alone (ReadGpuCsv), or as a report reads it (ReadAndReduceGpuCsv): each GPU's
// samples then reduced to its figures over the run's window (cut a tenth in at each end, as a
// run's epochs cut its logging) and a chart of its share of the point budget (a 1,000-run × 8-GPU
// study: 300,000 / 8,000 = 37 points).
void BM_GpuCsv(benchmark::State& state, bool reduce) {
  const fs::path file = gpu_csv();
  if (!fs::exists(file)) {
    state.SkipWithError(("no " + file.string() + ": run bench/report_speed.sh first").c_str());
    return;
  }
  auto reader = scalelens::make_run_csv_reader();
  const std::size_t chart_points = scalelens::chart_points_per_series(scalelens::kGpuChartPointBudget, 8000);
  std::size_t samples = 0;
  for (auto _ : state) {
    scalelens::ReadOutput out;
    reader->read(scalelens::ReadContext{file, nullptr}, out);
    samples = 0;
    for (auto& g : out.attach.gpus) {
      samples += g.samples.size();
      if (!reduce || g.samples.empty()) continue;
      const std::int64_t first = g.samples.front().t_ns, last = g.samples.back().t_ns;
      scalelens::reduce_gpu_series(g, first + (last - first) / 10, last - (last - first) / 10, chart_points);
      benchmark::DoNotOptimize(g.reduced->figures.energy_j);
    }
    benchmark::DoNotOptimize(samples);
  }
  if (samples == 0) state.SkipWithError("the file gave no samples");
  state.SetBytesProcessed(static_cast<std::int64_t>(fs::file_size(file)) * state.iterations());
  state.counters["ns_per_line"] =
      benchmark::Counter(static_cast<double>(samples) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_GpuCsv, ReadGpuCsv, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GpuCsv, ReadAndReduceGpuCsv, true)->Unit(benchmark::kMillisecond);

}  // namespace

// As the command-line program runs: SCALELENS_BENCH_GLIBC_HEAP=1 leaves glibc's defaults, to show
// what keep_freed_memory_for_reuse() saves.
int main(int argc, char** argv) {
  if (!std::getenv("SCALELENS_BENCH_GLIBC_HEAP")) scalelens::keep_freed_memory_for_reuse();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
