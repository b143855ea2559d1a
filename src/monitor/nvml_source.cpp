// NVIDIA through NVML, loaded with dlopen: a table of function pointers declared here (no NVML
// header is needed to build), resolved once; calls that a device does not support leave the
// figure missing.
#include <dlfcn.h>

#include <cstdint>

#include <fmt/format.h>

#include "monitor/gpu_source.hpp"
#include "monitor/vendor_library.hpp"

namespace scalelens::monitor {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kNvmlClockSm = 1;           // NVML_CLOCK_SM
constexpr unsigned kNvmlTemperatureGpu = 0;    // NVML_TEMPERATURE_GPU
struct NvmlUtilization { unsigned gpu, memory; };
struct NvmlMemory { unsigned long long total, free, used; };

struct NvmlTable {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*device_count)(unsigned*);
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*utilization)(nvmlDevice_t, NvmlUtilization*);
  nvmlReturn_t (*memory)(nvmlDevice_t, NvmlMemory*);
  nvmlReturn_t (*power_mw)(nvmlDevice_t, unsigned*);
  nvmlReturn_t (*energy_mj)(nvmlDevice_t, unsigned long long*);
  nvmlReturn_t (*clock_mhz)(nvmlDevice_t, unsigned, unsigned*);
  nvmlReturn_t (*temperature)(nvmlDevice_t, unsigned, unsigned*);
};

class NvmlSource final : public GpuSource {
 public:
  NvmlSource(void* lib, NvmlTable t) : lib_(lib), t_(t) {}
  ~NvmlSource() override {
    t_.shutdown();
    ::dlclose(lib_);
  }
  std::string_view kind() const override { return "nvml"; }
  const std::vector<GpuDevice>& devices() const override { return devices_; }

  Result<bool> enumerate() {
    unsigned count = 0;
    if (auto rc = t_.device_count(&count); rc != kNvmlSuccess) return Error{fmt::format("nvmlDeviceGetCount: {}", t_.error_string(rc)), ""};
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t h = nullptr;
      if (t_.handle_by_index(i, &h) != kNvmlSuccess) continue;  // e.g. no permission on this one
      char buf[96] = {};
      GpuDevice d;
      d.index = static_cast<int>(i);
      if (t_.uuid(h, buf, sizeof buf) == kNvmlSuccess) d.uuid = buf;
      buf[0] = 0;
      if (t_.name(h, buf, sizeof buf) == kNvmlSuccess) d.name = buf;
      devices_.push_back(std::move(d));
      handles_.push_back(h);
    }
    return true;
  }

  Result<GpuSample> read(std::size_t i) override {
    GpuSample s;
    nvmlDevice_t h = handles_.at(i);
    NvmlUtilization u{};
    auto rc = t_.utilization(h, &u);
    // A device that stops answering its most basic query is gone or broken: report, not guess.
    if (rc != kNvmlSuccess && rc != 3 /* NVML_ERROR_NOT_SUPPORTED */)
      return Error{fmt::format("nvmlDeviceGetUtilizationRates: {}", t_.error_string(rc)), ""};
    if (rc == kNvmlSuccess) {
      s.util_pct = static_cast<float>(u.gpu);
      s.mem_util_pct = static_cast<float>(u.memory);
    }
    NvmlMemory m{};
    if (t_.memory(h, &m) == kNvmlSuccess) s.mem_used_bytes = static_cast<float>(m.used);
    unsigned mw = 0;
    if (t_.power_mw(h, &mw) == kNvmlSuccess) s.power_w = static_cast<float>(mw / 1000.0);
    unsigned long long mj = 0;
    if (t_.energy_mj && t_.energy_mj(h, &mj) == kNvmlSuccess) s.energy_mj = static_cast<double>(mj);
    unsigned mhz = 0;
    if (t_.clock_mhz(h, kNvmlClockSm, &mhz) == kNvmlSuccess) s.sm_clock_mhz = static_cast<float>(mhz);
    unsigned c = 0;
    if (t_.temperature(h, kNvmlTemperatureGpu, &c) == kNvmlSuccess) s.temp_c = static_cast<float>(c);
    return s;
  }

 private:
  void* lib_;
  NvmlTable t_;
  std::vector<GpuDevice> devices_;
  std::vector<nvmlDevice_t> handles_;
};

}  // namespace

Result<std::unique_ptr<GpuSource>> open_nvml(const std::string& library) {
  auto opened = open_vendor_library("NVML", library);
  if (!opened) return opened.error();
  void* lib = opened.value();
  NvmlTable t{};
  std::string missing;
  resolve_symbol(lib, "nvmlInit_v2", t.init, missing);
  resolve_symbol(lib, "nvmlShutdown", t.shutdown, missing);
  resolve_symbol(lib, "nvmlErrorString", t.error_string, missing);
  resolve_symbol(lib, "nvmlDeviceGetCount_v2", t.device_count, missing);
  resolve_symbol(lib, "nvmlDeviceGetHandleByIndex_v2", t.handle_by_index, missing);
  resolve_symbol(lib, "nvmlDeviceGetUUID", t.uuid, missing);
  resolve_symbol(lib, "nvmlDeviceGetName", t.name, missing);
  resolve_symbol(lib, "nvmlDeviceGetUtilizationRates", t.utilization, missing);
  resolve_symbol(lib, "nvmlDeviceGetMemoryInfo", t.memory, missing);
  resolve_symbol(lib, "nvmlDeviceGetPowerUsage", t.power_mw, missing);
  resolve_symbol(lib, "nvmlDeviceGetClockInfo", t.clock_mhz, missing);
  resolve_symbol(lib, "nvmlDeviceGetTemperature", t.temperature, missing);
  if (!missing.empty()) {
    ::dlclose(lib);
    return Error{fmt::format("{} is not a usable NVML library: it lacks {}", library, missing), library};
  }
  std::string optional_missing;
  resolve_symbol(lib, "nvmlDeviceGetTotalEnergyConsumption", t.energy_mj, optional_missing);  // Volta and later
  if (auto rc = t.init(); rc != kNvmlSuccess) {
    std::string why = t.error_string(rc);
    ::dlclose(lib);
    return Error{fmt::format("nvmlInit failed: {} (no NVIDIA driver loaded?)", why), library};
  }
  auto source = std::make_unique<NvmlSource>(lib, t);
  if (auto ok = source->enumerate(); !ok) return Error{ok.error().message, library};
  return std::unique_ptr<GpuSource>(std::move(source));
}

}  // namespace scalelens::monitor
