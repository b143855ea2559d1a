// nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] logs (docs/DESIGN.md, "Inputs").
//
// What nvidia-smi writes: a header "timestamp, index, name, uuid, utilization.gpu [%], ...,
// memory.used [MiB], power.draw [W], clocks.current.sm [MHz], temperature.gpu" (fields joined by
// ", "; units in brackets, also with `nounits`), then one line per GPU and sample. Without
// `nounits` the values carry their unit ("84 %", "41391 MiB", "535.56 W"). Fields a device cannot
// report read "[N/A]", "[Not Supported]" or "N/A". There is no total-energy query field in
// nvidia-smi (NVML's counter is not exposed by --query-gpu), so energy comes from power.draw.
//
// Each row is stamped when its GPU was read, so the rows of one sample differ by a few ms
// ("2024/06/01 11:27:05.177", "... 05.188", "... 05.192"), and the next sample follows after the
// -l/-lms interval. Without an index, uuid or pci.bus_id column the GPUs are told apart by their
// position within these bursts of rows (see demultiplex).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/reader.hpp"
#include "ingest/time_order.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace fs = std::filesystem;

namespace {

enum class Field { timestamp, index, uuid, bus_id, name, util_gpu, util_mem, mem_used, power, sm_clock, temp, other };

// nvidia-smi query names (as the header prints them) and what they become in the model.
// Several power queries exist; the best one present is used (see power_rank).
Field field_of(std::string_view query) {
  static const std::array<std::pair<std::string_view, Field>, 17> kFields{{
      {"timestamp", Field::timestamp},
      {"index", Field::index},
      {"uuid", Field::uuid},
      {"gpu_uuid", Field::uuid},
      {"pci.bus_id", Field::bus_id},
      {"gpu_bus_id", Field::bus_id},
      {"name", Field::name},
      {"utilization.gpu", Field::util_gpu},
      {"utilization.memory", Field::util_mem},
      {"memory.used", Field::mem_used},
      {"power.draw", Field::power},
      {"power.draw.average", Field::power},
      {"power.draw.instant", Field::power},
      {"clocks.sm", Field::sm_clock},
      {"clocks.current.sm", Field::sm_clock},
      {"temperature.gpu", Field::temp},
      {"gpu_name", Field::name},
  }};
  for (const auto& [q, f] : kFields)
    if (q == query) return f;
  return Field::other;
}

// A one-second average integrates to energy better than a single instant reading.
int power_rank(std::string_view query) {
  if (query == "power.draw.average") return 3;
  if (query == "power.draw") return 2;
  return 1;  // power.draw.instant
}

struct Column {
  Field field = Field::other;
  std::string header_unit;  // from "name [unit]"
};

// "memory.used [MiB]" -> ("memory.used", "MiB").
std::pair<std::string_view, std::string_view> split_header_field(std::string_view field) {
  field = trim(field);
  auto open = field.find(" [");
  if (open == std::string_view::npos || field.back() != ']') return {field, {}};
  return {trim(field.substr(0, open)), field.substr(open + 2, field.size() - open - 3)};
}

bool is_missing(std::string_view v) {
  return v.empty() || v == "N/A" || (v.front() == '[' && v.back() == ']');  // [N/A], [Not Supported], ...
}

// "YYYY/MM/DD HH:MM:SS[.fff]" (also with '-' between date parts) -> Unix ns. nvidia-smi prints the
// node's local time without a zone; it is taken as UTC, the usual setting of cluster nodes.
std::optional<std::int64_t> parse_timestamp(std::string_view s) {
  s = trim(s);
  if (s.size() < 19) return std::nullopt;
  auto num = [&](std::size_t pos, std::size_t len) -> std::optional<int> {
    int v = 0;
    auto [p, ec] = std::from_chars(s.data() + pos, s.data() + pos + len, v);
    if (ec != std::errc() || p != s.data() + pos + len) return std::nullopt;
    return v;
  };
  if ((s[4] != '/' && s[4] != '-') || s[7] != s[4] || s[10] != ' ' || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), sec = num(17, 2);
  // Years past 2261 overflow int64 nanoseconds; nvidia-smi prints real dates.
  if (!y || !mo || !d || !h || !mi || !sec || *y < 1970 || *y > 2261 || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 ||
      *sec > 60)
    return std::nullopt;
  std::int64_t frac_ns = 0;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20 || s.size() > 29) return std::nullopt;
    std::int64_t scale = 100'000'000;
    for (std::size_t i = 20; i < s.size(); ++i, scale /= 10) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      frac_ns += (s[i] - '0') * scale;
    }
  }
  // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
  const int yy = *y - (*mo <= 2);
  const int era = (yy >= 0 ? yy : yy - 399) / 400;
  const int yoe = yy - era * 400;
  const int doy = (153 * (*mo + (*mo > 2 ? -3 : 9)) + 2) / 5 + *d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = static_cast<std::int64_t>(era) * 146097 + doe - 719468;
  const std::int64_t secs = days * 86400 + *h * 3600 + *mi * 60 + *sec;
  return secs * 1'000'000'000 + frac_ns;
}

// Factor from `unit` to the model's unit of `field`, or nullopt for a unit that field never has.
std::optional<double> unit_factor(Field field, std::string_view unit) {
  switch (field) {
    case Field::util_gpu:
    case Field::util_mem:
      return unit.empty() || unit == "%" ? std::optional(1.0) : std::nullopt;
    case Field::mem_used:  // model: bytes
      if (unit.empty() || unit == "MiB") return 1024.0 * 1024.0;
      if (unit == "GiB") return 1024.0 * 1024.0 * 1024.0;
      if (unit == "KiB") return 1024.0;
      if (unit == "B") return 1.0;
      return std::nullopt;
    case Field::power:
      if (unit.empty() || unit == "W") return 1.0;
      if (unit == "mW") return 1e-3;
      return std::nullopt;
    case Field::sm_clock:
      if (unit.empty() || unit == "MHz") return 1.0;
      if (unit == "GHz") return 1000.0;
      return std::nullopt;
    case Field::temp:
      return unit.empty() || unit == "C" ? std::optional(1.0) : std::nullopt;
    default:
      return std::nullopt;
  }
}

// "535.56 W" -> 535.56 in the model's unit; the value's own unit wins over the header's.
std::optional<double> parse_measure(Field field, std::string_view value, std::string_view header_unit) {
  value = trim(value);
  std::string_view unit = header_unit;
  if (auto sp = value.rfind(' '); sp != std::string_view::npos) {
    unit = trim(value.substr(sp + 1));
    value = trim(value.substr(0, sp));
  }
  auto v = parse_double(value);
  auto f = unit_factor(field, unit);
  // Beyond float's range (the model stores floats) a reading is junk.
  if (!v || !f || std::abs(*v * *f) > 1e30) return std::nullopt;
  return *v * *f;
}

// Host of the file: "nodes/<host>/" in its path (a scalelens run folder), else its folder's name.
std::string node_of(const fs::path& file) {
  std::string host;
  for (auto it = file.begin(); it != file.end(); ++it) {
    if (*it != "nodes") continue;
    auto next = std::next(it);
    if (next != file.end() && std::next(next) != file.end()) host = next->string();
  }
  return host.empty() ? file.parent_path().filename().string() : host;
}

// A message nvidia-smi prints on its own before (or among) its CSV rows, which a log holds where
// both its output streams were redirected into it: "WARNING: infoROM is corrupted at gpu
// 0000:01:00.0" (nvidia-smi then exits with code 14, yet goes on logging), and what it prints of
// a GPU fallen off the bus or a driver it cannot reach ("Unable to determine the device handle for
// GPU0000:0B:00.0: Unknown Error").
bool is_nvsmi_message(std::string_view line) {
  const auto text = trim(line);
  for (std::string_view start : {"WARNING:", "Unable to determine the device handle", "Failed to initialize NVML",
                                 "No devices were found", "NVIDIA-SMI has failed"})
    if (text.starts_with(start)) return true;
  return false;
}

// The first number written with a decimal comma in `line` ("87,50" of "87,50 W"), or "": nvidia-smi
// joins its fields with ", ", so a comma between two digits is a number's, from a locale whose
// decimal separator is a comma, which splits that value into two CSV fields.
std::string_view decimal_comma_number(std::string_view line) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (std::size_t i = 1; i + 1 < line.size(); ++i) {
    if (line[i] != ',' || !digit(line[i - 1]) || !digit(line[i + 1])) continue;
    std::size_t begin = i, end = i + 1;
    while (begin > 0 && digit(line[begin - 1])) --begin;
    while (end < line.size() && digit(line[end])) ++end;
    return line.substr(begin, end - begin);
  }
  return {};
}

// A noheader line: a timestamp, then at least one measurement ("84 %", "535.56", "[N/A]" ...).
bool looks_like_timestamp_row(std::string_view line) {
  std::vector<std::string_view> fields;
  split_csv(line, fields);
  if (fields.size() < 2 || !parse_timestamp(fields[0])) return false;
  return std::any_of(fields.begin() + 1, fields.end(), [](std::string_view f) {
    f = trim(f);
    if (auto sp = f.rfind(' '); sp != std::string_view::npos) f = f.substr(0, sp);
    return parse_double(f).has_value();
  });
}

// --- Telling GPUs apart in a log without an index, uuid or pci.bus_id column ---------------------

// nvidia-smi stamps rows to the millisecond: rows this close are indistinguishable in time.
constexpr std::int64_t kStampResolutionNs = 2'000'000;
// nvidia-smi reads one GPU in a few ms (tens with long query lists); rows further apart than this
// are not taken for one sample unless the run's GPU count says so.
constexpr std::int64_t kMaxReadNs = 50'000'000;
// The pause between samples must be this many times the longest step within one.
constexpr double kMinPauseRatio = 4.0;

std::int64_t median(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// First rows of the samples: a row more than `within_ns` after the previous one, or before it,
// starts a new sample.
std::vector<std::size_t> split_samples(const std::vector<std::int64_t>& t, std::int64_t within_ns) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 1; i < t.size(); ++i)
    if (t[i] < t[i - 1] || t[i] - t[i - 1] > within_ns) starts.push_back(i);
  return starts;
}

// The usual number of rows of a sample when `starts` is a plausible split, else 0: samples of
// more than one row, at least half of them of the same size, read (first row to last, median)
// in at most two thirds of the time from one sample to the next, so that a pause separates them,
// and four in five samples (all but one in short logs) within half to twice the usual time after
// the previous one.
// (nvidia-smi -lms 100 on 8 GPUs read 10 ms apart: 70 ms reads, 170 ms from sample to sample.)
std::size_t usual_sample_size(const std::vector<std::int64_t>& t, const std::vector<std::size_t>& starts) {
  if (starts.size() < 2) return 0;
  auto end_of = [&](std::size_t k) { return k + 1 < starts.size() ? starts[k + 1] : t.size(); };
  std::map<std::size_t, std::size_t> samples_of_size;
  for (std::size_t k = 0; k < starts.size(); ++k) ++samples_of_size[end_of(k) - starts[k]];
  std::size_t usual = 0, most = 0;
  for (const auto& [size, n] : samples_of_size)
    if (n >= most) usual = size, most = n;  // a tie goes to the larger size
  if (usual < 2 || 2 * most < starts.size()) return 0;
  std::vector<std::int64_t> spans, periods;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    if (end_of(k) - starts[k] == usual) spans.push_back(t[end_of(k) - 1] - t[starts[k]]);
    if (k + 1 < starts.size() && t[starts[k + 1]] > t[starts[k]]) periods.push_back(t[starts[k + 1]] - t[starts[k]]);
  }
  // In double: times centuries apart (a hostile log) would overflow int64 when multiplied.
  const double usual_period = static_cast<double>(median(periods));
  if (periods.empty() || 3.0 * static_cast<double>(median(spans)) > 2.0 * usual_period) return 0;
  // Samples come at the logging interval, later only after the odd pause: periods alternating
  // short and long mean samples were cut in pieces (a GPU that is always slower to read).
  const auto irregular = std::count_if(periods.begin(), periods.end(), [&](std::int64_t p) {
    const double period = static_cast<double>(p);
    return 2.0 * period < usual_period || period > 2.0 * usual_period;
  });
  if (irregular > 1 && 5 * static_cast<std::size_t>(irregular) > periods.size()) return 0;
  return usual;
}

struct SampleSplit {
  std::vector<std::size_t> starts;
  std::size_t size = 0;  // usual rows per sample = GPUs
};

// Finds the pause that separates samples: among the steps between consecutive rows, the largest
// jump (ratio ≥ min_ratio) below which the rows fall into plausible samples. `want_size` (the
// run's GPU count), when not 0, must be the usual sample size.
std::optional<SampleSplit> find_samples(const std::vector<std::int64_t>& t, double min_ratio, std::int64_t max_read_ns,
                                        std::size_t want_size) {
  std::vector<std::int64_t> steps;
  for (std::size_t i = 1; i < t.size(); ++i)
    if (t[i] >= t[i - 1]) steps.push_back(std::max(t[i] - t[i - 1], kStampResolutionNs));
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  std::vector<std::pair<double, std::int64_t>> candidates;  // (ratio, longest step within a sample)
  for (std::size_t j = 0; j + 1 < steps.size(); ++j) {
    const double ratio = static_cast<double>(steps[j + 1]) / static_cast<double>(steps[j]);
    if (ratio >= min_ratio && steps[j] <= max_read_ns) candidates.emplace_back(ratio, steps[j]);
  }
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  // A few tries: each is a pass over the rows, and real logs have one clear jump.
  if (candidates.size() > 8) candidates.resize(8);
  for (const auto& [ratio, within] : candidates) {
    auto starts = split_samples(t, within);
    const std::size_t size = usual_sample_size(t, starts);
    if (size > 0 && (want_size == 0 || size == want_size)) return SampleSplit{std::move(starts), size};
  }
  return std::nullopt;
}

struct Demux {
  std::vector<int> position;  // per row: the GPU it is, or -1 when its sample is left out
  int gpus = 0;               // 0: the GPUs could not be told apart
  std::string how;            // how they were told apart, for the note
  std::size_t samples = 0, uneven = 0;
  std::int64_t first_uneven_line = 0;
  std::size_t cut_last_rows = 0;  // rows of a last sample cut short (the logger stopped), left out
};

// Row i of each sample is GPU i (nvidia-smi prints the GPUs in index order). Samples are found
// from the pauses between them; failing that, from the run's GPU count (gpus_per_node, from the
// nearest scalelens.json) with a weaker pause. Samples of another size than the usual are left
// out rather than guessed at: which GPU is missing from them cannot be told.
Demux demultiplex(const std::vector<std::int64_t>& t, const std::vector<std::int64_t>& line_no,
                  std::optional<int> gpus_per_node) {
  Demux d;
  d.position.assign(t.size(), -1);
  if (t.empty()) return d;
  const std::size_t declared = gpus_per_node && *gpus_per_node > 1 ? static_cast<std::size_t>(*gpus_per_node) : 0;
  std::optional<SampleSplit> split;
  if (t.size() > 1 && std::is_sorted(t.begin(), t.end()) && t.back() - t.front() <= kMaxReadNs) {
    // A single sample (nvidia-smi without -l).
    split = SampleSplit{{0}, t.size()};
    d.how = "the log is one sample, its rows one GPU each";
  } else if ((split = find_samples(t, kMinPauseRatio, kMaxReadNs, 0))) {
    d.how = "the GPUs were told apart by their order within each sample, samples being the rows read a few ms apart";
  } else if (declared && (split = find_samples(t, 2.0, std::numeric_limits<std::int64_t>::max(), declared))) {
    d.how = fmt::format("the GPUs were told apart by their order within each sample, samples being runs of {} rows (gpus_per_node in "
                        "scalelens.json) read closer together than the pause between them",
                        declared);
  } else if (declared) {
    return d;  // several GPUs per node, but the rows do not fall into samples: left out, not guessed
  } else {
    std::fill(d.position.begin(), d.position.end(), 0);
    d.gpus = 1;
    d.samples = t.size();
    d.how = "its rows are evenly spaced in time, so they are read as the samples of one GPU";
    return d;
  }
  d.gpus = static_cast<int>(split->size);
  d.samples = split->starts.size();
  for (std::size_t k = 0; k < split->starts.size(); ++k) {
    const std::size_t begin = split->starts[k];
    const std::size_t end = k + 1 < split->starts.size() ? split->starts[k + 1] : t.size();
    if (end - begin == split->size) {
      for (std::size_t i = begin; i < end; ++i) d.position[i] = static_cast<int>(i - begin);
    } else if (k + 1 == split->starts.size() && end - begin < split->size) {
      d.cut_last_rows = end - begin;
    } else if (d.uneven++ == 0) {
      d.first_uneven_line = line_no[begin];
    }
  }
  // A short last sample after uneven ones is more of the same (the GPU stayed off), not a stop.
  if (d.uneven > 0 && d.cut_last_rows > 0) {
    ++d.uneven;
    d.cut_last_rows = 0;
  }
  return d;
}

class NvSmiReader final : public Reader {
 public:
  std::string_view name() const override { return "nvsmi"; }
  bool attaches_gpu_series(std::string_view) const override { return true; }

  bool recognizes(const fs::path&, std::string_view head) const override {
    LineCursor lines(head);
    std::string_view first;
    while (lines.next(first) && (trim(first).empty() || is_nvsmi_message(first))) {
    }
    if (trim(first).empty()) return false;
    if (looks_like_timestamp_row(first)) return true;  // noheader variant
    std::vector<std::string_view> fields;
    split_csv(first, fields);
    bool has_timestamp = false, has_measure = false;
    for (auto f : fields) {
      Field field = field_of(split_header_field(f).first);
      has_timestamp |= field == Field::timestamp;
      has_measure |= field != Field::timestamp && field != Field::other && field != Field::index &&
                     field != Field::uuid && field != Field::bus_id && field != Field::name;
    }
    return has_timestamp && has_measure;
  }

  void read(const ReadContext& ctx, ReadOutput& out) const override {
    auto text = read_file(ctx.file);
    if (!text) {
      out.warn("unreadable-file", text.error().message, ctx.file);
      return;
    }
    LineCursor lines(text.value());
    std::string_view line;
    // nvidia-smi's own messages: skipped, and said once per file with the first quoted.
    std::int64_t messages = 0, first_message_line = 0;
    std::string first_message;
    auto skip_message = [&](std::string_view message, std::int64_t line_no) {
      if (messages++ == 0) first_message = std::string(trim(message)), first_message_line = line_no;
    };
    auto report_messages = [&] {
      if (messages == 0) return;
      out.warn("nvsmi-message",
               fmt::format("nvidia-smi printed '{}' at line {}{} (its output and errors were both redirected into the log?): "
                           "its own message, not a sample, so skipped; the samples are read as usual",
                           first_message, first_message_line,
                           messages == 1 ? "" : fmt::format(", and {} more such line{}", messages - 1, messages == 2 ? "" : "s")),
               ctx.file, first_message_line);
    };
    while (lines.next(line)) {
      if (is_nvsmi_message(line))
        skip_message(line, lines.line_no());
      else if (!trim(line).empty())
        break;
    }
    report_messages();
    messages = 0;  // those among the rows are said apart, after them
    if (looks_like_timestamp_row(line)) {
      // Without a header the columns cannot be told apart ("84 %" may be utilization.gpu or
      // utilization.memory), and guessing would silently change figures.
      out.warn("nvsmi-no-header",
               "nvidia-smi log without a header line (--format=csv,noheader): which column holds which query "
               "cannot be told from the values (\"84 %\" may be utilization.gpu or utilization.memory), so the log "
               "is left out; add the header as its first line: 'nvidia-smi --query-gpu=<the same list> --format=csv' "
               "prints it first",
               ctx.file, lines.line_no());
      return;
    }

    std::vector<std::string_view> header;
    split_csv(line, header);
    if (std::none_of(header.begin(), header.end(),
                     [](std::string_view f) { return field_of(split_header_field(f).first) == Field::timestamp; })) {
      out.warn("nvsmi-no-timestamp", "nvidia-smi log without a 'timestamp' column: its samples cannot be placed in time; "
               "add timestamp to --query-gpu", ctx.file, lines.line_no());
      return;
    }
    std::vector<Column> columns(header.size());
    int ts_col = -1, index_col = -1, uuid_col = -1, bus_col = -1, name_col = -1, best_power = 0;
    for (std::size_t i = 0; i < header.size(); ++i) {
      auto [query, unit] = split_header_field(header[i]);
      columns[i] = {field_of(query), std::string(unit)};
      switch (columns[i].field) {
        case Field::timestamp: ts_col = static_cast<int>(i); break;
        case Field::index: index_col = static_cast<int>(i); break;
        case Field::uuid: uuid_col = static_cast<int>(i); break;
        case Field::bus_id: bus_col = static_cast<int>(i); break;
        case Field::name: name_col = static_cast<int>(i); break;
        case Field::power:
          // Only the best power query present is read; the others are ignored.
          if (power_rank(query) > best_power) {
            for (auto& c : columns)
              if (&c != &columns[i] && c.field == Field::power) c.field = Field::other;
            best_power = power_rank(query);
          } else {
            columns[i].field = Field::other;
          }
          break;
        default: break;
      }
    }

    const std::string node = node_of(ctx.file);
    // Which GPU a row is: its index column; else its uuid or PCI bus id (stable identities, kept
    // in GpuSeries::uuid so that two logs of one node's GPUs are not taken for the same GPU); else
    // its position within its sample (demultiplex).
    const bool by_position = index_col < 0 && uuid_col < 0 && bus_col < 0;
    std::map<std::string, std::size_t, std::less<>> series_of;  // identity -> position in attach.gpus
    auto& gpus = out.attach.gpus;
    auto series_for = [&](const std::string& key, int index, std::string_view uuid, std::string_view name) {
      auto [it, inserted] = series_of.try_emplace(key, gpus.size());
      if (inserted) {
        GpuSeries s;
        s.node = node;
        s.index = index;
        s.uuid = std::string(uuid);
        if (!is_missing(name)) s.name = std::string(name);
        s.source = ctx.file.string();
        gpus.push_back(std::move(s));
      }
      return it->second;
    };
    struct Row {
      GpuSample sample;
      std::int64_t line_no = 0;
      std::size_t series = 0;  // position in attach.gpus; by position: unknown until demultiplexed
      std::string_view name;
    };
    std::vector<Row> rows;
    BadLines bad, implausible;
    // Lines whose numbers have a decimal comma: left out, with the likely cause said.
    std::int64_t decimal_comma_lines = 0, first_decimal_comma_line = 0;
    std::string first_decimal_comma;
    std::vector<std::string_view> fields;
    const std::string_view header_line = trim(line);
    std::vector<std::int64_t> headers_again;  // lines where the header is printed again

    while (lines.next(line)) {
      if (trim(line).empty()) continue;
      const auto line_no = lines.line_no();
      if (lines.last_was_unterminated()) {
        bad.add(line_no, "cut off (no newline at the end of the file)");
        break;
      }
      // nvidia-smi restarted with its output appended to the same file prints its header again:
      // the samples after it are another log's (BackwardTime::new_log).
      if (trim(line) == header_line) {
        headers_again.push_back(line_no);
        continue;
      }
      split_csv(line, fields);
      const bool header_fields = fields.size() == header.size();
      const auto t = header_fields ? parse_timestamp(fields[ts_col]) : std::nullopt;
      // Looked for only in lines that are no sample: a message is neither the header's fields nor timestamped.
      if (!t && is_nvsmi_message(line)) {
        skip_message(line, line_no);
        continue;
      }
      if (!header_fields) {
        if (auto number = decimal_comma_number(line); !number.empty()) {
          if (decimal_comma_lines++ == 0) first_decimal_comma = std::string(number), first_decimal_comma_line = line_no;
          continue;
        }
        bad.add(line_no, fmt::format("{} fields where the header has {}", fields.size(), header.size()));
        continue;
      }
      if (!t) {
        bad.add(line_no, fmt::format("'{}' is not a timestamp YYYY/MM/DD HH:MM:SS.mmm", trim(fields[ts_col])));
        continue;
      }
      Row row;
      row.line_no = line_no;
      row.sample.t_ns = *t;
      std::string bad_reason;
      for (std::size_t i = 0; i < fields.size() && bad_reason.empty(); ++i) {
        const Field f = columns[i].field;
        if (f == Field::timestamp || f == Field::index || f == Field::uuid || f == Field::bus_id || f == Field::name ||
            f == Field::other)
          continue;
        auto value = trim(fields[i]);
        if (is_missing(value)) continue;
        auto v = parse_measure(f, value, columns[i].header_unit);
        if (!v) {
          bad_reason = fmt::format("'{}' in column '{}' is not a number in a known unit", value, trim(header[i]));
          break;
        }
        const auto fv = static_cast<float>(*v);
        // Beyond physical limits (model/limits.hpp): that value is left out, the rest of the line kept.
        if (((f == Field::util_gpu || f == Field::util_mem) && limits::bad_percent(*v)) ||
            (f == Field::power && limits::bad_power(*v)) || (f == Field::mem_used && limits::bad_gpu_memory(*v))) {
          implausible.add(line_no, fmt::format("'{}' in column '{}' is outside {}", value, trim(header[i]),
                                               f == Field::power      ? fmt::format("0…{:g} W per GPU", limits::kMaxGpuPowerW)
                                               : f == Field::mem_used ? std::string("0…16 TiB")
                                                                      : std::string("0…100 %")));
          continue;
        }
        switch (f) {
          case Field::util_gpu: row.sample.util_pct = fv; break;
          case Field::util_mem: row.sample.mem_util_pct = fv; break;
          case Field::mem_used: row.sample.mem_used_bytes = fv; break;
          case Field::power: row.sample.power_w = fv; break;
          case Field::sm_clock: row.sample.sm_clock_mhz = fv; break;
          case Field::temp: row.sample.temp_c = fv; break;
          default: break;
        }
      }
      row.name = name_col >= 0 ? trim(fields[name_col]) : std::string_view();
      std::string_view identity;  // uuid, else PCI bus id
      for (int col : {uuid_col, bus_col})
        if (identity.empty() && col >= 0 && !is_missing(trim(fields[col]))) identity = trim(fields[col]);
      int index = 0;
      if (index_col >= 0) {
        auto idx = parse_int(fields[index_col]);
        if (!idx || *idx < 0 || *idx > 1'000'000) bad_reason = fmt::format("'{}' is not a GPU index", trim(fields[index_col]));
        else index = static_cast<int>(*idx);
      } else if (!by_position && identity.empty() && bad_reason.empty()) {
        bad_reason = "no GPU index, uuid or pci.bus_id in the row";
      }
      if (!bad_reason.empty()) {
        bad.add(line_no, bad_reason);
        continue;
      }
      if (!by_position) {
        // Without an index column, a GPU's index is the order in which the GPUs first appear.
        if (index_col < 0) index = static_cast<int>(series_of.size());
        row.series = series_for(identity.empty() ? fmt::format("#{}", index) : std::string(identity), index, identity,
                                row.name);
      }
      rows.push_back(row);
    }
    bad.report(out, ctx.file);
    implausible.report_implausible(out, ctx.file);
    report_messages();
    if (decimal_comma_lines > 0)
      out.warn("nvsmi-decimal-comma",
               fmt::format("{} line{} with a decimal comma ('{}' at line {}), which splits a value into two CSV fields: "
                           "nvidia-smi ran in a locale whose decimal separator is a comma? Those lines are left out, not "
                           "guessed at; log with 'LC_ALL=C nvidia-smi --query-gpu=...'",
                           decimal_comma_lines, decimal_comma_lines == 1 ? "" : "s", first_decimal_comma, first_decimal_comma_line),
               ctx.file, first_decimal_comma_line);

    if (by_position && !rows.empty()) {
      std::vector<std::int64_t> t(rows.size()), line_of(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) t[i] = rows[i].sample.t_ns, line_of[i] = rows[i].line_no;
      const std::optional<int> gpus_per_node = ctx.enclosing ? ctx.enclosing->gpus_per_node : std::nullopt;
      Demux demux = demultiplex(t, line_of, gpus_per_node);
      if (demux.gpus == 0) {
        out.warn("nvsmi-gpus-unknown",
                 fmt::format("nvidia-smi log without an index, uuid or pci.bus_id column, whose rows do not fall into "
                             "samples of {} GPUs (gpus_per_node in scalelens.json): which row is which GPU cannot be "
                             "told, so the log is left out; add index or pci.bus_id to --query-gpu",
                             gpus_per_node.value_or(0)),
                 ctx.file);
        return;
      }
      // Each `how` a whole clause: "the GPUs were told apart " before two of them made the others garbled.
      std::string note = fmt::format("no index, uuid or pci.bus_id column: {}; {} GPU{}", demux.how,
                                     demux.gpus, demux.gpus == 1 ? "" : "s");
      if (gpus_per_node && *gpus_per_node != demux.gpus)
        note += fmt::format(" (scalelens.json says {} per node)", *gpus_per_node);
      if (demux.cut_last_rows > 0)
        note += fmt::format("; the last sample, {} of {} rows (the logger stopped while writing it), is left out",
                            demux.cut_last_rows, demux.gpus);
      out.diagnostics.push_back({Severity::note, "nvsmi-gpus-by-position", std::move(note), ctx.file.string(), 0, {}});
      if (demux.uneven > 0)
        out.warn("nvsmi-uneven-samples",
                 fmt::format("{} of {} samples have another number of rows than the usual {} (the first at line {}), "
                             "e.g. a GPU fell off the bus: without an index, uuid or pci.bus_id column the GPU missing "
                             "from them cannot be told, so their rows are left out; add index or pci.bus_id to --query-gpu",
                             demux.uneven, demux.samples, demux.gpus, demux.first_uneven_line),
                 ctx.file, demux.first_uneven_line);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const int gpu = demux.position[i];
        if (gpu < 0) {
          rows[i].series = std::numeric_limits<std::size_t>::max();
          continue;
        }
        rows[i].series = series_for(fmt::format("#{}", gpu), gpu, {}, rows[i].name);
      }
    }

    BackwardTime backward;
    auto next_header = headers_again.begin();
    for (const Row& row : rows) {
      for (; next_header != headers_again.end() && *next_header < row.line_no; ++next_header) backward.new_log(*next_header);
      if (row.series >= gpus.size()) continue;  // left out above
      GpuSample& sample = gpus[row.series].samples.emplace_back(row.sample);
      sample.t_ns = backward.see(row.series, row.sample.t_ns, row.line_no);
    }
    backward.report(std::span(gpus), out, ctx.file);
    if (gpus.empty() && bad.count() == 0 && decimal_comma_lines == 0)
      out.warn("no-samples", "nvidia-smi log with a header but no sample lines", ctx.file);
  }
};

}  // namespace

std::unique_ptr<Reader> make_nvsmi_reader() { return std::make_unique<NvSmiReader>(); }

}  // namespace scalelens
