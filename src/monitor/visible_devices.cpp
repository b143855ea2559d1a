#include "monitor/visible_devices.hpp"

#include <algorithm>

#include "common/text.hpp"

namespace scalelens::monitor {
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    auto item = trim(std::string_view(s).substr(start, comma - start));
    if (!item.empty()) out.emplace_back(item);
    start = comma + 1;
  }
  return out;
}

// Position of the device named by `entry`, or -1.
long match(const std::vector<GpuDevice>& all, const std::string& entry) {
  if (auto i = parse_int(entry)) {
    for (std::size_t k = 0; k < all.size(); ++k)
      if (all[k].index == *i) return static_cast<long>(k);
    return -1;
  }
  long found = -1;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const auto& u = all[k].uuid;
    bool hit = u.rfind(entry, 0) == 0 || (u.rfind("GPU-", 0) == 0 && u.compare(4, entry.size(), entry) == 0 && !entry.empty());
    if (hit) {
      if (found >= 0) return -1;  // ambiguous prefix
      found = static_cast<long>(k);
    }
  }
  return found;
}

}  // namespace

VisibleDevices select_visible(const std::vector<GpuDevice>& all, const std::string& vendor_kind,
                              const std::map<std::string, std::string>& env) {
  std::vector<std::string> vars{"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"};
  if (vendor_kind == "amdsmi") {
    vars.insert(vars.end(), {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"});
  } else {
    vars.push_back("CUDA_VISIBLE_DEVICES");
  }
  VisibleDevices out;
  for (const auto& var : vars) {
    auto it = env.find(var);
    if (it == env.end()) continue;
    out.from = var;
    for (const auto& entry : split_list(it->second)) {
      long k = match(all, entry);
      if (k < 0) {
        out.unknown.push_back(entry);
        break;  // CUDA ignores the rest of the list after an invalid entry
      }
      if (std::find(out.positions.begin(), out.positions.end(), static_cast<std::size_t>(k)) == out.positions.end())
        out.positions.push_back(static_cast<std::size_t>(k));
    }
    return out;
  }
  for (std::size_t k = 0; k < all.size(); ++k) out.positions.push_back(k);
  return out;
}

std::vector<std::string> rank_devices(const std::map<std::string, std::string>& env) {
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}) {
    auto it = env.find(var);
    if (it != env.end()) return split_list(it->second);
  }
  return {};
}

}  // namespace scalelens::monitor
