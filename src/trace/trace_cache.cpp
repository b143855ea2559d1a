#include "trace/trace_cache.hpp"

#include <atomic>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <random>
#include <cstdlib>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "common/file_io.hpp"
#include "common/fnv1a.hpp"
#include "common/json.hpp"
#include "model/limits.hpp"

namespace scalelens::trace {
namespace fs = std::filesystem;

namespace {

// Bump when what a summary holds, or how it is computed, changes: old cache files then miss.
constexpr std::string_view kSchema = "scalelens.trace-cache/15";
constexpr std::size_t kHashedBytes = std::size_t{1} << 20;

struct Key {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t mtime_ns = 0;
  // The status change time too: a file rewritten in place with its size and mtime put back (the
  // middle of a trace edited, os.utime) kept its old summary. Nothing sets ctime back.
  std::int64_t ctime_ns = 0;
  std::uint64_t hash = 0;
};

// Device, inode, size, mtime and CRC-32s of the first and last MiB: a rewritten trace changes at
// least one (Kineto traces end with the profiler's window and timestamps), and reading 2 MiB is
// cheap next to parsing the rest. Device and inode tell two files of one name apart.
std::optional<Key> key_of(const fs::path& path) {
  // Only a regular file has a key; a pipe is not opened here: opened and closed unread, its writer
  // died of SIGPIPE, and the read that followed waited for a writer for ever.
  struct stat named {};
  if (::stat(path.c_str(), &named) != 0 || !S_ISREG(named.st_mode)) return std::nullopt;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  Key k;
  k.device = static_cast<std::uint64_t>(st.st_dev);
  k.inode = static_cast<std::uint64_t>(st.st_ino);
  k.size = static_cast<std::uint64_t>(st.st_size);
  k.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  k.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  std::vector<unsigned char> buf(std::min<std::uint64_t>(kHashedBytes, k.size));
  auto crc_at = [&](std::uint64_t offset) -> std::optional<std::uint32_t> {
    std::size_t have = 0;
    while (have < buf.size()) {
      ssize_t n = ::pread(fd, buf.data() + have, buf.size() - have, static_cast<off_t>(offset + have));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      have += static_cast<std::size_t>(n);
    }
    return static_cast<std::uint32_t>(::crc32(0, buf.data(), static_cast<uInt>(buf.size())));
  };
  auto head = crc_at(0), tail = crc_at(k.size - buf.size());
  if (!head || !tail) return std::nullopt;
  k.hash = (static_cast<std::uint64_t>(*head) << 32) | *tail;
  return k;
}

std::atomic<bool> g_cache_warnings{true};

// Said once per process (stderr): why summaries are not being cached.
void warn_once(const std::string& message) {
  if (!g_cache_warnings.load()) return;
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr, "scalelens: warning [cache-not-written]: %s; traces are parsed every time (--cache-dir DIR chooses another "
                         "folder, --no-cache silences this)\n", message.c_str());
  });
}

// Whether summaries may be written into the folder open as `fd`. A folder whose mode has no owner
// write bit counts as read-only even for root.
bool folder_writable(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_IWUSR) != 0 && ::faccessat(fd, ".", W_OK, 0) == 0;
}

// <cache root>/traces, opened without following a link there (a link planted in a shared cache
// folder would send our writes elsewhere); -1 when absent (and not created) or not usable.
int open_traces_folder(const fs::path& root, bool create) {
  if (create) {
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) {
      warn_once(fmt::format("{}: cannot create the cache folder: {}", root.string(), ec.message()));
      return -1;
    }
  }
  int root_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // the user's own choice: may be a link
  if (root_fd < 0) return -1;
  if (create && folder_writable(root_fd) && ::mkdirat(root_fd, "traces", 0700) != 0 && errno != EEXIST) {
    warn_once(fmt::format("{}/traces: cannot create: {}", root.string(), errno_text(errno)));
    ::close(root_fd);
    return -1;
  }
  int fd = ::openat(root_fd, "traces", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int err = errno;
  ::close(root_fd);
  if (fd < 0 && create)
    warn_once(err == ENOENT ? fmt::format("{}: the cache folder is not writable", root.string())
                            : fmt::format("{}/traces: {}", root.string(),
                                          err == ELOOP || err == ENOTDIR ? "a symbolic link or not a folder, not followed"
                                                                         : errno_text(err)));
  return fd;
}

std::optional<std::string> read_cached(const fs::path& root, const std::string& name) {
  int dir = open_traces_folder(root, false);
  if (dir < 0) return std::nullopt;
  // O_NONBLOCK: a pipe planted at an entry's name would block the open until a writer came.
  int fd = ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  ::close(dir);
  if (fd < 0) return std::nullopt;
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (std::int64_t{256} << 20)) {
    char buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

// Written aside under a fresh name (O_EXCL | O_NOFOLLOW: never through a planted link), then
// renamed over the old file: a reader sees the old summary or the new one, never half of one.
void store_cached(const fs::path& root, const std::string& name, std::string_view contents) {
  int dir = open_traces_folder(root, true);
  if (dir < 0) return;
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } closer{dir};
  if (!folder_writable(dir)) {
    warn_once(fmt::format("{}/traces: the cache folder is not writable", root.string()));
    return;
  }
  std::random_device rd;
  const std::string aside = fmt::format(".{}.{}-{:08x}", name, ::getpid(), rd());
  int fd = ::openat(dir, aside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    warn_once(fmt::format("{}/traces: cannot write: {}", root.string(), errno_text(errno)));
    return;
  }
  bool ok = true;
  for (std::size_t done = 0; ok && done < contents.size();) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::renameat(dir, aside.c_str(), dir, name.c_str()) != 0) ::unlinkat(dir, aside.c_str(), 0);
}

bool cache_disabled_by_env() {
  const char* v = std::getenv("SCALELENS_NO_CACHE");
  return v && *v && std::string_view(v) != "0";
}

// The number fields of a step and of HTA's figures, by name: writing and reading go through one
// list, so a field added to one side cannot be missed by the other.
constexpr std::pair<std::string_view, double StepFigures::*> kStepNumbers[] = {
    {"step_time_us", &StepFigures::step_time_us}, {"comp_us", &StepFigures::comp_us},
    {"comm_us", &StepFigures::comm_us},           {"overlap_us", &StepFigures::overlap_us},
    {"exposed_comm_us", &StepFigures::exposed_comm_us}, {"mem_us", &StepFigures::mem_us},
    {"busy_us", &StepFigures::busy_us},           {"span_us", &StepFigures::span_us},
    {"idle_us", &StepFigures::idle_us},           {"dataloader_us", &StepFigures::dataloader_us},
    {"dataloader_gpu_idle_us", &StepFigures::dataloader_gpu_idle_us},
};
constexpr std::pair<std::string_view, double HtaFigures::*> kHtaNumbers[] = {
    {"kernel_time_us", &HtaFigures::kernel_time_us}, {"idle_us", &HtaFigures::idle_us},
    {"compute_us", &HtaFigures::compute_us},         {"non_compute_us", &HtaFigures::non_compute_us},
    {"idle_pct", &HtaFigures::idle_pct},             {"compute_pct", &HtaFigures::compute_pct},
    {"non_compute_pct", &HtaFigures::non_compute_pct}, {"comm_us", &HtaFigures::comm_us},
    {"overlap_us", &HtaFigures::overlap_us},
};

void write_step(JsonWriter& w, const StepFigures& s) {
  w.begin_object();
  w.key("step").value(s.step);
  for (const auto& [name, field] : kStepNumbers) w.key(name).value(s.*field);
  w.key("gpu_events").value(s.gpu_events).key("cut_off").value(s.cut_off);
  w.end_object();
}

void write_hta(JsonWriter& w, const HtaFigures& h) {
  w.begin_object();
  w.key("has_gpu_rows").value(h.has_gpu_rows);
  for (const auto& [name, field] : kHtaNumbers) w.key(name).value(h.*field);
  w.key("overlap_pct").value(h.overlap_pct);
  w.end_object();
}

namespace dom = simdjson::dom;

// A number (null → NaN, missing → error).
bool num(dom::element e, std::string_view key, double& out) {
  dom::element v;
  if (e[key].get(v)) return false;
  if (v.is_null()) {
    out = std::nan("");
    return true;
  }
  return !v.get_double().get(out);
}
// A whole number the field can hold: never cut (a rank of 2^32 + 5 read as 5) nor wrapped (a
// count of -1 as 2^64 - 1).
template <class Int>
bool integer(dom::element e, std::string_view key, Int& out) {
  std::int64_t v;
  if (e[key].get_int64().get(v) || !std::in_range<Int>(v)) return false;
  out = static_cast<Int>(v);
  return true;
}
bool text(dom::element e, std::string_view key, std::string& out) {
  std::string_view s;
  if (e[key].get_string().get(s)) return false;
  out = std::string(s);
  return true;
}
bool boolean(dom::element e, std::string_view key, bool& out) { return !e[key].get_bool().get(out); }

bool read_step(dom::element e, StepFigures& s) {
  for (const auto& [name, field] : kStepNumbers)
    if (!num(e, name, s.*field)) return false;
  return integer(e, "step", s.step) && integer(e, "gpu_events", s.gpu_events) && boolean(e, "cut_off", s.cut_off);
}

bool read_hta(dom::element e, HtaFigures& h) {
  for (const auto& [name, field] : kHtaNumbers)
    if (!num(e, name, h.*field)) return false;
  double pct = 0;
  if (!boolean(e, "has_gpu_rows", h.has_gpu_rows) || !num(e, "overlap_pct", pct)) return false;
  if (!std::isnan(pct)) h.overlap_pct = pct;
  return true;
}

std::string key_json(const Key& k, const std::string& regex) {
  JsonWriter w;
  w.begin_object().key("device").value(static_cast<std::int64_t>(k.device)).key("inode").value(static_cast<std::int64_t>(k.inode));
  w.key("size").value(static_cast<std::int64_t>(k.size)).key("mtime_ns").value(k.mtime_ns).key("ctime_ns").value(k.ctime_ns);
  w.key("hash").value(fmt::format("{:016x}", k.hash)).key("comm_kernel_regex").value(regex).end_object();
  return w.take();
}

}  // namespace

std::string summary_to_json(const RankSummary& r) {
  JsonWriter w;
  w.begin_object();
  w.key("rank").value(r.rank).key("rank_known").value(r.rank_known).key("world_size").value(r.world_size);
  w.key("backend").value(r.backend).key("start_ns").value(r.start_ns).key("base_time_ns").value(r.base_time_ns);
  w.key("device").value(r.device).key("visible_gpus").value(r.visible_gpus).key("steps_analysed").value(r.steps_analysed).key("gpu_events").value(r.gpu_events);
  w.key("gpu_paced").value(r.gpu_paced);
  w.key("steps").begin_array();
  for (const auto& s : r.steps) write_step(w, s);
  w.end_array();
  w.key("no_step");
  write_step(w, r.no_step);
  w.key("total");
  write_step(w, r.total);
  w.key("collectives").begin_array();
  for (const auto& c : r.collectives) {
    w.begin_object().key("name").value(c.name).key("count").value(c.count).key("time_us").value(c.time_us);
    w.key("bytes").value(c.bytes).key("sized").value(c.sized).key("time_sized_us").value(c.time_sized_us).end_object();
  }
  w.end_array();
  w.key("kernels").begin_array();
  for (const auto& k : r.kernels) {
    w.begin_object().key("name").value(k.name).key("class").value(static_cast<int>(k.cls)).key("count").value(k.count);
    w.key("time_us").value(k.time_us).end_object();
  }
  w.end_array();
  w.key("hta_filtered");
  write_hta(w, r.hta_filtered);
  w.key("hta_unfiltered");
  write_hta(w, r.hta_unfiltered);
  w.key("step_numbers").begin_array();
  for (auto n : r.step_numbers) w.value(n);
  w.end_array();
  w.key("calls").begin_array();
  for (const auto& c : r.calls) {
    w.begin_object().key("group").value(c.group).key("name").value(c.name).key("start_ns").value(c.start_ns);
    w.key("dur_ns").value(c.dur_ns).key("bytes").value(c.bytes).key("group_size").value(c.group_size).key("step").value(c.step);
    w.key("point_to_point").value(c.point_to_point).key("sends").value(c.sends).key("peer").value(c.peer);
    w.key("exposed_ns").begin_array();
    for (auto x : c.exposed_ns) w.value(x);
    w.end_array().end_object();
  }
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& s : r.warnings) w.value(s);
  w.end_array();
  w.key("flops").value(r.flops).key("flops_ops").value(r.flops_ops).key("flops_precision").value(r.flops_precision);
  w.key("shaped_ops").value(r.shaped_ops).key("ops").begin_array();
  for (const auto& o : r.ops) {
    w.begin_object().key("name").value(o.name).key("shapes").value(o.shapes).key("types").value(o.types);
    w.key("calls").value(o.calls).key("gpu_events").value(o.gpu_events).key("gpu_time_us").value(o.gpu_time_us);
    w.key("flops").value(o.flops).key("bytes").value(o.bytes).key("precision").value(o.precision).key("why").value(o.why);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take();
}

// What a trace's summary can physically hold (model/limits.hpp): a cache entry (or a gathered
// summary) outside it was not written by this program from a trace, and its figures would be shown
// as measured (a step of -14 ms, a world size of 0). Such an entry is a miss: the trace is parsed.
bool plausible(const RankSummary& r) {
  constexpr double kMaxUs = limits::kMaxRunSeconds * 1e6;
  auto time_us = [&](double v) { return std::isnan(v) || (v >= 0 && v <= kMaxUs); };
  auto bytes = [](double v) { return std::isnan(v) || (v >= 0 && v <= 1e18); };  // unknown sizes are NaN
  auto step_ok = [&](const StepFigures& s) {
    return std::all_of(std::begin(kStepNumbers), std::end(kStepNumbers), [&](const auto& f) { return time_us(s.*f.second); });
  };
  if (!limits::valid_rank(r.rank) || r.visible_gpus < 0 || r.steps_analysed < 0 || r.gpu_events < 0) return false;
  if (r.world_size && (*r.world_size < 1 || *r.world_size > limits::kMaxWorldSize)) return false;
  if (!step_ok(r.no_step) || !step_ok(r.total) || !std::all_of(r.steps.begin(), r.steps.end(), step_ok)) return false;
  for (const auto& c : r.collectives)
    if (!time_us(c.time_us) || !time_us(c.time_sized_us) || !bytes(c.bytes)) return false;
  for (const auto& k : r.kernels)
    if (!time_us(k.time_us)) return false;
  for (const auto& c : r.calls)
    // A call's unknown size and group are -1 (CollectiveCall).
    if (c.dur_ns < 0 || c.dur_ns > kMaxUs * 1e3 || !(c.bytes == -1 || bytes(c.bytes)) || c.group_size < -1 ||
        c.group_size > limits::kMaxWorldSize || !(c.peer == -1 || limits::valid_rank(c.peer)))
      return false;
  return true;
}

std::optional<RankSummary> summary_from_json(std::string_view json) {
  dom::parser parser;
  dom::element e;
  if (parser.parse(json.data(), json.size()).get(e)) return std::nullopt;
  RankSummary r;
  dom::element v;
  if (!integer(e, "rank", r.rank) || !boolean(e, "rank_known", r.rank_known) || !text(e, "device", r.device) ||
      !integer(e, "visible_gpus", r.visible_gpus) || !integer(e, "steps_analysed", r.steps_analysed) || !integer(e, "gpu_events", r.gpu_events) ||
      !boolean(e, "gpu_paced", r.gpu_paced))
    return std::nullopt;
  if (!text(e, "backend", r.backend) || e["start_ns"].get(v)) return std::nullopt;
  if (!v.is_null()) {
    std::int64_t t;
    if (v.get_int64().get(t)) return std::nullopt;
    r.start_ns = t;
  }
  if (e["base_time_ns"].get(v)) return std::nullopt;
  if (!v.is_null()) {
    std::int64_t t;
    if (v.get_int64().get(t)) return std::nullopt;
    r.base_time_ns = t;
  }
  if (e["world_size"].get(v)) return std::nullopt;
  if (!v.is_null()) {
    std::int64_t ws;
    if (v.get_int64().get(ws) || ws < 1 || ws > limits::kMaxWorldSize) return std::nullopt;
    r.world_size = static_cast<int>(ws);
  }
  dom::array list;
  if (e["steps"].get_array().get(list)) return std::nullopt;
  for (auto s : list)
    if (!read_step(s, r.steps.emplace_back())) return std::nullopt;
  if (e["no_step"].get(v) || !read_step(v, r.no_step) || e["total"].get(v) || !read_step(v, r.total)) return std::nullopt;
  if (e["collectives"].get_array().get(list)) return std::nullopt;
  for (auto c : list) {
    auto& f = r.collectives.emplace_back();
    if (!text(c, "name", f.name) || !integer(c, "count", f.count) || !num(c, "time_us", f.time_us) ||
        !num(c, "bytes", f.bytes) || !integer(c, "sized", f.sized) || !num(c, "time_sized_us", f.time_sized_us))
      return std::nullopt;
  }
  if (e["kernels"].get_array().get(list)) return std::nullopt;
  for (auto k : list) {
    auto& f = r.kernels.emplace_back();
    int cls = 0;
    if (!text(k, "name", f.name) || !integer(k, "class", cls) || !integer(k, "count", f.count) ||
        !num(k, "time_us", f.time_us) || cls < 0 || cls > 2)
      return std::nullopt;
    f.cls = static_cast<KernelClass>(cls);
  }
  if (e["hta_filtered"].get(v) || !read_hta(v, r.hta_filtered) || e["hta_unfiltered"].get(v) ||
      !read_hta(v, r.hta_unfiltered))
    return std::nullopt;
  if (e["step_numbers"].get_array().get(list)) return std::nullopt;
  for (auto n : list) {
    std::int64_t x;
    if (n.get_int64().get(x)) return std::nullopt;
    r.step_numbers.push_back(x);
  }
  if (e["calls"].get_array().get(list)) return std::nullopt;
  for (auto c : list) {
    auto& f = r.calls.emplace_back();
    if (!text(c, "group", f.group) || !text(c, "name", f.name) || !integer(c, "start_ns", f.start_ns) ||
        !integer(c, "dur_ns", f.dur_ns) || !num(c, "bytes", f.bytes) || !integer(c, "group_size", f.group_size) || !integer(c, "step", f.step) ||
        !boolean(c, "point_to_point", f.point_to_point) || !boolean(c, "sends", f.sends) || !integer(c, "peer", f.peer))
      return std::nullopt;
    dom::array exposed;
    if (c["exposed_ns"].get_array().get(exposed)) return std::nullopt;
    for (auto x : exposed) {
      std::int64_t v;
      if (x.get_int64().get(v)) return std::nullopt;
      f.exposed_ns.push_back(v);
    }
  }
  if (e["warnings"].get_array().get(list)) return std::nullopt;
  for (auto s : list) {
    std::string_view t;
    if (s.get_string().get(t)) return std::nullopt;
    r.warnings.emplace_back(t);
  }
  if (!num(e, "flops", r.flops) || !integer(e, "flops_ops", r.flops_ops) || !text(e, "flops_precision", r.flops_precision))
    return std::nullopt;
  if (!integer(e, "shaped_ops", r.shaped_ops) || e["ops"].get_array().get(list)) return std::nullopt;
  for (auto o : list) {
    auto& f = r.ops.emplace_back();
    if (!text(o, "name", f.name) || !text(o, "shapes", f.shapes) || !text(o, "types", f.types) || !integer(o, "calls", f.calls) ||
        !integer(o, "gpu_events", f.gpu_events) || !num(o, "gpu_time_us", f.gpu_time_us) || !num(o, "flops", f.flops) ||
        !num(o, "bytes", f.bytes) || !text(o, "precision", f.precision) || !text(o, "why", f.why))
      return std::nullopt;
  }
  if (!plausible(r)) return std::nullopt;
  return r;
}

void set_cache_warnings(bool on) { g_cache_warnings.store(on); }

fs::path default_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (auto d = env("SCALELENS_CACHE_DIR"); !d.empty()) return d;
  // XDG: a relative XDG_CACHE_HOME is invalid and ignored.
  if (auto d = env("XDG_CACHE_HOME"); !d.empty() && fs::path(d).is_absolute()) return fs::path(d) / "scalelens";
  if (auto home = env("HOME"); !home.empty()) return fs::path(home) / ".cache" / "scalelens";
  return {};
}

namespace {

// One file per (trace identity, regex): the name is a 64-bit FNV-1a of the key, whose full text
// inside the file is what decides a hit. From the basis the names were first made with, the
// standard's short of its last digit: the standard's would orphan every summary already cached.
std::string cache_name(const std::string& key) {
  constexpr std::uint64_t kNameBasis = 1469598103934665603ULL;
  return fmt::format("{:016x}.summary.json", fnv1a_64(key, kNameBasis));
}

}  // namespace

std::optional<fs::path> cache_file(const fs::path& trace, const std::string& comm_regex, const CacheOptions& cache) {
  const fs::path root = cache.dir.empty() ? default_cache_dir() : cache.dir;
  auto key = key_of(trace);
  if (root.empty() || !key) return std::nullopt;
  return root / "traces" / cache_name(key_json(*key, comm_regex));
}

namespace {
// A trace whose every event was left out (times written as strings, say) has nothing to analyse:
// an error naming why, not a rank without GPU work.
std::optional<std::string> nothing_readable(const ParsedTrace& t) {
  if (t.total_events == 0 || !t.events.empty() || t.issues.empty()) return std::nullopt;
  std::string why;
  for (const auto& i : t.issues)
    why += (why.empty() ? "" : "; ") + (i.count > 1 ? fmt::format("{} ({} events)", i.message, i.count) : i.message);
  return fmt::format("none of its {} events could be read, so there is nothing to analyse: {}", t.total_events, why);
}
}  // namespace

Result<RankSummary> analyse_file(const fs::path& path, const CommMatcher& comm, const std::string& comm_regex,
                                 const CacheOptions& cache, const ParseOptions& parse) {
  const fs::path root = cache.dir.empty() ? default_cache_dir() : cache.dir;
  const bool use_cache = cache.enabled && !cache_disabled_by_env() && !root.empty();
  std::optional<Key> key;
  std::string name, expected_key;
  if (use_cache && (key = key_of(path))) {
    expected_key = key_json(*key, comm_regex);
    name = cache_name(expected_key);
    if (auto bytes = read_cached(root, name)) {
      // {"schema": …, "key": {…}, "summary": {…}}: the key is compared as text.
      const std::string& t = *bytes;
      const std::string prefix = fmt::format("{{\"schema\":\"{}\",\"key\":{},\"summary\":", kSchema, expected_key);
      if (t.size() > prefix.size() + 1 && t.compare(0, prefix.size(), prefix) == 0 && t.back() == '}') {
        if (auto r = summary_from_json(std::string_view(t).substr(prefix.size(), t.size() - prefix.size() - 1))) {
          r->file = path.string();
          r->cached = true;
          return std::move(*r);
        }
      }
    }
  }
  auto parsed = load_kineto(path, parse);
  if (!parsed) return parsed.error();
  if (auto why = nothing_readable(parsed.value())) return Error{*why, path.string()};
  RankSummary summary = analyse(parsed.value(), comm);
  if (key)
    store_cached(root, name, fmt::format("{{\"schema\":\"{}\",\"key\":{},\"summary\":{}}}", kSchema, expected_key,
                                         summary_to_json(summary)));
  return summary;
}

}  // namespace scalelens::trace
