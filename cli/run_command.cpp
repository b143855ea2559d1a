// scalelens run: measures a training run on every node, with no change to the training code.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "collect/collect_run.hpp"
#include "commands.hpp"

namespace scalelens::cli {

namespace {
// libscalelens-mpi.so: $SCALELENS_MPI_LIB, else beside the binary as built (../mpi) or installed (../lib).
std::string find_mpi_interposer() {
  if (const char* env = std::getenv("SCALELENS_MPI_LIB"); env && *env) return std::filesystem::exists(env) ? env : "";
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  // The build tree, then where `cmake --install` and the .deb put it (lib/<multiarch>/scalelens).
  std::vector<std::filesystem::path> candidates = {exe / "../mpi/libscalelens-mpi.so", exe / "../lib/scalelens/libscalelens-mpi.so",
                                                   exe / ("../" SCALELENS_INSTALL_LIBDIR "/scalelens/libscalelens-mpi.so"),
                                                   exe / "../lib/libscalelens-mpi.so", exe / "libscalelens-mpi.so"};
  for (const auto& candidate : candidates)
    if (std::filesystem::exists(candidate, ec)) return std::filesystem::canonical(candidate, ec).string();
  return {};
}
}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("run", "Run a command and record it as one run folder (every node, every rank)");
  auto options = std::make_shared<collect::RunOptions>();
  auto mpi_comm = std::make_shared<bool>(false);
  sub->add_option("--study", options->study, "folder that holds run folders (default runs)");
  sub->add_option("--label", options->label, "strategy or variant, e.g. ddp, deepspeed (default: the program's name)");
  sub->add_option("--run-id", options->run_id, "run folder name; give the same value to every wrapper of one job");
  // The manifest's limits (model/limits.hpp), so that run never writes a scalelens.json report refuses.
  sub->add_option("--world-size", options->world_size, "GPUs (or ranks) of the whole job (default: detected)")
      ->check(CLI::Range(1, static_cast<int>(limits::kMaxWorldSize)));
  sub->add_option("--nodes", options->nodes, "nodes of the job (default: detected)")
      ->check(CLI::Range(1, static_cast<int>(limits::kMaxNodes)));
  sub->add_option("--gpus-per-node", options->gpus_per_node, "GPUs per node (default: detected)")
      ->check(CLI::Range(1, static_cast<int>(limits::kMaxPerNode)));
  sub->add_option("--global-batch-size", options->global_batch_size, "samples per step over all ranks")
      ->check(kFiniteNumber)
      ->check(kSamplesCount);  // as the report reads it back from scalelens.json
  sub->add_option("--samples-per-epoch", options->samples_per_epoch, "samples in one epoch over all ranks")
      ->check(kFiniteNumber)
      ->check(kSamplesCount);  // as the report reads it back from scalelens.json
  sub->add_option("--scaling", options->scaling, "weak or strong")->check(CLI::IsMember({"weak", "strong"}));
  sub->add_option("--interval", options->interval_s, "seconds between GPU and host samples (default 0.5)")
      ->check(kFiniteNumber)
      ->check(CLI::Range(0.001, 3600.0));
  sub->add_option("--flush", options->flush_s, "seconds between writes of the samples, at most 5 (default 1)")
      ->check(kFiniteNumber)
      ->check(CLI::Range(0.0, 5.0));
  // Checked before the command starts: a misspelt source ran the whole job without GPU samples.
  sub->add_option("--gpu-source", options->gpu_source, "auto, nvml, amdsmi, none, or replay:FILE (a recorded gpu.csv)")
      ->check(CLI::Validator(
          [](std::string& spec) -> std::string {
            if (spec == "auto" || spec == "nvml" || spec == "amdsmi" || spec == "none") return {};
            if (spec.rfind("replay:", 0) != 0) return "not one of auto, nvml, amdsmi, none, replay:FILE: " + spec;
            std::error_code ec;
            return std::filesystem::is_regular_file(spec.substr(7), ec) ? std::string() : "no such file: " + spec.substr(7);
          },
          "SOURCE"));
  sub->add_flag("--no-host", [options](std::int64_t) { options->sample_host = false; }, "do not sample CPU, memory and CPU energy");
  sub->add_option("--host", options->host, "this node's name in the run folder (default $SCALELENS_HOST, else the host name)");
  sub->add_option("--kill-after", options->kill_after_s,
                  "seconds from SIGTERM, SIGINT, SIGHUP or SIGQUIT (forwarded to all of the command's processes) to SIGKILL (default 10)")
      ->check(kFiniteNumber)
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_flag("-q,--quiet", options->quiet, "print nothing but errors");
  sub->add_flag("--mpi-comm", *mpi_comm, "time MPI communication per step with libscalelens-mpi (LD_PRELOAD) into comm/<rank>.csv");
  // Everything after "--" is the command, its own options included.
  sub->add_option("command", options->command, "the command to run and measure (after --)")->expected(-1);
  sub->footer(
      "Examples:\n"
      "  # one node, torchrun\n"
      "  scalelens run --study runs/ --label ddp -- torchrun --nproc-per-node 4 train.py\n"
      "  # SLURM, one wrapper per node around torchrun\n"
      "  srun --ntasks-per-node=1 scalelens run --study runs/ --label ddp --samples-per-epoch 50000 -- torchrun ... train.py\n"
      "  # SLURM or mpirun, one wrapper per rank\n"
      "  srun scalelens run --study runs/ --label horovod -- python train.py\n"
      "  mpirun -n 8 scalelens run --study runs/ --label mpi -- ./solver\n"
      "  # then\n"
      "  scalelens report runs/\n"
      "\n"
      "All wrappers of one job write one run folder, <study>/<label>-<job id>, named from SLURM_JOB_ID and\n"
      "SLURM_STEP_ID, TORCHELASTIC_RUN_ID, Open MPI's PMIX_NAMESPACE, or --run-id. One wrapper per node\n"
      "samples that node's GPUs (NVML or AMD SMI, found at run time) and host. The command gets\n"
      "SCALELENS_RUN_DIR, SCALELENS_RANK and SCALELENS_TRACE_DIR to log epochs and steps (docs/collect.md).\n"
      "Exit status: the command's; 128+N when signal N ended it; 1 when the run folder cannot be written;\n"
      "126/127 when the command cannot be started. The command runs in a process group of its own:\n"
      "SIGINT, SIGTERM, SIGUSR1, SIGUSR2 and SIGHUP go to all of its processes (torchrun's workers, data\n"
      "loaders, children of a shell), SIGKILL follows --kill-after seconds after SIGINT, SIGTERM or SIGHUP,\n"
      "and processes still running when the command ends are stopped the same way.\n"
      "A --run-id whose folder holds another job's run is not reused: -2, -3 ... is added (with a warning).");
  sub->callback([options, mpi_comm, &exit_code] {
    if (options->command.empty()) {
      std::fprintf(stderr, "scalelens run: error: no command given; usage: scalelens run [OPTIONS] -- COMMAND [ARGS...]\n");
      exit_code = 1;
      return;
    }
    if (*mpi_comm) {
      auto lib = find_mpi_interposer();
      if (lib.empty()) {
        std::fprintf(stderr, "scalelens run: error: --mpi-comm: libscalelens-mpi.so not found beside the scalelens binary "
                             "(../mpi, ../lib) nor in $SCALELENS_MPI_LIB\n");
        exit_code = 1;
        return;
      }
      options->mpi_comm_lib = lib;
    }
    exit_code = collect::run_collect(*options, collect::current_environment(), stderr);
  });
}

}  // namespace scalelens::cli
