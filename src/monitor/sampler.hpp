#pragma once
// The per-node sampler: a thread that reads the GPUs and the host every interval and appends
// nodes/<host>/gpu.csv and host.csv (DESIGN.md). Lines are buffered and written whole, with one
// write() per flush, at least every 5 s and at stop: a wrapper killed with SIGKILL leaves each
// file readable up to its last complete line.
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.hpp"
#include "monitor/gpu_source.hpp"
#include "monitor/host_probe.hpp"

namespace scalelens::monitor {

struct SamplerOptions {
  std::filesystem::path node_dir;  // nodes/<host>/
  double interval_s = 0.5;
  double flush_s = 1.0;  // clamped to 5 s, the contract's bound
  bool sample_host = true;
  HostProbeOptions host_options;
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
  int gpu_fd_ = -1, host_fd_ = -1;
  std::string gpu_buffer_, host_buffer_;
  std::string write_error_;
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
