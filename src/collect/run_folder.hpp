#pragma once
// The run folder as `scalelens run` writes it (DESIGN.md, "The run folder"): creation and the
// writability check at start, the manifest, rank records, node records and the sampler lock.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace scalelens::collect {

// A name that is safe as one path component on any file system: [A-Za-z0-9._-], others '_'.
std::string safe_component(std::string_view s);

// Claims <dir> for one launch: it appears, atomically, holding .owner with `launch_key`
// (JobEnvironment::launch_key). True when the folder is this launch's (made now, or by another
// wrapper of it); false when it exists and belongs to anything else (another launch, an older
// scalelens, a user's folder). Of two invocations racing for one name, exactly one gets it.
Result<bool> claim_run_folder(const std::filesystem::path& dir, const std::string& launch_key);

// Creates <dir>, ranks/, traces/ and nodes/<host>/, and proves that files can be written there
// (a full disk or a read-only folder is an error now, not at the end of a day's training).
Result<bool> prepare_run_folder(const std::filesystem::path& dir, const std::string& host);

// Creates `path` holding `header` if it does not exist, atomically (written aside, then
// link()ed into place): concurrent appenders never see a file without its header.
Result<bool> create_csv(const std::filesystem::path& path, std::string_view header);

// Exclusive lock on nodes/<host>/sampler.lock, held for the object's life: exactly one sampler
// per node, whichever wrapper gets there first; released by the kernel if the wrapper dies.
class NodeLock {
 public:
  // nullopt when another wrapper holds it; an error when the lock file cannot be made.
  static Result<std::optional<NodeLock>> try_acquire(const std::filesystem::path& lock_file);
  NodeLock(NodeLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  NodeLock& operator=(NodeLock&&) = delete;
  ~NodeLock();

 private:
  explicit NodeLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

struct RankRecordData {
  int rank = 0;
  std::string host;
  std::optional<int> local_rank;
  std::vector<std::string> devices;
  std::int64_t start_ns = 0;
  std::optional<std::int64_t> end_ns;
  std::optional<int> exit_status;
  std::optional<int> signal;
  std::optional<int> pid;
};
// ranks/<rank>.json of a run folder.
std::filesystem::path rank_record_path(const std::filesystem::path& dir, int rank);
// ranks/<rank>.json, schema scalelens.rank/1 (read by ingest/scalelens/rank_record_reader.cpp).
Result<bool> write_rank_record(const std::filesystem::path& dir, const RankRecordData& r);

struct GpuInfo {
  int index = 0;
  std::string uuid, name;
};
struct NodeRecordData {
  std::string host;
  std::string gpu_source;  // "" = none
  std::vector<GpuInfo> gpus;
  std::map<std::string, std::string> missing;
  bool complete = false;
};
// nodes/<host>/node.json (schema scalelens.node/1): what the node's sampler sampled and lacked.
Result<bool> write_node_record(const std::filesystem::path& dir, const NodeRecordData& n);
// Every node record of a run folder; unreadable ones are skipped.
std::vector<NodeRecordData> read_node_records(const std::filesystem::path& dir);

// The nodes' missing figures for the manifest: a reason every node gives is stated once under
// its key; otherwise each node's reason goes under "key@host".
std::map<std::string, std::string> merge_node_missing(const std::vector<NodeRecordData>& nodes);

struct ManifestData {
  std::string run_id, label;
  std::string system;  // "" = not written
  std::optional<int> world_size, nodes, gpus_per_node;
  std::optional<double> global_batch_size, samples_per_epoch;
  std::optional<std::string> scaling;
  std::int64_t start_ns = 0;
  std::optional<std::int64_t> end_ns;
  std::optional<int> exit_status;
  std::vector<std::string> command, hosts;
  std::string scheduler;
  std::string launcher;  // COMMAND's launcher when the wrappers wrap one (RunPlan::launcher)
  std::map<std::string, std::string> scheduler_ids, detected_from, missing;
  std::string job_key;   // JobEnvironment::job_key ("" outside a launcher): scheduler.job_key
  double sampling_interval_s = 0.5;
  std::string gpu_model;
  bool complete = false;
};
// What an existing scalelens.json says about the job that wrote it.
struct ManifestOwner {
  std::string scheduler;  // scheduler.kind
  std::string job_key;    // scheduler.job_key; "" when absent (no launcher, or an older scalelens)
};
// nullopt when `dir` holds no scalelens.json; a manifest that cannot be parsed gives kind "unreadable".
std::optional<ManifestOwner> read_manifest_owner(const std::filesystem::path& dir);

// scalelens.json, schema scalelens.run/1, through temp + rename.
Result<bool> write_manifest(const std::filesystem::path& dir, const ManifestData& m);

}  // namespace scalelens::collect
