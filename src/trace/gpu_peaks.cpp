#include "trace/gpu_peaks.hpp"

#include <array>

namespace scalelens::trace {
namespace {

struct Peak {
  std::string_view family;
  double bf16, fp16, tf32, fp32;  // dense TFLOP/s; 0 = no such tensor-core mode
  double tbps;                    // memory bandwidth, TB/s
};

// Vendor datasheets, dense figures (the datasheets print sparse ones at 2x with an asterisk):
// - V100: NVIDIA Tesla V100 datasheet (2020): SXM2 125 tensor / 15.7 fp32; PCIe 112 / 14;
//   V100S PCIe 130 / 16.4. No bf16 or tf32 (PyTorch runs them as fp32: fp32 peak used for tf32).
// - A100: NVIDIA A100 datasheet (2021), same for SXM4/PCIe and 40/80 GB: bf16 = fp16 = 312,
//   tf32 156, fp32 19.5.
// - H100: NVIDIA H100 datasheet (2023): SXM 989.4 bf16/fp16, 494.7 tf32, 66.9 fp32;
//   PCIe 756.5, 378, 51.2; NVL 835.5, 417.5, 60 (the datasheet's 1979/1513/1671 are sparse).
// - H200: NVIDIA H200 datasheet (2024): SXM 989.4 bf16/fp16, 494.7 tf32, 67 fp32;
//   NVL 835.5, 417.5, 60.
// - L4: NVIDIA L4 datasheet (2023): 121 bf16/fp16, 60 tf32, 30.3 fp32.
// - L40S: NVIDIA L40S datasheet (2023): 362.05 bf16/fp16, 183 tf32, 91.6 fp32.
// - MI250X: AMD Instinct MI250X datasheet: 383 bf16/fp16, 95.7 fp32 matrix (no tf32: fp32 matrix).
//   MI250: 362.1 bf16/fp16, 90.5 fp32 matrix.
// - MI300X: AMD Instinct MI300X datasheet: 1307.4 bf16/fp16, 653.7 tf32 ("TF32"), 163.4 fp32.
// Memory bandwidth from the same datasheets: V100 0.9 (V100S 1.134); A100 40 GB 1.555, 80 GB SXM
// 2.039, 80 GB PCIe 1.935; H100 SXM 3.35, PCIe 2.0, NVL 3.9; H200 4.8; L4 0.3; L40S 0.864;
// MI250/MI250X 3.2768; MI300X 5.3.
// Order matters: the first family whose patterns all occur in the name wins (H100 PCIe before
// H100, L40S before L4, MI250X before MI250).
struct Entry {
  std::array<std::string_view, 2> patterns;  // all must occur ("" = none)
  Peak peak;
};
constexpr Entry kTable[] = {
    {{"V100S", ""}, {"V100S PCIe", 0, 130, 16.4, 16.4, 1.134}},
    {{"V100", "PCIE"}, {"V100 PCIe", 0, 112, 14, 14, 0.9}},
    {{"V100", "PCIe"}, {"V100 PCIe", 0, 112, 14, 14, 0.9}},
    {{"V100", ""}, {"V100 SXM2", 0, 125, 15.7, 15.7, 0.9}},
    {{"A100", "80GB PCIe"}, {"A100", 312, 312, 156, 19.5, 1.935}},
    {{"A100", "SXM4-80GB"}, {"A100", 312, 312, 156, 19.5, 2.039}},
    {{"A100", ""}, {"A100", 312, 312, 156, 19.5, 1.555}},
    {{"H100", "PCIe"}, {"H100 PCIe", 756.5, 756.5, 378, 51.2, 2.0}},
    {{"H100", "PCIE"}, {"H100 PCIe", 756.5, 756.5, 378, 51.2, 2.0}},
    {{"H100", "NVL"}, {"H100 NVL", 835.5, 835.5, 417.5, 60, 3.9}},
    {{"H100", ""}, {"H100 SXM", 989.4, 989.4, 494.7, 66.9, 3.35}},
    {{"H200", "NVL"}, {"H200 NVL", 835.5, 835.5, 417.5, 60, 4.8}},
    {{"H200", ""}, {"H200 SXM", 989.4, 989.4, 494.7, 67, 4.8}},
    {{"L40S", ""}, {"L40S", 362.05, 362.05, 183, 91.6, 0.864}},
    {{"NVIDIA L4", ""}, {"L4", 121, 121, 60, 30.3, 0.3}},
    {{"MI250X", ""}, {"MI250X", 383, 383, 95.7, 95.7, 3.2768}},
    {{"MI250", ""}, {"MI250", 362.1, 362.1, 90.5, 90.5, 3.2768}},
    {{"MI300X", ""}, {"MI300X", 1307.4, 1307.4, 653.7, 163.4, 5.3}},
};

const Peak* find(std::string_view name) {
  for (const auto& e : kTable) {
    bool all = true;
    for (auto p : e.patterns)
      if (!p.empty() && name.find(p) == std::string_view::npos) all = false;
    // "NVIDIA L4" must not take "NVIDIA L40" (a different GPU, not in the table).
    if (all && e.peak.family == "L4") {
      auto pos = name.find("NVIDIA L4");
      auto after = pos + 9;
      if (after < name.size() && name[after] != ' ' && name[after] != '-') all = false;
    }
    if (all) return &e.peak;
  }
  return nullptr;
}

}  // namespace

std::optional<double> peak_tflops(std::string_view device_name, std::string_view precision) {
  const Peak* p = find(device_name);
  if (!p) return std::nullopt;
  double v = precision == "bf16" ? p->bf16 : precision == "fp16" ? p->fp16 : precision == "tf32" ? p->tf32
           : precision == "fp32" ? p->fp32 : 0;
  if (v <= 0) return std::nullopt;
  return v;
}

std::optional<double> peak_tbps(std::string_view device_name) {
  const Peak* p = find(device_name);
  if (!p) return std::nullopt;
  return p->tbps;
}

std::string_view gpu_family(std::string_view device_name) {
  const Peak* p = find(device_name);
  return p ? p->family : std::string_view();
}

}  // namespace scalelens::trace
