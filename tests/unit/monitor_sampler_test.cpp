// The sampler writes gpu.csv/host.csv that the run-folder reader takes back, with the energy the
// recording implies, and names what it could not read.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "analysis/analyze.hpp"
#include "common/text.hpp"
#include "ingest/ingest.hpp"
#include "monitor/sampler.hpp"
#include "support/test_support.hpp"

using namespace scalelens;
using namespace scalelens::monitor;
using scalelens::testing::ScratchDir;
using scalelens::testing::slurp;

namespace {

const std::string kRecording = std::string(SCALELENS_TEST_DATA) + "/replay/a100x2-gpu.csv";

using scalelens::testing::count_lines;

// Runs the sampler over the whole recording (8 times) and stops it.
SamplerReport sample_recording(const std::filesystem::path& node_dir, double flush_s) {
  std::filesystem::create_directories(node_dir);
  auto src = open_replay(kRecording);
  EXPECT_TRUE(src);
  SamplerOptions o;
  o.node_dir = node_dir;
  o.interval_s = 0.002;
  o.flush_s = flush_s;
  auto s = Sampler::start(o, std::move(src.value()), {0, 1}, {});
  EXPECT_TRUE(s) << s.error().message;
  // The recording holds 8 times; give the sampler time for more ticks than that (later ones fail).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline && count_lines(slurp(node_dir / "gpu.csv")) < 15)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  s.value()->stop();
  return s.value()->report();
}

}  // namespace

TEST(Sampler, WritesTheRecordingAsGpuCsvWithGapsForErrorsAndAbsence) {
  ScratchDir d;
  auto report = sample_recording(d.path(), 0);
  auto gpu = slurp(d / "gpu.csv");
  EXPECT_EQ(gpu.rfind("t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n", 0), 0u);
  // 8 readings of GPU 0; GPU 1 erred once and was absent once: 6.
  EXPECT_EQ(count_lines(gpu, ",0,GPU-6f2c5e2a"), 8u) << gpu;
  EXPECT_EQ(count_lines(gpu, ",1,GPU-a81d3f77"), 6u) << gpu;
  // Used memory passes through the model's float (GpuSample): 24-bit precision, ~0.5 kB in 30 GB.
  EXPECT_NE(gpu.find(",0,GPU-6f2c5e2a-1c43-8f7e-2b1d-0e6a8a3c9d11,97,48,30001000448,250.5,5125000,1410,41\n"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find(",1,GPU-a81d3f77-52e0-4c1b-9e4f-7d2b6c0f3e22,95,47,28999999488,200,7100000,,45\n"), std::string::npos)
      << "a figure the device lacks is an empty field";
  ASSERT_TRUE(report.missing.count("gpu1")) << "errors of GPU 1 are named";
  EXPECT_NE(report.missing["gpu1"].find("returned an error"), std::string::npos) << report.missing["gpu1"];
  EXPECT_NE(report.missing["gpu1_figures"].find("sm_clock_mhz"), std::string::npos);
  EXPECT_EQ(report.gpu_source, "replay");
  EXPECT_GT(count_lines(slurp(d / "host.csv")), 8u);
}

TEST(Sampler, EnergyOfTheRunComesFromTheRecordedCounters) {
  ScratchDir d;
  const auto start = realtime_ns();
  sample_recording(d / "run/nodes/n01", 0.5);
  const auto end = realtime_ns();
  d.write("run/scalelens.json", "{\"label\": \"replay\", \"world_size\": 2, \"start_ns\": " + std::to_string(start) +
                                    ", \"end_ns\": " + std::to_string(end) + "}");
  IngestOptions in;
  in.inputs = {d.path().string()};
  Study study = ingest(in);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_EQ(study.runs[0].gpus.size(), 2u);
  for (const auto& diag : study.diagnostics) ADD_FAILURE() << diag.message;
  std::vector<Diagnostic> warnings;
  auto summary = summarize_run(study.runs[0], AnalysisOptions{}, warnings);
  // GPU 0: 5,875,000 − 5,000,000 mJ; GPU 1: 7,700,000 − 7,000,000 mJ → 875 J + 700 J.
  ASSERT_TRUE(summary.energy_j);
  EXPECT_NEAR(*summary.energy_j, 1575.0, 1e-6);
  EXPECT_EQ(summary.energy_from, "counter");
  ASSERT_EQ(study.runs[0].host_series.size(), 1u);
  EXPECT_EQ(study.runs[0].host_series[0].node, "n01");
}

TEST(Sampler, WithoutGpuSourceItStillSamplesTheHostAndSaysWhy) {
  ScratchDir d;
  SamplerOptions o;
  o.node_dir = d.path();
  o.interval_s = 0.005;
  auto s = Sampler::start(o, nullptr, {}, {{"gpu", "no NVML library found (libnvidia-ml.so.1)"}});
  ASSERT_TRUE(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  s.value()->stop();
  s.value()->stop();  // idempotent
  EXPECT_FALSE(std::filesystem::exists(d / "gpu.csv"));
  EXPECT_GE(count_lines(slurp(d / "host.csv")), 3u);
  EXPECT_EQ(s.value()->report().missing.at("gpu"), "no NVML library found (libnvidia-ml.so.1)");
}

TEST(Sampler, LinesReachTheFileWithinTheFlushIntervalNotOnlyAtStop) {
  ScratchDir d;
  SamplerOptions o;
  o.node_dir = d.path();
  o.interval_s = 0.005;
  o.flush_s = 0.05;
  auto s = Sampler::start(o, nullptr, {}, {});
  ASSERT_TRUE(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto text = slurp(d / "host.csv");  // read while it runs
  EXPECT_GE(count_lines(text), 5u) << text;
  EXPECT_EQ(text.back(), '\n') << "only whole lines are written";
  s.value()->stop();
}

TEST(Sampler, UnwritableNodeFolderIsAnErrorWithThePath) {
  ScratchDir d;
  d.write("file", "x");
  SamplerOptions o;
  o.node_dir = d / "file";  // a file, not a folder
  auto s = Sampler::start(o, nullptr, {}, {});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().path.find("host.csv"), std::string::npos);
}

namespace {

struct Unmount {
  std::filesystem::path at;
  ~Unmount() { std::system(("umount '" + at.string() + "'").c_str()); }
};

// Writes `file` until its file system has no page left.
void fill(const std::filesystem::path& file) {
  std::ofstream filler(file, std::ios::binary);
  const std::string block(4096, 'x');
  while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) && filler.flush()) {}
}

// A 64 KiB tmpfs mounted at `at` (made): false where mounting is not permitted (not root).
bool mount_small_tmpfs(const std::filesystem::path& at) {
  std::filesystem::create_directories(at);
  return std::system(("mount -t tmpfs -o size=64k tmpfs '" + at.string() + "' 2>/dev/null").c_str()) == 0;
}

// What the sampler said of the writes it could not make, from its thread.
struct WriteFailures {
  std::mutex mutex;
  std::vector<std::string> messages;
  std::function<void(const std::string&)> callback() {
    return [this](const std::string& message) {
      std::lock_guard lock(mutex);
      messages.push_back(message);
    };
  }
  // Whether one was said within 5 s.
  bool wait() {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(mutex);
        if (!messages.empty()) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

}  // namespace

// A disk that filled while the sampler appended host.csv left half a line at its end and nothing
// was said. On a real full file system (a 64 KiB tmpfs; mounting needs root): the file ends at
// its last whole line, its samples stop there, and that is said once and kept for the manifest.
TEST(Sampler, AFullDiskEndsAFileAtItsLastWholeLineAndIsSaidOnce) {
  ScratchDir d;
  const auto small = d / "small";
  if (!mount_small_tmpfs(small)) GTEST_SKIP() << "cannot mount a tmpfs here (not root)";
  Unmount unmount{small};
  WriteFailures said;
  SamplerOptions o;
  o.node_dir = small;
  o.interval_s = 0.001;
  o.flush_s = 0;
  o.on_write_failure = said.callback();
  auto s = Sampler::start(o, nullptr, {}, {});
  ASSERT_TRUE(s);
  // The rest of the file system filled: host.csv grows to the end of its last page, then a write is cut short.
  fill(small / "filler");
  ASSERT_TRUE(said.wait()) << "no write failed: " << std::filesystem::file_size(small / "host.csv") << " bytes";
  const auto size_when_stopped = std::filesystem::file_size(small / "host.csv");
  // Space again: the file stays as it stopped (samples after a gap would read as if sampling went on).
  std::filesystem::remove(small / "filler");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  s.value()->stop();

  ASSERT_EQ(said.messages.size(), 1u);
  EXPECT_EQ(said.messages[0].rfind("cannot write " + (small / "host.csv").string() + ": No space left on device; its samples stop ", 0), 0u)
      << said.messages[0];
  EXPECT_EQ(s.value()->report().missing.at("samples"), said.messages[0]);
  const auto text = slurp(small / "host.csv");
  EXPECT_EQ(text.size(), size_when_stopped);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "no half line at the end";
  EXPECT_GT(count_lines(text), 10u);
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) EXPECT_EQ(std::count(line.begin(), line.end(), ','), 3) << line;
}

// A flush of many lines that the disk takes only part of: the whole lines it took stay. The file
// was cut back to before the flush, and those lines were lost; here, the file system full before
// the first flush, every sample was (host.csv held its header alone).
TEST(Sampler, AFlushTheDiskTakesPartOfKeepsTheWholeLinesItWrote) {
  ScratchDir d;
  const auto small = d / "small";
  if (!mount_small_tmpfs(small)) GTEST_SKIP() << "cannot mount a tmpfs here (not root)";
  Unmount unmount{small};
  WriteFailures said;
  SamplerOptions o;
  o.node_dir = small;
  o.interval_s = 0.001;
  o.flush_s = 1;  // about a thousand lines a flush, some 40 KiB: more than host.csv's page has room for
  o.on_write_failure = said.callback();
  auto s = Sampler::start(o, nullptr, {}, {});
  ASSERT_TRUE(s);
  fill(small / "filler");  // host.csv has its header; the rest of its page is all the room left
  ASSERT_TRUE(said.wait()) << "no write failed: " << std::filesystem::file_size(small / "host.csv") << " bytes";
  s.value()->stop();

  const auto text = slurp(small / "host.csv");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "no half line at the end";
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);  // the header
  std::size_t samples = 0, longest = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 3) << line;
    ++samples;
    longest = std::max(longest, line.size() + 1);
  }
  EXPECT_GT(samples, 10u) << "the whole lines of the refused flush that the disk took";
  // The disk took the flush up to the end of host.csv's page: the file ends within a line of it.
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_LT((page - text.size() % page) % page, longest) << text.size() << " bytes";
}

// A run's times after its start are the start plus the monotonic time elapsed: the wall clock
// stepping back while the run runs (an NTP step) moves none of them.
TEST(RunClock, TimesAfterTheStartAreTheStartPlusTheMonotonicTimeElapsed) {
  constexpr std::int64_t kWallStart = 1700000000000000000LL, kMonotonicStart = 86400000000000LL;
  const RunClock clock(kWallStart, kMonotonicStart);
  EXPECT_EQ(clock.start_ns(), kWallStart);
  EXPECT_EQ(clock.at(kMonotonicStart), kWallStart);
  EXPECT_EQ(clock.at(kMonotonicStart + 32000000000LL), kWallStart + 32000000000LL);
  // Read now, it stands for the wall clock now (none stepped within this test).
  const std::int64_t before = realtime_ns();
  const RunClock now = RunClock::starting_now();
  const std::int64_t after = realtime_ns();
  EXPECT_GE(now.start_ns(), before);
  EXPECT_LE(now.start_ns(), after);
  EXPECT_GE(now.now(), now.start_ns());
}

// The sampler stamps its samples on the run's clock it is given, not on the wall clock: a clock
// that started at an hour before 2001 gives samples within that hour, whatever the wall clock says.
TEST(Sampler, StampsSamplesOnTheRunsClock) {
  ScratchDir d;
  auto src = open_replay(kRecording);
  ASSERT_TRUE(src);
  constexpr std::int64_t kWallStart = 978303600000000000LL;  // 2000-12-31 23:00 UTC
  SamplerOptions o;
  o.node_dir = d.path();
  o.interval_s = 0.002;
  o.clock = RunClock(kWallStart, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch()).count());
  auto s = Sampler::start(o, std::move(src.value()), {0, 1}, {});
  ASSERT_TRUE(s) << s.error().message;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  s.value()->stop();
  std::istringstream lines(slurp(d / "gpu.csv"));
  std::string line;
  std::getline(lines, line);  // the header
  std::size_t samples = 0;
  while (std::getline(lines, line)) {
    const long long t = std::stoll(line.substr(0, line.find(',')));
    EXPECT_GE(t, kWallStart) << line;
    EXPECT_LT(t, kWallStart + 3600000000000LL) << line;
    ++samples;
  }
  EXPECT_GT(samples, 0u);
}
