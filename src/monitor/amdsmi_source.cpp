// AMD through AMD SMI (ROCm), loaded with dlopen. Only calls whose arguments are scalars or
// stable prefixes of structures are used, so the table survives AMD SMI's structure changes
// between ROCm releases. Power is derived from the energy counter between two readings (the
// power-info structure changed layout across releases).
#include <dlfcn.h>

#include <cstdint>
#include <ctime>

#include <fmt/format.h>

#include "monitor/gpu_source.hpp"
#include "monitor/vendor_library.hpp"

namespace scalelens::monitor {
namespace {

using amdsmi_status_t = int;
using amdsmi_handle = void*;
constexpr amdsmi_status_t kAmdSuccess = 0;
constexpr std::uint64_t kInitAmdGpus = 1u << 1;  // AMDSMI_INIT_AMD_GPUS
constexpr int kMemTypeVram = 0;                  // AMDSMI_MEM_TYPE_VRAM
constexpr int kTempEdge = 0, kTempCurrent = 0;   // AMDSMI_TEMPERATURE_TYPE_EDGE, AMDSMI_TEMP_CURRENT

struct AmdTable {
  amdsmi_status_t (*init)(std::uint64_t);
  amdsmi_status_t (*shut_down)();
  amdsmi_status_t (*socket_handles)(std::uint32_t*, amdsmi_handle*);
  amdsmi_status_t (*processor_handles)(amdsmi_handle, std::uint32_t*, amdsmi_handle*);
  amdsmi_status_t (*activity)(amdsmi_handle, std::uint32_t*);  // amdsmi_engine_usage_t: gfx, umc, mm, reserved…
  amdsmi_status_t (*memory_usage)(amdsmi_handle, int, std::uint64_t*);
  amdsmi_status_t (*energy_count)(amdsmi_handle, std::uint64_t*, float*, std::uint64_t*);
  amdsmi_status_t (*temperature)(amdsmi_handle, int, int, std::int64_t*);
  amdsmi_status_t (*uuid)(amdsmi_handle, unsigned*, char*);
};

class AmdSmiSource final : public GpuSource {
 public:
  AmdSmiSource(void* lib, AmdTable t) : lib_(lib), t_(t) {}
  ~AmdSmiSource() override {
    t_.shut_down();
    ::dlclose(lib_);
  }
  std::string_view kind() const override { return "amdsmi"; }
  const std::vector<GpuDevice>& devices() const override { return devices_; }

  Result<bool> enumerate() {
    std::uint32_t sockets = 0;
    if (auto rc = t_.socket_handles(&sockets, nullptr); rc != kAmdSuccess) return Error{fmt::format("amdsmi_get_socket_handles: status {}", rc), ""};
    std::vector<amdsmi_handle> socket_handles(sockets);
    if (sockets && t_.socket_handles(&sockets, socket_handles.data()) != kAmdSuccess) return Error{"amdsmi_get_socket_handles failed", ""};
    for (auto s : socket_handles) {
      std::uint32_t n = 0;
      if (t_.processor_handles(s, &n, nullptr) != kAmdSuccess) continue;
      std::vector<amdsmi_handle> procs(n);
      if (n && t_.processor_handles(s, &n, procs.data()) != kAmdSuccess) continue;
      for (auto h : procs) {
        GpuDevice d;
        d.index = static_cast<int>(devices_.size());
        char buf[128] = {};
        unsigned len = sizeof buf;
        if (t_.uuid(h, &len, buf) == kAmdSuccess) d.uuid = buf;
        devices_.push_back(std::move(d));
        handles_.push_back(h);
        last_energy_.push_back({});
      }
    }
    return true;
  }

  Result<GpuSample> read(std::size_t i) override {
    GpuSample s;
    auto h = handles_.at(i);
    std::uint32_t usage[64] = {};  // generous: the structure is 3 counters and reserved words
    if (auto rc = t_.activity(h, usage); rc != kAmdSuccess) return Error{fmt::format("amdsmi_get_gpu_activity: status {}", rc), ""};
    s.util_pct = static_cast<float>(usage[0]);
    s.mem_util_pct = static_cast<float>(usage[1]);
    std::uint64_t used = 0;
    if (t_.memory_usage(h, kMemTypeVram, &used) == kAmdSuccess) s.mem_used_bytes = static_cast<float>(used);
    std::uint64_t acc = 0, stamp = 0;
    float resolution_uj = 0;
    if (t_.energy_count(h, &acc, &resolution_uj, &stamp) == kAmdSuccess && resolution_uj > 0) {
      s.energy_mj = static_cast<double>(acc) * resolution_uj / 1000.0;
      timespec ts{};
      ::clock_gettime(CLOCK_MONOTONIC, &ts);
      double now = ts.tv_sec + ts.tv_nsec * 1e-9;
      auto& last = last_energy_[i];
      if (last.t > 0 && now > last.t && s.energy_mj >= last.mj)
        s.power_w = static_cast<float>((s.energy_mj - last.mj) / 1000.0 / (now - last.t));
      last = {now, s.energy_mj};
    }
    std::int64_t c = 0;
    if (t_.temperature(h, kTempEdge, kTempCurrent, &c) == kAmdSuccess) s.temp_c = static_cast<float>(c);
    return s;
  }

 private:
  struct LastEnergy { double t = 0, mj = 0; };
  void* lib_;
  AmdTable t_;
  std::vector<GpuDevice> devices_;
  std::vector<amdsmi_handle> handles_;
  std::vector<LastEnergy> last_energy_;
};

}  // namespace

Result<std::unique_ptr<GpuSource>> open_amdsmi(const std::string& library) {
  auto opened = open_vendor_library("AMD SMI", library);
  if (!opened) return opened.error();
  void* lib = opened.value();
  AmdTable t{};
  std::string missing;
  resolve_symbol(lib, "amdsmi_init", t.init, missing);
  resolve_symbol(lib, "amdsmi_shut_down", t.shut_down, missing);
  resolve_symbol(lib, "amdsmi_get_socket_handles", t.socket_handles, missing);
  resolve_symbol(lib, "amdsmi_get_processor_handles", t.processor_handles, missing);
  resolve_symbol(lib, "amdsmi_get_gpu_activity", t.activity, missing);
  resolve_symbol(lib, "amdsmi_get_gpu_memory_usage", t.memory_usage, missing);
  resolve_symbol(lib, "amdsmi_get_energy_count", t.energy_count, missing);
  resolve_symbol(lib, "amdsmi_get_temp_metric", t.temperature, missing);
  resolve_symbol(lib, "amdsmi_get_gpu_device_uuid", t.uuid, missing);
  if (!missing.empty()) {
    ::dlclose(lib);
    return Error{fmt::format("{} is not a usable AMD SMI library: it lacks {}", library, missing), library};
  }
  if (auto rc = t.init(kInitAmdGpus); rc != kAmdSuccess) {
    ::dlclose(lib);
    return Error{fmt::format("amdsmi_init failed with status {} (no amdgpu driver loaded?)", rc), library};
  }
  auto source = std::make_unique<AmdSmiSource>(lib, t);
  if (auto ok = source->enumerate(); !ok) return Error{ok.error().message, library};
  return std::unique_ptr<GpuSource>(std::move(source));
}

Result<std::unique_ptr<GpuSource>> open_gpu_source(const std::string& spec) {
  if (spec == "none") return Error{"GPU sampling turned off (--gpu-source none)", ""};
  if (spec == "nvml") return open_nvml();
  if (spec == "amdsmi") return open_amdsmi();
  if (spec.rfind("replay:", 0) == 0) return open_replay(spec.substr(7));
  if (spec != "auto") return Error{fmt::format("unknown GPU source '{}' (auto, nvml, amdsmi, none, replay:FILE)", spec), ""};
  auto nvml = open_nvml();
  if (nvml && !nvml.value()->devices().empty()) return nvml;
  auto amd = open_amdsmi();
  if (amd && !amd.value()->devices().empty()) return amd;
  if (nvml) return nvml;  // NVML loaded but sees no device: the empty device list says so
  if (amd) return amd;
  return Error{fmt::format("{}; {}", nvml.error().message, amd.error().message), ""};
}

}  // namespace scalelens::monitor
