// scalelens run folders through the public ingest(): recognized by content, merged into runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "common/file_io.hpp"
#include "ingest/ingest.hpp"
#include "report/report_html.hpp"
#include "report/summary_writers.hpp"
#include "support/gpu_study_writer.hpp"
#include "support/kineto_writer.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"

using namespace scalelens;
using scalelens::testing::ScratchDir;

namespace {

using scalelens::testing::read_study;

const Diagnostic* find(const std::vector<Diagnostic>& ds, const std::string& code) {
  auto it = std::find_if(ds.begin(), ds.end(), [&](auto& d) { return d.code == code; });
  return it == ds.end() ? nullptr : &*it;
}

void write_run(const ScratchDir& dir, const std::string& name, int p, const std::string& epochs) {
  dir.write(name + "/scalelens.json",
            "{\"schema\": \"scalelens.run/1\", \"run_id\": \"" + name + "\", \"label\": \"ddp\", \"world_size\": " +
                std::to_string(p) + ", \"nodes\": 1, \"start_ns\": 1000000000, \"end_ns\": 21000000000, \"future_field\": [1, 2]}");
  dir.write(name + "/epochs.csv", "rank,epoch,start_ns,end_ns,samples\n" + epochs);
}

}  // namespace

TEST(RunFolder, ManifestEpochsGpuHostAndRanksMakeOneRun) {
  ScratchDir dir;
  write_run(dir, "ddp-2", 2,
            "0,0,1000000000,6000000000,100\n1,0,1000000000,6000000000,100\n"
            "0,1,6000000000,11000000000,100\n1,1,6000000000,12000000000,100\n");
  dir.write("ddp-2/nodes/n01/gpu.csv",
            "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
            "1000000000,0,GPU-a,50,10,1e9,100,,1400,60\n"
            "1000000000,1,GPU-b,60,10,1e9,200,,1400,61\n"
            "21000000000,0,GPU-a,50,10,1e9,100,,1400,60\n"
            "21000000000,1,GPU-b,60,10,1e9,200,,1400,61\n");
  dir.write("ddp-2/nodes/n01/host.csv", "t_ns,cpu_util_pct,mem_used_bytes,cpu_energy_uj\n"
                                        "1000000000,50,1000,0\n21000000000,50,1000,2000000000\n");
  dir.write("ddp-2/ranks/0.json", R"({"schema":"scalelens.rank/1","rank":0,"host":"n01","local_rank":0,"exit_status":0})");
  dir.write("ddp-2/ranks/1.json", R"({"rank":1,"host":"n01"})");
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  const auto& r = study.runs[0];
  EXPECT_EQ(r.label, "ddp");
  EXPECT_EQ(r.run_id, "ddp-2");
  EXPECT_EQ(*r.world_size, 2);
  EXPECT_EQ(r.epochs.size(), 4u);
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].node, "n01");
  EXPECT_EQ(r.ranks.size(), 2u);
  EXPECT_TRUE(study.diagnostics.empty()) << format_location(study.diagnostics[0]);

  auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 1u);
  const auto& c = s.configurations[0];
  EXPECT_DOUBLE_EQ(c.epoch_time_s->mean, 6);                // epoch 1: max(5 s, 6 s)
  EXPECT_DOUBLE_EQ(*c.throughput_samples_per_s, 200.0 / 6);  // 2 ranks × 100 samples
  EXPECT_NEAR(*c.energy_wh, (100 + 200) * 20 / 3600.0, 1e-9);  // 300 W for 20 s
  EXPECT_NEAR(*c.host_energy_wh, 2000.0 / 3600, 1e-9);         // 2e9 µJ
  EXPECT_DOUBLE_EQ(c.gpu_util_pct->min, 50);
  EXPECT_DOUBLE_EQ(c.gpu_util_pct->max, 60);
}

TEST(RunFolder, GpuCsvLinesGiveTheSameSamplesWhicheverWayTheyAreWritten) {
  // gpu.csv lines as the collector writes them take an in-place parser; the same values written
  // with blanks, quotes, exponents or CRLF take the general one. Both must give identical samples.
  const std::string header = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
  std::string plain = header, varied = header;
  // The same columns in another order after the two that name the format, with one we do not read:
  // the in-place parser's general layout.
  std::string reordered = "t_ns,gpu,host_note,temp_c,uuid,power_w,util_pct,mem_util_pct,mem_used_bytes,energy_mj,sm_clock_mhz\n";
  std::mt19937_64 rng(3);
  for (int i = 0; i < 400; ++i) {
    const int gpu = i % 4;
    const std::string t = std::to_string(1700000000000000000LL + (i / 4) * 1000000LL);
    const std::string uuid = "GPU-" + std::to_string(gpu);
    const std::string util = std::to_string(rng() % 101), power = std::to_string(rng() % 700) + "." + std::to_string(rng() % 100);
    const std::string energy = i % 7 == 0 ? "" : std::to_string(rng() % 100000000);
    plain += t + "," + std::to_string(gpu) + "," + uuid + "," + util + ",3,40000000000," + power + "," + energy + ",1410,55\n";
    reordered += t + "," + std::to_string(gpu) + ",n" + std::to_string(i) + ",55," + uuid + "," + power + "," + util + ",3,40000000000," +
                 energy + ",1410\n";
    switch (i % 5) {
      case 0: varied += t + ", " + std::to_string(gpu) + ",\"" + uuid + "\"," + util + ",3,4e10, " + power + "," + energy + ",1410,55\n"; break;
      case 1: varied += t + "," + std::to_string(gpu) + "," + uuid + "," + util + ",3,40000000000," + power + "," + energy + ",1410,55\r\n"; break;
      case 2: varied += "+" + t + "," + std::to_string(gpu) + "," + uuid + " ," + util + ",3.0,40000000000.000," + power + "," + energy + ",1.41e3,55\n"; break;
      default: varied += t + "," + std::to_string(gpu) + "," + uuid + "," + util + ",3,40000000000," + power + "," + energy + ",1410,55\n";
    }
  }
  ScratchDir dir;
  for (const auto& [name, text] : {std::pair{"plain", plain}, std::pair{"varied", varied}, std::pair{"reordered", reordered}}) {
    write_run(dir, name, 4, "0,0,0,1000,1\n");
    dir.write(std::string(name) + "/nodes/h/gpu.csv", text);
  }
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 3u);
  EXPECT_TRUE(study.diagnostics.empty()) << format_location(study.diagnostics[0]);
  const auto& a = study.runs[0].gpus;
  ASSERT_EQ(a.size(), 4u);
  for (std::size_t other : {1u, 2u}) {
    const auto& b = study.runs[other].gpus;
    ASSERT_EQ(b.size(), 4u) << study.runs[other].path;
    for (std::size_t g = 0; g < 4; ++g) {
      EXPECT_EQ(a[g].uuid, b[g].uuid);
      ASSERT_EQ(a[g].samples.size(), 100u);
      ASSERT_EQ(b[g].samples.size(), 100u);
      for (std::size_t i = 0; i < 100; ++i) {
        const auto &x = a[g].samples[i], &y = b[g].samples[i];
        ASSERT_EQ(x.t_ns, y.t_ns);
        ASSERT_EQ(x.util_pct, y.util_pct);
        ASSERT_EQ(x.mem_used_bytes, y.mem_used_bytes);
        ASSERT_EQ(x.power_w, y.power_w);
        ASSERT_EQ(std::isnan(x.energy_mj), std::isnan(y.energy_mj));
        if (!std::isnan(x.energy_mj)) ASSERT_EQ(x.energy_mj, y.energy_mj);
        ASSERT_EQ(x.sm_clock_mhz, y.sm_clock_mhz);
        ASSERT_EQ(x.temp_c, y.temp_c);
      }
    }
  }
}

// A one-GPU run whose gpu.csv (under nodes/h) holds samples at 1000, 2000 and 3000 ns.
void write_run_with_gpu_csv(const ScratchDir& dir, const std::string& name, const std::string& gpu_csv) {
  write_run(dir, name, 1, "0,0,0,1000,1\n");
  dir.write(name + "/nodes/h/gpu.csv", gpu_csv);
}

// The sample at 2000 ns (file line 3) was refused as a bad line in every run, the others filed
// under `uuid`, and one bad-lines warning said so for each run.
void expect_only_line_3_refused(const Study& study, std::size_t runs, const std::string& uuid) {
  ASSERT_EQ(study.runs.size(), runs);
  for (const auto& run : study.runs) {
    ASSERT_EQ(run.gpus.size(), 1u) << run.path;
    EXPECT_EQ(run.gpus[0].uuid, uuid) << run.path;
    ASSERT_EQ(run.gpus[0].samples.size(), 2u) << run.path;
    EXPECT_EQ(run.gpus[0].samples[1].t_ns, 3000) << run.path;
  }
  std::size_t bad_lines = 0;
  for (const auto& d : study.diagnostics)
    if (d.code == "bad-lines") {
      ++bad_lines;
      EXPECT_EQ(d.line, 3) << d.message;
    }
  EXPECT_EQ(bad_lines, runs);
}

TEST(RunFolder, AQuotedUuidHoldingACommaIsNotMatchedOnAnUnquotedLine) {
  // The in-place parser matches a GPU's uuid from an earlier line byte for byte. A uuid that held a
  // comma inside quotes must not match the same bytes unquoted, which are two fields: that line has
  // 11 fields where the header has 10 and is counted bad, not filed with its values shifted.
  ScratchDir dir;
  write_run_with_gpu_csv(dir, "a",
                         "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
                         "1000,0,\"GPU-a,b\",50,1,1,100,1,1,1\n"
                         "2000,0,GPU-a,b,50,1,1,100,1,1,1\n"
                         "3000,0,\"GPU-a,b\",60,1,1,100,1,1,1\n");
  expect_only_line_3_refused(read_study(dir, true), 1, "GPU-a,b");
}

TEST(RunFolder, AGpuCsvLineWithAFieldTooManyIsBadWhateverItsLastColumn) {
  // The last column's field ends at the line end: a comma inside it makes one field too many,
  // for the in-place parser as for the general one, whether that column is read (uuid) or not.
  ScratchDir dir;
  write_run_with_gpu_csv(dir, "a",
                         "t_ns,gpu,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c,uuid\n"
                         "1000,0,50,1,1,100,1,1,1,GPU-a\n"
                         "2000,0,50,1,1,100,1,1,1,GPU-a,b\n"
                         "3000,0,60,1,1,100,1,1,1,GPU-a\n");
  write_run_with_gpu_csv(dir, "b",
                         "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c,note\n"
                         "1000,0,GPU-a,50,1,1,100,1,1,1,ok\n"
                         "2000,0,GPU-a,50,1,1,100,1,1,1,not,ok\n"
                         "3000,0,GPU-a,60,1,1,100,1,1,1,ok\n");
  expect_only_line_3_refused(read_study(dir, true), 2, "GPU-a");
}

TEST(RunFolder, GpuCsvNamingANewGpuOnEveryLineTakesLinearMemory) {
  // Per-GPU storage is reserved from the first lines; a malformed file that names a new GPU on
  // every line must not reserve that much again for each of them.
  const int n = 4000;
  std::string text = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
  for (int i = 0; i < n; ++i) text += std::to_string(1000 + i) + "," + std::to_string(i) + ",,50,1,1,100,1,1,1\n";
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,0,1000,1\n");
  dir.write("a/nodes/h/gpu.csv", text);
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].gpus.size(), static_cast<std::size_t>(n));
  std::size_t capacity = 0;
  for (const auto& g : study.runs[0].gpus) capacity += g.samples.capacity();
  EXPECT_LE(capacity, 4u * n) << "samples reserved in all";
}

TEST(RunFolder, ATimeLikeTheLineBeforesIsReadAsWritten) {
  // A tick's GPUs share one time, so a line's t_ns is compared with the line before's text rather
  // than converted again: times that share the text before them only in part, that are that text
  // and one digit more, or that follow a line sent the general way (a blank, a CRLF line end, a
  // field too many), must each be read as written, and the last line, cut, still named.
  std::vector<std::string> times{"1234567890123456780", "1234567890123456780", "123456789012345678",
                                 "1234567890123456789", "1234567890123456789", "5",  "55", "5",
                                 "0000000000000000005", "65", "65", "65", "65"};
  // The collector's layout, and another (t_ns and gpu, which name the format, then a column that
  // is not read): each has its own in-place parser.
  for (const bool reordered : {false, true}) {
    std::string text = reordered ? "t_ns,gpu,note,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
                                 : "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
    // Each line's utilization is its index in `times`.
    auto line = [&](const std::string& t, std::size_t i, const std::string& mem_util, const std::string& extra) {
      const std::string gpu = std::to_string(i % 2);
      return t + "," + gpu + (reordered ? ",n" : "") + ",GPU-" + gpu + "," + std::to_string(i) + "," + mem_util + ",1,100,1,1,1" + extra;
    };
    for (std::size_t i = 0; i + 1 < times.size(); ++i)
      text += line(times[i], i, i == 10 ? " 1" : "1", "") + (i == 7 ? "\r\n" : "\n");
    text += line("65", 99, "1", ",1") + "\n";                             // a field too many: line 14, bad
    text += line(times.back(), times.size() - 1, "1", "") + "\n";         // line 15
    text += line("65", 98, "1", "");                                      // line 16, cut: no line end
    ScratchDir dir;
    write_run(dir, "a", 2, "0,0,0,1000,1\n");
    dir.write("a/nodes/h/gpu.csv", text);
    auto study = read_study(dir, true);
    ASSERT_EQ(study.runs.size(), 1u);
    std::map<int, std::int64_t> time_of_util;
    for (const auto& g : study.runs[0].gpus)
      for (const auto& sample : g.samples) time_of_util[static_cast<int>(sample.util_pct)] = sample.t_ns;
    ASSERT_EQ(time_of_util.size(), times.size()) << "reordered: " << reordered;
    for (std::size_t i = 0; i < times.size(); ++i)
      EXPECT_EQ(time_of_util[static_cast<int>(i)], std::stoll(times[i])) << "reordered: " << reordered << ", line " << i + 2;
    // These times go back and forth, as a clock stepped back: said, as for an nvidia-smi log.
    ASSERT_EQ(study.diagnostics.size(), 3u) << format_location(study.diagnostics[0]);
    ASSERT_TRUE(find(study.diagnostics, "time-goes-backwards"));
    auto* bad = find(study.diagnostics, "bad-lines");
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->line, 14);
    auto* cut = find(study.diagnostics, "truncated-line");
    ASSERT_TRUE(cut);
    EXPECT_EQ(cut->line, 16);
  }
}

TEST(RunFolder, BadGpuLinesAreCountedWhicheverParserMeetsThem) {
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,0,1000,1\n");
  dir.write("a/nodes/h/gpu.csv",
            "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
            "1000,0,GPU-a,50,1,1,100,1,1,1\n"
            "2000,0,GPU-a,150,1,1,100,1,1,1\n"     // utilization out of range (in-place parser): value left out
            "3000,0,GPU-a,50,1,1,-100,1,1,1\n"     // negative power: value left out
            "4000,0,GPU-a,50,1,1,nan,1,1,1\n"      // not a number (general parser)
            "5000,0,GPU-a,50,1,1,100,1,1\n"        // a field short
            "-6000,0,GPU-a,50,1,1,100,1,1,1\n"     // negative time
            "7000,0,GPU-a,50,1,1,100,1,1,1\n"
            "8000,0,GPU-a,50,1,1,100,1,1,1");       // no line end
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].gpus.size(), 1u);
  // Lines 2, 3, 4 and 8; lines 3 and 4 without the reading that is beyond physical limits.
  ASSERT_EQ(study.runs[0].gpus[0].samples.size(), 4u);
  EXPECT_TRUE(std::isnan(study.runs[0].gpus[0].samples[1].util_pct));
  EXPECT_FLOAT_EQ(study.runs[0].gpus[0].samples[1].power_w, 100);
  EXPECT_TRUE(std::isnan(study.runs[0].gpus[0].samples[2].power_w));
  EXPECT_FLOAT_EQ(study.runs[0].gpus[0].samples[2].util_pct, 50);
  auto* bad = find(study.diagnostics, "bad-lines");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->line, 5);
  EXPECT_NE(bad->message.find("3 lines skipped"), std::string::npos) << bad->message;
  auto* implausible = find(study.diagnostics, "implausible-value");
  ASSERT_TRUE(implausible);
  EXPECT_EQ(implausible->line, 3);
  EXPECT_NE(implausible->message.find("2 values beyond physical limits left out; the first, line 3: util_pct 150"),
            std::string::npos) << implausible->message;
  auto* cut = find(study.diagnostics, "truncated-line");
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->line, 9);
}

TEST(RunFolder, ManifestStillRunningIsWarnedAndTheRunKept) {
  ScratchDir dir;
  dir.write("r/scalelens.json", R"({"label": "ddp", "world_size": 2, "status": "running"})");
  dir.write("r/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,1000\n");
  dir.write("done/scalelens.json", R"({"label": "ddp", "world_size": 1, "status": "complete"})");
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 2u);
  const auto* d = find(study.diagnostics, "run-not-finished");
  ASSERT_TRUE(d);
  EXPECT_NE(d->path.find("r/scalelens.json"), std::string::npos) << d->path;
  EXPECT_EQ(std::count_if(study.diagnostics.begin(), study.diagnostics.end(),
                          [](auto& x) { return x.code == "run-not-finished"; }), 1);
}

TEST(RunFolder, CollectorsMissingReasonsBecomeNotesPerConfiguration) {
  // Three repeats collected on a machine without NVML, one of them also without RAPL on node n2.
  ScratchDir dir;
  for (int rep = 0; rep < 3; ++rep) {
    const std::string name = "r" + std::to_string(rep);
    dir.write(name + "/scalelens.json",
              R"j({"label": "ddp", "world_size": 2, "status": "complete", "missing": {"gpu": "no NVML library (libnvidia-ml.so.1 not found)")j" +
                  std::string(rep == 2 ? R"j(, "cpu_energy@n2": "RAPL counter not readable")j" : "") + "}}");
    dir.write(name + "/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,1000\n0,1,1000,2000\n");
  }
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 3u);
  EXPECT_EQ(study.runs[2].details().missing.at("cpu_energy@n2"), "RAPL counter not readable");
  auto s = analyze(study, {});
  std::vector<std::string> notes;
  for (const auto& d : s.warnings)
    if (d.code == "missing-figure") notes.push_back(d.message);
  auto has = [&](const std::string& text) {
    return std::any_of(notes.begin(), notes.end(), [&](auto& n) { return n == text; });
  };
  EXPECT_TRUE(has("GPU utilization and energy not computed for ddp/2: no NVML library (libnvidia-ml.so.1 not found)"))
      << ::testing::PrintToString(notes);
  EXPECT_TRUE(has("host (CPU) energy not computed for ddp/2: on n2: RAPL counter not readable"))
      << ::testing::PrintToString(notes);
}

TEST(RunFolder, MinimalHandWrittenManifestIsEnough) {
  ScratchDir dir;
  dir.write("r/scalelens.json", R"({"label": "ddp", "world_size": 8})");
  dir.write("r/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,1000\n0,1,1000,3000\n");
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(*study.runs[0].world_size, 8);
  EXPECT_EQ(study.runs[0].epochs.size(), 2u);
}

TEST(RunFolder, TruncatedLastLineIsLeftOutAndNamed) {
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,0,1000,1\n0,1,1000,2000,1\n0,2,2000,30");
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].epochs.size(), 2u);
  auto* d = find(study.diagnostics, "truncated-line");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->line, 4);
  EXPECT_NE(d->path.find("epochs.csv"), std::string::npos);
}

// host.csv cut mid-number by a full disk or a kill (as the collector writes it: empty fields where
// a figure is not available): the cut line is named and left out, never read as a smaller value.
TEST(RunFolder, HostCsvCutInsideANumberLeavesTheCutLineOut) {
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,1000000000,2000000000,1\n");
  dir.write("a/nodes/h/host.csv",
            "t_ns,cpu_util_pct,mem_used_bytes,cpu_energy_uj\n"
            "1796643995157697293,,2054320128,\n"
            "1796643995207796369,100,2065686528,\n"
            "1796643995257783117,100,20740");  // mem_used_bytes cut after 5 of its 10 digits
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].host_series.size(), 1u);
  const auto& samples = study.runs[0].host_series[0].samples;
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples.back().mem_used_bytes, 2065686528.0);
  auto* cut = find(study.diagnostics, "truncated-line");
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->line, 4);
  EXPECT_NE(cut->path.find("host.csv"), std::string::npos) << cut->path;
}

TEST(RunFolder, BadLinesNaNAndNegativeTimesAreNamedWithFileAndLine) {
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,0,1000,1\n0,1,nan,2000,1\n0,2,-5,2000,1\n0,3,3000,2000,1\n0,4,4000\n0,5,5000,6000,1\n");
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].epochs.size(), 2u);  // epochs 0 and 5
  auto* d = find(study.diagnostics, "bad-lines");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->line, 3);  // first bad line: "nan"
  EXPECT_NE(d->message.find("4 lines skipped"), std::string::npos) << d->message;
}

TEST(RunFolder, WrongColumnsLeaveTheFileOut) {
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,0,1000,1\n0,1,1000,2000,1\n");
  dir.write("a/nodes/h/gpu.csv", "t_ns,gpu_index,power\n1,0,100\n");  // not our header: not recognized
  dir.write("a/nodes/h/host.csv", "t_ns,cpu_util_pct\n1,50\n");      // fine: the other columns are optional
  dir.write("a/steps.csv", "rank,step,begin,end\n0,0,0,1\n");         // recognized, lacks start_ns
  auto study = read_study(dir, true);
  auto* d = find(study.diagnostics, "bad-columns");
  ASSERT_TRUE(d);
  EXPECT_NE(d->message.find("start_ns"), std::string::npos);
  EXPECT_NE(d->path.find("steps.csv"), std::string::npos);
  EXPECT_EQ(d->line, 1);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_TRUE(study.runs[0].steps.empty());
  EXPECT_TRUE(study.runs[0].gpus.empty());
  EXPECT_EQ(study.runs[0].host_series.size(), 1u);
}

TEST(RunFolder, FilesWithoutManifestAreNamed) {
  ScratchDir dir;
  dir.write("orphan/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,1000\n");
  auto study = read_study(dir, true);
  EXPECT_TRUE(study.runs.empty());
  auto* d = find(study.diagnostics, "no-manifest");
  ASSERT_TRUE(d);
  EXPECT_NE(d->path.find("orphan/epochs.csv"), std::string::npos);
}

TEST(RunFolder, InvalidManifestIsAnErrorAndTheRunIsLeftOut) {
  ScratchDir dir;
  dir.write("a/scalelens.json", R"({"label": "ddp", "world_size": )");
  write_run(dir, "b", 2, "0,0,0,1000,1\n0,1,1000,2000,1\n");
  auto study = read_study(dir, true);
  ASSERT_TRUE(find(study.diagnostics, "bad-manifest"));
  auto s = analyze(study, {});
  ASSERT_EQ(s.configurations.size(), 1u);  // b is still reported
  EXPECT_EQ(s.configurations[0].world_size, 2);
}

// Manifests are read in their folders' order (a parent folder before its children), but their
// warnings come in the files' order, as every other file's do: exp/run1/scalelens.json sorts
// before exp/scalelens.json.
TEST(RunFolder, ManifestWarningsComeInTheFilesOrder) {
  ScratchDir dir;
  dir.write("exp/scalelens.json", R"({"label": "ddp", "world_size": 1, "gpus_per_node": "four"})");
  dir.write("exp/run1/scalelens.json", R"({"run_id": "r1", "label": "ddp", "world_size": 1, "system": 7})");
  dir.write("exp/run1/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,1000\n");
  auto study = read_study(dir, true);
  std::vector<std::string> warned;
  for (const auto& d : study.diagnostics)
    if (d.code == "bad-manifest-field") warned.push_back(std::filesystem::path(d.path).lexically_relative(dir.path()).string());
  EXPECT_EQ(warned, (std::vector<std::string>{"exp/run1/scalelens.json", "exp/scalelens.json"}));
}

TEST(RunFolder, SecondManifestInAFolderIsNamed) {
  // scalelens.json and a copy under another name that says the run schema: one run, from the
  // first in the files' order, and the other named as left out (it was dropped silently before).
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,0,1000,1\n");
  dir.write("a/scalelens.old.json", R"({"schema": "scalelens.run/1", "run_id": "a-old", "label": "ddp", "world_size": 2})");
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  auto* d = find(study.diagnostics, "duplicate-manifest");
  ASSERT_TRUE(d);
  EXPECT_EQ(study.runs[0].run_id, "a");  // "scalelens.json" sorts first
  EXPECT_EQ(std::filesystem::path(d->path).filename(), "scalelens.old.json");
  EXPECT_NE(d->message.find("scalelens.json's"), std::string::npos) << d->message;
}

// The script that writes run folders says their schemas too (examples/make_toy_study.py does):
// beside the runs it is no manifest or rank record, and nothing is said of it.
TEST(RunFolder, ScriptsThatSayTheSchemaAreNotRunFiles) {
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,0,1000,1\n");
  const std::string script =
      "#!/usr/bin/env python3\n"
      "manifest = {\"schema\": \"scalelens.run/1\", \"label\": \"ddp\"}\n"
      "rank = {\"schema\": \"scalelens.rank/1\", \"rank\": 0}\n";
  dir.write("make_study.py", script);
  dir.write("a/train.py", script);
  dir.write("a/ranks/notes.txt", "see {\"rank\": 0} in \"scalelens.rank/1\"\n");
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].run_id, "a");
  EXPECT_TRUE(study.runs[0].ranks.empty());
  EXPECT_EQ(study.files_read, 2u);  // scalelens.json and epochs.csv
  for (const auto& d : study.diagnostics) ADD_FAILURE() << d.path << ": " << d.message;
  // A renamed manifest, blanks before its object, still counts (SecondManifestInAFolderIsNamed).
  dir.write("b/run.json", "\n  {\"schema\": \"scalelens.run/1\", \"run_id\": \"b\", \"label\": \"ddp\", \"world_size\": 1}");
  dir.write("b/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,1000\n");
  EXPECT_EQ(read_study(dir, true).runs.size(), 2u);
}

TEST(RunFolder, DuplicateRunIdsKeepTheFirst) {
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,0,1000,1\n");
  dir.write("copy/scalelens.json", R"({"run_id": "a", "label": "ddp", "world_size": 1})");
  auto study = read_study(dir, true);
  EXPECT_EQ(study.runs.size(), 1u);
  auto* d = find(study.diagnostics, "duplicate-run-id");
  ASSERT_TRUE(d);
  EXPECT_NE(d->message.find("'a'"), std::string::npos);
}

// Copies among others: each is named with the copy it repeats, wherever that first one now lies in
// the study's list (the runs before it that were left out moved it up).
TEST(RunFolder, EachDuplicateRunIdNamesItsFirstHolder) {
  ScratchDir dir;
  const std::vector<std::pair<std::string, std::string>> folders{{"a", "x"}, {"b", "x"}, {"c", "y"}, {"d", "y"},
                                                                 {"e", ""},  {"f", ""},  {"g", "z"}, {"h", "z"},
                                                                 {"i", "z"}, {"j", "y"}};
  for (const auto& [folder, id] : folders)
    dir.write(folder + "/scalelens.json", R"({"run_id": ")" + id + R"(", "label": "ddp", "world_size": 1})");
  auto study = read_study(dir, true);
  std::vector<std::pair<std::string, std::string>> kept;  // (folder, id)
  for (const auto& run : study.runs) kept.emplace_back(std::filesystem::path(run.path).filename().string(), run.run_id);
  // Runs without an id are never copies of one another; an empty id is none: theirs is their folder's.
  const std::vector<std::pair<std::string, std::string>> want{{"a", "x"}, {"c", "y"}, {"e", "e"}, {"f", "f"}, {"g", "z"}};
  EXPECT_EQ(kept, want);
  std::vector<std::pair<std::string, std::string>> copies;  // (copy's folder, the folder its message names)
  for (const auto& d : study.diagnostics) {
    if (d.code != "duplicate-run-id") continue;
    const auto from = d.message.find("read from ");
    ASSERT_NE(from, std::string::npos) << d.message;
    const auto first = d.message.substr(from + 10, d.message.find(';', from) - from - 10);
    copies.emplace_back(std::filesystem::path(d.path).filename().string(), std::filesystem::path(first).filename().string());
  }
  const std::vector<std::pair<std::string, std::string>> want_copies{{"b", "a"}, {"d", "c"}, {"h", "g"}, {"i", "g"}, {"j", "c"}};
  EXPECT_EQ(copies, want_copies);
}

TEST(RunFolder, BrokenLinkIsReportedAsUnreadable) {
  ScratchDir dir;
  write_run(dir, "a", 1, "0,0,0,1000,1\n");
  std::filesystem::create_symlink(dir / "nowhere.csv", dir / "a/steps.csv");
  auto study = read_study(dir, true);
  auto* d = find(study.diagnostics, "unreadable-file");
  ASSERT_TRUE(d);
  EXPECT_NE(d->path.find("steps.csv"), std::string::npos);
  EXPECT_EQ(study.runs.size(), 1u);
}

// One process reads a large study's files in batches of whole run folders and merges a batch's
// plain folders before reading the next (issue 17, part 2). The study must be the one read in a
// single batch, whatever the batch: its runs, their data, and its warnings in the same order.
// The study mixes plain run folders, a run folder holding another (their files interleave in path
// order, so a batch must not end between them), files in no run folder, files with bad columns,
// an MLPerf log inside a run folder (not plain: merged after every file is read) and a copied run.
namespace {

// "" when equal; else where `got` first departs from `expected`, with a little of each around it
// (the studies' texts are long, mostly one line of series).
std::string first_difference(const std::string& got, const std::string& expected) {
  if (got == expected) return "";
  std::size_t at = 0;
  while (at < got.size() && at < expected.size() && got[at] == expected[at]) ++at;
  const std::size_t from = at > 120 ? at - 120 : 0;
  return fmt::format("at byte {}:\n got: ...{}\nwant: ...{}", at, got.substr(from, 240), expected.substr(from, 240));
}

std::string study_as_read_in_batches(const std::vector<std::string>& inputs, std::size_t files_per_batch) {
  IngestOptions options{inputs, {}, 2, {}};
  options.files_per_batch = files_per_batch;
  options.summarize_gpus = [](const Run& run, RunData& log) { summarize_gpu_log(run, log); };
  std::size_t last_done = 0, total = 0;
  options.progress = [&](std::size_t done, std::size_t of) {
    EXPECT_GE(done, last_done);  // one count over every batch, never going back
    last_done = done, total = of;
  };
  const Study study = ingest(options);
  EXPECT_EQ(last_done, total);
  std::string text;
  for (const auto& d : study.diagnostics) text += d.code + ": " + d.message + " @ " + d.path + "\n";
  for (const auto& run : study.runs)
    text += fmt::format("{} {} {} epochs {} steps {} gpus {} digest {} hosts {} ranks {} breakdown {} world {}\n", run.run_id,
                        run.path, run.format, run.epochs.size(), run.steps.size(), run.gpus.size(),
                        run.gpu_digest ? run.gpu_digest->gpus : 0, run.host_series.size(), run.ranks.size(),
                        run.breakdown.size(), run.world_size.value_or(-1));
  AnalysisOptions analysis;
  analysis.threads = 2;
  const Summary summary = analyze(study, analysis);
  return text + render_summary_json(summary) + render_series_json(study, summary);
}

void write_mixed_study(const ScratchDir& dir, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  scalelens::testing::GpuStudyShape shape;
  shape.runs = 6 + static_cast<int>(rng() % 10);
  shape.gpus = 3;
  shape.vary_gpus = true;
  shape.nvsmi_too = seed % 2 == 0;
  shape.no_window = 0.2;
  scalelens::testing::write_gpu_study(dir, rng, shape);
  write_run(dir, "outer", 2, "0,0,1000000000,6000000000,100\n0,1,6000000000,11000000000,100\n");
  write_run(dir, "outer/inner", 1, "0,0,1000000000,3000000000,10\n0,1,3000000000,5000000000,10\n");
  dir.write("outer/nodes/n01/host.csv", "t_ns,cpu_util_pct,mem_used_bytes,cpu_energy_uj\n"
                                        "1000000000,50,1000,0\n21000000000,50,1000,2000000000\n");
  dir.write("outer/steps.csv", "rank,step,begin,end\n0,0,0,1\n");  // lacks start_ns: a warning
  dir.write("orphan/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,1000\n");
  dir.write("run-0/zz/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0,1000\n");  // a second epochs file in run-0
  write_run(dir, "zz-copy-of-outer", 2, "0,0,1000000000,6000000000,100\n");
  dir.write("zz-copy-of-outer/scalelens.json",
            R"({"schema": "scalelens.run/1", "run_id": "outer", "label": "ddp", "world_size": 2})");
  // A run whose world size only its trace states: its GPU log, read after the trace, is kept as
  // read (the manifest, which readers see, says no world size), not summarized.
  dir.write("late-world/scalelens.json",
            R"({"schema": "scalelens.run/1", "run_id": "late-world", "label": "ddp", "start_ns": 1000000000, "end_ns": 21000000000})");
  scalelens::testing::KinetoTraceSpec trace;
  trace.step_us = {1000, 1000, 1000};
  dir.write("late-world/a-trace.json", scalelens::testing::kineto_trace(trace));
  dir.write("late-world/nodes/n01/gpu.csv",
            "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
            "1000000000,0,GPU-a,50,10,1e9,100,,1400,60\n21000000000,0,GPU-a,50,10,1e9,100,,1400,60\n");
  write_run(dir, "with-mlperf", 4, "");
  dir.write("with-mlperf/result.txt",  // its run is the folder's (merged after every file is read)
            ":::MLLOG {\"time_ms\": 1000, \"key\": \"run_start\", \"value\": null, \"metadata\": {}}\n"
            ":::MLLOG {\"time_ms\": 1000, \"key\": \"epoch_start\", \"metadata\": {\"epoch_num\": 1}}\n"
            ":::MLLOG {\"time_ms\": 3000, \"key\": \"epoch_stop\", \"metadata\": {\"epoch_num\": 1}}\n"
            ":::MLLOG {\"time_ms\": 3000, \"key\": \"epoch_start\", \"metadata\": {\"epoch_num\": 2}}\n"
            ":::MLLOG {\"time_ms\": 5500, \"key\": \"epoch_stop\", \"metadata\": {\"epoch_num\": 2}}\n"
            ":::MLLOG {\"time_ms\": 6000, \"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n");
}

}  // namespace

TEST(Ingest, ReadingInBatchesOfFoldersGivesTheSameStudy) {
  std::size_t batched = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    ScratchDir dir;
    write_mixed_study(dir, seed);
    const std::vector<std::string> inputs{dir.path().string(), std::string(SCALELENS_SOURCE_DIR) + "/examples/toy-study"};
    const std::string whole = study_as_read_in_batches(inputs, 0);
    EXPECT_NE(whole.find("no-manifest"), std::string::npos);
    EXPECT_NE(whole.find("duplicate-run-id"), std::string::npos);
    // What the merge must make of the folders, read in one batch or many: the MLPerf log's epochs in
    // its folder's run; the GPU log of a run whose manifest states no world size kept as read; a run
    // folder's files on either side of the folder it holds, and that one's own.
    auto run_line = [&](const std::string& id) {
      const std::size_t at = whole.find("\n" + id + " ");
      return at == std::string::npos ? std::string() : whole.substr(at + 1, whole.find('\n', at + 1) - at - 1);
    };
    EXPECT_NE(run_line("with-mlperf").find(" epochs 2 "), std::string::npos) << run_line("with-mlperf");
    EXPECT_NE(run_line("late-world").find(" gpus 1 digest 0 "), std::string::npos) << run_line("late-world");
    EXPECT_NE(run_line("outer").find(" epochs 2 steps 0 gpus 0 digest 0 hosts 1 "), std::string::npos) << run_line("outer");
    EXPECT_NE(run_line("outer/inner").find(" epochs 2 "), std::string::npos) << run_line("outer/inner");
    for (std::size_t per_batch : {1u, 2u, 3u, 5u, 17u}) {
      SCOPED_TRACE(fmt::format("{} files a batch", per_batch));
      EXPECT_EQ(first_difference(study_as_read_in_batches(inputs, per_batch), whole), "");
      ++batched;
    }
  }
  EXPECT_EQ(batched, 30u);
}

TEST(Ingest, ReadingInBatchesOfFoldersGivesTheSameStudyOnRealData) {
  SCALELENS_REQUIRE_REALDATA(data);
  const std::vector<std::string> inputs{(data / "kineto").string(), (data / "mlperf-hpc-v1.0-deepcam").string(),
                                        std::string(SCALELENS_SOURCE_DIR) + "/examples/toy-study"};
  const std::string whole = study_as_read_in_batches(inputs, 0);
  for (std::size_t per_batch : {1u, 4u})
    EXPECT_EQ(first_difference(study_as_read_in_batches(inputs, per_batch), whole), "") << per_batch << " files a batch";
}

// A study folder read as intervals, then as `scalelens report` reads it (`tabulated` set).
struct ReadBothWays {
  Study as_intervals, as_table;
};
ReadBothWays read_both_ways(const ScratchDir& dir, bool IngestOptions::*tabulated) {
  IngestOptions options{{dir.path().string()}, {}, 2, {}};
  ReadBothWays both{ingest(options), {}};
  options.*tabulated = true;
  both.as_table = ingest(options);
  return both;
}

// For each of `seeds` seeds: `draw` writes a study's run folders run-0, run-1, … into a folder
// and says which of them have two logs; the study is read as intervals, then as `scalelens report`
// reads it (`tabulated` set), and `check` gets both with those flags.
template <class Draw, class Check>
void for_each_drawn_study(std::uint64_t seeds, bool IngestOptions::*tabulated, Draw draw, Check check) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    std::mt19937_64 rng(seed);
    ScratchDir dir;
    const std::vector<bool> two_logs = draw(dir, rng);
    const auto [as_intervals, as_table] = read_both_ways(dir, tabulated);
    ASSERT_EQ(as_table.runs.size(), two_logs.size());
    ASSERT_EQ(as_intervals.runs.size(), two_logs.size());
    check(as_intervals, as_table, two_logs);
  }
}

// As `scalelens report` reads a run folder's only epoch log: a row per epoch number (the slowest
// rank, the ranks' samples summed in the file's order, none where a rank gave none) in place of the
// intervals; a folder with two epoch logs keeps its intervals. The summaries are the same either
// way, byte for byte, over folders drawn with ranks in any order, repeated epochs, fractional and
// missing samples.
TEST(Ingest, EpochsTabulatedAsReadGiveTheSameSummaries) {
  std::size_t tabulated = 0, kept = 0;
  auto draw = [](const ScratchDir& dir, std::mt19937_64& rng) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
    std::vector<bool> two_logs;
    for (int r = 0; r < 8; ++r) {
      const int p = 1 << pick(4), epochs = 1 + pick(6);
      std::vector<std::string> rows;
      for (int e = 0; e < epochs; ++e)
        for (int rank = 0; rank < p; ++rank) {
          const std::int64_t start = 1'000'000'000 + e * 2'000'000'000LL + pick(1000);
          const std::int64_t end = start + 1'000'000'000 + pick(900'000'000);
          const int kind = pick(4);  // whole, fractional, missing samples, or a repeated row
          const std::string samples = kind == 0   ? std::to_string(100 + pick(50))
                                      : kind == 1 ? fmt::format("{:.3f}", 0.1 + pick(9000) / 7.0)
                                      : kind == 2 ? ""
                                                  : "64";
          rows.push_back(fmt::format("{},{},{},{},{}\n", rank, e, start, end, samples));
          if (kind == 3) rows.push_back(fmt::format("{},{},{},{},{}\n", rank, e, start, end - pick(1000), "32.5"));
        }
      std::shuffle(rows.begin(), rows.end(), rng);
      const std::string name = fmt::format("run-{}", r);
      const bool split = pick(4) == 0;
      two_logs.push_back(split);
      std::string first, second;
      for (std::size_t i = 0; i < rows.size(); ++i) (split && i % 2 ? second : first) += rows[i];
      write_run(dir, name, p, first);
      if (split) dir.write(name + "/more/epochs.csv", "rank,epoch,start_ns,end_ns,samples\n" + second);
    }
    return two_logs;
  };
  for_each_drawn_study(12, &IngestOptions::tabulate_epochs, draw, [&](const Study& as_intervals, const Study& as_table,
                                                                      const std::vector<bool>& two_logs) {
    for (std::size_t i = 0; i < 8; ++i) {
      const scalelens::Run &a = as_intervals.runs[i], &b = as_table.runs[i];
      ASSERT_EQ(a.run_id, b.run_id);
      EXPECT_TRUE(a.epoch_table.empty());
      if (two_logs[std::stoul(a.run_id.substr(4))]) {
        EXPECT_EQ(b.epochs.size(), a.epochs.size()) << a.run_id;
        EXPECT_TRUE(b.epoch_table.empty()) << a.run_id;
        ++kept;
        continue;
      }
      std::map<std::int64_t, std::pair<double, std::optional<double>>> expected;  // by hand, in the file's order
      std::map<std::int64_t, bool> missing;
      for (const auto& e : a.epochs) {
        auto& [seconds, samples] = expected[e.index];
        seconds = std::max(seconds, e.seconds());
        if (e.samples) samples = samples.value_or(0) + *e.samples;
        else missing[e.index] = true;
      }
      EXPECT_TRUE(b.epochs.empty()) << a.run_id;
      ASSERT_EQ(b.epoch_table.size(), expected.size()) << a.run_id;
      std::size_t row = 0;
      for (const auto& [index, figures] : expected) {
        SCOPED_TRACE(fmt::format("{} epoch {}", a.run_id, index));
        EXPECT_EQ(b.epoch_table[row].seconds, figures.first);
        if (missing.count(index)) EXPECT_FALSE(b.epoch_table[row].samples);
        else EXPECT_EQ(*b.epoch_table[row].samples, *figures.second);
        ++row;
      }
      ++tabulated;
    }
    EXPECT_EQ(render_summary_json(analyze(as_table, {})), render_summary_json(analyze(as_intervals, {})));
    EXPECT_EQ(render_summary_csv(analyze(as_table, {})), render_summary_csv(analyze(as_intervals, {})));
  });
  EXPECT_GT(tabulated, 50u);
  EXPECT_GT(kept, 10u);
}

// A run folder's steps.csv, every rank logging its steps, written as drawn (repeated and missing
// steps, ranks in any order; `exact`: every rank logs every step once, so that runs of as many
// ranks and steps write logs of one size) and cut in two logs where `split`.
void write_step_run(const ScratchDir& dir, const std::string& name, int p, int steps, bool with_epochs, bool with_batch,
                    bool split, std::mt19937_64& rng, bool exact = false) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  dir.write(name + "/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "ddp", "world_size": {}, "nodes": 1, )"
                        R"("start_ns": 1000000000, "end_ns": 61000000000{}}})",
                        name, p, with_batch ? R"(, "global_batch_size": 256)" : ""));
  if (with_epochs) dir.write(name + "/epochs.csv", "rank,epoch,start_ns,end_ns,samples\n0,0,1000000000,9000000000,\n");
  std::vector<std::string> rows;
  for (int step = 0; step < steps; ++step)
    for (int rank = 0; rank < p; ++rank) {
      if (!exact && pick(20) == 0) continue;  // a rank that did not log this step
      const std::int64_t start = 1'000'000'000 + step * 20'000'000LL + pick(1000);
      const std::int64_t end = start + 5'000'000 + pick(10'000'000);
      rows.push_back(fmt::format("{},{},{},{},\n", rank, step, start, end));
      if (!exact && pick(30) == 0) rows.push_back(fmt::format("{},{},{},{},\n", rank, step, start, end - pick(1000)));
    }
  std::shuffle(rows.begin(), rows.end(), rng);
  std::string first, second;
  for (std::size_t i = 0; i < rows.size(); ++i) (split && i % 2 ? second : first) += rows[i];
  dir.write(name + "/steps.csv", "rank,step,start_ns,end_ns,samples\n" + first);
  if (split) dir.write(name + "/more/steps.csv", "rank,step,start_ns,end_ns,samples\n" + second);
}

// `scalelens report` tabulates a run folder's only step log as it reads it (StepTable): its
// summary, warnings and page must be what the intervals gave, byte for byte.
TEST(Ingest, StepsTabulatedAsReadGiveTheSameReport) {
  std::size_t tabulated = 0, kept = 0;
  auto draw = [](const ScratchDir& dir, std::mt19937_64& rng) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
    std::vector<bool> two_logs;
    for (int r = 0; r < 8; ++r) {
      const bool split = pick(4) == 0;
      two_logs.push_back(split);
      write_step_run(dir, fmt::format("run-{}", r), 1 << pick(4), 1 + pick(300), pick(2) == 0, pick(2) == 0, split, rng);
    }
    return two_logs;
  };
  for_each_drawn_study(10, &IngestOptions::tabulate_steps, draw, [&](const Study& as_intervals, const Study& as_table,
                                                                     const std::vector<bool>& two_logs) {
    for (std::size_t i = 0; i < 8; ++i) {
      const scalelens::Run &a = as_intervals.runs[i], &b = as_table.runs[i];
      ASSERT_EQ(a.run_id, b.run_id);
      EXPECT_FALSE(a.step_table);
      if (two_logs[std::stoul(a.run_id.substr(4))]) {
        EXPECT_EQ(b.steps.size(), a.steps.size()) << a.run_id;
        EXPECT_FALSE(b.step_table) << a.run_id;
        ++kept;
        continue;
      }
      std::map<std::int64_t, double> expected;  // by hand
      std::int64_t begin = a.steps.front().start_ns, end = 0;
      std::map<int, std::size_t> per_rank;
      for (const auto& s : a.steps) {
        expected[s.index] = std::max(expected[s.index], s.seconds());
        begin = std::min(begin, s.start_ns), end = std::max(end, s.end_ns);
        ++per_rank[s.rank];
      }
      EXPECT_TRUE(b.steps.empty()) << a.run_id;
      ASSERT_TRUE(b.step_table) << a.run_id;
      ASSERT_EQ(b.step_table->slowest.size(), expected.size()) << a.run_id;
      std::size_t row = 0;
      for (const auto& [number, seconds] : expected) {
        EXPECT_EQ(b.step_table->slowest[row].number, number);
        EXPECT_EQ(b.step_table->slowest[row].seconds, seconds) << a.run_id << " step " << number;
        ++row;
      }
      EXPECT_EQ(b.step_table->begin_ns, begin);
      EXPECT_EQ(b.step_table->end_ns, end);
      ASSERT_EQ(b.step_table->ranks.size(), per_rank.size());
      for (const auto& chart : b.step_table->ranks) EXPECT_EQ(chart.steps, per_rank[chart.rank]);
      ++tabulated;
    }
    const Summary by_table = analyze(as_table, {}), by_intervals = analyze(as_intervals, {});
    EXPECT_EQ(render_summary_json(by_table), render_summary_json(by_intervals));
    EXPECT_EQ(render_summary_csv(by_table), render_summary_csv(by_intervals));
    EXPECT_EQ(render_series_json(as_table, by_table), render_series_json(as_intervals, by_intervals));
  });
  EXPECT_GT(tabulated, 40u);
  EXPECT_GT(kept, 5u);
}

// Over the page's step budget, each rank's chart keeps its share of it: thinned as it is read, the
// same share the page gives the intervals (every run logging the same ranks and steps).
TEST(Ingest, StepChartsThinnedAsReadKeepThePagesShare) {
  // 60 runs x 8 ranks x 500 steps: 240,000 points, over the page's budget of 200,000.
  std::mt19937_64 rng(7);
  ScratchDir dir;
  for (int r = 0; r < 60; ++r) write_step_run(dir, fmt::format("run-{}", r), 8, 500, false, true, false, rng, true);
  const auto [as_intervals, as_table] = read_both_ways(dir, &IngestOptions::tabulate_steps);
  const Summary summary = analyze(as_intervals, {});
  EXPECT_EQ(render_summary_json(analyze(as_table, {})), render_summary_json(summary));
  EXPECT_EQ(render_series_json(as_table, summary), render_series_json(as_intervals, summary));
  std::size_t thinned = 0;
  for (const auto& run : as_table.runs) {
    ASSERT_TRUE(run.step_table);
    for (const auto& chart : run.step_table->ranks) {
      EXPECT_LE(chart.ms.size(), chart_points_per_series(kStepChartPointBudget, 480));
      thinned += chart.ms.size() < chart.steps;
    }
  }
  EXPECT_EQ(thinned, 480u);
  // Other limits than those it was thinned with cannot be honoured: said, not drawn wrongly.
  SeriesLimits limits;
  limits.max_points_per_series = 100;
  EXPECT_THROW(render_series_json(as_table, summary, limits), std::logic_error);
}

// The points of all "step_ms" arrays of a page's series.
std::size_t step_points(const std::string& series) {
  std::size_t points = 0;
  for (std::size_t at = series.find("\"step_ms\":["); at != std::string::npos; at = series.find("\"step_ms\":[", at + 1)) {
    const std::size_t open = at + 11, close = series.find(']', open);
    if (close > open) points += 1 + static_cast<std::size_t>(std::count(series.begin() + open, series.begin() + close, ','));
  }
  return points;
}

// Under the budget a long log keeps its charts whole beside many short ones: each log's share is
// in proportion to its size, so the page is the intervals' (the short logs do not shrink it).
TEST(Ingest, StepChartsOfALongLogAmongShortOnesAreWhole) {
  std::mt19937_64 rng(11);
  ScratchDir dir;
  write_step_run(dir, "long", 8, 1500, false, true, false, rng, true);
  for (int r = 0; r < 30; ++r) write_step_run(dir, fmt::format("short-{}", r), 4, 5, false, true, false, rng, true);
  const auto [as_intervals, as_table] = read_both_ways(dir, &IngestOptions::tabulate_steps);
  const Summary summary = analyze(as_intervals, {});
  EXPECT_EQ(render_series_json(as_table, summary), render_series_json(as_intervals, summary));
  const auto long_run = std::find_if(as_table.runs.begin(), as_table.runs.end(), [](const auto& r) { return r.run_id == "long"; });
  ASSERT_NE(long_run, as_table.runs.end());
  ASSERT_TRUE(long_run->step_table);
  ASSERT_EQ(long_run->step_table->ranks.size(), 8u);
  for (const auto& chart : long_run->step_table->ranks) EXPECT_EQ(chart.ms.size(), 1500u);
}

// Runs whose step logs are tabulated beside runs whose are not (two logs a folder): the page still
// keeps about its budget, each chart about the cap the page gives every one.
TEST(Ingest, StepChartsThinnedAsReadAndOnThePageShareOneBudget) {
  std::mt19937_64 rng(13);
  ScratchDir dir;
  for (int r = 0; r < 20; ++r) write_step_run(dir, fmt::format("run-{}", r), 4, 400, false, true, r % 2 == 1, rng, true);
  IngestOptions options{{dir.path().string()}, {}, 2, {}};
  options.step_chart_point_budget = 4000;
  options.tabulate_steps = true;
  const Study study = ingest(options);
  std::size_t tabulated = 0;
  for (const auto& run : study.runs) tabulated += static_cast<bool>(run.step_table);
  EXPECT_EQ(tabulated, 10u);
  SeriesLimits limits;
  limits.step_budget = 4000;
  EXPECT_THROW(render_series_json(study, analyze(study, {}), limits), std::logic_error);  // not the report's limits
  // At the report's own budget, scaled: 20 runs x 4 ranks x 400 steps is 32,000 points, over a
  // budget of 4,000 (a tenth of the default's study); the page keeps to it within a chart's rounding.
  options.step_chart_point_budget = kStepChartPointBudget;
  ScratchDir big;
  for (int r = 0; r < 200; ++r) write_step_run(big, fmt::format("run-{}", r), 4, 400, false, true, r % 2 == 1, rng, true);
  options.inputs = {big.path().string()};
  const Study large = ingest(options);
  const std::size_t points = step_points(render_series_json(large, analyze(large, {})));
  EXPECT_LE(points, kStepChartPointBudget + 800 * 8);  // each of the 800 charts rounds by less than its minimum
  EXPECT_GT(points, kStepChartPointBudget * 9 / 10);
}

// A run whose step times come from its profiler trace, beside runs whose step logs are tabulated:
// under the budget, its charts are whole (the tabulated logs' shares leave it its cap).
TEST(Ingest, TracedStepChartsBesideTabulatedOnesAreWhole) {
  std::mt19937_64 rng(17);
  ScratchDir dir;
  for (int r = 0; r < 4; ++r) write_step_run(dir, fmt::format("run-{}", r), 2, 300, false, true, false, rng, true);
  dir.write("traced/scalelens.json", R"({"schema": "scalelens.run/1", "run_id": "traced", "label": "ddp", "world_size": 1})");
  scalelens::testing::KinetoTraceSpec trace;
  trace.step_us.assign(100, 1000);
  dir.write("traced/rank0.json", scalelens::testing::kineto_trace(trace));
  const auto [as_intervals, as_table] = read_both_ways(dir, &IngestOptions::tabulate_steps);
  const Summary summary = analyze(as_intervals, {});
  const std::string page = render_series_json(as_table, summary);
  EXPECT_EQ(page, render_series_json(as_intervals, summary));
  EXPECT_EQ(step_points(page), 4u * 2 * 300 + 100);  // every step of every chart
}

// A gzipped step log weighs what it inflates to, not its compressed size: beside plain logs of as
// many ranks and steps, over the budget, every chart keeps the cap the page gives every one.
TEST(Ingest, GzippedStepLogsWeighWhatTheyHold) {
  std::mt19937_64 rng(19);
  ScratchDir dir;
  for (int r = 0; r < 60; ++r) {
    const std::string name = fmt::format("run-{:02}", r);
    write_step_run(dir, name, 2, 2000, false, true, false, rng, true);
    if (r % 2) ASSERT_EQ(std::system(("gzip -n '" + (dir.path() / name / "steps.csv").string() + "'").c_str()), 0);
  }
  const auto [as_intervals, as_table] = read_both_ways(dir, &IngestOptions::tabulate_steps);
  std::size_t tabulated = 0;
  for (const auto& run : as_table.runs) {
    ASSERT_TRUE(run.step_table) << run.run_id;
    ++tabulated;
    for (const auto& chart : run.step_table->ranks)  // 200,000 / 120 charts, within a gzip trailer's rounding
      EXPECT_NEAR(static_cast<double>(chart.ms.size()), 1666, 2) << run.run_id;
  }
  EXPECT_EQ(tabulated, 60u);
  const Summary summary = analyze(as_intervals, {});
  EXPECT_EQ(render_summary_json(analyze(as_table, {})), render_summary_json(summary));
}

TEST(Ingest, PatternFiltersPathsInsideInputs) {
  ScratchDir dir;
  write_run(dir, "ddp-1", 1, "0,0,0,1000,1\n");
  write_run(dir, "fsdp-1", 1, "0,0,0,1000,1\n");
  auto study = ingest(IngestOptions{{dir.path().string()}, std::string("^ddp"), 1, {}});
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs[0].run_id, "ddp-1");
}

TEST(Ingest, MissingInputIsNamed) {
  auto study = ingest(IngestOptions{{"/nonexistent/scalelens"}, {}, 1, {}});
  auto* d = find(study.diagnostics, "missing-input");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->path, "/nonexistent/scalelens");
}

TEST(RunFolder, MpiCommCsvBecomesACpuSideBreakdown) {
  ScratchDir dir;
  write_run(dir, "a", 2, "0,0,0,1000,1\n0,1,1000,2000,1\n");
  // Rank 0: two steps of 100 ms with 30 ms and 10 ms inside MPI.
  dir.write("a/comm/0.csv", "rank,step,start_ns,end_ns,comm_ns,calls,bytes\n"
                            "0,0,0,100000000,30000000,2,16\n0,1,100000000,200000000,10000000,2,16\n");
  auto study = read_study(dir, true);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].breakdown.size(), 1u);
  const auto& b = study.runs[0].breakdown[0];
  EXPECT_TRUE(b.from_mpi);
  EXPECT_EQ(b.steps, 2);
  EXPECT_DOUBLE_EQ(b.comm_us, 40000);
  EXPECT_DOUBLE_EQ(b.comp_us, 160000);
  EXPECT_DOUBLE_EQ(b.exposed_comm_us, 40000);
  auto s = analyze(study, {});
  EXPECT_NEAR(*s.runs[0].trace().computation_score, 0.8, 1e-12);  // 160 / (160 + 40)
  EXPECT_FALSE(s.runs[0].trace().idle_share) << "the interposer cannot see GPU idle time";
  EXPECT_TRUE(study.diagnostics.empty());
}

TEST(RunFolder, CancellingStopsReadingBetweenFilesAndSaysSo) {
  ScratchDir dir;
  for (int k = 0; k < 6; ++k) write_run(dir, "r" + std::to_string(k), 1, "0,0,1000000000,2000000000,10\n");
  // Cancelled after the second file that finishes: the rest are never started.
  std::atomic<bool> cancel{false};
  std::size_t seen = 0, total = 0;
  IngestOptions options{{dir.path().string()}, {}, 1, {}};
  options.cancel = &cancel;
  options.progress = [&](std::size_t done, std::size_t n) {
    seen = done;
    total = n;
    if (done == 2) cancel = true;
  };
  Study s = ingest(options);
  EXPECT_TRUE(s.cancelled);
  EXPECT_TRUE(s.runs.empty()) << "a partial study is not passed off as the study";
  EXPECT_EQ(total, 6u);  // the six epochs.csv (manifests are read first, apart)
  EXPECT_EQ(seen, 6u);   // the closing call
  // Not cancelled: the same folder reads whole.
  Study whole = read_study(dir, true);
  EXPECT_FALSE(whole.cancelled);
  EXPECT_EQ(analyze(whole, {}).configurations.size(), 1u);
}

// A run folder's CSV logs are read by their columns' names, in whatever order a writer put them
// (pandas, a hand-made logger): a study whose every epochs.csv, steps.csv, gpu.csv and host.csv
// has its columns reversed gives the same summary, figure for figure. Reversed epochs.csv were
// silently not read (the header was recognized by its first columns).
TEST(RunFolder, LogsWithTheirColumnsInAnotherOrderGiveTheSameSummary) {
  ScratchDir as_written, reversed;
  std::mt19937_64 rng(7);
  write_gpu_study(as_written, rng, {.runs = 3, .gpus = 2, .may_be_empty = false, .vary_gpus = true});
  std::filesystem::copy(std::string(SCALELENS_SOURCE_DIR) + "/examples/toy-study", as_written.path() / "toy",
                        std::filesystem::copy_options::recursive);
  std::size_t logs = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(as_written.path())) {
    if (!entry.is_regular_file()) continue;
    const auto relative = entry.path().lexically_relative(as_written.path()).string();
    std::string text = read_file(entry.path()).value();
    if (entry.path().extension() == ".csv") {
      std::string out;
      std::size_t at = 0;
      while (at < text.size()) {
        std::size_t nl = text.find('\n', at);
        if (nl == std::string::npos) nl = text.size();
        std::vector<std::string_view> fields;
        split_csv(std::string_view(text).substr(at, nl - at), fields);
        std::reverse(fields.begin(), fields.end());
        for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + std::string(fields[i]);
        out += '\n';
        at = nl + 1;
      }
      text = out;
      ++logs;
    }
    reversed.write(relative, text);
  }
  EXPECT_GT(logs, 20u);
  // A first line holding those names in other text (one line of JSON) is no log of ours.
  reversed.write("toy/toy-1r-0/columns.csv", R"({"columns": ["x", "t_ns", "gpu"]})" "\n1,2,3\n");
  const Study a = read_study(as_written), b = read_study(reversed);
  ASSERT_EQ(a.runs.size(), b.runs.size());
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    SCOPED_TRACE(a.runs[i].run_id);
    EXPECT_EQ(a.runs[i].epochs.size(), b.runs[i].epochs.size());
    EXPECT_EQ(a.runs[i].steps.size(), b.runs[i].steps.size());
    EXPECT_EQ(a.runs[i].gpus.size(), b.runs[i].gpus.size());
    EXPECT_EQ(a.runs[i].host_series.size(), b.runs[i].host_series.size());
  }
  std::string paths_a = render_summary_json(analyze(a, {})), paths_b = render_summary_json(analyze(b, {}));
  // The same but for where the study lies.
  for (auto [text, root] : {std::pair{&paths_a, as_written.path().string()}, std::pair{&paths_b, reversed.path().string()}})
    for (std::size_t at = text->find(root); at != std::string::npos; at = text->find(root, at)) text->replace(at, root.size(), "ROOT");
  EXPECT_EQ(paths_a, paths_b);
}

// A run of 100 s (4 epochs of 25 s, 2 ranks) on two GPUs sampled each second: GPU 0 draws 100 W
// throughout, GPU 1 200 W over `gpu1_from`..`gpu1_to` s only (its sampler died, or started late),
// from power_w, or from energy_mj as well where `counter`.
void write_partly_logged_run(const ScratchDir& dir, const std::string& name, int gpu1_from, int gpu1_to, bool counter) {
  constexpr std::int64_t t0 = 1'700'000'000'000'000'000;
  auto at = [](double s) { return t0 + static_cast<std::int64_t>(s * 1e9); };
  dir.write(name + "/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "ddp", "world_size": 2, "nodes": 1, )"
                        R"("gpus_per_node": 2, "samples_per_epoch": 1000, "start_ns": {}, "end_ns": {}, "exit_status": 0, )"
                        R"("status": "complete", "sampling_interval_s": 1}})",
                        name, at(0), at(100)));
  std::string epochs = "rank,epoch,start_ns,end_ns,samples\n";
  for (int e = 0; e < 4; ++e)
    for (int rank = 0; rank < 2; ++rank) epochs += fmt::format("{},{},{},{},\n", rank, e, at(25 * e), at(25 * (e + 1)));
  dir.write(name + "/epochs.csv", epochs);
  std::string gpus = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
  for (int t = 0; t <= 100; ++t) {
    gpus += fmt::format("{},0,GPU-5f0e3c2a-0000-4c1e-9d6b-000000000000,90,40,8589934592,100,{},1410,61\n", at(t),
                        counter ? std::to_string(t * 100'000) : "");
    if (t >= gpu1_from && t <= gpu1_to)
      gpus += fmt::format("{},1,GPU-5f0e3c2a-0001-4c1e-9d6b-000000000001,90,40,8589934592,200,{},1410,63\n", at(t),
                          counter ? std::to_string(t * 200'000) : "");
  }
  dir.write(name + "/nodes/n01/gpu.csv", gpus);
}

// A GPU whose log covers only part of its run (stops at 50 s of 100, or starts at 50 s) measured
// none of the rest: that energy was left out unsaid (5.56 Wh where the GPUs drew 8.33 Wh), while
// the same 50 s missing mid-run were said (energy-gaps). The head and tail are gaps as well now;
// the energy is what was measured. A log that starts or ends within the sampler's lag is whole.
TEST(RunFolder, AGpuLogCoveringPartOfTheRunLeavesTheRestOutAndSaysSo) {
  struct Case {
    const char* name;
    int from, to;
    bool counter;
    double gap_s;  // the GPU-seconds said left out; 0: no energy-gaps
  };
  const Case cases[] = {{"stops", 0, 50, false, 50}, {"starts-late", 50, 100, false, 50}, {"counter-stops", 0, 50, true, 50},
                        {"counter-starts-late", 50, 100, true, 50}, {"whole", 0, 100, false, 0},
                        {"within-lag", 1, 99, false, 0}, {"counter-within-lag", 1, 99, true, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ScratchDir dir;
    write_partly_logged_run(dir, c.name, c.from, c.to, c.counter);
    // Both ways a study is read: its GPU log summarized as it is read (the report), and kept.
    for (const bool as_report : {true, false}) {
      const auto s = analyze(as_report ? scalelens::testing::read_study_as_report(dir) : read_study(dir, true), {});
      ASSERT_EQ(s.runs.size(), 1u);
      ASSERT_TRUE(s.runs[0].energy_j);
      EXPECT_NEAR(*s.runs[0].energy_j, 100 * 100 + 200 * (c.to - c.from), 1e-6) << "the energy measured";
      const auto* gaps = find(s.warnings, "energy-gaps");
      if (c.gap_s == 0) {
        EXPECT_FALSE(gaps) << gaps->message;
        continue;
      }
      ASSERT_TRUE(gaps);
      EXPECT_NE(gaps->message.find(fmt::format("{:.1f} s of GPU time (summed over 1 GPU)", c.gap_s)), std::string::npos)
          << gaps->message;
      EXPECT_NE(gaps->message.find("begin after the run's start or end before its end"), std::string::npos) << gaps->message;
    }
  }
}

// steps.csv's samples column (DESIGN.md: rank,step,start_ns,end_ns,samples) was never read: without
// a global batch the run had no throughput ("no samples count"), and a declared global batch that
// the column contradicts gave its own figure unsaid (128 a step where 64 were logged: 1280
// samples/s for 640). The column is the run's samples now, as epochs.csv's is, and a declared batch
// that disagrees with it by more than one (short last) batch is said.
TEST(RunFolder, StepsSamplesColumnIsTheRunsSamples) {
  constexpr std::int64_t t0 = 1'700'000'000'000'000'000;
  // 2 ranks, 100 steps of 0.1 s, 32 samples a rank a step (the last step `last` a rank).
  auto write = [&](const ScratchDir& dir, const std::string& name, const std::string& batch, int last) {
    dir.write(name + "/scalelens.json",
              fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "{}", "world_size": 2, "nodes": 1, )"
                          R"("gpus_per_node": 2, {}"start_ns": {}, "end_ns": {}, "exit_status": 0, "status": "complete"}})",
                          name, name, batch, t0, t0 + 10'000'000'000));
    std::string steps = "rank,step,start_ns,end_ns,samples\n";
    for (int n = 0; n < 100; ++n)
      for (int rank = 0; rank < 2; ++rank)
        steps += fmt::format("{},{},{},{},{}\n", rank, n, t0 + n * 100'000'000LL, t0 + (n + 1) * 100'000'000LL, n == 99 ? last : 32);
    dir.write(name + "/steps.csv", steps);
  };
  ScratchDir dir;
  write(dir, "nobatch", "", 32);
  write(dir, "wrongbatch", R"("global_batch_size": 128, )", 32);
  write(dir, "batch", R"("global_batch_size": 64, )", 32);
  write(dir, "shortlast", R"("global_batch_size": 64, )", 8);  // the loader's short last batch: no disagreement
  for (const bool as_report : {true, false}) {
    SCOPED_TRACE(as_report ? "as the report reads it" : "kept");
    const auto s = analyze(as_report ? scalelens::testing::read_study_as_report(dir) : read_study(dir, true), {});
    ASSERT_EQ(s.runs.size(), 4u);
    for (const auto& r : s.runs) {
      SCOPED_TRACE(r.run_id);
      const double samples = r.run_id == "shortlast" ? 99 * 64 + 16 : 6400;
      ASSERT_TRUE(r.throughput_samples_per_s);
      EXPECT_NEAR(*r.throughput_samples_per_s, samples / 10, 1e-6);
      EXPECT_EQ(r.throughput_from, "samples column");
      ASSERT_TRUE(r.samples);
      EXPECT_NEAR(*r.samples, samples, 1e-9);
    }
    std::vector<std::string> disagreeing;
    for (const auto& w : s.warnings)
      if (w.code == "batch-disagrees-with-samples") {
        disagreeing.push_back(w.path.substr(w.path.rfind('/') + 1));
        EXPECT_NE(w.message.find("global_batch_size 128 x 100 steps is 12800 samples, but its steps.csv samples column "
                                 "sums to 6400 (64 a step)"),
                  std::string::npos)
            << w.message;
      }
    EXPECT_EQ(disagreeing, std::vector<std::string>{"wrongbatch"});
    for (const auto& w : s.warnings) EXPECT_EQ(w.message.find("no samples count"), std::string::npos) << w.message;
  }
}

// Issue C §3: the check above looked at steps.csv only. A samples_per_epoch that epochs.csv's
// samples column contradicts (2000 declared, 1000 logged an epoch) is said the same way, and the
// throughput and samples are the logged ones; a loader's short last batch (992 of 1000, batch 64)
// or a shortfall under 1% where no batch is declared (996) is no disagreement.
TEST(RunFolder, EpochsSamplesColumnAgainstTheDeclaredSamplesPerEpoch) {
  constexpr std::int64_t t0 = 1'700'000'000'000'000'000;
  // 2 ranks, 3 epochs of 2 s, `per_rank` samples a rank an epoch.
  auto write = [&](const ScratchDir& dir, const std::string& name, const std::string& declared, int per_rank) {
    dir.write(name + "/scalelens.json",
              fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "{}", "label": "{}", "world_size": 2, "nodes": 1, )"
                          R"("gpus_per_node": 2, {}"start_ns": {}, "end_ns": {}, "exit_status": 0, "status": "complete"}})",
                          name, name, declared, t0, t0 + 6'000'000'000));
    std::string epochs = "rank,epoch,start_ns,end_ns,samples\n";
    for (int e = 0; e < 3; ++e)
      for (int rank = 0; rank < 2; ++rank)
        epochs += fmt::format("{},{},{},{},{}\n", rank, e, t0 + e * 2'000'000'000LL, t0 + (e + 1) * 2'000'000'000LL, per_rank);
    dir.write(name + "/epochs.csv", epochs);
  };
  ScratchDir dir;
  write(dir, "right", R"("samples_per_epoch": 1000, )", 500);
  write(dir, "wrong", R"("samples_per_epoch": 2000, )", 500);
  write(dir, "shortlast", R"("samples_per_epoch": 1000, "global_batch_size": 64, )", 496);
  write(dir, "nobatch", R"("samples_per_epoch": 1000, )", 498);
  for (const bool as_report : {true, false}) {
    SCOPED_TRACE(as_report ? "as the report reads it" : "kept");
    AnalysisOptions o;
    o.warmup_epochs = 0;
    const auto s = analyze(as_report ? scalelens::testing::read_study_as_report(dir) : read_study(dir, true), o);
    ASSERT_EQ(s.runs.size(), 4u);
    for (const auto& r : s.runs) {
      SCOPED_TRACE(r.run_id);
      const double per_epoch = r.run_id == "shortlast" ? 992 : r.run_id == "nobatch" ? 996 : 1000;
      ASSERT_TRUE(r.throughput_samples_per_s);
      EXPECT_NEAR(*r.throughput_samples_per_s, per_epoch / 2, 1e-6);
      EXPECT_EQ(r.throughput_from, "samples column");
      ASSERT_TRUE(r.samples);
      EXPECT_NEAR(*r.samples, 3 * per_epoch, 1e-9);
    }
    std::vector<std::string> disagreeing;
    for (const auto& w : s.warnings)
      if (w.code == "batch-disagrees-with-samples") {
        disagreeing.push_back(w.path.substr(w.path.rfind('/') + 1));
        EXPECT_NE(w.message.find("samples_per_epoch 2000 x 3 epochs is 6000 samples, but its epochs.csv samples column "
                                 "sums to 3000 (1000 an epoch)"),
                  std::string::npos)
            << w.message;
      }
    EXPECT_EQ(disagreeing, std::vector<std::string>{"wrong"});
  }
}

// A run reported failed because a rank's record says it exited with status 3 still read
// exit_status 0 in summary.json (the manifest's, rank 0's). It reads the status of the lowest
// rank that failed, the one the failed-run warning names (rank 2, though ranks/10.json, which
// failed too, comes first in the folder).
TEST(RunFolder, ARunFailedByARanksRecordHasThatRanksExitStatus) {
  constexpr std::int64_t t0 = 1'700'000'000'000'000'000, t1 = t0 + 10'000'000'000;
  ScratchDir dir;
  dir.write("r/scalelens.json",
            fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "r", "label": "ddp", "world_size": 12, "nodes": 1, )"
                        R"("gpus_per_node": 12, "global_batch_size": 64, "start_ns": {}, "end_ns": {}, "exit_status": 0, )"
                        R"("status": "complete"}})",
                        t0, t1));
  std::string steps = "rank,step,start_ns,end_ns,samples\n";
  for (int n = 0; n < 40; ++n) steps += fmt::format("0,{},{},{},\n", n, t0 + n * 250'000'000LL, t0 + (n + 1) * 250'000'000LL);
  dir.write("r/steps.csv", steps);
  for (int rank = 0; rank < 12; ++rank)
    dir.write(fmt::format("r/ranks/{}.json", rank),
              fmt::format(R"({{"schema": "scalelens.rank/1", "rank": {}, "host": "n01", "local_rank": {}, "devices": ["{}"], )"
                          R"("start_ns": {}, "end_ns": {}, "exit_status": {}, "pid": {}}})",
                          rank, rank, rank, t0, t1, rank == 2 ? 3 : rank == 10 ? 9 : 0, 4000 + rank));
  for (const bool as_report : {true, false}) {
    SCOPED_TRACE(as_report ? "as the report reads it" : "kept");
    const auto s = analyze(as_report ? scalelens::testing::read_study_as_report(dir) : read_study(dir, true), {});
    ASSERT_EQ(s.runs.size(), 1u);
    const auto* failed = find(s.warnings, "failed-run");
    ASSERT_TRUE(failed);
    EXPECT_NE(failed->message.find("rank 2 exited with status 3, and 1 more rank"), std::string::npos) << failed->message;
    ASSERT_TRUE(s.runs[0].exit_status);
    EXPECT_EQ(*s.runs[0].exit_status, 3);
    EXPECT_FALSE(s.runs[0].run_time_s);
    EXPECT_NE(render_summary_json(s).find(R"("exit_status":3)"), std::string::npos);
  }
}
