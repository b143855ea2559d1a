// nvidia-smi --query-gpu CSV logs, read through ingest() so recognition by content is tested too.
// The files are written by hand following nvidia-smi's own header names and value formats.
#include <gtest/gtest.h>

#include <algorithm>

#include "ingest/ingest.hpp"
#include "support/test_support.hpp"

namespace scalelens {
namespace {

using testing::ScratchDir;

constexpr double kMiB = 1024.0 * 1024.0;
// 2024/01/02 03:04:05.678 UTC: 2024-01-02 is day 19724 since 1970 (1704153600 s); + 3 h 4 min 5 s.
constexpr std::int64_t kT0 = 1'704'164'645'678'000'000;

Study ingest_dir(const ScratchDir& dir) { return ingest(IngestOptions{{dir.path().string()}, {}, 1, {}}); }

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
  keep = ingest_dir(dir);
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
}

TEST(NvSmiReader, NvSmi_OtherCsv_IsNotRecognized) {
  ScratchDir dir;
  dir.write("run/scalelens.json", R"({"label": "ddp", "world_size": 2})");
  dir.write("run/other.csv", "time,power\n1,2\n");
  dir.write("run/notes.txt", "2024/01/02 03:04:05 the job started\n");
  auto study = ingest_dir(dir);
  EXPECT_EQ(study.files_read, 1u);  // the manifest only
}

}  // namespace
}  // namespace scalelens
