// Writes a synthetic scalelens study for the ingest benchmark: RUNS run folders, each with a
// manifest, epochs.csv (EPOCHS epochs, logged by rank 0, or with EVERY_RANK=1 by each of the run's
// ranks), one gpu.csv per node holding GPUS GPUs × SAMPLES samples (0.5 s apart) and, where STEPS
// is above 0, a steps.csv of STEPS steps logged by each of the run's ranks.
// Usage: generate_study DIR [RUNS=1000] [GPUS=8] [SAMPLES=3600] [EPOCHS=10] [EVERY_RANK=0] [STEPS=0]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [RUNS] [GPUS] [SAMPLES] [EPOCHS] [EVERY_RANK] [STEPS]\n", argv[0]);
    return 1;
  }
  std::filesystem::path root(argv[1]);
  const int runs = argc > 2 ? std::atoi(argv[2]) : 1000;
  const int gpus = argc > 3 ? std::atoi(argv[3]) : 8;
  const int samples = argc > 4 ? std::atoi(argv[4]) : 3600;
  const int epochs = argc > 5 ? std::atoi(argv[5]) : 10;
  const bool every_rank = argc > 6 && std::atoi(argv[6]) != 0;
  const int steps = argc > 7 ? std::atoi(argv[7]) : 0;
  const long long t0 = 1'700'000'000'000'000'000LL, step = 500'000'000LL;
  std::string buf;
  for (int r = 0; r < runs; ++r) {
    // Each run uses its node's `gpus` GPUs, all of which gpu.csv logs; the ranks that log epochs or
    // steps are 1, 2, 4 or 8 of them (labels ddp-1 ... ddp-8, so the study keeps four curves).
    // (Until 2026-12-07 the runs had world sizes 1, 2, 4, 8 beside 8 logged GPUs, which
    // gpus-beyond-world-size now rightly flags on three runs in four.)
    const int p = 1 << (r % 4);
    // An epoch's samples as epochs.csv logs them (rank 0's, or each rank's share), and as the
    // manifest states them: until 2026-12-07 it stated 50000 beside the log's 50000 / p, which
    // batch-disagrees-with-samples rightly flags on three runs in four (7,500 warnings held at
    // 10,000 runs, about 0.35 KiB a run: bench/RESULTS.md).
    const int logged = every_rank ? 50000 / p / p : 50000 / p;
    const int per_epoch = every_rank ? logged * p : logged;
    auto dir = root / fmt::format("run-{:04d}", r);
    std::filesystem::create_directories(dir / "nodes/node0");
    const long long end = t0 + static_cast<long long>(samples) * step;
    auto write = [](const std::filesystem::path& path, const std::string& text) {
      FILE* f = std::fopen(path.c_str(), "w");
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    };
    write(dir / "scalelens.json",
          fmt::format("{{\"schema\": \"scalelens.run/1\", \"run_id\": \"run-{:04d}\", \"label\": \"ddp-{}\", \"world_size\": {}, "
                      "\"nodes\": 1, \"gpus_per_node\": {}, \"samples_per_epoch\": {}, \"start_ns\": {}, \"end_ns\": {}}}\n",
                      r, p, gpus, gpus, per_epoch, t0, end));
    buf = "rank,epoch,start_ns,end_ns,samples\n";
    const long long epoch = (end - t0) / epochs;
    for (int e = 0; e < epochs; ++e)
      for (int rank = 0; rank < (every_rank ? p : 1); ++rank)  // each rank its share of the samples, the last a little later
        buf += fmt::format("{},{},{},{},{}\n", rank, e, t0 + e * epoch,
                           t0 + (e + 1) * epoch - (every_rank ? (p - 1 - rank) * 1000LL : 0),
                           logged);
    write(dir / "epochs.csv", buf);
    if (steps > 0) {  // each rank's steps, their lengths varying so that thinning has peaks to keep
      buf = "rank,step,start_ns,end_ns,samples\n";
      const long long every = (end - t0) / steps;
      for (int s = 0; s < steps; ++s)
        for (int rank = 0; rank < p; ++rank)
          buf += fmt::format("{},{},{},{},\n", rank, s, t0 + s * every,
                             t0 + s * every + every / 2 + (s * 31 + rank * 17) % 97 * (every / 400));
      write(dir / "steps.csv", buf);
    }
    buf = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
    buf.reserve(static_cast<std::size_t>(samples) * gpus * 120);
    double energy[64] = {};
    for (int s = 0; s < samples; ++s) {
      for (int g = 0; g < gpus; ++g) {
        double power = 250 + 100 * ((s * 7 + g * 13) % 17) / 17.0;
        energy[g] += power * 500;  // mJ over 0.5 s
        buf += fmt::format("{},{},GPU-{:08x}-1c2d-3e4f-5a6b-7c8d9e0f{:04x},{},{},{},{:.2f},{:.0f},1410,{}\n", t0 + s * step, g,
                           r * 64 + g, r, (s + g) % 101, (s * 3 + g) % 60, 40000000000LL + s * 1000, power, energy[g],
                           55 + (s + g) % 20);
      }
    }
    write(dir / "nodes/node0/gpu.csv", buf);
  }
  return 0;
}
