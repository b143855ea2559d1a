#pragma once
// Run folders whose GPU logs (gpu.csv, and an nvidia-smi log of the same GPUs where asked) and
// host logs (host.csv) are
// drawn at random in the shapes real ones have: windows that cut the samples anywhere, logger
// pauses, energy counters that reset or jump, missing columns.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/test_support.hpp"

namespace scalelens::testing {

inline constexpr std::int64_t kGpuStudyT0 = 1'704'164'645'000'000'000;  // 2024-01-02 03:04:05 UTC

// nvidia-smi's timestamp: "2024/01/02 03:04:05.678" (UTC here).
inline std::string nvsmi_time(std::int64_t t_ns) {
  const std::time_t s = static_cast<std::time_t>(t_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  return fmt::format("{:04}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, (t_ns / 1'000'000) % 1000);
}

struct GpuStudyShape {
  int runs = 1, gpus = 1;
  bool nvsmi_too = false;  // an nvidia-smi log of the same GPUs beside gpu.csv
  bool may_be_empty = true;  // a log may hold no or few samples
  bool vary_gpus = false;    // each run 1..gpus GPUs (a scaling study), else `gpus` each
  double no_window = 0;      // the share of runs whose scalelens.json states no start_ns/end_ns
};

// A study of run folders whose GPU logs are drawn from `rng`; returns its total GPU samples.
inline std::size_t write_gpu_study(const ScratchDir& dir, std::mt19937_64& rng, const GpuStudyShape& shape) {
  std::uniform_real_distribution<double> u01(0, 1);
  auto chance = [&](double p) { return u01(rng) < p; };
  std::size_t total = 0;
  for (int r = 0; r < shape.runs; ++r) {
    const std::string run = fmt::format("run-{}/", r);
    const int gpu_count = shape.vary_gpus ? 1 + static_cast<int>(rng() % static_cast<unsigned>(shape.gpus)) : shape.gpus;
    const bool window = !chance(shape.no_window);
    const int n = shape.may_be_empty && chance(0.1) ? static_cast<int>(rng() % 4) : 5 + static_cast<int>(rng() % 3000);
    const std::int64_t step = (1 + static_cast<std::int64_t>(rng() % 10)) * 100'000'000;  // 0.1-1 s
    // The run's window: anywhere from before the first sample to beyond the last.
    const std::int64_t span = std::max<std::int64_t>(n, 1) * step;
    const std::int64_t start = kGpuStudyT0 + static_cast<std::int64_t>((u01(rng) - 0.2) * static_cast<double>(span));
    const std::int64_t end = start + static_cast<std::int64_t>((0.1 + u01(rng)) * static_cast<double>(span));
    dir.write(run + "scalelens.json",
              fmt::format(R"({{"run_id": "r{}", "label": "ddp", "world_size": {}, "nodes": 1, "gpus_per_node": {}, )"
                          R"("samples_per_epoch": 1000{}}})",
                          r, gpu_count, gpu_count, window ? fmt::format(R"(, "start_ns": {}, "end_ns": {})", start, end) : ""));
    std::string epochs = "rank,epoch,start_ns,end_ns,samples\n";
    for (int e = 0; e < 3; ++e)
      epochs += fmt::format("0,{},{},{},1000\n", e, start + e * (end - start) / 3, start + (e + 1) * (end - start) / 3);
    dir.write(run + "epochs.csv", epochs);

    std::string gpu = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
    std::string nvsmi = "timestamp, index, name, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W]\n";
    struct Gpu {
      bool util, power, counter;
      double energy_mj = 1e6;
      std::int64_t reset_at, jump_at;
    };
    std::vector<Gpu> gpus;
    for (int g = 0; g < gpu_count; ++g)
      gpus.push_back({!chance(0.15), !chance(0.15), chance(0.6), 1e6, chance(0.2) ? static_cast<std::int64_t>(rng() % 3000) : -1,
                      chance(0.1) ? static_cast<std::int64_t>(rng() % 3000) : -1});
    // The host's CPU package energy, a 32-bit µJ counter that wraps (RAPL's), or none.
    const bool host_counter = chance(0.7);
    std::string host = "t_ns,cpu_util_pct,mem_used_bytes,cpu_energy_uj\n";
    double host_uj = static_cast<double>(rng() % 4'000'000'000ULL);
    std::int64_t t = kGpuStudyT0;
    for (int i = 0; i < n; ++i) {
      t += chance(0.005) ? step * (20 + static_cast<std::int64_t>(rng() % 200)) : step;  // the logger paused
      host_uj = std::fmod(host_uj + 150.0 * static_cast<double>(step) * 1e-3, 4294967296.0);
      host += fmt::format("{},{:.0f},{:.0f},{}\n", t, std::floor(u01(rng) * 100), 1e10 + std::floor(u01(rng) * 1e9),
                          host_counter ? fmt::format("{:.0f}", host_uj) : "");
      for (int g = 0; g < gpu_count; ++g) {
        auto& G = gpus[g];
        const double util = std::floor(u01(rng) * 100), power = 60 + std::round(u01(rng) * 4000) / 10;
        const double mem = std::floor(u01(rng) * 80000) * 1024 * 1024;
        G.energy_mj += power * static_cast<double>(step) * 1e-6;
        if (i == G.reset_at) G.energy_mj = 0;
        const double counter = i == G.jump_at ? G.energy_mj + 1e12 : G.energy_mj;
        gpu += fmt::format("{},{},GPU-{:04x}-{:04x},{},{},{},{},{},1410,60\n", t, g, r, g, G.util ? fmt::format("{:g}", util) : "",
                           G.util ? "30" : "", fmt::format("{:.0f}", mem), G.power ? fmt::format("{:.1f}", power) : "",
                           G.counter ? fmt::format("{:.0f}", counter) : "");
        if (shape.nvsmi_too)
          nvsmi += fmt::format("{}, {}, NVIDIA A100-SXM4-80GB, GPU-{:04x}-{:04x}, {:g} %, {:.0f} MiB, {:.2f} W\n",
                               nvsmi_time(t + 3'000'000), g, r, g, util, mem / 1024 / 1024, power);
      }
    }
    total += static_cast<std::size_t>(n) * static_cast<std::size_t>(gpu_count) * (shape.nvsmi_too ? 2 : 1);
    dir.write(run + "nodes/node0/gpu.csv", gpu);
    dir.write(run + "nodes/node0/host.csv", host);
    if (shape.nvsmi_too) dir.write(run + "nodes/node0/nvsmi.csv", nvsmi);
  }
  return total;
}

}  // namespace scalelens::testing
