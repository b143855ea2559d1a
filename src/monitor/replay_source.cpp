// A GpuSource that plays back a recorded gpu.csv (DESIGN.md format): the sampler, the CSV writer
// and the energy logic run against real recorded figures on machines without a GPU.
#include <algorithm>
#include <array>
#include <map>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "monitor/gpu_source.hpp"

namespace scalelens::monitor {
namespace {

struct ReplayCell {
  bool error = false;
  GpuSample sample;
};

class ReplaySource final : public GpuSource {
 public:
  std::string_view kind() const override { return "replay"; }
  const std::vector<GpuDevice>& devices() const override { return devices_; }
  void tick() override { ++tick_; }
  Result<GpuSample> read(std::size_t i) override {
    if (tick_ < 1 || tick_ > times_.size()) return Error{"the recording has no sample for this time (ended)", ""};
    const auto& at = times_[tick_ - 1];
    auto it = at.find(i);
    if (it == at.end()) return Error{fmt::format("GPU {} is absent from the recording at this time (gone)", devices_[i].index), ""};
    if (it->second.error) return Error{fmt::format("GPU {} returned an error in the recording", devices_[i].index), ""};
    return it->second.sample;
  }

  std::vector<GpuDevice> devices_;
  std::vector<std::map<std::size_t, ReplayCell>> times_;  // per recorded time: device → reading
  std::size_t tick_ = 0;
};

}  // namespace

Result<std::unique_ptr<GpuSource>> open_replay(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  LineCursor lines(text.value());
  std::string_view line;
  std::vector<std::string_view> f;
  if (!lines.next(line)) return Error{"empty recording", path};
  split_csv(line, f);
  static constexpr std::array<std::string_view, 10> cols{"t_ns", "gpu", "uuid", "util_pct", "mem_util_pct",
                                                         "mem_used_bytes", "power_w", "energy_mj", "sm_clock_mhz", "temp_c"};
  std::array<int, cols.size()> at{};
  for (std::size_t c = 0; c < cols.size(); ++c) at[c] = find_column(f, cols[c]);
  if (at[0] < 0 || at[1] < 0) return Error{"a recording needs the gpu.csv columns t_ns and gpu", path, 1};
  auto source = std::make_unique<ReplaySource>();
  std::int64_t last_t = -1;
  while (lines.next(line)) {
    if (trim(line).empty() || lines.last_was_unterminated()) continue;
    split_csv(line, f);
    auto field = [&](std::size_t c) { return at[c] >= 0 && static_cast<std::size_t>(at[c]) < f.size() ? trim(f[at[c]]) : std::string_view{}; };
    auto t = parse_int(field(0));
    auto gpu = parse_int(field(1));
    if (!t || !gpu || *gpu < 0) return Error{"t_ns and gpu must be integers", path, lines.line_no()};
    std::string uuid(field(2));
    std::size_t dev = 0;
    while (dev < source->devices_.size() && (source->devices_[dev].index != *gpu || source->devices_[dev].uuid != uuid)) ++dev;
    if (dev == source->devices_.size()) source->devices_.push_back(GpuDevice{static_cast<int>(*gpu), uuid, ""});
    if (*t != last_t) {
      source->times_.emplace_back();
      last_t = *t;
    }
    ReplayCell cell;
    auto number = [&](std::size_t c, auto& into) {
      auto s = field(c);
      if (s == "ERR") cell.error = true;
      else if (auto v = parse_double(s)) into = static_cast<std::remove_reference_t<decltype(into)>>(*v);
    };
    number(3, cell.sample.util_pct);
    number(4, cell.sample.mem_util_pct);
    number(5, cell.sample.mem_used_bytes);
    number(6, cell.sample.power_w);
    number(7, cell.sample.energy_mj);
    number(8, cell.sample.sm_clock_mhz);
    number(9, cell.sample.temp_c);
    source->times_.back()[dev] = cell;
  }
  if (source->times_.empty()) return Error{"the recording has no samples", path};
  return std::unique_ptr<GpuSource>(std::move(source));
}

}  // namespace scalelens::monitor
