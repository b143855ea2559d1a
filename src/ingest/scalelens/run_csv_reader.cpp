// The CSV files of a scalelens run folder (DESIGN.md): epochs.csv, steps.csv, nodes/<host>/gpu.csv,
// nodes/<host>/host.csv. Recognized by their header line; columns are found by name, so extra
// columns and any order are accepted.
#include <algorithm>
#include <array>
#include <map>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/reader.hpp"

namespace scalelens {
namespace {

enum class Kind { none, epochs, steps, gpu, host, comm };

std::string_view first_line(std::string_view text) {
  auto nl = text.find('\n');
  return trim(text.substr(0, nl));
}

Kind kind_of_header(std::string_view header) {
  if (header.rfind("rank,step,start_ns,end_ns,comm_ns", 0) == 0) return Kind::comm;
  if (header.rfind("rank,epoch,", 0) == 0) return Kind::epochs;
  if (header.rfind("rank,step,", 0) == 0) return Kind::steps;
  if (header.rfind("t_ns,gpu,", 0) == 0 || header == "t_ns,gpu") return Kind::gpu;
  if (header.rfind("t_ns,cpu_util_pct,", 0) == 0 || header == "t_ns,cpu_util_pct") return Kind::host;
  return Kind::none;
}

// The host a node file belongs to: nodes/<host>/gpu.csv.
std::string node_of(const std::filesystem::path& file) {
  auto dir = file.parent_path();
  if (dir.parent_path().filename() == "nodes") return dir.filename().string();
  return dir.filename().string();
}

// Reads the CSV `text` whose header names `columns`; calls row(fields) with fields indexed like
// `columns` (-1 columns absent). Lines of the wrong width go to `bad`.
template <std::size_t N, class Row>
bool for_each_row(std::string_view text, const std::array<std::string_view, N>& columns, std::size_t required,
                  ReadOutput& out, const std::filesystem::path& path, BadLines& bad, Row&& row) {
  LineCursor lines(text);
  std::string_view line;
  std::vector<std::string_view> fields;
  if (!lines.next(line)) return false;
  split_csv(line, fields);
  std::array<int, N> index{};
  for (std::size_t c = 0; c < N; ++c) index[c] = find_column(fields, columns[c]);
  for (std::size_t c = 0; c < required; ++c) {
    if (index[c] < 0) {
      out.error("bad-columns", fmt::format("header lacks the column '{}'; the file is left out", columns[c]), path, 1);
      return false;
    }
  }
  const std::size_t width = fields.size();
  std::array<std::string_view, N> picked;
  while (lines.next(line)) {
    if (line.empty()) continue;
    if (lines.last_was_unterminated()) {
      // An append-only file cut by a crash: its last line may be half written.
      out.warn("truncated-line", "the last line has no line end (file cut while being written?); it is left out",
               path, lines.line_no());
      break;
    }
    split_csv(line, fields);
    if (fields.size() != width) {
      bad.add(lines.line_no(), fmt::format("{} fields where the header has {}", fields.size(), width));
      continue;
    }
    for (std::size_t c = 0; c < N; ++c) picked[c] = index[c] >= 0 ? fields[index[c]] : std::string_view{};
    row(picked, lines.line_no());
  }
  return true;
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

void read_intervals(std::string_view text, Kind kind, const std::filesystem::path& path, ReadOutput& out) {
  static constexpr std::array<std::string_view, 5> epoch_cols{"rank", "epoch", "start_ns", "end_ns", "samples"};
  static constexpr std::array<std::string_view, 5> step_cols{"rank", "step", "start_ns", "end_ns", "samples"};
  auto& into = kind == Kind::epochs ? out.attach.epochs : out.attach.steps;
  BadLines bad;
  for_each_row(text, kind == Kind::epochs ? epoch_cols : step_cols, 4, out, path, bad,
               [&](const auto& f, std::int64_t line) {
                 auto rank = parse_int(f[0]);
                 auto index = parse_int(f[1]);
                 auto start = parse_int(f[2]);
                 auto end = parse_int(f[3]);
                 if (!rank || !index || !start || !end) return bad.add(line, "rank, index, start_ns and end_ns must be integers");
                 if (*rank < 0 || *start < 0 || *end < 0) return bad.add(line, "negative rank or time");
                 if (*end < *start) return bad.add(line, "end_ns is before start_ns");
                 Interval iv{static_cast<int>(*rank), *index, *start, *end, std::nullopt};
                 if (!trim(f[4]).empty()) {
                   auto s = parse_double(f[4]);
                   if (!s || *s < 0) return bad.add(line, "samples must be a non-negative number");
                   iv.samples = *s;
                 }
                 into.push_back(iv);
               });
  bad.report(out, path);
}

void read_gpu(std::string_view text, const std::filesystem::path& path, ReadOutput& out) {
  static constexpr std::array<std::string_view, 10> cols{"t_ns", "gpu", "uuid", "util_pct", "mem_util_pct",
                                                         "mem_used_bytes", "power_w", "energy_mj", "sm_clock_mhz", "temp_c"};
  std::string node = node_of(path);
  // All samples in file order first, tagged with their GPU, then split per GPU in one pass: a
  // single reservation up front instead of growing a vector per GPU.
  std::vector<GpuSeries> series;
  std::vector<std::uint32_t> owner;
  std::vector<GpuSample> samples;
  constexpr std::uint32_t kNone = ~0u;
  std::vector<std::uint32_t> by_index;
  const std::size_t first_len = text.find('\n') + 1;
  const std::size_t expected = first_len > 0 ? text.size() / first_len + 16 : 16;
  samples.reserve(expected);
  owner.reserve(expected);
  BadLines bad;
  for_each_row(text, cols, 2, out, path, bad, [&](const auto& f, std::int64_t line) {
    auto t = parse_int(f[0]);
    auto gpu = parse_int(f[1]);
    if (!t || *t < 0 || !gpu || *gpu < 0 || *gpu > 1'000'000) return bad.add(line, "t_ns and gpu must be non-negative integers");
    GpuSample s;
    s.t_ns = *t;
    if (!optional_number(f[3], s.util_pct) || !optional_number(f[4], s.mem_util_pct) ||
        !optional_number(f[5], s.mem_used_bytes) || !optional_number(f[6], s.power_w) ||
        !optional_number(f[7], s.energy_mj) || !optional_number(f[8], s.sm_clock_mhz) || !optional_number(f[9], s.temp_c))
      return bad.add(line, "a value is not a finite number (empty means not available)");
    if ((present(s.power_w) && s.power_w < 0) || (present(s.util_pct) && (s.util_pct < 0 || s.util_pct > 100)))
      return bad.add(line, "power below 0 or utilization outside 0..100");
    auto uuid = trim(f[2]);
    // Rows cycle through the GPUs: look the GPU up by index first, then confirm its uuid.
    std::uint32_t k = static_cast<std::size_t>(*gpu) < by_index.size() ? by_index[*gpu] : kNone;
    if (k == kNone || series[k].uuid != uuid) {
      k = 0;
      while (k < series.size() && (series[k].index != *gpu || series[k].uuid != uuid)) ++k;
      if (k == series.size()) series.push_back(GpuSeries{node, static_cast<int>(*gpu), std::string(uuid), {}, path.string(), false, {}});
      if (static_cast<std::size_t>(*gpu) < 4096) {
        if (by_index.size() <= static_cast<std::size_t>(*gpu)) by_index.resize(*gpu + 1, kNone);
        by_index[*gpu] = k;
      }
    }
    owner.push_back(k);
    samples.push_back(s);
  });
  bad.report(out, path);
  std::vector<std::size_t> counts(series.size());
  for (auto k : owner) ++counts[k];
  for (std::size_t k = 0; k < series.size(); ++k) series[k].samples.reserve(counts[k]);
  for (std::size_t i = 0; i < samples.size(); ++i) series[owner[i]].samples.push_back(samples[i]);
  for (auto& g : series) {
    auto by_time = [](const GpuSample& a, const GpuSample& b) { return a.t_ns < b.t_ns; };
    if (!std::is_sorted(g.samples.begin(), g.samples.end(), by_time)) std::stable_sort(g.samples.begin(), g.samples.end(), by_time);
    out.attach.gpus.push_back(std::move(g));
  }
}

void read_host(std::string_view text, const std::filesystem::path& path, ReadOutput& out) {
  static constexpr std::array<std::string_view, 4> cols{"t_ns", "cpu_util_pct", "mem_used_bytes", "cpu_energy_uj"};
  HostSeries series{node_of(path), path.string(), {}};
  BadLines bad;
  for_each_row(text, cols, 1, out, path, bad, [&](const auto& f, std::int64_t line) {
    auto t = parse_int(f[0]);
    if (!t || *t < 0) return bad.add(line, "t_ns must be a non-negative integer");
    HostSample s;
    s.t_ns = *t;
    if (!optional_number(f[1], s.cpu_util_pct) || !optional_number(f[2], s.mem_used_bytes) ||
        !optional_number(f[3], s.cpu_energy_uj))
      return bad.add(line, "a value is not a finite number (empty means not available)");
    series.samples.push_back(s);
  });
  bad.report(out, path);
  std::stable_sort(series.samples.begin(), series.samples.end(), [](auto& a, auto& b) { return a.t_ns < b.t_ns; });
  if (!series.samples.empty()) out.attach.host_series.push_back(std::move(series));
}

// comm/<rank>.csv from libscalelens-mpi: per step, the time spent inside MPI calls. Everything
// outside them counts as computation; blocking MPI time is all exposed (no overlap is visible).
void read_comm(std::string_view text, const std::filesystem::path& path, ReadOutput& out) {
  static constexpr std::array<std::string_view, 7> cols{"rank", "step", "start_ns", "end_ns", "comm_ns", "calls", "bytes"};
  std::map<int, RankBreakdown> ranks;
  BadLines bad;
  for_each_row(text, cols, 5, out, path, bad, [&](const auto& f, std::int64_t line) {
    auto rank = parse_int(f[0]);
    auto start = parse_int(f[2]);
    auto end = parse_int(f[3]);
    auto comm = parse_int(f[4]);
    if (!rank || !start || !end || !comm || *rank < 0 || *end < *start || *comm < 0)
      return bad.add(line, "rank, start_ns, end_ns and comm_ns must be integers with end_ns >= start_ns");
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
  for (auto& [rank, b] : ranks) out.attach.breakdown.push_back(std::move(b));
}

class RunCsvReader final : public Reader {
 public:
  std::string_view name() const override { return "scalelens-csv"; }
  bool recognizes(const std::filesystem::path&, std::string_view head) const override {
    return kind_of_header(first_line(head)) != Kind::none;
  }
  void read(const ReadContext& ctx, ReadOutput& out) const override {
    auto text = map_file(ctx.file);
    if (!text) return out.error("unreadable-file", text.error().message, ctx.file);
    switch (kind_of_header(first_line(text.value()))) {
      case Kind::epochs: return read_intervals(text.value(), Kind::epochs, ctx.file, out);
      case Kind::steps: return read_intervals(text.value(), Kind::steps, ctx.file, out);
      case Kind::gpu: return read_gpu(text.value(), ctx.file, out);
      case Kind::host: return read_host(text.value(), ctx.file, out);
      case Kind::comm: return read_comm(text.value(), ctx.file, out);
      case Kind::none: return;
    }
  }
};

}  // namespace

std::unique_ptr<Reader> make_run_csv_reader() { return std::make_unique<RunCsvReader>(); }

}  // namespace scalelens
