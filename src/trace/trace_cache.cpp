#include "trace/trace_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "common/file_io.hpp"
#include "common/json.hpp"

namespace scalelens::trace {
namespace fs = std::filesystem;

namespace {

// Bump when what a summary holds, or how it is computed, changes: old cache files then miss.
constexpr std::string_view kSchema = "scalelens.trace-cache/4";
constexpr std::size_t kHashedBytes = std::size_t{1} << 20;

struct Key {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t hash = 0;
};

// Size, mtime and CRC-32s of the first and last MiB: a rewritten trace changes at least one
// (Kineto traces end with the profiler's window and timestamps), and reading 2 MiB is cheap next
// to parsing the rest.
std::optional<Key> key_of(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  Key k;
  k.size = static_cast<std::uint64_t>(st.st_size);
  k.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
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

// Whether summaries may be written into `dir`. A folder whose mode has no owner write bit counts
// as read-only even for root (shared data sets are published that way).
bool folder_writable(fs::path dir) {
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_mode & S_IWUSR) == 0) return false;
  return ::access(dir.c_str(), W_OK) == 0;
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
template <class Int>
bool integer(dom::element e, std::string_view key, Int& out) {
  std::int64_t v;
  if (e[key].get_int64().get(v)) return false;
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
  w.begin_object().key("size").value(static_cast<std::int64_t>(k.size)).key("mtime_ns").value(k.mtime_ns);
  w.key("hash").value(fmt::format("{:016x}", k.hash)).key("comm_kernel_regex").value(regex).end_object();
  return w.take();
}

}  // namespace

std::string summary_to_json(const RankSummary& r) {
  JsonWriter w;
  w.begin_object();
  w.key("rank").value(r.rank).key("rank_known").value(r.rank_known).key("world_size").value(r.world_size);
  w.key("device").value(r.device).key("steps_analysed").value(r.steps_analysed).key("gpu_events").value(r.gpu_events);
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
  w.key("warnings").begin_array();
  for (const auto& s : r.warnings) w.value(s);
  w.end_array();
  w.key("flops").value(r.flops).key("flops_ops").value(r.flops_ops).key("flops_precision").value(r.flops_precision);
  w.end_object();
  return w.take();
}

std::optional<RankSummary> summary_from_json(std::string_view json) {
  dom::parser parser;
  dom::element e;
  if (parser.parse(json.data(), json.size()).get(e)) return std::nullopt;
  RankSummary r;
  dom::element v;
  if (!integer(e, "rank", r.rank) || !boolean(e, "rank_known", r.rank_known) || !text(e, "device", r.device) ||
      !integer(e, "steps_analysed", r.steps_analysed) || !integer(e, "gpu_events", r.gpu_events))
    return std::nullopt;
  if (e["world_size"].get(v)) return std::nullopt;
  if (!v.is_null()) {
    std::int64_t ws;
    if (v.get_int64().get(ws)) return std::nullopt;
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
  if (e["warnings"].get_array().get(list)) return std::nullopt;
  for (auto s : list) {
    std::string_view t;
    if (s.get_string().get(t)) return std::nullopt;
    r.warnings.emplace_back(t);
  }
  if (!num(e, "flops", r.flops) || !integer(e, "flops_ops", r.flops_ops) || !text(e, "flops_precision", r.flops_precision))
    return std::nullopt;
  return r;
}

fs::path cache_file(const fs::path& trace, const std::string& comm_regex) {
  // One file per regex: the regex decides which kernels are communication.
  const auto regex_tag = static_cast<std::uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(comm_regex.data()), static_cast<uInt>(comm_regex.size())));
  return trace.parent_path() / kCacheFolder / fmt::format("{}.{:08x}.summary.json", trace.filename().string(), regex_tag);
}

Result<RankSummary> analyse_file(const fs::path& path, const CommMatcher& comm, const std::string& comm_regex,
                                 const CacheOptions& cache, const ParseOptions& parse) {
  const bool use_cache = cache.enabled && !cache_disabled_by_env();
  std::optional<Key> key;
  fs::path where;
  std::string expected_key;
  if (use_cache && (key = key_of(path))) {
    where = cache_file(path, comm_regex);
    expected_key = key_json(*key, comm_regex);
    if (auto bytes = read_file(where)) {
      // {"schema": …, "key": {…}, "summary": {…}}: the key is compared as text.
      const std::string& t = bytes.value();
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
  RankSummary summary = analyse(parsed.value(), comm);
  // Silently without a cache where the trace's folder is read-only (shared data sets).
  if (key && folder_writable(where.parent_path().parent_path())) {
    std::error_code ec;
    fs::create_directory(where.parent_path(), ec);
    if (folder_writable(where.parent_path())) {
      std::string out = fmt::format("{{\"schema\":\"{}\",\"key\":{},\"summary\":{}}}", kSchema, expected_key,
                                    summary_to_json(summary));
      (void)write_file_atomic(where, out);
    }
  }
  return summary;
}

}  // namespace scalelens::trace
