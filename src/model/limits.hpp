#pragma once
// What a measurement can physically be: the one table every reader checks what it reads against
// (docs/refusals.md lists each check). A value outside is left out with a warning naming the file
// and the line or event; the rest of the file and of the study is kept. The limits are generous
// (far beyond any machine that exists) so that they refuse only what cannot be, never a real run.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace scalelens::limits {

// Counts. The largest machines have ~10^5 GPUs and ~10^7 CPU cores (Fugaku: 7.6 M cores, 158,976
// nodes); a GPU node has at most 16 accelerators, a CPU-only job at most a few hundred ranks per node.
inline constexpr std::int64_t kMaxWorldSize = 10'000'000;  // ranks or GPUs of one run
inline constexpr std::int64_t kMaxNodes = 1'000'000;
inline constexpr std::int64_t kMaxPerNode = 4096;          // GPUs (or ranks) per node
inline constexpr std::int64_t kMaxCpusPerNode = 65536;     // logical CPUs of one node
inline constexpr std::int64_t kMaxRank = kMaxWorldSize - 1;

// Time. No training run lasts 3 years; beyond that a time is junk (and near int64's ns range).
// Nor does a run, an epoch or a step last no time at all: its end is after its start (a zero-length
// epoch at the baseline made every other configuration's speedup 0).
inline constexpr double kMaxRunSeconds = 1e8;
inline constexpr std::int64_t kMaxRunNs = static_cast<std::int64_t>(kMaxRunSeconds * 1e9);
// An epoch or step may outlast its run's manifest times by the clock difference between nodes
// (epochs.csv times come from every node's CLOCK_REALTIME); beyond this it cannot be the run's.
inline constexpr std::int64_t kIntervalSlackNs = 1'000'000'000;
// A wall-clock (Unix) time in ns of a recorded job: years 2000 to 2200. Trace clocks below that
// are a monotonic clock (time since boot), which cannot be compared across nodes.
inline constexpr std::int64_t kWallClockMinNs = 946'684'800'000'000'000;
inline constexpr std::int64_t kWallClockMaxNs = 7'258'118'400'000'000'000;
inline bool wall_clock_ns(std::int64_t t) { return t >= kWallClockMinNs && t <= kWallClockMaxNs; }

// Samples processed (per epoch, per rank, or a global batch), at most 10^15. A rank's or GPU's
// share may be a fraction (tensor and pipeline parallel ranks share their samples), but not less
// than one sample shared by the largest world size: a denormal count made 1e-301 samples/s.
inline constexpr double kMinSamples = 1.0 / static_cast<double>(kMaxWorldSize);
inline constexpr double kMaxSamples = 1e15;

// Seconds between two samples of a GPU sampler (a manifest's sampling_interval_s, itwinai's
// probing_interval): no sampler reads a GPU more often than every microsecond, none worth a
// figure once a day. Each sample counts for that long in nominal-time energy, so 1e300 s made
// 1e298 Wh.
inline constexpr double kMinSamplingIntervalS = 1e-6;
inline constexpr double kMaxSamplingIntervalS = 86400;

// GPU readings. No GPU draws 5 kW (the largest boards draw ~1.2 kW); utilization is a percentage.
inline constexpr double kMaxGpuPowerW = 5000;
inline constexpr double kMaxPercent = 100;
// GPU memory in use: the largest boards hold ~300 GB; none holds 16 TiB.
inline constexpr double kMaxGpuMemoryBytes = 16.0 * (1ull << 40);
// An energy counter may rise between two samples at most by kMaxGpuPowerW over their interval plus
// this much time (the counter and the timestamp are not read at the same instant).
inline constexpr double kCounterJumpSlackS = 1.0;

// Trace events. A GPU event longer than the trace's window (the profiler's own `Trace` span, else
// the extent of its CPU events) by more than this, or starting more than one window length plus
// this outside it, cannot be an event of that trace.
inline constexpr std::int64_t kTraceSlackNs = 1'000'000;  // 1 ms

// A whole count in [1, max] (NaN is not).
inline bool valid_count(double v, double max) { return v >= 1 && v <= max && v == std::floor(v); }
inline bool valid_rank(std::int64_t r) { return r >= 0 && r <= kMaxRank; }
// A duration given in seconds (itwinai, MLflow) that is some time once in ns: at least half of one.
inline bool lasts_some_time(double seconds) { return seconds * 1e9 >= 0.5; }
// An exit status as a file states it: none beyond int, where cut to int 4294967296 would read 0 (success).
inline std::optional<int> exit_status(std::int64_t code) {
  return code == static_cast<int>(code) ? std::optional<int>(static_cast<int>(code)) : std::nullopt;
}
inline bool valid_samples(double v) { return v >= kMinSamples && v <= kMaxSamples; }
inline bool valid_sampling_interval(double s) { return s >= kMinSamplingIntervalS && s <= kMaxSamplingIntervalS; }
// The two ranges as every message states them: "from 1e-07 to 1e+15" (samples), "from 1e-06 to 86400" (seconds).
inline std::string samples_range() { return fmt::format("from {:g} to {:g}", kMinSamples, kMaxSamples); }
inline std::string sampling_interval_range() {
  return fmt::format("from {:g} to {:g}", kMinSamplingIntervalS, kMaxSamplingIntervalS);
}
// Present readings outside their range; NaN (not available) is in range.
inline bool bad_power(double w) { return w < 0 || w > kMaxGpuPowerW; }
inline bool bad_percent(double p) { return p < 0 || p > kMaxPercent; }
inline bool bad_gpu_memory(double bytes) { return bytes < 0 || bytes > kMaxGpuMemoryBytes; }
// end − start in ns, without int64 overflow for junk times: for comparing with limits (each time is
// rounded to a double first, 256 ns apart near today's Unix times in ns).
inline double span_ns(std::int64_t start, std::int64_t end) { return static_cast<double>(end) - static_cast<double>(start); }
// end − start in seconds for a figure: exact to the ns where the difference fits int64, as it does
// for every pair of times a reader keeps.
inline double span_s(std::int64_t start, std::int64_t end) {
  std::int64_t d = 0;
  return (__builtin_sub_overflow(end, start, &d) ? span_ns(start, end) : static_cast<double>(d)) * 1e-9;
}
// Most energy (mJ) a GPU counter can gain in `dt_ns`.
inline double max_counter_gain_mj(std::int64_t dt_ns) {
  return kMaxGpuPowerW * (static_cast<double>(dt_ns) * 1e-9 + kCounterJumpSlackS) * 1e3;
}

}  // namespace scalelens::limits
