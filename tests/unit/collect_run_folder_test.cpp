// The run folder as the wrappers write it: the manifest and rank records that ingest reads back,
// the sampler election, CSV headers under concurrent appenders, and errors at start.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include "collect/run_folder.hpp"
#include "ingest/ingest.hpp"
#include "support/test_support.hpp"

using namespace scalelens;
using namespace scalelens::collect;
using scalelens::testing::ScratchDir;
using scalelens::testing::slurp;

TEST(CollectRunFolder, ManifestAndRankRecordsAreWhatIngestReads) {
  ScratchDir d;
  auto dir = d / "ddp-slurm-1.0";
  ASSERT_TRUE(prepare_run_folder(dir, "n01"));
  ManifestData m;
  m.run_id = "ddp-slurm-1.0";
  m.label = "ddp";
  m.world_size = 2;
  m.nodes = 1;
  m.start_ns = 1'000'000'000;
  m.end_ns = 3'000'000'000;
  m.exit_status = 0;
  m.command = {"python", "train.py"};
  m.hosts = {"n01"};
  m.scheduler = "slurm";
  m.detected_from = {{"world_size", "SLURM_NTASKS"}};
  m.missing = {{"gpu", "no NVML library found (libnvidia-ml.so.1)"}};
  m.complete = true;
  ASSERT_TRUE(write_manifest(dir, m));
  for (int r = 0; r < 2; ++r) {
    RankRecordData rec;
    rec.rank = r;
    rec.host = "n01";
    rec.local_rank = r;
    rec.devices = {std::to_string(r)};
    rec.start_ns = 1'000'000'000;
    rec.end_ns = 3'000'000'000;
    rec.exit_status = 0;
    ASSERT_TRUE(write_rank_record(dir, rec));
  }
  IngestOptions in;
  in.inputs = {d.path().string()};
  Study s = ingest(in);
  ASSERT_EQ(s.runs.size(), 1u);
  const auto& run = s.runs[0];
  EXPECT_EQ(run.label, "ddp");
  EXPECT_EQ(run.world_size, 2);
  EXPECT_EQ(run.run_id, "ddp-slurm-1.0");
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_EQ(run.detected_from.at("world_size"), "SLURM_NTASKS");
  ASSERT_EQ(run.ranks.size(), 2u);
  EXPECT_EQ(run.ranks[1].devices, (std::vector<std::string>{"1"}));
  for (const auto& diag : s.diagnostics) ADD_FAILURE() << diag.code << ": " << diag.message;
}

TEST(CollectRunFolder, NodeRecordRoundTrips) {
  ScratchDir d;
  ASSERT_TRUE(prepare_run_folder(d.path(), "n02"));
  NodeRecordData n{"n02", "nvml", {{0, "GPU-1", "NVIDIA H100"}}, {{"cpu_energy", "not readable"}}, true};
  ASSERT_TRUE(write_node_record(d.path(), n));
  auto back = read_node_records(d.path());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].gpus.at(0).name, "NVIDIA H100");
  EXPECT_EQ(back[0].missing.at("cpu_energy"), "not readable");
  EXPECT_TRUE(back[0].complete);
}

TEST(CollectRunFolder, MissingReasonsSharedByAllNodesAreStatedOnce) {
  using scalelens::collect::NodeRecordData;
  NodeRecordData a{"gpu01", "", {}, {{"gpu", "no NVML"}, {"cpu_energy", "no RAPL"}}, true};
  NodeRecordData b{"gpu02", "", {}, {{"gpu", "no NVML"}, {"cpu_energy", "RAPL not readable"}}, true};
  NodeRecordData c{"gpu03", "nvml", {}, {}, true};
  auto two = scalelens::collect::merge_node_missing({a, b});
  EXPECT_EQ(two, (std::map<std::string, std::string>{
                     {"gpu", "no NVML"}, {"cpu_energy@gpu01", "no RAPL"}, {"cpu_energy@gpu02", "RAPL not readable"}}));
  // A third node that has GPU readings: the reason is no longer everyone's, so hosts are named.
  auto three = scalelens::collect::merge_node_missing({a, b, c});
  EXPECT_EQ(three.count("gpu"), 0u);
  EXPECT_EQ(three.at("gpu@gpu01"), "no NVML");
  EXPECT_EQ(three.at("gpu@gpu02"), "no NVML");
  EXPECT_EQ(scalelens::collect::merge_node_missing({a}).at("gpu"), "no NVML");
}

TEST(CollectRunFolder, OneSamplerLockPerNodeAcrossProcessesAndFreedWhenTheHolderDies) {
  ScratchDir d;
  auto lock_file = d / "sampler.lock";
  auto mine = NodeLock::try_acquire(lock_file);
  ASSERT_TRUE(mine);
  ASSERT_TRUE(mine.value().has_value());
  pid_t child = ::fork();
  if (child == 0) {
    auto other = NodeLock::try_acquire(lock_file);
    ::_exit(other && !other.value() ? 0 : 1);  // 0: correctly refused
  }
  int st = 0;
  ::waitpid(child, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "a second process must not get the lock";
  mine.value().reset();  // the holder goes away
  auto again = NodeLock::try_acquire(lock_file);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again.value().has_value());
}

TEST(CollectRunFolder, CsvHeaderIsWrittenOnceWhateverTheRace) {
  ScratchDir d;
  auto path = d / "epochs.csv";
  std::vector<pid_t> kids;
  for (int k = 0; k < 4; ++k) {
    pid_t c = ::fork();
    if (c == 0) ::_exit(create_csv(path, "rank,epoch,start_ns,end_ns,samples\n") ? 0 : 1);
    kids.push_back(c);
  }
  for (auto c : kids) {
    int st = 0;
    ::waitpid(c, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  EXPECT_EQ(slurp(path), "rank,epoch,start_ns,end_ns,samples\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(d.path()), {}), 1) << "no file left aside";
}

TEST(CollectRunFolder, UnwritablePlaceIsAnErrorNamingIt) {
  ScratchDir d;
  d.write("plain-file", "x");
  auto r = prepare_run_folder(d / "plain-file/run", "n01");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().path.find("plain-file"), std::string::npos);
  EXPECT_NE(r.error().message.find("cannot create"), std::string::npos) << r.error().message;
  EXPECT_EQ(safe_component("a/b c"), "a_b_c");
  EXPECT_EQ(safe_component(".."), "_..");
}
