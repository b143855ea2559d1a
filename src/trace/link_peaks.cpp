#include "trace/link_peaks.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "common/text.hpp"
#include "trace/gpu_peaks.hpp"

namespace scalelens::trace {
namespace {

bool has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

struct Link {
  double gbps;
  std::string_view what;
};

// Per direction, from the vendors' datasheets: NVLink 2 (V100 SXM2) 6 links × 25 GB/s; NVLink 3
// (A100 SXM4) 12 × 25; NVLink 4 (H100/H200 SXM) 18 × 25; H100 NVL's bridge 600 GB/s and H200
// NVL's 900 GB/s both directions together; PCIe x16 3.0 15.75, 4.0 31.5, 5.0 63 GB/s; AMD MI300X
// Infinity Fabric 7 links × 64 GB/s. MI250/MI250X are left out: their GCD-to-GCD links differ
// by pair.
std::optional<Link> intra_link(std::string_view device) {
  const std::string_view family = gpu_family(device);
  const bool pcie = has(device, "PCIe") || has(device, "PCIE");
  if (family == "V100 SXM2") return Link{150, "NVLink 2"};
  if (family == "V100 PCIe" || family == "V100S PCIe") return Link{15.75, "PCIe 3.0 x16"};
  if (family == "A100") return pcie ? Link{31.5, "PCIe 4.0 x16"} : Link{300, "NVLink 3"};
  if (family == "H100 SXM" || family == "H200 SXM") return Link{450, "NVLink 4"};
  if (family == "H100 PCIe") return Link{63, "PCIe 5.0 x16"};
  if (family == "H100 NVL") return Link{300, "NVLink bridge"};
  if (family == "H200 NVL") return Link{450, "NVLink bridge"};
  if (family == "L4" || family == "L40S") return Link{31.5, "PCIe 4.0 x16"};
  if (family == "MI300X") return Link{448, "Infinity Fabric"};
  return std::nullopt;
}

// One port, per direction: InfiniBand EDR 100, HDR 200, NDR 400, XDR 800 Gb/s; HPE Slingshot-10
// 100, Slingshot-11 200 Gb/s; RoCE at the port's speed.
constexpr std::pair<std::string_view, double> kNetworks[] = {
    {"edr", 12.5}, {"hdr", 25}, {"ndr", 50}, {"xdr", 100}, {"slingshot10", 12.5}, {"slingshot11", 25},
    {"roce100", 12.5}, {"roce200", 25}, {"roce400", 50},
};

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::optional<double> intra_node_link_gbps(std::string_view device_name) {
  auto l = intra_link(device_name);
  return l ? std::optional<double>(l->gbps) : std::nullopt;
}

std::optional<double> network_gbps(std::string_view name) {
  const std::string key = alnum_lower(name);
  for (const auto& [n, gbps] : kNetworks)
    if (key == n) return gbps;
  return std::nullopt;
}

std::string network_names() {
  std::string s;
  for (const auto& [n, gbps] : kNetworks) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

void classify_links(CollectiveMatch& match, const LinkOptions& options, std::string_view device_name, int visible_gpus) {
  match.links.clear();
  if (options.gpus_per_node > 0) {
    match.gpus_per_node = options.gpus_per_node;
    match.gpus_per_node_from = "--gpus-per-node";
  } else if (visible_gpus > 1) {
    match.gpus_per_node = visible_gpus;
    match.gpus_per_node_from = "deviceProperties";
  }
  const auto intra = intra_link(device_name);
  const auto inter = options.network.empty() ? std::nullopt : network_gbps(options.network);
  std::map<std::string, std::vector<double>> busbw_of;
  std::map<std::string, LinkSummary> summary;
  for (auto& inst : match.instances) {
    if (match.gpus_per_node > 0 && !inst.members.empty()) {
      const int node = inst.members.front() / match.gpus_per_node;
      const bool one_node = std::all_of(inst.members.begin(), inst.members.end(), [&](int r) { return r / match.gpus_per_node == node; });
      inst.scope = one_node ? "intra-node" : "inter-node";
    }
    auto& s = summary[inst.scope.empty() ? "unknown" : inst.scope];
    s.scope = inst.scope.empty() ? "unknown" : inst.scope;
    ++s.calls;
    if (options.link_gbps) {
      inst.peak_gbps = *options.link_gbps;
      s.peak_from = "--link-gbps";
    } else if (inst.scope == "intra-node" && intra) {
      inst.peak_gbps = intra->gbps;
      s.peak_from = fmt::format("{} ({})", intra->what, gpu_family(device_name));
    } else if (inst.scope == "inter-node" && inter) {
      inst.peak_gbps = *inter;
      s.peak_from = "--network " + options.network;
    }
    s.peak_gbps = inst.peak_gbps;
    if (std::isfinite(inst.busbw_gbps)) {
      ++s.sized;
      busbw_of[s.scope].push_back(inst.busbw_gbps);
      if (inst.peak_gbps > 0) inst.busbw_of_peak = inst.busbw_gbps / inst.peak_gbps;
    }
  }
  for (auto& [scope, s] : summary) {
    const auto& v = busbw_of[scope];
    s.median_busbw_gbps = median(v);
    if (!v.empty()) s.max_busbw_gbps = *std::max_element(v.begin(), v.end());
    match.links.push_back(s);
  }
}

}  // namespace scalelens::trace
