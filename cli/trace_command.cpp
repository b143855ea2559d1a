// `scalelens trace PATHS...`: communication vs computation per rank from PyTorch profiler traces.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "process_group_launch.hpp"
#include "trace/trace_cache.hpp"
#include "common/diagnostics.hpp"
#include "common/user_regex.hpp"
#include "trace/trace_output.hpp"
#include "trace/trace_set.hpp"

namespace scalelens::cli {

namespace {

struct TraceArgs {
  std::vector<std::string> paths;
  bool steps = false;
  int kernels = 0;
  int instances = 20;
  bool hta = false;
  std::string format = "table";
  std::string comm_kernel_regex;
  unsigned threads = 0;
  CacheArgs cache;
  double peak_tflops = 0, peak_tbps = 0;
  int ops = 0;
  int gpus_per_node = 0;
  double link_gbps = 0;
  std::string network;
};

int run_trace(const TraceArgs& args) {
  if (!args.comm_kernel_regex.empty()) {
    auto check = UserRegex::compile(args.comm_kernel_regex, "--comm-kernel-regex");
    if (!check) {
      std::fprintf(stderr, "scalelens trace: %s\n", check.error().message.c_str());
      return 1;
    }
  }
  trace::TraceSetOptions options;
  for (const auto& p : args.paths) options.inputs.emplace_back(p);
  options.comm_kernel_regex = args.comm_kernel_regex;
  options.threads = args.threads;
  options.cache = !args.cache.off;
  options.cache_dir = args.cache.dir;
  if (args.peak_tflops > 0) options.peak_tflops = args.peak_tflops;
  if (args.peak_tbps > 0) options.peak_tbps = args.peak_tbps;
  options.links.gpus_per_node = args.gpus_per_node;
  if (args.link_gbps > 0) options.links.link_gbps = args.link_gbps;
  if (!args.network.empty() && !trace::network_gbps(args.network)) {
    std::fprintf(stderr, "scalelens trace: --network '%s' is not one the table knows (%s); give --link-gbps instead\n",
                 args.network.c_str(), trace::network_names().c_str());
    return 1;
  }
  options.links.network = args.network;
  auto job = join_launched_processes("trace");
  if (!job) return 1;
  if (job->launched()) {
    options.group = job->group.get();
    options.threads = job->threads(args.threads);
  }
  auto set = analyse_in_group(job->group.get(), [&] { return trace::analyse_traces(options); });
  if (!job->finish()) return 0;  // the first one writes

  trace::OutputOptions out{args.steps, args.kernels, args.hta, args.instances, args.ops};
  if (args.format == "json") {
    std::fputs(trace::format_json(set, out).c_str(), stdout);
  } else {
    if (!set.ranks.empty()) std::fputs(trace::format_table(set, out).c_str(), stdout);
    std::fflush(stdout);  // the table whole before the warnings, when both go to one pipe
    for (const auto& d : set.diagnostics)
      std::fprintf(stderr, "%s: %s\n", d.severity == Severity::error ? "error" : "warning", format_location(d).c_str());
  }
  if (set.ranks.empty()) {
    if (args.format != "json") std::fputs("scalelens trace: no trace could be analysed\n", stderr);
    return 2;
  }
  return 0;
}

}  // namespace

void add_trace_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TraceArgs>();
  auto* cmd = app.add_subcommand("trace", "Communication vs computation per rank from PyTorch profiler (Kineto) traces");
  cmd->add_option("paths", args->paths, "Trace files (.json, .json.gz) or folders searched for them")->required();
  cmd->add_flag("--steps", args->steps, "One row per rank and profiler step");
  cmd->add_option("--kernels", args->kernels, "Top N kernels by time, per type (computation, communication, memory)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--instances", args->instances,
                  "Collective calls matched across ranks listed in the JSON (skew, transfer, bandwidth), longest "
                  "transfers first")
      ->check(CLI::Range(0, 10000000))
      ->capture_default_str();
  cmd->add_flag("--hta", args->hta, "Also compute Holistic Trace Analysis's temporal breakdown and comm/comp overlap");
  cmd->add_option("--format", args->format, "What goes to standard output: table or json (schema scalelens.trace/1)")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--comm-kernel-regex", args->comm_kernel_regex,
                  "Kernels whose name matches this regex anywhere count as communication "
                  "(default: nccl…, ncclKernel…, ncclDevKernel…, rccl…). RE2 syntax: ECMAScript without "
                  "backreferences or lookaround; (?i) for case-insensitive");
  cmd->add_option("-j,--threads", args->threads, "Threads (default: every core this process may use); files, or slices of fewer files, in parallel");
  add_cache_flags(cmd, args->cache);
  add_max_inflated_option(cmd);
  cmd->add_option("--peak-tflops", args->peak_tflops,
                  "Peak TFLOP/s of one GPU for MFU, instead of the table of common GPUs (by deviceProperties.name)")
      ->check(kFiniteNumber)
      ->check(CLI::PositiveNumber);
  cmd->add_option("--peak-tbps", args->peak_tbps,
                  "Memory bandwidth of one GPU in TB/s for the roofline, instead of the table of common GPUs")
      ->check(kFiniteNumber)
      ->check(CLI::PositiveNumber);
  cmd->add_option("--gpus-per-node", args->gpus_per_node,
                  "GPUs per node, to tell collectives within a node from those across nodes (ranks are taken as placed "
                  "node by node); default: the GPUs a trace's deviceProperties lists")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--network", args->network,
                  "The network between nodes, for the inter-node bus bandwidth's peak: edr, hdr, ndr, xdr (InfiniBand), "
                  "slingshot10, slingshot11, roce100, roce200, roce400 (one port per GPU)");
  cmd->add_option("--link-gbps", args->link_gbps,
                  "Peak bus bandwidth in GB/s per direction that every collective is held against, instead of the "
                  "NVLink/PCIe table (within a node) and --network (across nodes)")
      ->check(kFiniteNumber)
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ops", args->ops,
                  "Top N ops by GPU time against the roofline (FLOPs and bytes from the shapes the profiler recorded "
                  "with record_shapes=True); the JSON lists 10 per rank without it")
      ->check(CLI::Range(0, 100));
  cmd->footer(
      "Examples:\n"
      "  scalelens trace traces/                      a folder or files; one row per rank\n"
      "  scalelens trace traces/ --steps              one row per rank and profiler step\n"
      "  scalelens trace traces/ --kernels 20         top kernels by time, per type\n"
      "  scalelens trace traces/ --hta                HTA's definitions too, for cross-checking\n"
      "  scalelens trace rank0.json.gz --format json  the scalelens.trace/1 JSON on standard output\n"
      "  scalelens trace traces/ --comm-kernel-regex '^(nccl|ncclDevKernel|my_allreduce)'\n"
      "  scalelens trace traces/ --peak-tflops 312    MFU against 312 TFLOP/s per GPU\n"
      "  scalelens trace traces/ --ops 20             the 20 ops with most GPU time against the roofline\n"
      "  scalelens trace traces/ --gpus-per-node 4 --network ndr\n"
      "                                               bus bandwidth within and across nodes against their peaks\n"
      "  mpirun -n 4 scalelens trace traces/          the files shared by 4 processes (docs/parallel.md)\n"
      "Summaries are cached under $XDG_CACHE_HOME/scalelens (else ~/.cache/scalelens; --cache-dir DIR),\n"
      "never beside the traces; --no-cache parses again.\n"
      "Definitions: docs/DESIGN.md, \"Trace breakdown\". Exit codes: 0 analysed, 1 usage error, 2 no usable trace,\n"
      "6 a process of a parallel analysis failed (the file it failed on is named).");
  cmd->callback([args, &exit_code] { exit_code = run_trace(*args); });
}

}  // namespace scalelens::cli
