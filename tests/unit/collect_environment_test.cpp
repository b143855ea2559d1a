// Job detection from launcher variables (the real-process versions are in tests/cli/run_cli_test.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <fmt/format.h>

#include "collect/collect_run.hpp"
#include "collect/job_environment.hpp"

using namespace scalelens::collect;

TEST(JobEnvironment, SlurmStepGivesRankSizesHostsAndOneKey) {
  EnvMap env{{"SLURM_JOB_ID", "4242"}, {"SLURM_STEP_ID", "3"}, {"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"},
             {"SLURM_NTASKS", "8"}, {"SLURM_NNODES", "2"}, {"SLURM_GPUS_ON_NODE", "4"},
             {"SLURM_JOB_NODELIST", "gpu[01-02]"}};
  auto j = detect_job(env);
  EXPECT_EQ(j.scheduler, "slurm");
  EXPECT_EQ(j.job_key, "slurm-4242.3");
  EXPECT_EQ(j.rank, 5);
  EXPECT_EQ(j.local_rank, 1);
  EXPECT_EQ(j.ranks, 8);
  EXPECT_EQ(j.nodes, 2);
  EXPECT_EQ(j.gpus_on_node, 4);
  EXPECT_EQ(j.hosts, (std::vector<std::string>{"gpu01", "gpu02"}));
  EXPECT_EQ(j.detected_from["ranks"], "SLURM_NTASKS");
  EXPECT_EQ(j.detected_from["run_id"], "SLURM_JOB_ID+SLURM_STEP_ID");
}

TEST(JobEnvironment, TorchrunInsideSlurmTakesTorchrunsRankAndRunId) {
  EnvMap env{{"SLURM_JOB_ID", "1"}, {"SLURM_PROCID", "0"}, {"RANK", "6"}, {"LOCAL_RANK", "2"}, {"WORLD_SIZE", "8"},
             {"LOCAL_WORLD_SIZE", "4"}, {"TORCHELASTIC_RUN_ID", "job7"}, {"GROUP_WORLD_SIZE", "2"}};
  auto j = detect_job(env);
  EXPECT_EQ(j.scheduler, "torchrun");
  EXPECT_EQ(j.job_key, "torchrun-job7");
  EXPECT_EQ(j.rank, 6);
  EXPECT_EQ(j.detected_from["rank"], "RANK");
  EXPECT_EQ(j.nodes, 2);
  EXPECT_EQ(j.ids["slurm_job_id"], "1");
}

TEST(JobEnvironment, OpenMpiUsesItsNamespace) {
  EnvMap env{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
             {"PMIX_NAMESPACE", "1363476481"}, {"PMIX_RANK", "1"}, {"OMPI_MCA_orte_num_nodes", "1"}};
  auto j = detect_job(env);
  EXPECT_EQ(j.scheduler, "openmpi");
  EXPECT_EQ(j.job_key, "ompi-1363476481");
  EXPECT_EQ(j.rank, 1);
  EXPECT_EQ(j.ranks, 2);
  EXPECT_EQ(j.nodes, 1);
}

TEST(JobEnvironment, MpichAndIntelMpiWithoutJobIdWarnAboutOtherNodes) {
  auto m = detect_job({{"PMI_RANK", "0"}, {"PMI_SIZE", "4"}});
  EXPECT_EQ(m.scheduler, "mpich");
  EXPECT_EQ(m.ranks, 4);
  ASSERT_TRUE(m.job_key);
  EXPECT_TRUE(m.job_key_warning);
  auto i = detect_job({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "2"}});
  EXPECT_EQ(i.scheduler, "intelmpi");
  EXPECT_EQ(i.rank, 2);
  EXPECT_EQ(i.local_rank, 0);
  // Under SLURM the job id serves every node.
  auto s = detect_job({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"SLURM_JOB_ID", "9"}, {"SLURM_STEP_ID", "0"}});
  EXPECT_EQ(s.job_key, "slurm-9.0");
  EXPECT_FALSE(s.job_key_warning);
}

TEST(JobEnvironment, NothingSetIsASingleProcess) {
  auto j = detect_job({{"HOME", "/root"}, {"RANK", "x"}});
  EXPECT_EQ(j.scheduler, "none");
  EXPECT_EQ(j.rank, 0);
  EXPECT_FALSE(j.job_key);
}

// The batch step of `sbatch -n 2` (variables as SLURM 22.05 sets them there: no SLURM_STEP_ID,
// no SLURM_STEP_NUM_TASKS, SLURM_NTASKS the job's) runs the command once. Its wrapper recorded
// world size 2 from SLURM_NTASKS. Now one process, said; srun or mpirun inside without a count
// start the job's tasks, and launchers inside keep their own counts.
TEST(RunPlan, SlurmBatchStepIsOneProcessAndLaunchersInsideItKeepTheirCounts) {
  const EnvMap batch{{"SLURM_JOB_ID", "12"},      {"SLURM_JOBID", "12"},         {"SLURM_NTASKS", "2"},         {"SLURM_NPROCS", "2"},
                     {"SLURM_TASKS_PER_NODE", "2"}, {"SLURM_PROCID", "0"},        {"SLURM_LOCALID", "0"},        {"SLURM_NODEID", "0"},
                     {"SLURM_NNODES", "1"},         {"SLURM_JOB_NUM_NODES", "1"}, {"SLURM_JOB_NODELIST", "vm"},  {"SLURM_GTIDS", "0"},
                     {"SLURM_CPUS_ON_NODE", "2"},   {"SLURM_CLUSTER_NAME", "scalelens-test"}};
  auto j = detect_job(batch);
  EXPECT_TRUE(j.slurm_batch_step);
  EXPECT_FALSE(j.ranks) << "SLURM_NTASKS is the job's task count, not ranks of this step";
  EXPECT_EQ(j.job_tasks, 2);
  EXPECT_EQ(j.job_key, "slurm-12.batch");
  EXPECT_TRUE(j.warnings.empty());

  auto plan = [&](std::vector<std::string> command, const EnvMap& env) { return plan_run(RunOptions{.command = command}, env); };
  auto p = plan({"python", "train.py"}, batch);
  EXPECT_EQ(p.world_size, 1);
  EXPECT_EQ(p.detected_from["world_size"], "one process: SLURM's batch step runs the command once");
  EXPECT_FALSE(p.detected_from.count("job_tasks"));
  ASSERT_TRUE(p.world_size_warning);
  EXPECT_EQ(p.world_size_warning->rfind("SLURM_NTASKS=2 counts the job's tasks, but this wrapper runs in the job's batch step", 0), 0u)
      << *p.world_size_warning;
  EXPECT_EQ(p.job.nodes, 1);
  // A job of two nodes: the command runs on its first, not both (the manifest said 2 nodes, both hosts).
  EnvMap two_nodes = batch;
  two_nodes["SLURM_NNODES"] = two_nodes["SLURM_JOB_NUM_NODES"] = "2";
  two_nodes["SLURM_JOB_NODELIST"] = "n[1-2]";
  p = plan({"python", "train.py"}, two_nodes);
  EXPECT_EQ(p.world_size, 1);
  EXPECT_EQ(p.job.nodes, 1);
  EXPECT_TRUE(p.job.hosts.empty()) << "the run's node folder names its host";
  EXPECT_EQ(p.detected_from["nodes"], "one process: SLURM's batch step runs the command on the job's first node");
  for (const char* launcher : {"srun", "mpirun"}) {  // these start tasks on every node of the job
    p = plan({launcher, "python", "train.py"}, two_nodes);
    EXPECT_EQ(p.job.nodes, 2) << launcher;
    EXPECT_EQ(p.job.hosts.size(), 2u) << launcher;
  }
  // A job submitted without -n (no SLURM_NTASKS): srun starts a task per node, mpirun fills the
  // job's slots, which no variable here states (recorded as 1 before).
  EnvMap untold = two_nodes;
  untold.erase("SLURM_NTASKS");
  untold.erase("SLURM_NPROCS");
  p = plan({"srun", "python", "train.py"}, untold);
  EXPECT_EQ(p.world_size, 2);
  EXPECT_FALSE(p.world_size_warning);
  p = plan({"mpirun", "python", "train.py"}, untold);
  EXPECT_FALSE(p.world_size);
  ASSERT_TRUE(p.world_size_warning);
  EXPECT_NE(p.world_size_warning->find("the run's world size is left unknown"), std::string::npos) << *p.world_size_warning;
  // A job of one task: nothing to say.
  EnvMap one = batch;
  one["SLURM_NTASKS"] = "1";
  p = plan({"python", "train.py"}, one);
  EXPECT_EQ(p.world_size, 1);
  EXPECT_FALSE(p.world_size_warning);

  // srun and mpirun without a count start the job's tasks; with one, their count.
  for (const char* launcher : {"srun", "mpirun"}) {
    SCOPED_TRACE(launcher);
    p = plan({launcher, "python", "train.py"}, batch);
    EXPECT_EQ(p.world_size, 2);
    EXPECT_EQ(p.detected_from["world_size"], fmt::format("SLURM_NTASKS (the job's tasks, which {} starts)", launcher));
    EXPECT_FALSE(p.world_size_warning);
    p = plan({launcher, "-n", "1", "python", "train.py"}, batch);
    EXPECT_EQ(p.world_size, 1);
    EXPECT_EQ(p.detected_from["world_size"], fmt::format("command: {} -n", launcher));
  }
  EnvMap bad = batch;
  bad["SLURM_NTASKS"] = "0";
  p = plan({"srun", "python", "train.py"}, bad);
  EXPECT_FALSE(p.world_size);
  ASSERT_TRUE(p.world_size_warning);
  EXPECT_NE(p.world_size_warning->find("left unknown"), std::string::npos);
  // torchrun in the batch step: one wrapper, so its per-node count alone.
  p = plan({"torchrun", "--nproc-per-node", "4", "train.py"}, batch);
  EXPECT_EQ(p.world_size, 4);
  EXPECT_EQ(p.detected_from["world_size"], "command: torchrun --nproc-per-node");
  // Ranks of an inner launcher started from the batch step keep that launcher's counts.
  EnvMap torch_worker = batch;
  torch_worker.insert({{"RANK", "3"}, {"LOCAL_RANK", "3"}, {"WORLD_SIZE", "4"}, {"TORCHELASTIC_RUN_ID", "none"}});
  p = plan({"python", "train.py"}, torch_worker);
  EXPECT_EQ(p.world_size, 4);
  EXPECT_EQ(p.detected_from["world_size"], "WORLD_SIZE");
  EnvMap mpi_rank = batch;
  mpi_rank.insert({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMIX_NAMESPACE", "prterun-vm-1@1"}});
  p = plan({"./solver"}, mpi_rank);
  EXPECT_EQ(p.world_size, 2);
  EXPECT_EQ(p.detected_from["world_size"], "OMPI_COMM_WORLD_SIZE");
  // Inside srun (a step of its own) SLURM's counts are the ranks, as before.
  EnvMap step = batch;
  step.insert({{"SLURM_STEP_ID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}});
  p = plan({"python", "train.py"}, step);
  EXPECT_EQ(p.world_size, 2);
  EXPECT_EQ(p.detected_from["world_size"], "SLURM_STEP_NUM_TASKS");
}

TEST(SlurmNodeList, ExpandsRangesPaddingAndPlainNames) {
  EXPECT_EQ(expand_slurm_nodelist("n[01-03,07],gpu5"), (std::vector<std::string>{"n01", "n02", "n03", "n07", "gpu5"}));
  EXPECT_EQ(expand_slurm_nodelist("a[8-10]-ib"), (std::vector<std::string>{"a8-ib", "a9-ib", "a10-ib"}));
  EXPECT_EQ(expand_slurm_nodelist("x[3-1]"), (std::vector<std::string>{"x3-1"}));  // malformed: kept as written
  EXPECT_TRUE(expand_slurm_nodelist("").empty());
}

// A launcher's counts beyond any machine were cut to int (torchrun --nproc-per-node 4294967297
// gave world size 1) or overflowed (70000 × 70000), and written as plausible world sizes. Now the
// world size is left unknown, and the plan says why.
TEST(RunPlan, LauncherCountsBeyondAnyMachineLeaveTheWorldSizeUnknown) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"torchrun", "--nproc-per-node", "4294967297", "t.py"}, "torchrun --nproc-per-node 4294967297 is beyond any machine (at most 4096)"},
      {{"mpirun", "-n", "4294967296", "./x"}, "mpirun -n 4294967296 is beyond any machine (at most 10000000)"},
      {{"torchrun", "--nnodes=1:2000000", "--nproc-per-node", "4", "t.py"}, "torchrun --nnodes 2000000 is beyond any machine (at most 1000000)"},
      {{"torchrun", "--nproc-per-node", "4000", "--nnodes", "70000", "t.py"},
       "torchrun --nproc-per-node 4000 × 70000 nodes = 280000000 GPUs is beyond any machine (at most 10000000)"},
  };
  for (const auto& [command, why] : cases) {
    SCOPED_TRACE(command[0] + " " + command[2]);
    auto p = plan_run(RunOptions{.command = command}, {});
    EXPECT_FALSE(p.world_size);
    EXPECT_FALSE(p.detected_from.count("world_size"));
    ASSERT_TRUE(p.world_size_warning);
    EXPECT_EQ(*p.world_size_warning, "the command's " + why + "; the run's world size is left unknown (give --world-size)");
  }
  // The largest counts there are pass, and --world-size wins over a refused count.
  auto p = plan_run(RunOptions{.command = {"torchrun", "--nproc-per-node", "4096", "--nnodes", "2441", "t.py"}}, {});
  EXPECT_EQ(p.world_size, 4096 * 2441);
  EXPECT_FALSE(p.world_size_warning);
  p = plan_run(RunOptions{.world_size = 8, .command = {"mpirun", "-n", "4294967296", "./x"}}, {});
  EXPECT_EQ(p.world_size, 8);
  EXPECT_FALSE(p.world_size_warning);
}

TEST(RunPlan, WorldSizeFromAWrappedTorchrunAndFlagsWin) {
  RunOptions o;
  o.command = {"torchrun", "--nnodes=2", "--nproc-per-node", "4", "train.py"};
  auto p = plan_run(o, {{"SLURM_JOB_ID", "5"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "1"}});
  EXPECT_EQ(p.world_size, 8);
  EXPECT_EQ(p.label, "torchrun");
  EXPECT_EQ(p.run_id, "torchrun-slurm-5.0");
  EXPECT_EQ(p.detected_from["world_size"], "command: torchrun --nproc-per-node × --nnodes");
  EXPECT_EQ(p.launcher, "torchrun");  // the wrapper wraps a launcher: its record is a node's
  EXPECT_EQ(plan_run(RunOptions{.command = {"python3", "train.py"}}, {}).launcher, "");
  o.world_size = 16;
  o.label = "ddp fp16/x";
  p = plan_run(o, {});
  EXPECT_EQ(p.world_size, 16);
  EXPECT_EQ(p.detected_from["world_size"], "--world-size");
  EXPECT_EQ(p.label, "ddp fp16/x");
  EXPECT_EQ(p.run_id.rfind("ddp_fp16_x-", 0), 0u) << p.run_id;  // a safe folder name
}

// torchrun --nproc-per-node gpu|auto was recorded as world size 1 (no SLURM_GPUS_ON_NODE), an
// elastic --nnodes 1:4 as 4 nodes, and --nproc-per-node 0 or -1 as 1. Now: the node's devices as
// the sampler selects them, the workers' WORLD_SIZE, or unknown with a warning.
TEST(RunPlan, TorchrunDeviceCountsElasticNodesAndNonCountsAreNotGuessed) {
  auto plan = [](std::vector<std::string> command, const EnvMap& env = {}) { return plan_run(RunOptions{.command = command}, env); };
  auto p = plan({"torchrun", "--nproc-per-node", "gpu", "--nnodes", "2", "t.py"});
  EXPECT_FALSE(p.world_size) << "counted once the sampler has looked";
  settle_per_node_devices(p, 2);
  EXPECT_EQ(p.world_size, 4);
  EXPECT_EQ(p.detected_from["world_size"], "command: torchrun --nproc-per-node gpu × --nnodes (2 GPUs seen on this node)");

  p = plan({"torchrun", "--nproc-per-node=auto", "t.py"});
  settle_per_node_devices(p, 0);
  EXPECT_EQ(p.world_size, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN))) << "auto without a GPU: the CPUs, as torchrun";
  for (std::optional<int> seen : {std::optional<int>(0), std::optional<int>()}) {
    p = plan({"torchrun", "--nproc-per-node", "gpu", "t.py"});
    settle_per_node_devices(p, seen);
    EXPECT_FALSE(p.world_size);
    ASSERT_TRUE(p.world_size_warning);
    EXPECT_NE(p.world_size_warning->find("torchrun --nproc-per-node gpu: "), std::string::npos) << *p.world_size_warning;
  }

  for (const char* n : {"0", "-1"}) {
    p = plan({"torchrun", "--nproc-per-node", n, "t.py"});
    EXPECT_FALSE(p.world_size) << n;
    ASSERT_TRUE(p.world_size_warning) << n;
    EXPECT_EQ(*p.world_size_warning, std::string("the command's torchrun --nproc-per-node ") + n +
                                         " is no count of processes; the run's world size is left unknown (give --world-size)");
  }

  p = plan({"torchrun", "--nnodes", "1:4", "--nproc-per-node", "4", "t.py"});
  EXPECT_FALSE(p.world_size);
  ASSERT_TRUE(p.world_size_warning);
  EXPECT_NE(p.world_size_warning->find("--nnodes is an elastic range"), std::string::npos) << *p.world_size_warning;
  p = plan({"torchrun", "--nnodes", "1:4", "--nproc-per-node", "4", "t.py"},
           {{"RANK", "3"}, {"LOCAL_RANK", "3"}, {"WORLD_SIZE", "12"}, {"TORCHELASTIC_RUN_ID", "e1"}});
  EXPECT_EQ(p.world_size, 12);
  EXPECT_EQ(p.detected_from["world_size"], "WORLD_SIZE");
  p = plan({"torchrun", "--nnodes=3:3", "--nproc-per-node", "4", "t.py"});
  EXPECT_EQ(p.world_size, 12) << "a range of one size is that size";
}

// Launcher variables that hold no possible value: the figure is unknown, with a warning naming the
// variable, never an outer launcher's figure or the default of one process (WORLD_SIZE=0 made a
// world size of 1, "no launcher detected"; SLURM_GPUS_ON_NODE=99999 reached the manifest, which
// the report then refused).
TEST(JobEnvironment, ImpossibleLauncherValuesAreUnknownAndSaid) {
  EnvMap env{{"SLURM_JOB_ID", "9"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "2"},
             {"SLURM_GPUS_ON_NODE", "99999"}, {"SLURM_NTASKS_PER_NODE", "2,1"}, {"RANK", "0"}, {"LOCAL_RANK", "0"},
             {"WORLD_SIZE", "0"}};
  auto j = detect_job(env);
  EXPECT_FALSE(j.ranks) << "not SLURM_NTASKS: torchrun's WORLD_SIZE is the figure, and it is unreadable";
  EXPECT_TRUE(j.unreadable.contains("ranks"));
  EXPECT_FALSE(j.gpus_on_node);
  EXPECT_EQ(j.local_ranks, 2) << "SLURM's per-node list: the first node's";
  ASSERT_EQ(j.warnings.size(), 2u);
  EXPECT_EQ(j.warnings[0], "WORLD_SIZE=0 is not a count from 1 to 10000000; the ranks is left unknown");
  EXPECT_EQ(j.warnings[1], "SLURM_GPUS_ON_NODE=99999 is not a number from 0 to 4096; the gpus_per_node is left unknown");
  // A rank beyond the ranks is said.
  auto beyond = detect_job({{"SLURM_JOB_ID", "9"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "2"}});
  ASSERT_EQ(beyond.warnings.size(), 1u);
  EXPECT_EQ(beyond.warnings[0].rfind("rank 5 (SLURM_PROCID) of 2 ranks (SLURM_NTASKS)", 0), 0u) << beyond.warnings[0];
  // The run's world size is then unknown, not 1.
  RunOptions o;
  o.study = "/tmp/unused";
  o.command = {"true"};
  auto plan = plan_run(o, env);
  EXPECT_FALSE(plan.world_size);
  ASSERT_TRUE(plan.world_size_warning);
  EXPECT_NE(plan.world_size_warning->find("left unknown"), std::string::npos);
}
