#pragma once
// Which GPUs this job may use: CUDA_VISIBLE_DEVICES (NVIDIA), ROCR_VISIBLE_DEVICES and
// HIP_VISIBLE_DEVICES (AMD), by index or UUID, with SLURM's node-wide GPU list first because a
// sampler serves every rank of its node, not only its own.
#include <map>
#include <string>
#include <vector>

#include "monitor/gpu_source.hpp"

namespace scalelens::monitor {

struct VisibleDevices {
  std::vector<std::size_t> positions;  // into the source's devices(), in the order named
  std::string from;                    // the variable that chose them; "" = all devices
  std::vector<std::string> unknown;    // entries that match no device (listed in the manifest)
};

// `vendor_kind` is the GpuSource kind ("nvml", "amdsmi", "replay"). Entries are indexes or UUIDs
// (a unique UUID prefix is accepted, as CUDA does; "GPU-" may be left out); as in CUDA, entries
// after an invalid one are ignored.
VisibleDevices select_visible(const std::vector<GpuDevice>& all, const std::string& vendor_kind,
                              const std::map<std::string, std::string>& env);

// The device list a rank names in its record (ranks/<rank>.json): the entries of its visible-devices variable.
std::vector<std::string> rank_devices(const std::map<std::string, std::string>& env);

}  // namespace scalelens::monitor
