// nvidia-smi --query-gpu CSV logs, read through ingest() so recognition by content is tested too.
// The files are written by hand following nvidia-smi's own header names and value formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"

namespace scalelens {
namespace {

using scalelens::testing::read_study;

using testing::ScratchDir;

constexpr double kMiB = 1024.0 * 1024.0;
// 2024/01/02 03:04:05.678 UTC: 2024-01-02 is day 19724 since 1970 (1704153600 s); + 3 h 4 min 5 s.
constexpr std::int64_t kT0 = 1'704'164'645'678'000'000;

const Run* run_labelled(const Study& s, const std::string& label) {
  for (const auto& r : s.runs)
    if (r.label == label) return &r;
  return nullptr;
}

const Diagnostic* diagnostic(const Study& s, const std::string& code) {
  for (const auto& d : s.diagnostics)
    if (d.code == code) return &d;
  return nullptr;
}

// A run folder with a minimal manifest: nvidia-smi logs carry no label or world size.
const Run& read_run_with(const ScratchDir& dir, const std::string& rel, const std::string& log, Study& keep) {
  dir.write("run/scalelens.json", R"({"label": "ddp", "world_size": 2})");
  dir.write("run/" + rel, log);
  keep = read_study(dir);
  const scalelens::Run* run = run_labelled(keep, "ddp");
  if (!run) throw std::runtime_error("run not found");
  return *run;
}

TEST(NvSmiReader, NvSmi_UnitsInValues_AreConvertedToModelUnits) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "nodes/gpu017/nvsmi.csv",
                                  "timestamp, index, name, uuid, utilization.gpu [%], utilization.memory [%], "
                                  "memory.used [MiB], power.draw [W], clocks.current.sm [MHz], temperature.gpu\n"
                                  "2024/01/02 03:04:05.678, 0, NVIDIA A100-SXM4-80GB, GPU-aaaa, 84 %, 40 %, 41391 MiB, "
                                  "535.56 W, 1410 MHz, 65\n"
                                  "2024/01/02 03:04:05.678, 1, NVIDIA A100-SXM4-80GB, GPU-bbbb, 0 %, 0 %, 4 MiB, 61.2 W, "
                                  "210 MHz, 33\n",
                                  study);
  ASSERT_EQ(run.gpus.size(), 2u);
  const auto& g = run.gpus[0];
  EXPECT_EQ(g.node, "gpu017");
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.uuid, "GPU-aaaa");
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_FALSE(g.nominal_timestamps);
  ASSERT_EQ(g.samples.size(), 1u);
  const auto& s = g.samples[0];
  EXPECT_EQ(s.t_ns, kT0);
  EXPECT_FLOAT_EQ(s.util_pct, 84.0f);
  EXPECT_FLOAT_EQ(s.mem_util_pct, 40.0f);
  EXPECT_FLOAT_EQ(s.mem_used_bytes, static_cast<float>(41391 * kMiB));  // 43,402,395,648 bytes
  EXPECT_FLOAT_EQ(s.power_w, 535.56f);
  EXPECT_FLOAT_EQ(s.sm_clock_mhz, 1410.0f);
  EXPECT_FLOAT_EQ(s.temp_c, 65.0f);
  EXPECT_TRUE(std::isnan(s.energy_mj));
  EXPECT_EQ(run.gpus[1].index, 1);
  EXPECT_FLOAT_EQ(run.gpus[1].samples[0].mem_used_bytes, static_cast<float>(4 * kMiB));
  EXPECT_EQ(diagnostic(study, "bad-lines"), nullptr);
}

// memory.used beyond any GPU (model/limits.hpp: 16 TiB) is left out with the file and line named;
// exactly 16 TiB is still a reading, and the run's peak memory comes from the plausible values.
TEST(NvSmiReader, NvSmi_MemoryUsedBeyond16TiB_IsLeftOutAndNamed) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "nodes/gpu017/nvsmi.csv",
                                  "timestamp, index, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W]\n"
                                  "2024/01/02 03:04:05.678, 0, GPU-aaaa, 84 %, 41391 MiB, 300 W\n"
                                  "2024/01/02 03:04:06.678, 0, GPU-aaaa, 85 %, 20971520 MiB, 301 W\n"
                                  "2024/01/02 03:04:07.678, 0, GPU-aaaa, 86 %, 16777216 MiB, 302 W\n",
                                  study);
  ASSERT_EQ(run.gpus.size(), 1u);
  const auto& samples = run.gpus[0].samples;
  ASSERT_EQ(samples.size(), 3u);  // the line stays: only its memory value is left out
  EXPECT_FLOAT_EQ(samples[0].mem_used_bytes, static_cast<float>(41391 * kMiB));
  EXPECT_TRUE(std::isnan(samples[1].mem_used_bytes));
  EXPECT_FLOAT_EQ(samples[1].power_w, 301.0f);
  EXPECT_FLOAT_EQ(samples[2].mem_used_bytes, static_cast<float>(16.0 * (1ull << 40)));
  const Diagnostic* bad = diagnostic(study, "implausible-value");
  ASSERT_NE(bad, nullptr);
  EXPECT_NE(bad->path.find("nodes/gpu017/nvsmi.csv"), std::string::npos) << bad->path;
  EXPECT_EQ(bad->line, 3);
  EXPECT_NE(bad->message.find("'20971520 MiB' in column 'memory.used [MiB]' is outside 0…16 TiB"), std::string::npos)
      << bad->message;
  auto summary = analyze(study, {});
  ASSERT_EQ(summary.runs.size(), 1u);
  ASSERT_TRUE(summary.runs[0].peak_gpu_memory_bytes);
  EXPECT_DOUBLE_EQ(*summary.runs[0].peak_gpu_memory_bytes, static_cast<double>(static_cast<float>(16.0 * (1ull << 40))));
}

TEST(NvSmiReader, NvSmi_NoUnitsInValues_UseTheHeaderUnits) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "gpu.log",
                                  "timestamp, index, utilization.gpu [%], memory.used [MiB], power.draw [W]\n"
                                  "2024/01/02 03:04:05.678, 0, 84, 41391, 535.56\n"
                                  "2024/01/02 03:04:06.678, 0, 85, 41392, 536.00\n",
                                  study);
  ASSERT_EQ(run.gpus.size(), 1u);
  const auto& s = run.gpus[0].samples;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].t_ns, kT0 + 1'000'000'000);
  EXPECT_FLOAT_EQ(s[0].mem_used_bytes, static_cast<float>(41391 * kMiB));
  EXPECT_FLOAT_EQ(s[1].power_w, 536.0f);
  EXPECT_FLOAT_EQ(s[1].util_pct, 85.0f);
  // Not queried, so missing.
  EXPECT_TRUE(std::isnan(s[0].temp_c));
  // No nodes/<host>/ in the path: the node is the file's folder.
  EXPECT_EQ(run.gpus[0].node, "run");
}

TEST(NvSmiReader, NvSmi_WithoutIndexColumn_RowsSharingATimestampAreGpusInOrder) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv",
                                  "timestamp, utilization.gpu [%], power.draw [W]\n"
                                  "2024/01/02 03:04:05.678, 10 %, 100 W\n"
                                  "2024/01/02 03:04:05.678, 20 %, 200 W\n"
                                  "2024/01/02 03:04:05.678, 30 %, 300 W\n"
                                  "2024/01/02 03:04:06.678, 11 %, 101 W\n"
                                  "2024/01/02 03:04:06.678, 21 %, 201 W\n"
                                  "2024/01/02 03:04:06.678, 31 %, 301 W\n",
                                  study);
  ASSERT_EQ(run.gpus.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& g = run.gpus[i];
    EXPECT_EQ(g.index, i);
    ASSERT_EQ(g.samples.size(), 2u);
    EXPECT_FLOAT_EQ(g.samples[0].power_w, 100.0f * (i + 1));
    EXPECT_FLOAT_EQ(g.samples[1].power_w, 100.0f * (i + 1) + 1);
    EXPECT_EQ(g.samples[1].t_ns - g.samples[0].t_ns, 1'000'000'000);
  }
}

TEST(NvSmiReader, NvSmi_NotAvailableFields_AreMissingNotErrors) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv",
                                  "timestamp, index, utilization.gpu [%], memory.used [MiB], power.draw [W], "
                                  "clocks.sm [MHz]\n"
                                  "2024/01/02 03:04:05.678, 0, [N/A], 100 MiB, [Not Supported], N/A\n",
                                  study);
  ASSERT_EQ(run.gpus.size(), 1u);
  const auto& s = run.gpus[0].samples.at(0);
  EXPECT_TRUE(std::isnan(s.util_pct));
  EXPECT_TRUE(std::isnan(s.power_w));
  EXPECT_TRUE(std::isnan(s.sm_clock_mhz));
  EXPECT_FLOAT_EQ(s.mem_used_bytes, static_cast<float>(100 * kMiB));
  EXPECT_EQ(diagnostic(study, "bad-lines"), nullptr);
}

TEST(NvSmiReader, NvSmi_SeveralPowerQueries_TheAverageIsUsed) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "smi.csv",
                                  "timestamp, index, power.draw.instant [W], power.draw.average [W]\n"
                                  "2024/01/02 03:04:05.678, 0, 612.00 W, 498.25 W\n",
                                  study);
  EXPECT_FLOAT_EQ(run.gpus.at(0).samples.at(0).power_w, 498.25f);
}

TEST(NvSmiReader, NvSmi_BadLines_OneWarningNamesFileAndFirstLine_RestIsRead) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv",
                                  "timestamp, index, utilization.gpu [%], power.draw [W]\n"
                                  "2024/01/02 03:04:05.678, 0, 50 %, 100 W\n"
                                  "2024/01/02 03:04:06.678, 0, 51 %\n"        // line 3: a field short
                                  "2024/01/02 03:04:07.678, 0, NaN, 100 W\n"  // line 4: NaN
                                  "2024/01/02 03:04:08.678, 0, 52 %, 12 parsecs\n"  // line 5: unknown unit
                                  "2024/01/02 03:04:09.678, 0, 53 %, 103 W\n"
                                  "2024/01/02 03:04:10.678, 0, 54 %, 10",  // line 7: cut off
                                  study);
  ASSERT_EQ(run.gpus.size(), 1u);
  ASSERT_EQ(run.gpus[0].samples.size(), 2u);
  EXPECT_FLOAT_EQ(run.gpus[0].samples[1].power_w, 103.0f);
  const auto* d = diagnostic(study, "bad-lines");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->path, (dir / "run/nodes/n1/smi.csv").string());
  EXPECT_EQ(d->line, 3);
  EXPECT_NE(d->message.find("4 lines"), std::string::npos) << d->message;
}

// nvidia-smi on a GPU whose infoROM is corrupt prints "WARNING: infoROM is corrupted at gpu
// 0000:07:00.0" (its wording in NVIDIA/gpu-operator#20 and pytorch#87464) before its CSV, and a log
// redirected with 2>&1 holds it as its first line: the file was not recognized, and the run had
// no GPU figures, unsaid.
TEST(NvSmiReader, NvSmi_WarningLineBeforeTheHeader_IsSaidAndTheSamplesRead) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "nodes/n1/nvsmi.log",
                                  "WARNING: infoROM is corrupted at gpu 0000:07:00.0\n"
                                  "timestamp, index, name, utilization.gpu [%], power.draw [W]\n"
                                  "2024/01/02 03:04:05.678, 0, NVIDIA A100-SXM4-80GB, 95 %, 400.00 W\n"
                                  "2024/01/02 03:04:06.678, 0, NVIDIA A100-SXM4-80GB, 90 %, 410.00 W\n"
                                  "WARNING: infoROM is corrupted at gpu 0000:07:00.0\n"  // line 5: a logger restarted
                                  "2024/01/02 03:04:07.678, 0, NVIDIA A100-SXM4-80GB, 85 %, 420.00 W\n",
                                  study);
  ASSERT_EQ(run.gpus.size(), 1u);
  const auto& s = run.gpus[0].samples;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].t_ns, kT0);
  EXPECT_FLOAT_EQ(s[0].power_w, 400.0f);
  EXPECT_FLOAT_EQ(s[2].util_pct, 85.0f);
  EXPECT_EQ(diagnostic(study, "bad-lines"), nullptr);
  std::vector<const Diagnostic*> said;
  for (const auto& d : study.diagnostics)
    if (d.code == "nvsmi-message") said.push_back(&d);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0]->path, (dir / "run/nodes/n1/nvsmi.log").string());
  EXPECT_EQ(said[0]->line, 1);
  EXPECT_NE(said[0]->message.find("'WARNING: infoROM is corrupted at gpu 0000:07:00.0' at line 1"), std::string::npos)
      << said[0]->message;
  EXPECT_EQ(said[1]->line, 5);
}

// A GPU fallen off the bus mid-log: nvidia-smi prints "Unable to determine the device handle for
// GPU0000:0B:00.0: Unknown Error" in place of its rows (wording from NVIDIA/open-gpu-kernel-modules#387
// and nvidia-docker#1553). It was a bad line; it is nvidia-smi's own message, said as such.
TEST(NvSmiReader, NvSmi_LostGpuMessageAmongTheRows_IsSaidAsNvidiaSmisOwn) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "nodes/n1/nvsmi.log",
                                  "timestamp, index, name, utilization.gpu [%], power.draw [W]\n"
                                  "2024/01/02 03:04:05.678, 0, NVIDIA A100-SXM4-80GB, 95 %, 400.00 W\n"
                                  "Unable to determine the device handle for GPU0000:0B:00.0: Unknown Error\n"
                                  "2024/01/02 03:04:06.678, 0, NVIDIA A100-SXM4-80GB, 90 %, 410.00 W\n",
                                  study);
  ASSERT_EQ(run.gpus.size(), 1u);
  EXPECT_EQ(run.gpus[0].samples.size(), 2u);
  EXPECT_EQ(diagnostic(study, "bad-lines"), nullptr);
  const auto* said = diagnostic(study, "nvsmi-message");
  ASSERT_NE(said, nullptr);
  EXPECT_EQ(said->line, 3);
  EXPECT_NE(said->message.find("'Unable to determine the device handle for GPU0000:0B:00.0: Unknown Error' at line 3"),
            std::string::npos)
      << said->message;
}

// nvidia-smi's numbers with a decimal comma ("87,50 W", as a comma-decimal locale prints them):
// the comma splits the value into two CSV fields. Each such line is left out, never read as
// another number, and the likely cause and its remedy are said (it was only "6 fields where the
// header has 5").
TEST(NvSmiReader, NvSmi_DecimalComma_IsLeftOutAndTheLocaleNamed) {
  for (const std::string units : {"", ",nounits"}) {
    ScratchDir dir;
    Study study;
    const std::string w = units.empty() ? " W" : "";
    const std::string pct = units.empty() ? " %" : "";
    const auto& run = read_run_with(dir, "nodes/n1/nvsmi.log",
                  "timestamp, index, name, utilization.gpu [%], power.draw [W]\n"
                  "2024/01/02 03:04:05.678, 0, NVIDIA A100-SXM4-80GB, 95" + pct + ", 87,50" + w + "\n"
                  "2024/01/02 03:04:06.678, 0, NVIDIA A100-SXM4-80GB, 95" + pct + ", 88,25" + w + "\n",
                  study);
    for (const auto& g : run.gpus) EXPECT_TRUE(g.samples.empty()) << units;
    EXPECT_EQ(diagnostic(study, "bad-lines"), nullptr) << units;
    const auto* d = diagnostic(study, "nvsmi-decimal-comma");
    ASSERT_NE(d, nullptr) << units;
    EXPECT_EQ(d->path, (dir / "run/nodes/n1/nvsmi.log").string());
    EXPECT_EQ(d->line, 2);
    EXPECT_NE(d->message.find("2 lines with a decimal comma ('87,50' at line 2)"), std::string::npos) << d->message;
    EXPECT_NE(d->message.find("locale"), std::string::npos) << d->message;
    EXPECT_NE(d->message.find("LC_ALL=C nvidia-smi"), std::string::npos) << d->message;
  }
}

TEST(NvSmiReader, NvSmi_TimeGoingBackwards_IsWarnedAndSamplesAreSorted) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "smi.csv",
                                  "timestamp, index, power.draw [W]\n"
                                  "2024/01/02 03:04:07.000, 0, 3 W\n"
                                  "2024/01/02 03:04:05.000, 0, 1 W\n"  // line 3 jumps back
                                  "2024/01/02 03:04:06.000, 0, 2 W\n",
                                  study);
  const auto& s = run.gpus.at(0).samples;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_FLOAT_EQ(s[0].power_w, 1.0f);
  EXPECT_FLOAT_EQ(s[2].power_w, 3.0f);
  const auto* d = diagnostic(study, "time-goes-backwards");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->line, 3);
}

// A log appended after one clock step back (2 GPUs, 1 s samples, 3 s back): every later sample is
// stamped before the latest one seen, but the clock stepped once. "go backwards 6 times" counted
// the samples; one step is said as one.
TEST(NvSmiReader, NvSmi_OneClockStepBack_IsCountedOnce) {
  ScratchDir dir;
  Study study;
  std::string log = "timestamp, index, power.draw [W]\n";
  for (int s : {10, 11, 12, 13, 9, 10, 11})
    for (int g = 0; g < 2; ++g) log += fmt::format("2024/01/02 03:04:{:02d}.{:03d}, {}, 300.00 W\n", s, 3 * g, g);
  const auto& run = read_run_with(dir, "smi.csv", log, study);
  ASSERT_EQ(run.gpus.size(), 2u);
  const auto* d = diagnostic(study, "time-goes-backwards");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->line, 10);  // the header, 4 samples of 2 rows, then GPU 0 at :09
  EXPECT_NE(d->message.find("go backwards 1 time "), std::string::npos) << d->message;
}

// The clock stepped back 2 s while nvidia-smi sampled (1 s samples): the stamps after the step
// land inside the time already logged. Sorted, they interleaved with those before it, the same
// seconds twice and the last two lost; they are put back on the clock the log began with, the
// step read as one sampling interval.
TEST(NvSmiReader, NvSmi_ClockStepBackIntoLoggedTime_IsPutBackOnTheFirstClock) {
  ScratchDir dir;
  Study study;
  std::string log = "timestamp, index, power.draw [W]\n";
  for (int s : {10, 11, 12, 13, 14, 13, 14, 15}) log += fmt::format("2024/01/02 03:04:{:02d}.000, 0, 300.00 W\n", s);
  const auto& run = read_run_with(dir, "smi.csv", log, study);
  ASSERT_EQ(run.gpus.size(), 1u);
  const auto& samples = run.gpus[0].samples;
  ASSERT_EQ(samples.size(), 8u);
  for (std::size_t k = 0; k < samples.size(); ++k)
    EXPECT_EQ(samples[k].t_ns - samples[0].t_ns, static_cast<std::int64_t>(k) * 1'000'000'000) << "sample " << k;
  const auto* d = diagnostic(study, "time-goes-backwards");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->line, 7);
}

// Two nvidia-smi logs of the same GPU, the older appended after the newer (`cat new.csv old.csv`, or
// a second `nvidia-smi ... >> log`): the second prints its header again, and its stamps go back into
// the time the first logged (1 s samples, :14 to :18 inside :10 to :20). Read as a clock step, they
// were moved forward by 7 s, to :21 to :25, after the log's end: samples of time no logger saw. Told
// by the header printed again, they are put in time order as written, and said.
TEST(NvSmiReader, NvSmi_AnOlderLogAppendedOverlapping_IsNotMovedAsAClockStep) {
  ScratchDir dir;
  Study study;
  const std::string header = "timestamp, index, uuid, power.draw [W]\n";
  std::string log = header;
  std::set<std::int64_t> written;
  auto sample = [&](int s, double watts) {
    log += fmt::format("2024/01/02 03:04:{:02d}.000, 0, GPU-aaaa, {:.2f} W\n", s, watts);
    written.insert(kT0 - 678'000'000 + (s - 5) * 1'000'000'000LL);
  };
  for (int s = 10; s <= 20; ++s) sample(s, 300);
  log += header;  // line 13
  for (int s = 14; s <= 18; ++s) sample(s, 301);
  const auto& run = read_run_with(dir, "nodes/n1/nvsmi.csv", log, study);
  ASSERT_EQ(run.gpus.size(), 1u);
  const auto& samples = run.gpus[0].samples;
  ASSERT_EQ(samples.size(), 16u);
  std::set<std::int64_t> read;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    read.insert(samples[k].t_ns);
    if (k > 0) EXPECT_GE(samples[k].t_ns, samples[k - 1].t_ns) << "sample " << k;
  }
  EXPECT_EQ(read, written) << "the times as written, none moved";
  const auto* d = diagnostic(study, "time-goes-backwards");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->line, 14);
  EXPECT_NE(d->message.find("a log appended at line 13"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("not a clock step"), std::string::npos) << d->message;
  EXPECT_EQ(d->message.find("moved forward"), std::string::npos) << d->message;
}

TEST(NvSmiReader, NvSmi_NoHeader_IsRecognizedAndWarnedRatherThanGuessed) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "smi.csv",
                                  "2024/01/02 03:04:05.678, 0, 84 %, 535.56 W\n"
                                  "2024/01/02 03:04:05.678, 1, 80 %, 530.00 W\n",
                                  study);
  EXPECT_TRUE(run.gpus.empty());
  const auto* d = diagnostic(study, "nvsmi-no-header");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->path, (dir / "run/smi.csv").string());
  EXPECT_EQ(d->line, 1);
  // Says why it is left out and how to supply the header (the run cannot be recorded again).
  EXPECT_NE(d->message.find("left out"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("--format=csv' prints it first"), std::string::npos) << d->message;
}

TEST(NvSmiReader, NvSmi_OtherCsv_IsNotRecognized) {
  ScratchDir dir;
  dir.write("run/scalelens.json", R"({"label": "ddp", "world_size": 2})");
  dir.write("run/other.csv", "time,power\n1,2\n");
  dir.write("run/notes.txt", "2024/01/02 03:04:05 the job started\n");
  auto study = read_study(dir);
  EXPECT_EQ(study.files_read, 1u);  // the manifest only
}

// --- Logs without an index column: one row per GPU, each stamped when its GPU was read ----------
//
// The shape nvidia-smi -l/-lms writes (see nvidia-smi's man page and logs published with
// monitoring scripts): the GPUs of a sample are read one after another, a few ms apart, then the
// logger sleeps for the interval, e.g.
//   2024/06/01 11:27:05.177, NVIDIA A100-SXM4-40GB, ...
//   2024/06/01 11:27:05.188, NVIDIA A100-SXM4-40GB, ...
// The logs below are built that way, with deterministic jitter, and their figures computed by
// hand from the same timing.

// 2024/05/14 10:21:33.123 UTC: 1715682093 s since 1970, + 123 ms. The first row of every log below.
constexpr std::int64_t kLogStartMs = 1'715'682'093'123;

// nvidia-smi's timestamp text of `ms` after kLogStartMs (the logs stay within that day).
std::string smi_stamp(std::int64_t ms) {
  const std::int64_t of_day = (kLogStartMs + ms) % 86'400'000;
  char buf[32];
  std::snprintf(buf, sizeof buf, "2024/05/14 %02lld:%02lld:%02lld.%03lld", static_cast<long long>(of_day / 3'600'000),
                static_cast<long long>(of_day / 60'000 % 60), static_cast<long long>(of_day / 1000 % 60),
                static_cast<long long>(of_day % 1000));
  return buf;
}

struct SmiLog {
  int gpus = 1;
  int samples = 10;
  int interval_ms = 1000;  // -l 1 / -lms N: the sleep between samples
  int read_ms = 4;         // time to read one GPU
  bool units = true;       // false: --format=csv,nounits
};

// When (ms after the first row) nvidia-smi stamped GPU `gpu` in sample `k`: the GPUs are read one
// after another, then it sleeps; jitter of 0-10 ms per sample and 0-2 ms per row.
std::int64_t row_ms(const SmiLog& l, int k, int gpu) {
  return std::int64_t{k} * (l.interval_ms + l.gpus * l.read_ms) + (k * 37) % 11 + gpu * l.read_ms + (gpu * k) % 3;
}
// Each GPU holds one utilization and one power draw: the figures then follow by hand.
int util_of(int gpu) { return 90 - 7 * gpu; }
double power_of(int gpu) { return 300.25 + 41.5 * gpu; }

std::string smi_row(const SmiLog& l, std::int64_t ms, int gpu) {
  char buf[160];
  if (l.units)
    std::snprintf(buf, sizeof buf, "%s, NVIDIA A100-SXM4-80GB, %d %%, %.2f W\n", smi_stamp(ms).c_str(), util_of(gpu),
                  power_of(gpu));
  else
    std::snprintf(buf, sizeof buf, "%s, NVIDIA A100-SXM4-80GB, %d, %.2f\n", smi_stamp(ms).c_str(), util_of(gpu),
                  power_of(gpu));
  return buf;
}

// nvidia-smi --query-gpu=timestamp,name,utilization.gpu,power.draw --format=csv[,nounits] -l/-lms
// The header keeps its [unit] with nounits too.
constexpr const char* kSmiHeader = "timestamp, name, utilization.gpu [%], power.draw [W]\n";

std::string smi_log(const SmiLog& l) {
  std::string text = kSmiHeader;
  for (int k = 0; k < l.samples; ++k)
    for (int g = 0; g < l.gpus; ++g) text += smi_row(l, row_ms(l, k, g), g);
  return text;
}

std::vector<const Diagnostic*> diagnostics_of(const Study& s, const std::string& code) {
  std::vector<const Diagnostic*> out;
  for (const auto& d : s.diagnostics)
    if (d.code == code) out.push_back(&d);
  return out;
}

RunSummary summarize(const Run& run, std::vector<Diagnostic>& warnings) {
  return summarize_run(run, AnalysisOptions{}, warnings);
}

// Every GPU's series holds its own readings only, at its own row times, and the run's figures
// are the hand computation: utilization = mean over GPUs of util_of(g); energy = Σ_g power_of(g)
// × (its last row − its first row).
void expect_demultiplexed(const SmiLog& l, const Run& run) {
  ASSERT_EQ(run.gpus.size(), static_cast<std::size_t>(l.gpus));
  double want_util = 0, want_energy = 0;
  for (int g = 0; g < l.gpus; ++g) {
    const auto& s = run.gpus[g];
    EXPECT_EQ(s.index, g);
    EXPECT_EQ(s.name, "NVIDIA A100-SXM4-80GB");
    ASSERT_EQ(s.samples.size(), static_cast<std::size_t>(l.samples)) << "GPU " << g;
    for (int k = 0; k < l.samples; ++k) {
      EXPECT_EQ(s.samples[k].t_ns, (kLogStartMs + row_ms(l, k, g)) * 1'000'000) << "GPU " << g << " sample " << k;
      EXPECT_FLOAT_EQ(s.samples[k].util_pct, static_cast<float>(util_of(g)));
      EXPECT_FLOAT_EQ(s.samples[k].power_w, static_cast<float>(power_of(g)));
    }
    want_util += util_of(g) / static_cast<double>(l.gpus);
    want_energy += power_of(g) * static_cast<double>(row_ms(l, l.samples - 1, g) - row_ms(l, 0, g)) / 1000.0;
  }
  std::vector<Diagnostic> warnings;
  const auto r = summarize(run, warnings);
  EXPECT_EQ(r.gpus, static_cast<std::size_t>(l.gpus));
  ASSERT_TRUE(r.gpu_util_pct.has_value());
  EXPECT_NEAR(r.gpu_util_pct->mean, want_util, 1e-4);
  ASSERT_TRUE(r.energy_j.has_value());
  // power.draw is stored as float: 1e-6 relative.
  EXPECT_NEAR(*r.energy_j, want_energy, want_energy * 1e-6);
}

TEST(NvSmiReader, NvSmi_NoIndex_TwoGpus_RowsAFewMsApart_AreSplitIntoSamples) {
  ScratchDir dir;
  Study study;
  const SmiLog l{.gpus = 2, .samples = 6, .interval_ms = 1000, .read_ms = 4};
  const auto& run = read_run_with(dir, "nodes/gpu017/smi.csv", smi_log(l), study);
  expect_demultiplexed(l, run);
  // By hand: sample k starts at k × 1008 ms + (37k mod 11) ms; GPU 1 is read 4 + (k mod 3) ms later.
  // GPU 0: rows at 0 and 5·1008 + 9 = 5049 ms -> 300.25 W × 5.049 s = 1515.96225 J.
  // GPU 1: rows at 4 and 5049 + 4 + 2 = 5055 ms -> 341.75 W × 5.051 s = 1726.17925 J.
  std::vector<Diagnostic> warnings;
  const auto r = summarize(run, warnings);
  EXPECT_NEAR(*r.energy_j, 1515.96225 + 1726.17925, 1e-2);
  EXPECT_NEAR(r.gpu_util_pct->mean, (90 + 83) / 2.0, 1e-6);
  const auto notes = diagnostics_of(study, "nvsmi-gpus-by-position");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0]->severity, Severity::note);
  EXPECT_EQ(notes[0]->path, (dir / "run/nodes/gpu017/smi.csv").string());
  EXPECT_NE(notes[0]->message.find("order within each sample"), std::string::npos) << notes[0]->message;
  EXPECT_NE(notes[0]->message.find("2 GPUs"), std::string::npos) << notes[0]->message;
  EXPECT_EQ(diagnostic(study, "bad-lines"), nullptr);
  EXPECT_EQ(diagnostic(study, "time-goes-backwards"), nullptr);
}

TEST(NvSmiReader, NvSmi_NoIndex_OneGpu_EvenlySpacedRows_AreOneGpu) {
  ScratchDir dir;
  Study study;
  const SmiLog l{.gpus = 1, .samples = 12, .interval_ms = 1000, .read_ms = 5};
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv", smi_log(l), study);
  expect_demultiplexed(l, run);
  // By hand: last row at 11 × 1005 + (407 mod 11 = 0) = 11055 ms: 300.25 W × 11.055 s.
  std::vector<Diagnostic> warnings;
  EXPECT_NEAR(*summarize(run, warnings).energy_j, 300.25 * 11.055, 1e-3);
  const auto* note = diagnostic(study, "nvsmi-gpus-by-position");
  ASSERT_NE(note, nullptr);
  // A sentence (it read "the GPUs were told apart its rows are evenly spaced").
  EXPECT_EQ(note->message.rfind("no index, uuid or pci.bus_id column: its rows are evenly spaced in time, so they are read as "
                                "the samples of one GPU; 1 GPU",
                                0),
            0u)
      << note->message;
}

TEST(NvSmiReader, NvSmi_NoIndex_FourGpus_NoUnits_Lms100) {
  ScratchDir dir;
  Study study;
  const SmiLog l{.gpus = 4, .samples = 40, .interval_ms = 100, .read_ms = 3, .units = false};
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv", smi_log(l), study);
  expect_demultiplexed(l, run);
  EXPECT_NE(diagnostic(study, "nvsmi-gpus-by-position"), nullptr);
}

TEST(NvSmiReader, NvSmi_NoIndex_EightGpus_Lms100_SlowReads) {
  // 8 GPUs read 9 ms apart under -lms 100: a sample takes 63-65 ms of the 172 ms between samples.
  ScratchDir dir;
  Study study;
  const SmiLog l{.gpus = 8, .samples = 30, .interval_ms = 100, .read_ms = 9};
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv", smi_log(l), study);
  expect_demultiplexed(l, run);
  const auto* note = diagnostic(study, "nvsmi-gpus-by-position");
  ASSERT_NE(note, nullptr);
  EXPECT_NE(note->message.find("8 GPUs"), std::string::npos) << note->message;
}

TEST(NvSmiReader, NvSmi_NoIndex_EightGpus_OneSlowerStepInEachSample_IsNotASampleBoundary) {
  // GPUs 4-7 sit behind another switch: reading GPU 4 takes 20 ms, the others 2 ms. -lms 100.
  // Rows of sample k at k × 140 ms + (37k mod 11) ms + {0, 2, 4, 6, 26, 28, 30, 32} ms.
  ScratchDir dir;
  Study study;
  const SmiLog l{.gpus = 8};
  const int offset_ms[8] = {0, 2, 4, 6, 26, 28, 30, 32};
  std::string text = kSmiHeader;
  for (int k = 0; k < 20; ++k)
    for (int g = 0; g < 8; ++g) text += smi_row(l, k * 140 + (k * 37) % 11 + offset_ms[g], g);
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv", text, study);
  ASSERT_EQ(run.gpus.size(), 8u);
  for (int g = 0; g < 8; ++g) {
    ASSERT_EQ(run.gpus[g].samples.size(), 20u);
    EXPECT_FLOAT_EQ(run.gpus[g].samples[19].power_w, static_cast<float>(power_of(g)));
    // 19 × 140 + (703 mod 11 = 10) ms after its first row.
    EXPECT_EQ(run.gpus[g].samples[19].t_ns - run.gpus[g].samples[0].t_ns, (19 * 140 + 10) * 1'000'000LL);
  }
}

TEST(NvSmiReader, NvSmi_NoIndex_ReadsTooSlowForTheGaps_TheRunsGpuCountSplitsThem) {
  // 60 ms per GPU is too slow to take rows for one sample from the gaps alone; with gpus_per_node
  // 2 in scalelens.json, runs of two rows with a longer pause after them are the samples.
  ScratchDir dir;
  const SmiLog l{.gpus = 2, .samples = 10, .interval_ms = 1000, .read_ms = 60};
  dir.write("run/scalelens.json", R"({"label": "ddp", "world_size": 4, "nodes": 2, "gpus_per_node": 2})");
  dir.write("run/nodes/n1/smi.csv", smi_log(l));
  const auto study = read_study(dir);
  const auto* run = run_labelled(study, "ddp");
  ASSERT_NE(run, nullptr);
  expect_demultiplexed(l, *run);
  const auto* note = diagnostic(study, "nvsmi-gpus-by-position");
  ASSERT_NE(note, nullptr);
  EXPECT_NE(note->message.find("gpus_per_node"), std::string::npos) << note->message;
}

TEST(NvSmiReader, NvSmi_NoIndex_RunSaysSeveralGpus_RowsWithoutSamples_AreLeftOutNotGuessed) {
  // One GPU's log (nvidia-smi -i 0) in a run of 4 GPUs per node: nothing tells its rows apart.
  ScratchDir dir;
  dir.write("run/scalelens.json", R"({"label": "ddp", "world_size": 4, "gpus_per_node": 4})");
  dir.write("run/nodes/n1/smi.csv", smi_log(SmiLog{.gpus = 1, .samples = 10}));
  const auto study = read_study(dir);
  const auto* run = run_labelled(study, "ddp");
  ASSERT_NE(run, nullptr);
  EXPECT_TRUE(run->gpus.empty());
  const auto* d = diagnostic(study, "nvsmi-gpus-unknown");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->path, (dir / "run/nodes/n1/smi.csv").string());
}

TEST(NvSmiReader, NvSmi_NoIndex_AGpuFellOff_ThoseSamplesAreWarnedAndLeftOut) {
  // 4 GPUs; from sample 6 on, GPU 2 is gone: those samples have 3 rows, and which GPU is missing
  // cannot be told from the rows themselves.
  ScratchDir dir;
  Study study;
  const SmiLog l{.gpus = 4, .samples = 10, .interval_ms = 1000, .read_ms = 4};
  std::string text = kSmiHeader;
  std::int64_t first_short_line = 0, line = 1;
  for (int k = 0; k < l.samples; ++k)
    for (int g = 0; g < l.gpus; ++g) {
      if (k >= 6 && g == 2) continue;
      ++line;
      if (k == 6 && g == 0) first_short_line = line;
      text += smi_row(l, row_ms(l, k, g), g);
    }
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv", text, study);
  SmiLog kept = l;
  kept.samples = 6;
  expect_demultiplexed(kept, run);
  const auto* d = diagnostic(study, "nvsmi-uneven-samples");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->severity, Severity::warning);
  EXPECT_EQ(first_short_line, 2 + 6 * 4);
  EXPECT_EQ(d->line, first_short_line);
  EXPECT_NE(d->message.find("4 of 10 samples"), std::string::npos) << d->message;
}

TEST(NvSmiReader, NvSmi_NoIndex_LastSampleCutShort_IsLeftOutWithANote) {
  ScratchDir dir;
  Study study;
  const SmiLog l{.gpus = 2, .samples = 8, .interval_ms = 1000, .read_ms = 4};
  // The logger was stopped after reading GPU 0 of a ninth sample.
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv", smi_log(l) + smi_row(l, row_ms(l, 8, 0), 0), study);
  expect_demultiplexed(l, run);
  EXPECT_EQ(diagnostic(study, "nvsmi-uneven-samples"), nullptr);
  const auto* note = diagnostic(study, "nvsmi-gpus-by-position");
  ASSERT_NE(note, nullptr);
  EXPECT_NE(note->message.find("the last sample, 1 of 2 rows"), std::string::npos) << note->message;
}

TEST(NvSmiReader, NvSmi_LoggerRestartedIntoTheSameFile_RepeatedHeaderIsSkipped) {
  ScratchDir dir;
  Study study;
  const SmiLog l{.gpus = 2, .samples = 4, .interval_ms = 1000, .read_ms = 4};
  std::string text = smi_log(l);
  // A second nvidia-smi, an hour later, appended with >>: it prints its header again.
  std::string second = kSmiHeader;
  for (int k = 0; k < 4; ++k)
    for (int g = 0; g < 2; ++g) second += smi_row(l, 3'600'000 + row_ms(l, k, g), g);
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv", text + second, study);
  EXPECT_EQ(diagnostic(study, "bad-lines"), nullptr);
  ASSERT_EQ(run.gpus.size(), 2u);
  EXPECT_EQ(run.gpus[1].samples.size(), 8u);
  EXPECT_FLOAT_EQ(run.gpus[1].samples[7].power_w, static_cast<float>(power_of(1)));
}

TEST(NvSmiReader, NvSmi_BusIdWithoutIndex_IdentifiesTheGpus) {
  // The shape of e.g. --query-gpu=timestamp,name,pci.bus_id,utilization.gpu,power.draw: the bus id
  // says which GPU a row is, whatever its position.
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv",
                                  "timestamp, name, pci.bus_id, utilization.gpu [%], power.draw [W]\n"
                                  "2024/05/14 10:21:33.123, NVIDIA H200, 00000000:5D:00.0, 6 %, 120.50 W\n"
                                  "2024/05/14 10:21:33.131, NVIDIA H200, 00000000:9B:00.0, 97 %, 650.25 W\n"
                                  "2024/05/14 10:21:34.190, NVIDIA H200, 00000000:5D:00.0, 8 %, 121.50 W\n"
                                  "2024/05/14 10:21:34.199, NVIDIA H200, 00000000:9B:00.0, 95 %, 648.75 W\n",
                                  study);
  ASSERT_EQ(run.gpus.size(), 2u);
  EXPECT_EQ(run.gpus[0].uuid, "00000000:5D:00.0");
  EXPECT_EQ(run.gpus[0].index, 0);
  EXPECT_EQ(run.gpus[1].uuid, "00000000:9B:00.0");
  EXPECT_EQ(run.gpus[1].index, 1);
  ASSERT_EQ(run.gpus[1].samples.size(), 2u);
  EXPECT_FLOAT_EQ(run.gpus[1].samples[1].power_w, 648.75f);
  EXPECT_EQ(run.gpus[1].samples[1].t_ns - run.gpus[1].samples[0].t_ns, 1'068'000'000);
  EXPECT_EQ(diagnostic(study, "nvsmi-gpus-by-position"), nullptr);
  // Energy by hand: trapezoids (120.5 + 121.5)/2 W × 1.067 s + (650.25 + 648.75)/2 W × 1.068 s.
  std::vector<Diagnostic> warnings;
  EXPECT_NEAR(*summarize(run, warnings).energy_j, 121.0 * 1.067 + 649.5 * 1.068, 1e-3);
}

TEST(NvSmiReader, NvSmi_LoggerPaused_TheGapIsLeftOutOfEnergyAndReported) {
  // 2 GPUs sampled every second for 10 s, then nothing for two minutes (the node was drained),
  // then 10 s more: GPU g at k s (k < 10) and 120 + k s (k ≥ 10), plus 5·g ms.
  ScratchDir dir;
  Study study;
  const SmiLog l{.gpus = 2, .interval_ms = 1000};
  std::string text = kSmiHeader;
  for (int k = 0; k < 20; ++k)
    for (int g = 0; g < 2; ++g) text += smi_row(l, (k < 10 ? k : 120 + k) * 1000 + 5 * g, g);
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv", text, study);
  ASSERT_EQ(run.gpus.size(), 2u);
  ASSERT_EQ(run.gpus[0].samples.size(), 20u);
  std::vector<Diagnostic> warnings;
  const auto r = summarize(run, warnings);
  // By hand: each GPU is measured 9 s before the pause and 9 s after it; the 121 s between its
  // 10th and 11th samples are not integrated. (300.25 + 341.75) W × 18 s = 11556 J.
  EXPECT_NEAR(*r.energy_j, (300.25 + 341.75) * 18, 1e-2);
  const Diagnostic* gap = nullptr;
  for (const auto& w : warnings)
    if (w.code == "energy-gaps") gap = &w;
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->severity, Severity::warning);
  EXPECT_NE(gap->message.find("242.0 s"), std::string::npos) << gap->message;  // 2 GPUs × 121 s
  EXPECT_NE(gap->message.find("121.0 s"), std::string::npos) << gap->message;
}

TEST(NvSmiReader, NvSmi_EvenSampling_NoEnergyGapWarning) {
  ScratchDir dir;
  Study study;
  const auto& run = read_run_with(dir, "nodes/n1/smi.csv", smi_log(SmiLog{.gpus = 2, .samples = 30}), study);
  std::vector<Diagnostic> warnings;
  summarize(run, warnings);
  for (const auto& w : warnings) EXPECT_NE(w.code, "energy-gaps") << w.message;
}

}  // namespace
}  // namespace scalelens
