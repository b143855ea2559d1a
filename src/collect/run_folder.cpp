#include "collect/run_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <random>

#include <fmt/format.h>
#include <simdjson.h>

#include "common/file_io.hpp"
#include "common/json.hpp"

namespace scalelens::collect {

namespace fs = std::filesystem;

std::string safe_component(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

fs::path rank_record_path(const fs::path& dir, int rank) { return dir / "ranks" / fmt::format("{}.json", rank); }

Result<bool> claim_run_folder(const fs::path& dir, const std::string& launch_key) {
  if (auto made = create_folder(dir.parent_path()); !made) return made.error();
  std::error_code ec;
  const fs::path owner_file = dir / ".owner";
  // Made aside and renamed into place: a folder never exists without its owner, so a wrapper that
  // finds it need not wait to learn whose it is. rename() fails when the name holds a non-empty folder.
  std::random_device rd;
  const fs::path aside = dir.parent_path() / fmt::format(".{}.claim-{}-{}", dir.filename().string(), ::getpid(), rd());
  // Named by the study folder: the hidden one being made is no name the user knows.
  if (!fs::create_directory(aside, ec) || ec)
    return Error{fmt::format("cannot create a run folder in it: {}", ec ? ec.message() : "a temporary name was taken"),
                 dir.parent_path().string()};
  const std::string owner_text = launch_key + "\n";
  auto written = write_file_atomic(aside / ".owner", owner_text);
  if (written && ::rename(aside.c_str(), dir.c_str()) == 0) return true;
  const int err = errno;
  fs::remove_all(aside, ec);
  if (!written) return Error{fmt::format("cannot write files in the study folder: {}", written.error().message), dir.parent_path().string()};
  if (err != EEXIST && err != ENOTEMPTY && err != EISDIR && err != ENOTDIR)
    return Error{fmt::format("cannot create the folder: {}", errno_text(err)), dir.string()};
  auto owner = read_file(owner_file);
  return owner && owner.value() == owner_text;
}

Result<bool> prepare_run_folder(const fs::path& dir, const std::string& host) {
  for (const auto& sub : {dir, dir / "ranks", dir / "traces", dir / "nodes" / host})
    if (auto made = create_folder(sub); !made) return made.error();
  // Write and remove a probe: permissions, read-only mounts and a full disk all show up here.
  auto probe = dir / "nodes" / host / fmt::format(".probe-{}", ::getpid());
  auto ok = write_file_atomic(probe, std::string(4096, ' '));
  if (!ok) return Error{fmt::format("cannot write files in the run folder: {}", ok.error().message), dir.string()};
  std::error_code ec;
  fs::remove(probe, ec);
  return true;
}

Result<bool> create_csv(const fs::path& path, std::string_view header) {
  std::error_code ec;
  if (fs::exists(path, ec)) return true;
  std::random_device rd;
  auto aside = path.parent_path() / fmt::format(".{}.{}-{}", path.filename().string(), ::getpid(), rd());
  if (auto w = write_file_atomic(aside, header); !w) return w.error();
  int rc = ::link(aside.c_str(), path.c_str());
  int err = errno;
  fs::remove(aside, ec);
  if (rc != 0 && err != EEXIST) return Error{fmt::format("cannot create: {}", errno_text(err)), path.string()};
  return true;
}

Result<std::optional<NodeLock>> NodeLock::try_acquire(const fs::path& lock_file) {
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot create the lock file: {}", errno_text(errno)), lock_file.string()};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return std::optional<NodeLock>{};
    return Error{fmt::format("cannot lock: {}", errno_text(err)), lock_file.string()};
  }
  return std::optional<NodeLock>(NodeLock(fd));
}

NodeLock::~NodeLock() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

void string_map(JsonWriter& w, std::string_view key, const std::map<std::string, std::string>& m) {
  w.key(key).begin_object();
  for (const auto& [k, v] : m) w.key(k).value(v);
  w.end_object();
}

void string_list(JsonWriter& w, std::string_view key, const std::vector<std::string>& v) {
  w.key(key).begin_array();
  for (const auto& s : v) w.value(s);
  w.end_array();
}

}  // namespace

Result<bool> write_rank_record(const fs::path& dir, const RankRecordData& r) {
  JsonWriter w;
  w.begin_object();
  w.key("schema").value("scalelens.rank/1");
  w.key("rank").value(r.rank);
  w.key("host").value(r.host);
  if (r.local_rank) w.key("local_rank").value(*r.local_rank);
  string_list(w, "devices", r.devices);
  w.key("start_ns").value(r.start_ns);
  if (r.end_ns) w.key("end_ns").value(*r.end_ns);
  if (r.exit_status) w.key("exit_status").value(*r.exit_status);
  if (r.signal) w.key("signal").value(*r.signal);
  if (r.pid) w.key("pid").value(*r.pid);
  w.end_object();
  return write_file_atomic(rank_record_path(dir, r.rank), w.str() + "\n");
}

Result<bool> write_node_record(const fs::path& dir, const NodeRecordData& n) {
  JsonWriter w;
  w.begin_object();
  w.key("schema").value("scalelens.node/1");
  w.key("host").value(n.host);
  w.key("gpu_source").value(n.gpu_source);
  w.key("gpus").begin_array();
  for (const auto& g : n.gpus) w.begin_object().key("index").value(g.index).key("uuid").value(g.uuid).key("name").value(g.name).end_object();
  w.end_array();
  string_map(w, "missing", n.missing);
  w.key("complete").value(n.complete);
  w.end_object();
  return write_file_atomic(dir / "nodes" / safe_component(n.host) / "node.json", w.str() + "\n");
}

std::vector<NodeRecordData> read_node_records(const fs::path& dir) {
  namespace od = simdjson::ondemand;
  std::vector<NodeRecordData> out;
  std::error_code ec;
  od::parser parser;
  for (const auto& e : fs::directory_iterator(dir / "nodes", ec)) {
    auto text = read_file(e.path() / "node.json");
    if (!text) continue;
    simdjson::padded_string json(text.value());
    od::document doc;
    od::object obj;
    if (parser.iterate(json).get(doc) != simdjson::SUCCESS || doc.get_object().get(obj) != simdjson::SUCCESS) continue;
    NodeRecordData n;
    n.host = e.path().filename().string();
    bool ok = true;
    for (auto field : obj) {
      std::string_view key, s;
      od::value v;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS || field.value().get(v) != simdjson::SUCCESS) {
        ok = false;
        break;
      }
      if (key == "host" && v.get_string().get(s) == simdjson::SUCCESS) n.host = s;
      else if (key == "gpu_source" && v.get_string().get(s) == simdjson::SUCCESS) n.gpu_source = s;
      else if (key == "complete") {
        bool b = false;
        if (v.get_bool().get(b) == simdjson::SUCCESS) n.complete = b;
      } else if (key == "gpus") {
        od::array arr;
        if (v.get_array().get(arr) != simdjson::SUCCESS) continue;
        for (auto item : arr) {
          od::object g;
          if (item.get_object().get(g) != simdjson::SUCCESS) continue;
          GpuInfo gi;
          for (auto gf : g) {
            std::string_view gk, gs;
            od::value gv;
            if (gf.unescaped_key().get(gk) != simdjson::SUCCESS || gf.value().get(gv) != simdjson::SUCCESS) break;
            std::int64_t i;
            if (gk == "index" && gv.get_int64().get(i) == simdjson::SUCCESS) gi.index = static_cast<int>(i);
            else if (gk == "uuid" && gv.get_string().get(gs) == simdjson::SUCCESS) gi.uuid = gs;
            else if (gk == "name" && gv.get_string().get(gs) == simdjson::SUCCESS) gi.name = gs;
          }
          n.gpus.push_back(std::move(gi));
        }
      } else if (key == "missing") {
        od::object m;
        if (v.get_object().get(m) != simdjson::SUCCESS) continue;
        for (auto mf : m) {
          std::string_view mk, ms;
          if (mf.unescaped_key().get(mk) == simdjson::SUCCESS && mf.value().get_string().get(ms) == simdjson::SUCCESS)
            n.missing.emplace(std::string(mk), std::string(ms));
        }
      }
    }
    if (ok) out.push_back(std::move(n));
  }
  return out;
}

std::optional<ManifestOwner> read_manifest_owner(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / "scalelens.json", ec)) return std::nullopt;
  ManifestOwner owner{"unreadable", ""};
  auto text = read_file(dir / "scalelens.json");
  if (!text) return owner;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text.value()).get(doc) != simdjson::SUCCESS) return owner;
  std::string_view s;
  if (doc["scheduler"]["kind"].get_string().get(s) == simdjson::SUCCESS) owner.scheduler = s;
  if (doc["scheduler"]["job_key"].get_string().get(s) == simdjson::SUCCESS) owner.job_key = s;
  return owner;
}

Result<bool> write_manifest(const fs::path& dir, const ManifestData& m) {
  JsonWriter w;
  w.begin_object();
  w.key("schema").value("scalelens.run/1");
  w.key("run_id").value(m.run_id);
  w.key("label").value(m.label);
  if (!m.system.empty()) w.key("system").value(m.system);
  if (m.world_size) w.key("world_size").value(*m.world_size);
  if (m.nodes) w.key("nodes").value(*m.nodes);
  if (m.gpus_per_node) w.key("gpus_per_node").value(*m.gpus_per_node);
  // Logical CPUs of this node: the report flags ranks that had to share cores.
  if (long cpus = ::sysconf(_SC_NPROCESSORS_ONLN); cpus > 0) w.key("cpus_per_node").value(static_cast<std::int64_t>(cpus));
  if (m.global_batch_size) w.key("global_batch_size").value(*m.global_batch_size);
  if (m.samples_per_epoch) w.key("samples_per_epoch").value(*m.samples_per_epoch);
  if (m.scaling) w.key("scaling").value(*m.scaling);
  w.key("start_ns").value(m.start_ns);
  if (m.end_ns) w.key("end_ns").value(*m.end_ns);
  if (m.exit_status) w.key("exit_status").value(*m.exit_status);
  w.key("status").value(m.complete ? "complete" : "running");
  string_list(w, "command", m.command);
  string_list(w, "hosts", m.hosts);
  w.key("scheduler").begin_object().key("kind").value(m.scheduler);
  for (const auto& [k, v] : m.scheduler_ids) w.key(k).value(v);
  if (!m.job_key.empty()) w.key("job_key").value(m.job_key);
  w.end_object();
  if (!m.launcher.empty()) w.key("launcher").value(m.launcher);
  string_map(w, "detected_from", m.detected_from);
  string_map(w, "missing", m.missing);
  w.key("sampling_interval_s").value(m.sampling_interval_s);
  if (!m.gpu_model.empty()) w.key("gpu_model").value(m.gpu_model);
  w.key("scalelens_version").value(SCALELENS_VERSION);
  w.end_object();
  return write_file_atomic(dir / "scalelens.json", w.str() + "\n");
}

std::map<std::string, std::string> merge_node_missing(const std::vector<NodeRecordData>& nodes) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> by_key;
  for (const auto& n : nodes)
    for (const auto& [k, v] : n.missing) by_key[k][v].push_back(n.host);
  std::map<std::string, std::string> out;
  for (const auto& [k, reasons] : by_key) {
    if (reasons.size() == 1 && reasons.begin()->second.size() == nodes.size()) {
      out[k] = reasons.begin()->first;
      continue;
    }
    for (const auto& [reason, hosts] : reasons)
      for (const auto& h : hosts) out[k + "@" + h] = reason;
  }
  return out;
}

}  // namespace scalelens::collect
