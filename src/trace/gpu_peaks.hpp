#pragma once
// Peak dense tensor throughput and memory bandwidth of common GPUs, for MFU (model FLOPs
// utilisation: achieved FLOP/s over the GPU's peak at the precision the model computes in) and the
// roofline per operator.
#include <optional>
#include <string_view>

namespace scalelens::trace {

// Dense (no structured sparsity) peak TFLOP/s of the GPU named by Kineto's deviceProperties.name
// ("NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-32GB", "AMD Instinct MI300X" ...) at `precision`
// ("bf16", "fp16", "tf32", "fp32"); nullopt when the GPU or the precision is not in the table.
std::optional<double> peak_tflops(std::string_view device_name, std::string_view precision);

// Memory bandwidth (TB/s) of the GPU named by deviceProperties.name; nullopt when not in the table.
std::optional<double> peak_tbps(std::string_view device_name);

// The table's name for a device ("A100", "H100 SXM" ...); empty when unknown.
std::string_view gpu_family(std::string_view device_name);

}  // namespace scalelens::trace
