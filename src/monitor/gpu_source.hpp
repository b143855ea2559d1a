#pragma once
// The GPU vendor layer: one small interface over NVML, AMD SMI and a replay of a recorded log.
// Vendor libraries are loaded at run time (dlopen), so one binary runs on machines with either
// vendor's driver or with none; a missing library is an error value, never a crash.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "model/study.hpp"

namespace scalelens::monitor {

struct GpuDevice {
  int index = 0;     // the vendor library's index (PCI bus order for NVML)
  std::string uuid;  // "GPU-…" for NVIDIA; as AMD SMI reports it for AMD
  std::string name;  // model, when the library says
};

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  virtual std::string_view kind() const = 0;  // "nvml", "amdsmi", "replay"
  virtual const std::vector<GpuDevice>& devices() const = 0;
  // Called once per sampling tick before the reads (a replay moves to its next recorded time).
  virtual void tick() {}
  // One reading of devices()[i]; t_ns is left to the caller. Figures the device lacks stay
  // missing (NaN); an error means the device gave nothing this time (gone, driver error).
  virtual Result<GpuSample> read(std::size_t i) = 0;
};

// Loads NVML from `library` (default libnvidia-ml.so.1). Errors say which library or symbol.
Result<std::unique_ptr<GpuSource>> open_nvml(const std::string& library = "libnvidia-ml.so.1");
// Loads AMD SMI from `library` (default libamd_smi.so).
Result<std::unique_ptr<GpuSource>> open_amdsmi(const std::string& library = "libamd_smi.so");
// A recorded log in gpu.csv format (DESIGN.md): each tick() serves the next recorded time.
// A value "ERR" in a field makes that device's read fail (a driver error during the recording);
// a device absent at a recorded time reads as gone. After the last time every read fails.
Result<std::unique_ptr<GpuSource>> open_replay(const std::string& path);

// "auto" tries NVML then AMD SMI; "nvml", "amdsmi", "replay:FILE" choose one; "none" none.
// On failure, the error message explains why there are no GPU figures (e.g. no NVML library).
Result<std::unique_ptr<GpuSource>> open_gpu_source(const std::string& spec);

}  // namespace scalelens::monitor
