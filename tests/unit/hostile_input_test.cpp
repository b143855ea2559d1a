// Hostile input and faults (issue 12) through the library: files that change under the reader.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/test_support.hpp"

using namespace scalelens;
using scalelens::testing::ScratchDir;

namespace {

std::string ns(double s) { return std::to_string(static_cast<long long>(s * 1e9)); }

void write_run(const ScratchDir& dir, const std::string& name, int p, double epoch_s, int epochs) {
  dir.write(name + "/scalelens.json", "{\"schema\": \"scalelens.run/1\", \"run_id\": \"" + name +
                                          "\", \"label\": \"ddp\", \"world_size\": " + std::to_string(p) +
                                          ", \"samples_per_epoch\": 1000, \"start_ns\": 0, \"end_ns\": " +
                                          ns(epochs * epoch_s) + "}");
  std::string csv = "rank,epoch,start_ns,end_ns\n";
  for (int e = 0; e < epochs; ++e) csv += "0," + std::to_string(e) + "," + ns(e * epoch_s) + "," + ns((e + 1) * epoch_s) + "\n";
  dir.write(name + "/epochs.csv", csv);
}

}  // namespace

// A file listed, then deleted before it is read (a job cleaning up while the report runs): named
// with the reason, and the other run's figures are what they are without it.
TEST(HostileInput, FileVanishingBetweenListingAndReadingIsNamed) {
  ScratchDir dir;
  write_run(dir, "big", 1, 10, 200);  // the larger epochs.csv is read first
  write_run(dir, "small", 2, 6, 3);
  const auto vanishing = dir / "small/epochs.csv";
  IngestOptions in{{dir.path().string()}, {}, 1, {}};
  in.progress = [&](std::size_t done, std::size_t) {
    if (done == 1) std::filesystem::remove(vanishing);
  };
  Study study = ingest(in);
  auto named = std::find_if(study.diagnostics.begin(), study.diagnostics.end(), [&](const Diagnostic& d) {
    return d.path == vanishing.string() && d.message.find("No such file") != std::string::npos;
  });
  ASSERT_NE(named, study.diagnostics.end());
  EXPECT_EQ(named->code, "unreadable-file");
  auto summary = analyze(study, {});
  auto big = std::find_if(summary.configurations.begin(), summary.configurations.end(), [](auto& c) { return c.world_size == 1; });
  ASSERT_NE(big, summary.configurations.end());
  // 200 epochs of 10 s, the first left out as warm-up: 199 values of 10 s.
  EXPECT_EQ(big->epoch_time_s->n, 199u);
  EXPECT_DOUBLE_EQ(big->epoch_time_s->mean, 10.0);
}

// A named pipe, socket or device is read once at most, and report reads each file twice (sniffed,
// then read); one without a writer would block. Given as an input it is refused by name; found in a
// folder, it is named and left out (it was skipped without a word), as is a symbolic link that
// loops, and the runs beside them keep their figures.
TEST(HostileInput, PipesAndLoopingLinksAreNamedAndLeftOut) {
  ScratchDir dir;
  write_run(dir, "a", 1, 10, 3);
  const auto fifo = dir / "a/epochs-live.csv", input_fifo = dir / "pipe.json", loop = dir / "a/loop.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(input_fifo.c_str(), 0600), 0);
  std::filesystem::create_directory_symlink(loop, loop);
  Study study = ingest(IngestOptions{{(dir / "a").string(), input_fifo.string()}, {}, 1, {}});
  auto with_path = [&](const std::filesystem::path& p) {
    return std::find_if(study.diagnostics.begin(), study.diagnostics.end(), [&](const Diagnostic& d) { return d.path == p.string(); });
  };
  auto input = with_path(input_fifo);
  ASSERT_NE(input, study.diagnostics.end());
  EXPECT_EQ(input->severity, Severity::error);
  EXPECT_EQ(input->code, "unreadable-file");
  EXPECT_EQ(input->message, "a named pipe (FIFO), not a file or folder scalelens can read; left out");
  auto inside = with_path(fifo);
  ASSERT_NE(inside, study.diagnostics.end());
  EXPECT_EQ(inside->severity, Severity::warning);
  EXPECT_EQ(inside->message, "a named pipe (FIFO), not a regular file; left out");
  auto looping = with_path(loop);
  ASSERT_NE(looping, study.diagnostics.end());
  EXPECT_EQ(looping->message, "symbolic link that loops; left out");
  ASSERT_EQ(study.runs.size(), 1u);
  auto summary = analyze(study, {});
  ASSERT_EQ(summary.configurations.size(), 1u);
  EXPECT_DOUBLE_EQ(summary.configurations[0].epoch_time_s->mean, 10.0);
}

// An input given by name that cannot be reached is named with the real reason: a link that loops
// (study/x -> y -> x) was "no such file or folder", as was a broken link; the run beside is read.
TEST(HostileInput, AnInputThatCannotBeReachedIsNamedWithItsReason) {
  ScratchDir dir;
  write_run(dir, "ddp-1", 1, 10, 3);
  std::filesystem::create_symlink("y", dir / "x");
  std::filesystem::create_symlink("x", dir / "y");
  std::filesystem::create_symlink("gone", dir / "broken");
  Study study = ingest(IngestOptions{{(dir / "x").string(), (dir / "broken").string(), (dir / "absent").string(),
                                      (dir / "ddp-1").string()},
                                     {}, 1, {}});
  auto of = [&](const std::string& name) {
    auto it = std::find_if(study.diagnostics.begin(), study.diagnostics.end(),
                           [&](const Diagnostic& d) { return d.path == (dir / name).string(); });
    return it == study.diagnostics.end() ? Diagnostic{} : *it;
  };
  EXPECT_EQ(of("x").severity, Severity::error);
  EXPECT_EQ(of("x").code, "unreadable-file");
  EXPECT_EQ(of("x").message, "symbolic link that loops; left out");
  EXPECT_EQ(of("broken").code, "missing-input");
  EXPECT_EQ(of("broken").message, "broken symbolic link (to gone, which does not exist)");
  EXPECT_EQ(of("absent").code, "missing-input");
  EXPECT_EQ(of("absent").message, "no such file or folder");
  ASSERT_EQ(study.runs.size(), 1u);
}

// Links to folders are not followed (a run's `dataset -> /usr` made a report walk and sniff all of
// /usr) and never skipped without a word: a study of links says which, and reads them given as
// inputs (`report study/*`); a run's nodes/ link is named too.
TEST(HostileInput, LinkedFoldersAreNamedAndReadGivenAsInputs) {
  ScratchDir dir;
  write_run(dir, "real/ddp-1", 1, 10, 3);
  write_run(dir, "real/ddp-2", 2, 6, 3);
  // ddp-2's node logs are kept elsewhere, its nodes/ a link to them.
  dir.write("kept/nodes-of-ddp-2/h1/gpu.csv",
            "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
            "0,0,GPU-6b1a0f0e-5b7c-9c33-5f0a-2a8d1c4e9f01,95,40,43402395648,400,5123456789,1410,65\n");
  std::filesystem::create_directory_symlink("../../kept/nodes-of-ddp-2", dir / "real/ddp-2/nodes");
  std::filesystem::create_directories(dir / "study");
  std::filesystem::create_directory_symlink("../real/ddp-1", dir / "study/ddp-1");
  std::filesystem::create_directory_symlink("../real/ddp-2", dir / "study/ddp-2");
  std::filesystem::create_directory_symlink("/usr", dir / "real/ddp-1/dataset");
  auto with_code = [](const Study& study, const std::string& code) {
    std::vector<Diagnostic> found;
    for (const auto& d : study.diagnostics)
      if (d.code == code) found.push_back(d);
    return found;
  };
  const Study of_links = ingest(IngestOptions{{(dir / "study").string()}, {}, 1, {}});
  EXPECT_TRUE(of_links.runs.empty());
  auto said = with_code(of_links, "links-not-followed");
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].severity, Severity::note);
  EXPECT_EQ(said[0].message,
            "2 symbolic links to folders were not followed (a run's link to its dataset or environment can be a whole file system): " +
                (dir / "study/ddp-1").string() + ", " + (dir / "study/ddp-2").string() +
                "; give a linked folder as an input to read it (a study of links: `study/*`)");
  const Study study = ingest(IngestOptions{{(dir / "study/ddp-1").string(), (dir / "study/ddp-2").string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 2u);
  EXPECT_EQ(study.runs[0].path, (dir / "study/ddp-1").string());
  EXPECT_EQ(study.runs[1].path, (dir / "study/ddp-2").string());
  EXPECT_FALSE(study.runs[1].has_gpus());  // its nodes/ link is named, not followed
  said = with_code(study, "links-not-followed");
  ASSERT_EQ(said.size(), 2u);  // one note an input: ddp-1's dataset, ddp-2's nodes
  EXPECT_EQ(said[0].path, (dir / "study/ddp-1/dataset").string());
  EXPECT_EQ(said[1].path, (dir / "study/ddp-2/nodes").string());
  EXPECT_EQ(said[1].message.rfind("1 symbolic link to a folder was not followed (", 0), 0u) << said[1].message;
  auto summary = analyze(study, {});
  ASSERT_EQ(summary.configurations.size(), 2u);
  EXPECT_DOUBLE_EQ(summary.configurations[0].epoch_time_s->mean, 10.0);
  EXPECT_DOUBLE_EQ(summary.configurations[1].epoch_time_s->mean, 6.0);
  EXPECT_DOUBLE_EQ(*summary.configurations[1].speedup, 10.0 / 6.0);
}
