#pragma once
// The per-node sampler: a thread that reads the GPUs and the host every interval and appends
// nodes/<host>/gpu.csv and host.csv (DESIGN.md). Lines are buffered and written whole, with one
// write() per flush, at least every 5 s and at stop: a wrapper killed with SIGKILL leaves each
// file readable up to its last complete line.
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.hpp"
#include "monitor/gpu_source.hpp"
#include "monitor/host_probe.hpp"

namespace scalelens::monitor {

// A run's clock: the wall clock read once, at the run's start, carried on by the monotonic clock
// (std::chrono::steady_clock), so that every later time is the start plus the time elapsed. A step
// of the wall clock while the run runs (an NTP step back) then enters none of its files; stamped
// on the wall clock, a run's end, epochs and samples after the step were that much early.
class RunClock {
 public:
  RunClock(std::int64_t wall_start_ns, std::int64_t monotonic_start_ns)
      : wall_start_ns_(wall_start_ns), monotonic_start_ns_(monotonic_start_ns) {}
  // Both clocks read now.
  static RunClock starting_now();
  std::int64_t start_ns() const { return wall_start_ns_; }
  // The time `monotonic_ns` (steady_clock's, in nanoseconds) stands for.
  std::int64_t at(std::int64_t monotonic_ns) const { return wall_start_ns_ + (monotonic_ns - monotonic_start_ns_); }
  std::int64_t now() const;
  // SCALELENS_CLOCK for the run's command, whose logging helpers (scalelens.hpp, scalelens.log)
  // then stamp epochs and steps on this clock: "<start_ns>,<monotonic_ns at start>" (steady_clock
  // is CLOCK_MONOTONIC, one clock for every process of the node).
  std::string for_environment() const;

 private:
  std::int64_t wall_start_ns_, monotonic_start_ns_;
};

struct SamplerOptions {
  std::filesystem::path node_dir;  // nodes/<host>/
  double interval_s = 0.5;
  double flush_s = 1.0;  // clamped to 5 s, the contract's bound
  bool sample_host = true;
  HostProbeOptions host_options;
  // Told, once per file and from the sampler's thread, when gpu.csv or host.csv can no longer be
  // written (a full disk, an I/O error): the file is cut back to its last whole line and its
  // samples stop there; the command is not disturbed. The report's `missing` says the same.
  std::function<void(const std::string& message)> on_write_failure;
  // What samples are stamped with: the run's clock (its start and end are on it too); else one
  // started with the sampler.
  std::optional<RunClock> clock;
};

struct SamplerReport {
  std::string gpu_source;                     // "nvml", "amdsmi", "replay", "" for none
  std::vector<GpuDevice> devices;             // the GPUs sampled
  std::map<std::string, std::string> missing;  // figure → why it is missing or partial
  std::size_t ticks = 0;
};

class Sampler {
 public:
  // `gpu` may be null (no GPU library); `missing` carries the reasons known before starting.
  // Fails (with file and reason) when the CSV files cannot be created.
  static Result<std::unique_ptr<Sampler>> start(SamplerOptions options, std::unique_ptr<GpuSource> gpu,
                                                std::vector<std::size_t> selected,
                                                std::map<std::string, std::string> missing);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  // Takes a last sample, writes everything and joins the thread. Idempotent.
  void stop();
  // What was sampled and what is missing; complete after stop().
  SamplerReport report() const;

 private:
  Sampler() = default;
  void loop();
  void sample_once();
  void flush();

  SamplerOptions options_;
  std::unique_ptr<GpuSource> gpu_;
  std::vector<std::size_t> selected_;
  std::unique_ptr<HostProbe> host_;
  // gpu.csv or host.csv: lines gather in `buffer` and go out whole at each flush. A file that
  // could not be written is closed for good (fd -1) and `stopped` says why.
  struct SampleFile {
    int fd = -1;
    std::filesystem::path path;
    std::string buffer;
    std::string stopped;
  };
  void flush(SampleFile& file);
  void stop_file(SampleFile& file, const std::string& error);
  SampleFile gpu_file_, host_file_;
  std::int64_t start_ns_ = 0;  // monotonic, to say how far into sampling a file stopped
  std::optional<RunClock> clock_;  // what samples are stamped with (set at start)
  struct DeviceStats {
    std::size_t reads = 0, failures = 0;
    std::string first_error;
    unsigned seen = 0;  // bit per figure that was ever present
  };
  std::vector<DeviceStats> stats_;
  SamplerReport report_;
  std::int64_t last_flush_ns_ = 0;

  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;
  bool stopped_ = false;
};

// CLOCK_REALTIME in nanoseconds: the contract's time base, so that nodes line up.
std::int64_t realtime_ns();

}  // namespace scalelens::monitor
