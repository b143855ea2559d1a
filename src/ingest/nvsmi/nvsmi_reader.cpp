// nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] logs (docs/DESIGN.md, "Inputs").
//
// What nvidia-smi writes: a header "timestamp, index, name, uuid, utilization.gpu [%], ...,
// memory.used [MiB], power.draw [W], clocks.current.sm [MHz], temperature.gpu" (fields joined by
// ", "; units in brackets, also with `nounits`), then one line per GPU and sample. Without
// `nounits` the values carry their unit ("84 %", "41391 MiB", "535.56 W"). Fields a device cannot
// report read "[N/A]", "[Not Supported]" or "N/A". There is no total-energy query field in
// nvidia-smi (NVML's counter is not exposed by --query-gpu), so energy comes from power.draw.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "ingest/bad_lines.hpp"
#include "ingest/reader.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace fs = std::filesystem;

namespace {

enum class Field { timestamp, index, uuid, name, util_gpu, util_mem, mem_used, power, sm_clock, temp, other };

// nvidia-smi query names (as the header prints them) and what they become in the model.
// Several power queries exist; the best one present is used (see power_rank).
Field field_of(std::string_view query) {
  static const std::array<std::pair<std::string_view, Field>, 14> kFields{{
      {"timestamp", Field::timestamp},
      {"index", Field::index},
      {"uuid", Field::uuid},
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
  if (!y || !mo || !d || !h || !mi || !sec || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 ||
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

class NvSmiReader final : public Reader {
 public:
  std::string_view name() const override { return "nvsmi"; }

  bool recognizes(const fs::path&, std::string_view head) const override {
    LineCursor lines(head);
    std::string_view first;
    while (lines.next(first) && trim(first).empty()) {
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
                     field != Field::uuid && field != Field::name;
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
    while (lines.next(line) && trim(line).empty()) {
    }
    if (looks_like_timestamp_row(line)) {
      // Without a header the columns cannot be told apart ("84 %" may be utilization.gpu or
      // utilization.memory), and guessing would silently change figures.
      out.warn("nvsmi-no-header",
               "nvidia-smi log without a header line (format=csv,noheader): its column names are unknown, so "
               "it is left out; record it again without 'noheader', or add the header line nvidia-smi prints "
               "for the same --query-gpu list",
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
    int ts_col = -1, index_col = -1, uuid_col = -1, name_col = -1, best_power = 0;
    for (std::size_t i = 0; i < header.size(); ++i) {
      auto [query, unit] = split_header_field(header[i]);
      columns[i] = {field_of(query), std::string(unit)};
      switch (columns[i].field) {
        case Field::timestamp: ts_col = static_cast<int>(i); break;
        case Field::index: index_col = static_cast<int>(i); break;
        case Field::uuid: uuid_col = static_cast<int>(i); break;
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
    std::map<std::string, std::size_t> series_of;  // uuid, else index -> position in attach.gpus
    auto& gpus = out.attach.gpus;
    BadLines bad, implausible;
    std::int64_t backward_jumps = 0, first_backward_line = 0;
    std::vector<std::int64_t> last_t;  // per series
    std::string_view group_ts;         // timestamp text of the current sample (no index column)
    int position = 0;
    std::vector<std::string_view> fields;

    while (lines.next(line)) {
      if (trim(line).empty()) continue;
      const auto line_no = lines.line_no();
      if (lines.last_was_unterminated()) {
        bad.add(line_no, "cut off (no newline at the end of the file)");
        break;
      }
      split_csv(line, fields);
      if (fields.size() != header.size()) {
        bad.add(line_no, fmt::format("{} fields where the header has {}", fields.size(), header.size()));
        continue;
      }
      auto t = parse_timestamp(fields[ts_col]);
      if (!t) {
        bad.add(line_no, fmt::format("'{}' is not a timestamp YYYY/MM/DD HH:MM:SS.mmm", trim(fields[ts_col])));
        continue;
      }
      GpuSample sample;
      sample.t_ns = *t;
      std::string bad_reason;
      for (std::size_t i = 0; i < fields.size() && bad_reason.empty(); ++i) {
        const Field f = columns[i].field;
        if (f == Field::timestamp || f == Field::index || f == Field::uuid || f == Field::name || f == Field::other)
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
            (f == Field::power && limits::bad_power(*v))) {
          implausible.add(line_no, fmt::format("'{}' in column '{}' is outside {}", value, trim(header[i]),
                                               f == Field::power ? fmt::format("0…{:g} W per GPU", limits::kMaxGpuPowerW)
                                                                 : std::string("0…100 %")));
          continue;
        }
        switch (f) {
          case Field::util_gpu: sample.util_pct = fv; break;
          case Field::util_mem: sample.mem_util_pct = fv; break;
          case Field::mem_used: sample.mem_used_bytes = fv; break;
          case Field::power: sample.power_w = fv; break;
          case Field::sm_clock: sample.sm_clock_mhz = fv; break;
          case Field::temp: sample.temp_c = fv; break;
          default: break;
        }
      }
      int index = 0;
      if (index_col >= 0) {
        auto idx = parse_int(fields[index_col]);
        if (!idx || *idx < 0 || *idx > 1'000'000) bad_reason = fmt::format("'{}' is not a GPU index", trim(fields[index_col]));
        else index = static_cast<int>(*idx);
      } else {
        // Without an index column the GPUs of one sample are its consecutive rows, in order.
        const auto ts_text = trim(fields[ts_col]);
        position = ts_text == group_ts ? position + 1 : 0;
        group_ts = ts_text;
        index = position;
      }
      if (!bad_reason.empty()) {
        bad.add(line_no, bad_reason);
        continue;
      }
      std::string uuid = uuid_col >= 0 ? std::string(trim(fields[uuid_col])) : std::string();
      if (is_missing(uuid)) uuid.clear();
      auto key = uuid.empty() ? fmt::format("#{}", index) : uuid;
      auto [it, inserted] = series_of.emplace(key, gpus.size());
      if (inserted) {
        GpuSeries s;
        s.node = node;
        s.index = index;
        s.uuid = uuid;
        if (name_col >= 0 && !is_missing(trim(fields[name_col]))) s.name = std::string(trim(fields[name_col]));
        s.source = ctx.file.string();
        gpus.push_back(std::move(s));
        last_t.push_back(sample.t_ns);
      }
      if (sample.t_ns < last_t[it->second] && backward_jumps++ == 0) first_backward_line = line_no;
      last_t[it->second] = std::max(last_t[it->second], sample.t_ns);
      gpus[it->second].samples.push_back(sample);
    }
    bad.report(out, ctx.file);
    implausible.report_implausible(out, ctx.file);
    if (backward_jumps > 0) {
      out.warn("time-goes-backwards",
               fmt::format("timestamps go backwards {} time{} (the first at line {}), e.g. a clock change or two "
                           "logs appended to one file; samples were put in time order",
                           backward_jumps, backward_jumps == 1 ? "" : "s", first_backward_line),
               ctx.file, first_backward_line);
      for (auto& s : gpus)
        std::stable_sort(s.samples.begin(), s.samples.end(),
                         [](const GpuSample& a, const GpuSample& b) { return a.t_ns < b.t_ns; });
    }
    if (gpus.empty() && bad.count() == 0)
      out.warn("no-samples", "nvidia-smi log with a header but no sample lines", ctx.file);
  }
};

}  // namespace

std::unique_ptr<Reader> make_nvsmi_reader() { return std::make_unique<NvSmiReader>(); }

}  // namespace scalelens
