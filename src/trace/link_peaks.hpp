#pragma once
// Peak bandwidth of the links a collective crosses, to hold its bus bandwidth against: the GPU's
// own link within a node (NVLink by generation, else PCIe) and one network port between nodes.
// All figures are per direction, GB/s, as nccl-tests' bus bandwidth is.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/collectives.hpp"

namespace scalelens::trace {

// Within a node: the GPU named by deviceProperties.name; nullopt when not in the table.
std::optional<double> intra_node_link_gbps(std::string_view device_name);
// Between nodes: one port of a network by name (edr, hdr, ndr, xdr, slingshot10, slingshot11,
// roce100, roce200, roce400; case and '-' ignored); nullopt when unknown.
std::optional<double> network_gbps(std::string_view name);
std::string network_names();  // "edr, hdr, ..." for help texts and errors

struct LinkOptions {
  int gpus_per_node = 0;              // --gpus-per-node; 0: from the traces' deviceProperties
  std::optional<double> link_gbps;    // --link-gbps: one peak for every call, overriding the tables
  std::string network;                // --network: the inter-node port
};

// Says of each matched call whether it stayed within one node (ranks r and s share a node when
// r / gpus_per_node == s / gpus_per_node: launchers place ranks node by node) and holds its bus
// bandwidth against that link's peak; fills match.links, one summary per scope. `visible_gpus`:
// how many GPUs the traces' deviceProperties list (the GPUs of a node, unless each process was
// given one), used when options.gpus_per_node is 0.
void classify_links(CollectiveMatch& match, const LinkOptions& options, std::string_view device_name, int visible_gpus);

}  // namespace scalelens::trace
