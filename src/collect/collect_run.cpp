#include "collect/collect_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "collect/launcher.hpp"
#include "collect/run_folder.hpp"
#include "common/text.hpp"
#include "model/limits.hpp"
#include "monitor/sampler.hpp"
#include "monitor/visible_devices.hpp"

namespace scalelens::collect {

namespace fs = std::filesystem;

namespace {

std::string program_name(const std::vector<std::string>& command) {
  if (command.empty()) return "run";
  return fs::path(command.front()).filename().string();
}

// Value of `--name V` or `--name=V` among args (several spellings allowed).
std::optional<std::string> flag_value(const std::vector<std::string>& args, std::initializer_list<std::string_view> names) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    for (auto n : names) {
      if (args[i] == n && i + 1 < args.size()) return args[i + 1];
      if (args[i].size() > n.size() && args[i].compare(0, n.size(), n) == 0 && args[i][n.size()] == '=')
        return args[i].substr(n.size() + 1);
    }
  }
  return std::nullopt;
}

struct LauncherCommand {
  std::optional<int> per_node, nodes, total;
  std::string per_node_word;  // torchrun --nproc-per-node gpu|auto: counted from the node's devices
  bool elastic_nodes = false;  // torchrun --nnodes MIN:MAX with MIN < MAX: known only as the job runs
  std::string program;  // set when COMMAND is a launcher
  std::string from;
  // A count in its arguments beyond any machine (model/limits.hpp), not taken: why. A count cut to
  // int (4294967297 → 1) or overflowing was written as a plausible world size, silently.
  std::string refused;
};

// A launcher argument's count, when it is one from 1 to `max`; else none, and `refused` says why.
std::optional<int> launcher_count(std::string_view text, std::int64_t max, const std::string& what, std::string& refused) {
  auto v = parse_int(text);
  if (!v) return std::nullopt;  // "gpu", "auto": not a count, read otherwise
  if (*v <= 0) {
    refused = fmt::format("{} {} is no count of processes", what, *v);
    return std::nullopt;
  }
  if (*v > max) {
    refused = fmt::format("{} {} is beyond any machine (at most {})", what, *v, max);
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

// A launcher that, given no count, starts as many processes as the SLURM job has tasks.
bool starts_job_tasks(const std::string& program) { return program == "srun" || program == "mpirun" || program == "mpiexec"; }

// A wrapped launcher (one wrapper per node around torchrun or mpirun) starts the ranks itself:
// its arguments say how many.
LauncherCommand launcher_in(const std::vector<std::string>& cmd, std::optional<int> gpus_on_node) {
  LauncherCommand out;
  if (cmd.empty()) return out;
  auto prog = program_name(cmd);
  bool torch = prog == "torchrun" ||
               (prog.rfind("python", 0) == 0 && std::find_if(cmd.begin(), cmd.end(), [](const std::string& a) {
                                                  return a == "torch.distributed.run" || a == "torch.distributed.launch";
                                                }) != cmd.end());
  if (torch) {
    out.program = prog;
    auto n = flag_value(cmd, {"--nproc-per-node", "--nproc_per_node"});
    if (!n) return out;
    if (auto v = launcher_count(*n, limits::kMaxPerNode, prog + " --nproc-per-node", out.refused)) out.per_node = v;
    else if (*n == "gpu" || *n == "auto") {
      if (gpus_on_node) out.per_node = gpus_on_node;  // --gpus-per-node
      else out.per_node_word = *n;
    } else if (out.refused.empty()) {
      out.refused = fmt::format("{} --nproc-per-node {} is no count torchrun takes", prog, *n);
    }
    if (auto nn = flag_value(cmd, {"--nnodes"})) {
      // "MIN:MAX" is an elastic range: as many nodes as join, which only the running job knows.
      const auto colon = nn->find(':');
      auto most = launcher_count(nn->substr(colon == std::string::npos ? 0 : colon + 1), limits::kMaxNodes, prog + " --nnodes", out.refused);
      const auto least = colon == std::string::npos ? std::optional<std::int64_t>(most) : parse_int(nn->substr(0, colon));
      if (most && least == *most) out.nodes = most;
      else if (most) out.elastic_nodes = true;
    }
    out.from = fmt::format("command: {} --nproc-per-node{}{}", prog, out.per_node_word.empty() ? "" : " " + out.per_node_word,
                           out.nodes ? " × --nnodes" : "");
  } else if (prog == "mpirun" || prog == "mpiexec" || prog == "srun") {
    out.program = prog;
    auto n = flag_value(cmd, {"-n", "-np", "--np", "--ntasks"});
    if (n) {
      if (auto v = launcher_count(*n, limits::kMaxWorldSize, prog + " -n", out.refused)) {
        out.total = v;
        out.from = fmt::format("command: {} -n", prog);
      }
    }
  }
  return out;
}

std::string host_name(const RunOptions& o, const EnvMap& env) {
  if (!o.host.empty()) return o.host;
  if (auto it = env.find("SCALELENS_HOST"); it != env.end() && !it->second.empty()) return it->second;
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  return buf;
}

// A cluster's nodes are named prefix + number ("jwb0123", "nid001234", "gpu-07.cluster.org"):
// the prefix names the machine. A host without a number is its own system.
std::string system_of_host(const std::string& host) {
  std::string node = host.substr(0, host.find('.'));
  auto end = node.find_last_not_of("0123456789");
  if (end != std::string::npos && end + 1 < node.size()) {
    node.resize(end + 1);
    while (!node.empty() && (node.back() == '-' || node.back() == '_')) node.pop_back();
  }
  return node.empty() ? host : node;
}

std::string utc_stamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// Who holds a run folder that is not ours, for the warning: its manifest's job when written, and
// whether that is this run's own job (an earlier run of it).
struct Holder {
  std::string text;
  bool same_job = false;
};
Holder holder_of(const fs::path& dir, const RunPlan& plan) {
  auto owner = read_manifest_owner(dir);
  if (!owner) return {"another run"};
  if (owner->job_key.empty())
    return {fmt::format("a run recorded {}", owner->scheduler == "none" || owner->scheduler.empty() ? "without a scheduler" : "by " + owner->scheduler)};
  if (plan.job.job_key && owner->job_key == *plan.job.job_key) return {fmt::format("an earlier run of job {}", owner->job_key), true};
  return {fmt::format("job {}", owner->job_key)};
}

// The run folder for this launch: <study>/<run id> unless it holds anything else already (the
// same --run-id given to two jobs, a rerun, the previous run of a batch script), then <run id>-2,
// -3, ...: the first that is free or this launch's. Folders are claimed atomically
// (claim_run_folder), so every wrapper of one launch reaches the same folder and two
// invocations never share one. Returns who held the planned folder, when it was taken.
Result<std::optional<Holder>> claim_run_dir(RunPlan& plan, const RunOptions& o) {
  const std::string base = plan.run_id;
  std::optional<Holder> taken_by;
  for (int k = 1; k < 10000; ++k) {
    const std::string id = k == 1 ? base : fmt::format("{}-{}", base, k);
    std::error_code ec;
    fs::path dir = fs::absolute(fs::path(o.study) / id, ec).lexically_normal();
    auto ours = claim_run_folder(dir, plan.job.launch_key);
    if (!ours) return ours.error();
    // This launch's folder where this rank has recorded itself already: an earlier run of the same
    // launch (one srun step's shell running two runs, torchrun twice with one --rdzv-id), whose
    // figures the second would overwrite. Ranks of one run each record themselves once.
    if (ours.value() && fs::exists(rank_record_path(dir, plan.job.rank), ec)) {
      if (!taken_by) taken_by = holder_of(dir, plan);
      continue;
    }
    if (ours.value()) {
      plan.run_id = id;
      plan.run_dir = dir.string();
      if (k > 1) plan.detected_from["run_id"] = fmt::format("{}, then -{}: '{}' holds another run", plan.detected_from.count("run_id") ? plan.detected_from["run_id"] : "job id", k, base);
      return taken_by;
    }
    if (!taken_by) taken_by = holder_of(dir, plan);
  }
  return Error{"no free run folder name (tried -2 to -9999)", (fs::path(o.study) / base).string()};
}

}  // namespace

RunPlan plan_run(const RunOptions& o, const EnvMap& env) {
  RunPlan p;
  p.job = detect_job(env);
  p.detected_from = p.job.detected_from;
  p.host = safe_component(host_name(o, env));
  p.label = o.label.empty() ? program_name(o.command) : o.label;
  if (auto it = env.find("SLURM_CLUSTER_NAME"); it != env.end() && !it->second.empty()) {
    p.system = it->second;
    p.detected_from["system"] = "SLURM_CLUSTER_NAME";
  } else if (const auto host = host_name(o, env); !host.empty()) {
    p.system = system_of_host(host);
    p.detected_from["system"] = fmt::format("host name pattern ({})", host);
  }
  if (o.label.empty()) p.detected_from["label"] = "command";
  if (o.run_id) {
    p.run_id = safe_component(*o.run_id);
    p.detected_from["run_id"] = "--run-id";
  } else if (p.job.job_key) {
    p.run_id = safe_component(p.label + "-" + *p.job.job_key);
  } else {
    p.run_id = safe_component(fmt::format("{}-{}-{}-{}", p.label, utc_stamp(), p.host, ::getpid()));
    p.detected_from["run_id"] = "new (no scheduler)";
  }
  std::error_code ec;
  p.run_dir = fs::absolute(fs::path(o.study) / p.run_id, ec).lexically_normal().string();
  if (ec) p.run_dir = (fs::path(o.study) / p.run_id).string();

  // World size = GPUs (or ranks) of the whole job. Explicit flags win over detection.
  auto launcher = launcher_in(o.command, o.gpus_per_node);
  p.launcher = launcher.program;
  const std::int64_t nodes = launcher.nodes.value_or(o.nodes.value_or(p.job.ranks.value_or(1)));
  if (launcher.elastic_nodes && !o.nodes && launcher.refused.empty()) {
    // The nodes of an elastic torchrun are known to its workers (WORLD_SIZE) as the job runs.
    if (p.job.detected_from["ranks"] == "WORLD_SIZE") launcher.per_node.reset(), launcher.per_node_word.clear();
    else launcher.refused = fmt::format("{} --nnodes is an elastic range (how many nodes join is known only as the job runs)",
                                        launcher.program);
  }
  if (!o.world_size && launcher.per_node && *launcher.per_node * nodes > limits::kMaxWorldSize)
    launcher.refused = fmt::format("{} --nproc-per-node {} × {} nodes = {} GPUs is beyond any machine (at most {})",
                                   launcher.program, *launcher.per_node, nodes, *launcher.per_node * nodes, limits::kMaxWorldSize);
  if (o.world_size) {
    p.world_size = o.world_size;
    p.detected_from["world_size"] = "--world-size";
    // More ranks than wrappers (a command that starts its workers itself, or ranks of several GPUs
    // each): the wrappers' records are not one per rank, as around a launcher, so they are said as
    // a launcher's (`missing-ranks` then counts wrappers, not ranks).
    if (p.launcher.empty() && *o.world_size > p.job.ranks.value_or(1)) p.launcher = program_name(o.command);
  } else if (!launcher.refused.empty()) {
    // Unknown, not a guess: report then says so and how to state it.
    p.world_size_warning = fmt::format("the command's {}; the run's world size is left unknown (give --world-size)",
                                       launcher.refused);
  } else if (launcher.per_node) {
    p.world_size = static_cast<int>(*launcher.per_node * nodes);
    p.detected_from["world_size"] = launcher.from + (launcher.nodes || nodes == 1 ? "" : " × wrappers");
  } else if (!launcher.per_node_word.empty()) {
    p.per_node_devices = RunPlan::PerNodeDevices{launcher.per_node_word, nodes,
                                                 launcher.from + (launcher.nodes || nodes == 1 ? "" : " × wrappers")};
  } else if (launcher.total) {
    p.world_size = launcher.total;
    p.detected_from["world_size"] = launcher.from;
  } else if (p.job.ranks) {
    p.world_size = p.job.ranks;
    p.detected_from["world_size"] = p.job.detected_from["ranks"];
  } else if (p.job.unreadable.contains("ranks")) {
    p.world_size_warning = "the launcher's rank count is unreadable (above); the run's world size is left unknown (give --world-size)";
  } else if (p.job.slurm_batch_step && starts_job_tasks(launcher.program)) {
    // srun, or mpirun under SLURM, without a count starts the job's tasks.
    if (p.job.job_tasks) {
      p.world_size = p.job.job_tasks;
      p.detected_from["world_size"] = fmt::format("SLURM_NTASKS (the job's tasks, which {} starts)", launcher.program);
    } else if (p.job.unreadable.contains("job_tasks")) {
      p.world_size_warning = "SLURM's task count is unreadable (above); the run's world size is left unknown (give --world-size)";
    } else if (launcher.program == "srun" && p.job.nodes) {
      // A job submitted without -n states no task count: srun then starts one task per node.
      p.world_size = p.job.nodes;
      p.detected_from["world_size"] = "the job's nodes (srun without a count starts a task per node; the job states no task count)";
    } else {
      p.world_size_warning = fmt::format(
          "{} without a count starts as many processes as the job has slots, and the job states no task count "
          "(SLURM_NTASKS); the run's world size is left unknown (give --world-size, or -n to {})",
          launcher.program, launcher.program);
    }
  } else if (p.job.slurm_batch_step) {
    p.world_size = 1;
    p.detected_from["world_size"] = "one process: SLURM's batch step runs the command once";
    // On the job's first node only: the job's node count and list are not this run's (its own
    // node folder names the host).
    if (p.job.nodes.value_or(1) > 1 || p.job.hosts.size() > 1) {
      p.job.nodes = 1;
      p.job.hosts.clear();
      p.detected_from["nodes"] = "one process: SLURM's batch step runs the command on the job's first node";
      p.detected_from.erase("hosts");
    }
    if (p.job.job_tasks.value_or(1) > 1)
      p.world_size_warning = fmt::format(
          "SLURM_NTASKS={} counts the job's tasks, but this wrapper runs in the job's batch step (not under srun), where the command "
          "runs once: world size 1 (start it with srun for one rank per task, or give --world-size if the command starts its ranks itself)",
          *p.job.job_tasks);
  } else {
    p.world_size = 1;
    p.detected_from["world_size"] = "default: one process, no launcher detected";
  }
  p.detected_from.erase("ranks");
  p.detected_from.erase("job_tasks");
  return p;
}

void settle_per_node_devices(RunPlan& p, std::optional<int> gpus_seen) {
  if (!p.per_node_devices) return;
  const auto launch = *std::exchange(p.per_node_devices, std::nullopt);
  const auto how = fmt::format("{} --nproc-per-node {}", p.launcher, launch.word);
  std::int64_t per_node = 0;
  std::string counted;
  if (gpus_seen && *gpus_seen > 0) {
    per_node = *gpus_seen;
    counted = fmt::format("{} GPU{} seen on this node", per_node, per_node == 1 ? "" : "s");
  } else if (launch.word == "auto" && gpus_seen) {
    per_node = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));  // torchrun's own choice without a GPU
    counted = fmt::format("no GPU: {} CPUs", per_node);
  } else {
    p.world_size_warning = fmt::format("the command's {}: {}; the run's world size is left unknown (give --world-size)", how,
                                       gpus_seen ? "no GPU is seen on this node" : "this wrapper does not count the node's GPUs");
    return;
  }
  if (per_node * launch.nodes > limits::kMaxWorldSize) {
    p.world_size_warning = fmt::format("the command's {} × {} nodes = {} is beyond any machine; the run's world size is left unknown "
                                       "(give --world-size)", how, launch.nodes, per_node * launch.nodes);
    return;
  }
  p.world_size = static_cast<int>(per_node * launch.nodes);
  p.detected_from["world_size"] = fmt::format("{} ({})", launch.from, counted);
}

int run_collect(const RunOptions& o, const EnvMap& env, std::FILE* diag) {
  open_closed_standard_fds();
  ignore_broken_pipes();
  // Before any thread exists: the sampler thread must never take a signal meant for the child.
  block_forwarded_signals();
  RunPlan plan = plan_run(o, env);
  const std::string planned_dir = plan.run_dir;
  const auto claimed = claim_run_dir(plan, o);
  if (!claimed) {
    std::fprintf(diag, "scalelens run: error: %s: %s\n", claimed.error().path.c_str(), claimed.error().message.c_str());
    return 1;
  }
  const auto& taken_by = claimed.value();
  const fs::path dir = plan.run_dir;
  const bool writes_manifest = plan.job.rank == 0;
  if (plan.job.job_key_warning && writes_manifest && !o.quiet) std::fprintf(diag, "scalelens: warning: %s\n", plan.job.job_key_warning->c_str());
  for (const auto& w : plan.job.warnings) std::fprintf(diag, "scalelens run: warning: %s\n", w.c_str());
  // Not under --quiet: two jobs under one name is a mistake worth hearing of.
  if (taken_by && writes_manifest) {
    // "this job, K," unless the holder is an earlier run of the same job (a batch script's runs).
    const bool other_job = plan.job.job_key && !taken_by->same_job;
    std::fprintf(diag, "scalelens run: warning: %s already holds %s (a run folder holds one run); recording this %s in %s\n",
                 planned_dir.c_str(), taken_by->text.c_str(), other_job ? ("job, " + *plan.job.job_key + ",").c_str() : "run",
                 dir.c_str());
  }

  if (auto ok = prepare_run_folder(dir, plan.host); !ok) {
    std::fprintf(diag, "scalelens run: error: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
    return 1;
  }
  RankRecordData rank;
  rank.rank = plan.job.rank;
  rank.host = plan.host;
  rank.local_rank = plan.job.local_rank;
  rank.devices = monitor::rank_devices(env);
  // The run's times after its start are the start plus the time elapsed, not the wall clock again.
  const monitor::RunClock clock = monitor::RunClock::starting_now();
  rank.start_ns = clock.start_ns();
  rank.pid = static_cast<int>(::getpid());
  for (auto [name, header] : {std::pair{"epochs.csv", "rank,epoch,start_ns,end_ns,samples\n"},
                              std::pair{"steps.csv", "rank,step,start_ns,end_ns,samples\n"}}) {
    if (auto ok = create_csv(dir / name, header); !ok) {
      std::fprintf(diag, "scalelens run: error: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
      return 1;
    }
  }
  if (auto ok = write_rank_record(dir, rank); !ok) {
    std::fprintf(diag, "scalelens run: error: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
    return 1;
  }

  // One sampler per node: whoever takes the node's lock first.
  const fs::path node_dir = dir / "nodes" / plan.host;
  auto lock = NodeLock::try_acquire(node_dir / "sampler.lock");
  if (!lock) {
    std::fprintf(diag, "scalelens run: error: %s: %s\n", lock.error().path.c_str(), lock.error().message.c_str());
    return 1;
  }
  std::unique_ptr<monitor::Sampler> sampler;
  NodeRecordData node;
  node.host = plan.host;
  // The GPUs this node's jobs may use, as counted for torchrun --nproc-per-node gpu|auto: the
  // sampler's selection; else SLURM's count when this wrapper does not sample.
  std::optional<int> gpus_seen = plan.job.gpus_on_node;
  if (lock.value()) {
    std::map<std::string, std::string> missing;
    auto source = monitor::open_gpu_source(o.gpu_source);
    std::vector<std::size_t> selected;
    std::unique_ptr<monitor::GpuSource> gpu;
    if (source) {
      gpu = std::move(source.value());
      auto visible = monitor::select_visible(gpu->devices(), std::string(gpu->kind()), env);
      selected = visible.positions;
      gpus_seen = static_cast<int>(selected.size());
      if (!visible.unknown.empty())
        missing["gpu_selection"] = fmt::format("{} names '{}', which matches no GPU; later entries are ignored", visible.from, visible.unknown.front());
      if (!visible.from.empty()) plan.detected_from["gpus_sampled"] = visible.from;
    } else {
      missing["gpu"] = source.error().message;
      // No library is not "no GPU": a ROCm node without libamd_smi on the path has GPUs that torchrun
      // counts; gpus_seen stays unknown (SLURM's count, if any), and `auto` is not taken as CPUs.
      // Asked for by name, a source that cannot open is worth hearing of before the job ends
      // (under auto, a node without GPUs is no news: the manifest's "missing" says so).
      if (o.gpu_source != "auto" && o.gpu_source != "none")
        std::fprintf(diag, "scalelens run: warning: --gpu-source %s: %s; GPUs are not sampled\n", o.gpu_source.c_str(),
                     source.error().message.c_str());
    }
    monitor::SamplerOptions so;
    so.node_dir = node_dir;
    so.interval_s = o.interval_s;
    so.flush_s = o.flush_s;
    so.sample_host = o.sample_host;
    so.clock = clock;
    // Said as it happens (a day's training may have hours to go), also under --quiet: samples are
    // being lost. The command runs on.
    so.on_write_failure = [diag](const std::string& message) {
      std::fprintf(diag, "scalelens run: warning: %s; the command goes on\n", message.c_str());
    };
    auto started = monitor::Sampler::start(so, std::move(gpu), std::move(selected), std::move(missing));
    if (!started) {
      std::fprintf(diag, "scalelens run: error: %s: %s\n", started.error().path.c_str(), started.error().message.c_str());
      return 1;
    }
    sampler = std::move(started.value());
    auto report = sampler->report();
    node.gpu_source = report.gpu_source;
    for (const auto& d : report.devices) node.gpus.push_back({d.index, d.uuid, d.name});
    node.missing = report.missing;
    if (auto ok = write_node_record(dir, node); !ok)
      std::fprintf(diag, "scalelens run: warning: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
  }

  settle_per_node_devices(plan, gpus_seen);
  if (plan.world_size_warning && writes_manifest) std::fprintf(diag, "scalelens run: warning: %s\n", plan.world_size_warning->c_str());

  ManifestData m;
  m.run_id = plan.run_id;
  m.label = plan.label;
  m.world_size = plan.world_size;
  m.nodes = o.nodes ? o.nodes : plan.job.nodes;
  if (o.nodes) plan.detected_from["nodes"] = "--nodes";
  m.gpus_per_node = o.gpus_per_node ? o.gpus_per_node : plan.job.gpus_on_node;
  if (o.gpus_per_node) plan.detected_from["gpus_per_node"] = "--gpus-per-node";
  m.system = plan.system;
  m.global_batch_size = o.global_batch_size;
  m.samples_per_epoch = o.samples_per_epoch;
  m.scaling = o.scaling;
  m.start_ns = rank.start_ns;
  m.command = o.command;
  m.hosts = plan.job.hosts;
  m.scheduler = plan.job.scheduler;
  m.scheduler_ids = plan.job.ids;
  m.job_key = plan.job.job_key.value_or("");
  m.launcher = plan.launcher;
  m.detected_from = plan.detected_from;
  m.sampling_interval_s = o.interval_s;
  auto fill_from_nodes = [&] {
    auto nodes = read_node_records(dir);
    // This node's record as this wrapper holds it, also where node.json could not be written (a
    // full disk): its missing samples are not lost from the manifest.
    if (sampler) {
      auto own = std::find_if(nodes.begin(), nodes.end(), [&](const NodeRecordData& n) { return n.host == node.host; });
      if (own != nodes.end()) *own = node;
      else nodes.push_back(node);
    }
    std::set<std::string> hosts(m.hosts.begin(), m.hosts.end());
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "nodes", ec)) hosts.insert(e.path().filename().string());
    if (plan.job.hosts.empty()) m.hosts.assign(hosts.begin(), hosts.end());
    if (!m.nodes && !m.hosts.empty()) {
      m.nodes = static_cast<int>(m.hosts.size());
      m.detected_from["nodes"] = "hosts that wrote nodes/";
    }
    std::size_t most = 0;
    for (const auto& n : nodes) {
      most = std::max(most, n.gpus.size());
      for (const auto& g : n.gpus)
        if (m.gpu_model.empty() && !g.name.empty()) m.gpu_model = g.name;
    }
    if (!m.gpus_per_node && most > 0) {
      m.gpus_per_node = static_cast<int>(most);
      m.detected_from["gpus_per_node"] = "GPUs sampled per node";
    }
    m.missing = merge_node_missing(nodes);
  };
  if (writes_manifest) {
    fill_from_nodes();
    if (auto ok = write_manifest(dir, m); !ok) {
      std::fprintf(diag, "scalelens run: error: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
      if (sampler) sampler->stop();
      return 1;
    }
    if (!o.quiet) std::fprintf(diag, "scalelens: recording to %s\n", dir.c_str());
  }

  std::vector<std::pair<std::string, std::string>> child_env{
      {"SCALELENS_RUN_DIR", dir.string()},
      {"SCALELENS_RANK", std::to_string(plan.job.rank)},
      {"SCALELENS_TRACE_DIR", (dir / "traces").string()},
      {"SCALELENS_RUN_ID", plan.run_id},
      {"SCALELENS_HOST", plan.host},
      {"SCALELENS_CLOCK", clock.for_environment()},
  };
  if (plan.job.local_rank) child_env.emplace_back("SCALELENS_LOCAL_RANK", std::to_string(*plan.job.local_rank));
  if (!o.mpi_comm_lib.empty()) {
    // The interposer goes first so its MPI_* symbols win over the MPI library's.
    const char* preload = std::getenv("LD_PRELOAD");
    child_env.emplace_back("LD_PRELOAD", o.mpi_comm_lib + (preload && *preload ? std::string(":") + preload : ""));
  }
  ChildOptions child_options;
  child_options.kill_after_s = o.kill_after_s;
  auto outcome = run_child(o.command, child_env, child_options);
  if (!outcome.ran) std::fprintf(diag, "scalelens run: error: %s\n", outcome.error.c_str());
  for (const auto& w : outcome.warnings) std::fprintf(diag, "scalelens run: warning: %s\n", w.c_str());

  const std::int64_t end_ns = clock.now();
  if (sampler) {
    sampler->stop();
    auto report = sampler->report();
    node.missing = report.missing;
    node.complete = true;
    if (auto ok = write_node_record(dir, node); !ok)
      std::fprintf(diag, "scalelens run: warning: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
  }
  rank.end_ns = end_ns;
  rank.exit_status = outcome.status;
  if (outcome.signal) rank.signal = outcome.signal;
  if (auto ok = write_rank_record(dir, rank); !ok)
    std::fprintf(diag, "scalelens run: warning: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
  if (writes_manifest) {
    fill_from_nodes();
    m.end_ns = end_ns;
    m.exit_status = outcome.status;
    m.complete = true;
    if (!outcome.ran) m.missing["command"] = outcome.error;
    if (auto ok = write_manifest(dir, m); !ok)
      std::fprintf(diag, "scalelens run: warning: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
  }
  return outcome.status;
}

}  // namespace scalelens::collect
