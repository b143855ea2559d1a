// The CSV files of a scalelens run folder (DESIGN.md): epochs.csv, steps.csv, nodes/<host>/gpu.csv,
// nodes/<host>/host.csv. Recognized by their header line; columns are found by name, so extra
// columns and any order are accepted.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <span>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/process_memory.hpp"
#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/clock_step.hpp"
#include "ingest/csv_rows.hpp"
#include "ingest/reader.hpp"
#include "ingest/time_order.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace {

enum class Kind { none, epochs, steps, gpu, host, comm };

std::string_view first_line(std::string_view text) {
  auto nl = text.find('\n');
  return trim(text.substr(0, nl));
}

// A header in our writers' order by its first columns (the reader then names any it lacks), else
// in any order by the columns a file of that kind cannot do without: a log written by other code
// (pandas, a hand-made script) orders its columns as it likes, and was silently not read.
Kind kind_of_header(std::string_view header) {
  if (header.rfind("rank,step,start_ns,end_ns,comm_ns", 0) == 0) return Kind::comm;
  if (header.rfind("rank,epoch,", 0) == 0) return Kind::epochs;
  if (header.rfind("rank,step,", 0) == 0) return Kind::steps;
  if (header.rfind("t_ns,gpu,", 0) == 0 || header == "t_ns,gpu") return Kind::gpu;
  if (header.rfind("t_ns,cpu_util_pct,", 0) == 0 || header == "t_ns,cpu_util_pct") return Kind::host;
  std::vector<std::string_view> names;
  split_csv(header, names);
  // Only a header of names (pandas' unnamed index column included): a first line of other text
  // holding those words, one line of JSON say, is no log of ours.
  for (std::string_view n : names)
    if (!std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ' ' || c == '.'; }))
      return Kind::none;
  auto has = [&](std::initializer_list<std::string_view> columns) {
    return std::all_of(columns.begin(), columns.end(), [&](std::string_view c) { return find_column(names, c) >= 0; });
  };
  if (has({"rank", "step", "start_ns", "end_ns", "comm_ns"})) return Kind::comm;
  if (has({"rank", "epoch", "start_ns", "end_ns"})) return Kind::epochs;
  if (has({"rank", "step", "start_ns", "end_ns"})) return Kind::steps;
  if (has({"t_ns", "gpu"})) return Kind::gpu;
  if (has({"t_ns", "cpu_util_pct"})) return Kind::host;
  return Kind::none;
}

// The host a node file belongs to: nodes/<host>/gpu.csv.
std::string node_of(const std::filesystem::path& file) {
  auto dir = file.parent_path();
  if (dir.parent_path().filename() == "nodes") return dir.filename().string();
  return dir.filename().string();
}

// Optional numeric field: empty means "not available"; anything else must be a finite number.
bool optional_number(std::string_view s, float& into) {
  s = trim(s);
  if (s.empty()) return true;
  auto v = parse_double(s);
  if (!v) return false;
  into = static_cast<float>(*v);
  return true;
}
bool optional_number(std::string_view s, double& into) {
  s = trim(s);
  if (s.empty()) return true;
  auto v = parse_double(s);
  if (!v) return false;
  into = *v;
  return true;
}

// An epoch or step cannot last longer than its run (the enclosing manifest's start..end, when it
// has both, give or take the nodes' clock differences) nor than any run lasts.
void read_intervals(std::string_view text, Kind kind, const std::filesystem::path& path, const Run* run, ReadOutput& out) {
  static constexpr std::array<std::string_view, 5> epoch_cols{"rank", "epoch", "start_ns", "end_ns", "samples"};
  static constexpr std::array<std::string_view, 5> step_cols{"rank", "step", "start_ns", "end_ns", "samples"};
  auto& into = kind == Kind::epochs ? out.attach.epochs : out.attach.steps;
  BadLines bad, implausible;
  double max_ns = static_cast<double>(limits::kMaxRunNs);
  if (run && run->start_ns && run->end_ns)
    max_ns = std::min(max_ns, limits::span_ns(*run->start_ns, *run->end_ns) + static_cast<double>(limits::kIntervalSlackNs));
  const char* what = kind == Kind::epochs ? "epoch" : "step";
  // A rank's row that starts well before its row before ended (a rank stamps its rows in order):
  // its node's clock stepped back, or another run's rows were appended. Read as written, but said:
  // unsaid, the row across the step read short by the step and the next ones as if before it.
  std::map<int, std::pair<std::int64_t, std::int64_t>> last_of_rank;  // rank → its row before: index, end_ns
  constexpr std::int64_t kBackNs = 1'000'000'000;  // beyond how far a rank's rows may overlap by their stamping
  std::int64_t backs = 0, first_back_line = 0;
  std::string first_back;
  for_each_row(text, kind == Kind::epochs ? epoch_cols : step_cols, 4, out, path, bad,
               [&](const auto& f, std::int64_t line) {
                 auto rank = parse_int(f[0]);
                 auto index = parse_int(f[1]);
                 auto start = parse_int(f[2]);
                 auto end = parse_int(f[3]);
                 if (!rank || !index || !start || !end) return bad.add(line, "rank, index, start_ns and end_ns must be integers");
                 if (*rank < 0 || *start < 0 || *end < 0) return bad.add(line, "negative rank or time");
                 if (*end < *start) {
                   // A bad line, and said so, but kept as written where it is otherwise good: where a
                   // log of the run places a clock step back within it, ingest moves its end by the step
                   // and takes the line back (clock_step.hpp, ended_before_started). Only such lines
                   // give exactly this reason, which ingest finds them by.
                   Interval iv{static_cast<int>(*rank), *index, *start, *end, std::nullopt};
                   const auto s = trim(f[4]).empty() ? std::nullopt : parse_double(f[4]);
                   if (s && limits::valid_samples(*s)) iv.samples = *s;
                   if (!limits::valid_rank(*rank) || (!trim(f[4]).empty() && !iv.samples))
                     return bad.add(line, fmt::format("{}, and its rank or samples are not valid", kEndBeforeStart));
                   bad.add(line, std::string(kEndBeforeStart));
                   into.push_back(iv);
                   return;
                 }
                 if (*end == *start) return bad.add(line, fmt::format("end_ns equals start_ns: the {} lasts no time", what));
                 if (!limits::valid_rank(*rank))
                   return implausible.add(line, fmt::format("rank {} is beyond any world size; the line is left out", *rank));
                 if (limits::span_ns(*start, *end) > max_ns)
                   return implausible.add(line, fmt::format("{} {} of rank {} lasts {:.6g} s, longer than {}; the line is left out",
                                                            what, *index, *rank, limits::span_ns(*start, *end) * 1e-9,
                                                            max_ns < static_cast<double>(limits::kMaxRunNs)
                                                                ? fmt::format("its run ({:.6g} s in scalelens.json)",
                                                                              limits::span_ns(*run->start_ns, *run->end_ns) * 1e-9)
                                                                : std::string("any run lasts")));
                 auto [before, fresh] = last_of_rank.try_emplace(static_cast<int>(*rank), *index, *end);
                 if (!fresh && *start < before->second.second - kBackNs && backs++ == 0)
                   first_back_line = line,
                   first_back = fmt::format("rank {}'s {} {} starts {:.4g} s before its {} {} ends", *rank, what, *index,
                                            static_cast<double>(before->second.second - *start) * 1e-9, what, before->second.first);
                 before->second = {*index, *end};
                 Interval iv{static_cast<int>(*rank), *index, *start, *end, std::nullopt};
                 if (!trim(f[4]).empty()) {
                   auto s = parse_double(f[4]);
                   if (!s) return bad.add(line, "samples must be a number");
                   if (limits::valid_samples(*s)) iv.samples = *s;
                   else implausible.add(line, fmt::format("samples {:g} is not {}; that value is left out", *s, limits::samples_range()));
                 }
                 into.push_back(iv);
               });
  into.shrink_to_fit();  // held until the report is written: not the doubling's slack (a third of 10 epochs)
  if (backs > 0)
    out.warn("time-goes-backwards",
             fmt::format("times go back {} (the first at line {}: {}): the node's clock stepped back (an NTP step), or "
                         "rows of another run were appended; where a GPU or host log of the run places the step, the "
                         "times after it are moved forward by it (clock-stepped), else they are read as written",
                         count_of(backs, "times"), first_back_line, first_back),
             path, first_back_line);
  bad.report(out, path);
  implausible.report_implausible(out, path);
}

// Rows cycle through the GPUs of a node, so the GPUs named in the first lines and their mean line
// length say how many samples each GPU will have: per-GPU vectors are sized once, not grown.
struct SizeEstimate {
  std::size_t gpus = 0;         // GPUs seen in the first lines: only these get the reservation
  std::size_t samples_per_gpu = 0;
};

SizeEstimate samples_per_gpu_estimate(std::string_view text) {
  LineCursor lines(text);
  std::string_view line;
  std::vector<std::string_view> fields;
  if (!lines.next(line)) return {};
  split_csv(line, fields);
  const int gpu_column = find_column(fields, "gpu");
  if (gpu_column < 0) return {};
  const std::size_t data_start = lines.position();
  std::vector<std::int64_t> gpus;
  std::size_t scanned = 0;
  while (scanned < 256 && lines.next(line)) {
    ++scanned;
    split_csv(line, fields);
    if (static_cast<std::size_t>(gpu_column) >= fields.size()) continue;
    auto gpu = parse_int(fields[gpu_column]);
    if (gpu && std::find(gpus.begin(), gpus.end(), *gpu) == gpus.end()) gpus.push_back(*gpu);
  }
  if (gpus.empty()) return {};
  const double line_bytes = static_cast<double>(lines.position() - data_start) / static_cast<double>(scanned);
  const double lines_total = static_cast<double>(text.size() - data_start) / line_bytes;
  return {gpus.size(), static_cast<std::size_t>(lines_total / static_cast<double>(gpus.size()) * 1.05) + 16};
}

// Passes over one field that must not be parsed: to `stop`, or nullptr at a quote, a line end or
// (in a line's last field, whose stop is the line end) a comma that comes first: the general path
// deals with those, and counts a line with a field too many as bad.
const char* skip_plain_field(const char* p, const char* end, char stop) {
  for (; p < end && *p != stop; ++p)
    if (*p == '"' || *p == '\n' || *p == '\r' || *p == ',') return nullptr;
  return p;
}

// A node log's samples, as a copy of its run is found by (ingest, kBySamples): its length and its
// first and last 64 KiB, hashed. Its lines begin with their nanosecond stamps, so logs of two
// executions differ there; hashing every byte would cost ~10% of a large log's reading (std::hash
// runs at 3-6 GB/s, the parse at ~0.3 GB/s a thread) and tell nothing more.
std::uint64_t fingerprint_of_samples(std::string_view text) {
  constexpr std::size_t kEdge = 64u << 10;
  const std::hash<std::string_view> hash;
  if (text.size() <= 2 * kEdge) return hash(text);
  return hash(text.substr(0, kEdge)) ^ (hash(text.substr(text.size() - kEdge)) * 0x9E3779B97F4A7C15ULL) ^
         (std::hash<std::size_t>{}(text.size()) * 0xC2B2AE3D27D4EB4FULL);
}

// The run's end_ns stamped on this log's clock after it stepped back (BackwardTime::shift_at_end):
// the step, for ingest to move that end by.
void note_end_on_stepped_clock(const BackwardTime& backward, const Run* run, ReadOutput& out) {
  if (!run || !run->start_ns) return;
  if (!run->end_ns) {
    // No end to move, but the run's other times stamped on this node are placed all the same:
    // end_step_ns 0, the step's line (and its window, where it stepped once).
    if (!backward.clock_stepped_back()) return;
    out.end_step_line = backward.first_step_line();
    if (const auto window = backward.step_window()) out.end_step_window = *window;
    return;
  }
  const auto shift = backward.shift_at_end(*run->end_ns);
  if (!shift) return;
  out.end_step_ns = *shift, out.end_step_line = backward.first_step_line();
  if (const auto window = backward.step_window()) out.end_step_window = *window;
}

void read_gpu(std::string_view text, const std::filesystem::path& path, const Run* run, ReadOutput& out) {
  static constexpr std::array<std::string_view, 10> cols{"t_ns", "gpu", "uuid", "util_pct", "mem_util_pct",
                                                         "mem_used_bytes", "power_w", "energy_mj", "sm_clock_mhz", "temp_c"};
  const std::string node = node_of(path);
  const SizeEstimate estimate = samples_per_gpu_estimate(text);
  std::vector<GpuSeries> series;
  constexpr std::uint32_t kNone = ~0u;
  std::vector<std::uint32_t> by_index;
  BadLines bad, implausible;

  // Readings beyond physical limits are left out one by one, the rest of the line kept. One
  // compare each on the hot path (NaN, not available, compares false).
  auto check = [&](GpuSample& s, std::int64_t line) {
    if (limits::bad_power(s.power_w)) {
      implausible.add(line, fmt::format("power_w {:g} is outside 0…{:g} W per GPU", s.power_w, limits::kMaxGpuPowerW));
      s.power_w = kMissing;
    }
    if (limits::bad_percent(s.util_pct)) {
      implausible.add(line, fmt::format("util_pct {:g} is outside 0…100 %", s.util_pct));
      s.util_pct = kMissing;
    }
    if (limits::bad_percent(s.mem_util_pct)) {
      implausible.add(line, fmt::format("mem_util_pct {:g} is outside 0…100 %", s.mem_util_pct));
      s.mem_util_pct = kMissing;
    }
    if (s.energy_mj < 0) {
      implausible.add(line, fmt::format("energy_mj {:g} is negative", s.energy_mj));
      s.energy_mj = kMissing;
    }
    if (limits::bad_gpu_memory(s.mem_used_bytes)) {
      implausible.add(line, fmt::format("mem_used_bytes {:g} is outside 0…16 TiB", s.mem_used_bytes));
      s.mem_used_bytes = kMissing;
    }
  };
  // Whether series[k]'s uuid could stand unquoted on an ordinary line: the in-place parser then
  // matches it by comparing bytes instead of scanning the field.
  std::vector<char> plain_uuid;
  // The series of a GPU. Rows cycle through the GPUs: look the GPU up by index first, then confirm
  // its uuid.
  auto series_of = [&](std::int64_t gpu, std::string_view uuid) -> std::uint32_t {
    std::uint32_t k = static_cast<std::size_t>(gpu) < by_index.size() ? by_index[gpu] : kNone;
    if (k != kNone && series[k].uuid == uuid) return k;
    k = 0;
    while (k < series.size() && (series[k].index != gpu || series[k].uuid != uuid)) ++k;
    if (k == series.size()) {
      series.push_back(GpuSeries{node, static_cast<int>(gpu), std::string(uuid), {}, path.string(), false, {}, {}});
      plain_uuid.push_back(uuid.find_first_of(",\"\n\r") == std::string_view::npos);
      // GPUs beyond those of the first lines (a malformed file can name a new one per line)
      // grow as needed: reserving for each would take memory quadratic in the file.
      if (series.size() <= estimate.gpus) {
        series.back().samples.reserve(estimate.samples_per_gpu);
        auto& samples = series.back().samples;
        populate_for_writing(samples.data(), samples.capacity() * sizeof(GpuSample));
      }
    }
    if (static_cast<std::size_t>(gpu) < 4096) {
      if (by_index.size() <= static_cast<std::size_t>(gpu)) by_index.resize(gpu + 1, kNone);
      by_index[gpu] = k;
    }
    return k;
  };
  BackwardTime backward;  // a clock stepped back is said as for an nvidia-smi log
  // A row whose fields parsed: range checks, then filed under its GPU's series.
  auto add = [&](GpuSample s, std::uint32_t k, std::int64_t line) __attribute__((always_inline)) {
    if (limits::bad_power(s.power_w) || limits::bad_percent(s.util_pct) || limits::bad_percent(s.mem_util_pct) ||
        s.energy_mj < 0 || limits::bad_gpu_memory(s.mem_used_bytes)) [[unlikely]]
      check(s, line);
    s.t_ns = backward.see(k, s.t_ns, line);
    series[k].samples.push_back(s);
  };

  // The general path: fields split, blanks trimmed, any number syntax.
  auto general_row = [&](const auto& f, std::int64_t line) {
    auto t = parse_int(f[0]);
    auto gpu = parse_int(f[1]);
    if (!t || *t < 0 || !gpu || *gpu < 0 || *gpu > 1'000'000) return bad.add(line, "t_ns and gpu must be non-negative integers");
    GpuSample s;
    s.t_ns = *t;
    if (!optional_number(f[3], s.util_pct) || !optional_number(f[4], s.mem_util_pct) ||
        !optional_number(f[5], s.mem_used_bytes) || !optional_number(f[6], s.power_w) ||
        !optional_number(f[7], s.energy_mj) || !optional_number(f[8], s.sm_clock_mhz) || !optional_number(f[9], s.temp_c))
      return bad.add(line, "a value is not a finite number (empty means not available)");
    add(s, series_of(*gpu, trim(f[2])), line);
  };

  // gpu.csv holds nearly all of a study's bytes, so its ordinary lines (as the collector writes
  // them) are parsed in one pass, numbers converted where they stand; they give exactly what the
  // general path would, and anything else on a line sends that line the general way.
  // `Collectors` is the header as the collector writes it (the columns of `cols` in their order):
  // the loop over the fields then unrolls into straight code, no column looked up per field.
  // The collector stamps all of a tick's GPUs with one time, so a line's t_ns is most often the
  // line before's, byte for byte: compared, not converted again (the 19 digits are a fifth of a line).
  std::string_view last_t_text;
  std::int64_t last_t = 0;
  auto parse_line = [&]<bool Collectors>(const char* p, const char* end, std::span<const int> column_of_field,
                                         std::int64_t line) -> const char* {
    GpuSample s;
    std::int64_t t = 0, gpu = 0;
    std::string_view uuid;
    std::uint32_t known = kNone;  // the series, when the uuid was matched in place
    bool have_t = false, have_gpu = false;
    auto number = [&](const char* at, char stop, auto& into) {
      double v;
      const char* q = scan_plain_decimal(at, end, stop, v);
      if (q && q != at) into = static_cast<std::remove_reference_t<decltype(into)>>(v);
      return q;
    };
    const std::size_t width = Collectors ? cols.size() : column_of_field.size();
#pragma GCC unroll 10
    for (std::size_t i = 0; i < width; ++i) {
      const char stop = i + 1 < width ? ',' : '\n';
      const char* q = nullptr;
      switch (Collectors ? static_cast<int>(i) : column_of_field[i]) {
        case 0:
          if (const std::size_t n = last_t_text.size();
              n > 0 && static_cast<std::size_t>(end - p) > n && p[n] == stop && same_bytes(p, last_t_text.data(), n)) {
            t = last_t, have_t = true, q = p + n;
            break;
          }
          q = scan_plain_uint(p, end, stop, t);
          have_t = q && q != p;
          if (have_t) last_t_text = std::string_view(p, static_cast<std::size_t>(q - p)), last_t = t;
          break;
        case 1: q = scan_plain_uint(p, end, stop, gpu); have_gpu = q && q != p; break;
        case 2:
          // The uuid this GPU had on an earlier line, most likely the same again.
          if (have_gpu && static_cast<std::size_t>(gpu) < by_index.size() && by_index[gpu] != kNone && plain_uuid[by_index[gpu]]) {
            const std::string& expected = series[by_index[gpu]].uuid;
            if (static_cast<std::size_t>(end - p) > expected.size() && p[expected.size()] == stop &&
                same_bytes(p, expected.data(), expected.size())) {
              known = by_index[gpu];
              q = p + expected.size();
              break;
            }
          }
          q = skip_plain_field(p, end, stop);
          if (q && q != p && (*p == ' ' || *p == '\t' || q[-1] == ' ' || q[-1] == '\t')) return nullptr;
          if (q) uuid = std::string_view(p, static_cast<std::size_t>(q - p));
          break;
        case 3: q = number(p, stop, s.util_pct); break;
        case 4: q = number(p, stop, s.mem_util_pct); break;
        case 5: q = number(p, stop, s.mem_used_bytes); break;
        case 6: q = number(p, stop, s.power_w); break;
        case 7: q = number(p, stop, s.energy_mj); break;
        case 8: q = number(p, stop, s.sm_clock_mhz); break;
        case 9: q = number(p, stop, s.temp_c); break;
        default: q = skip_plain_field(p, end, stop); break;
      }
      if (!q || q == end) return nullptr;  // also a last line with no newline: the general path warns
      p = q + 1;
    }
    if (!have_t || !have_gpu || gpu > 1'000'000) return nullptr;
    s.t_ns = t;
    add(s, known != kNone ? known : series_of(gpu, uuid), line);
    return p;
  };
  int collectors_layout = -1;  // whether the header is the collector's; found at the first line
  auto fast_row = [&](const char* p, const char* end, std::span<const int> column_of_field, std::int64_t line) {
    if (collectors_layout < 0) {
      collectors_layout = column_of_field.size() == cols.size();
      for (std::size_t i = 0; i < column_of_field.size() && collectors_layout; ++i)
        collectors_layout = column_of_field[i] == static_cast<int>(i);
    }
    return collectors_layout ? parse_line.template operator()<true>(p, end, column_of_field, line)
                             : parse_line.template operator()<false>(p, end, column_of_field, line);
  };

  for_each_row(text, cols, 2, out, path, bad, general_row, LastLine::may_be_cut, fast_row);
  bad.report(out, path);
  implausible.report_implausible(out, path);
  backward.report(std::span(series), out, path);
  note_end_on_stepped_clock(backward, run, out);
  for (auto& g : series) out.attach.gpus.push_back(std::move(g));
}

void read_host(std::string_view text, const std::filesystem::path& path, const Run* run, ReadOutput& out) {
  static constexpr std::array<std::string_view, 4> cols{"t_ns", "cpu_util_pct", "mem_used_bytes", "cpu_energy_uj"};
  HostSeries series{node_of(path), path.string(), {}, {}};
  auto& samples = series.samples;
  BadLines bad, implausible;
  BackwardTime backward;  // the sampler stamps it with gpu.csv's clock: a step back is taken alike
  for_each_row(text, cols, 1, out, path, bad, [&](const auto& f, std::int64_t line) {
    auto t = parse_int(f[0]);
    if (!t || *t < 0) return bad.add(line, "t_ns must be a non-negative integer");
    HostSample s;
    s.t_ns = *t;
    if (!optional_number(f[1], s.cpu_util_pct) || !optional_number(f[2], s.mem_used_bytes) ||
        !optional_number(f[3], s.cpu_energy_uj))
      return bad.add(line, "a value is not a finite number (empty means not available)");
    if (limits::bad_percent(s.cpu_util_pct)) {
      implausible.add(line, fmt::format("cpu_util_pct {:g} is outside 0…100 %", s.cpu_util_pct));
      s.cpu_util_pct = kMissing;
    }
    if (s.cpu_energy_uj < 0) {
      implausible.add(line, fmt::format("cpu_energy_uj {:g} is negative", s.cpu_energy_uj));
      s.cpu_energy_uj = kMissing;
    }
    s.t_ns = backward.see(0, s.t_ns, line);
    samples.push_back(s);
  });
  bad.report(out, path);
  implausible.report_implausible(out, path);
  backward.report(std::span(&series, 1), out, path);
  note_end_on_stepped_clock(backward, run, out);
  if (!samples.empty()) out.attach.host_series.push_back(std::move(series));
}

// comm/<rank>.csv from libscalelens-mpi: per step, the time spent inside MPI calls. Everything
// outside them counts as computation; blocking MPI time is all exposed (no overlap is visible).
void read_comm(std::string_view text, const std::filesystem::path& path, ReadOutput& out) {
  static constexpr std::array<std::string_view, 7> cols{"rank", "step", "start_ns", "end_ns", "comm_ns", "calls", "bytes"};
  std::map<int, RankBreakdown> ranks;
  BadLines bad, implausible;
  for_each_row(text, cols, 5, out, path, bad, [&](const auto& f, std::int64_t line) {
    auto rank = parse_int(f[0]);
    auto start = parse_int(f[2]);
    auto end = parse_int(f[3]);
    auto comm = parse_int(f[4]);
    if (!rank || !start || !end || !comm || *rank < 0 || *end <= *start || *comm < 0)
      return bad.add(line, "rank, start_ns, end_ns and comm_ns must be integers with end_ns after start_ns");
    if (!limits::valid_rank(*rank))
      return implausible.add(line, fmt::format("rank {} is beyond any world size; the line is left out", *rank));
    if (limits::span_ns(*start, *end) > static_cast<double>(limits::kMaxRunNs))
      return implausible.add(line, fmt::format("a step of {:.6g} s is longer than any run lasts; the line is left out",
                                               limits::span_ns(*start, *end) * 1e-9));
    const double step_us = static_cast<double>(*end - *start) * 1e-3;
    const double comm_us = std::min(static_cast<double>(*comm) * 1e-3, step_us);
    auto& b = ranks[static_cast<int>(*rank)];
    b.rank = static_cast<int>(*rank);
    b.source = path.string();
    b.from_mpi = true;
    ++b.steps;
    b.step_time_us += step_us;
    b.comm_us += comm_us;
    b.exposed_comm_us += comm_us;
    b.comp_us += step_us - comm_us;
    b.span_us += step_us;
    b.step_times_us.push_back(step_us);
  });
  bad.report(out, path);
  implausible.report_implausible(out, path);
  for (auto& [rank, b] : ranks) out.attach.breakdown.push_back(std::move(b));
}

class RunCsvReader final : public Reader {
 public:
  std::string_view name() const override { return "scalelens-csv"; }
  bool recognizes(const std::filesystem::path&, std::string_view head) const override {
    return kind_of_header(first_line(head)) != Kind::none;
  }
  bool attaches_gpu_series(std::string_view head) const override { return kind_of_header(first_line(head)) == Kind::gpu; }
  bool attaches_epochs(std::string_view head) const override { return kind_of_header(first_line(head)) == Kind::epochs; }
  bool attaches_steps(std::string_view head) const override { return kind_of_header(first_line(head)) == Kind::steps; }
  void read(const ReadContext& ctx, ReadOutput& out) const override {
    // One buffer per ingest thread: run folders are thousands of small files. The calling
    // thread (in 'serve', a long-lived one) reads too, so a buffer grown by one very large file
    // is given back rather than kept for the life of the process.
    constexpr std::size_t kKeepBytes = 64u << 20;
    thread_local std::string buffer;
    auto text = read_file_reusing(ctx.file, buffer);
    if (!text) return out.error("unreadable-file", text.error().message, ctx.file);
    parse(text.value(), ctx.file, ctx.enclosing, out);
    // Within one process only (std::hash differs between builds): a group of processes runs one build.
    const auto kind = kind_of_header(first_line(text.value()));
    if ((kind == Kind::gpu && out.attach.has_gpus()) || (kind == Kind::host && !out.attach.host_series.empty()))
      out.samples_hash = fingerprint_of_samples(text.value()) ^
                         (std::hash<std::string>{}(node_of(ctx.file) + "/" + ctx.file.filename().string()) * 0x9E3779B97F4A7C15ULL);
    if (buffer.capacity() > kKeepBytes) std::string().swap(buffer);
  }

 private:
  static void parse(std::string_view text, const std::filesystem::path& file, const Run* run, ReadOutput& out) {
    switch (kind_of_header(first_line(text))) {
      case Kind::epochs: return read_intervals(text, Kind::epochs, file, run, out);
      case Kind::steps: return read_intervals(text, Kind::steps, file, run, out);
      case Kind::gpu: return read_gpu(text, file, run, out);
      case Kind::host: return read_host(text, file, run, out);
      case Kind::comm: return read_comm(text, file, out);
      case Kind::none: return;
    }
  }
};

}  // namespace

std::unique_ptr<Reader> make_run_csv_reader() { return std::make_unique<RunCsvReader>(); }

}  // namespace scalelens
