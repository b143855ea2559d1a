#include "monitor/host_probe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"

namespace scalelens::monitor {
namespace {

// Small pseudo-files: one read() into a stack buffer, no allocation per sample.
std::string_view read_small(const std::filesystem::path& p, char* buf, std::size_t size, int* err = nullptr) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (err) *err = errno;
    return {};
  }
  ssize_t n = ::read(fd, buf, size - 1);
  if (n < 0 && err) *err = errno;
  ::close(fd);
  return n > 0 ? std::string_view(buf, static_cast<std::size_t>(n)) : std::string_view{};
}

std::optional<std::uint64_t> read_u64(const std::filesystem::path& p, int* err = nullptr) {
  char buf[64];
  auto text = read_small(p, buf, sizeof buf, err);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  auto v = parse_int(trim(text));
  if (!v || *v < 0) return std::nullopt;
  return static_cast<std::uint64_t>(*v);
}

}  // namespace

HostProbe::HostProbe(HostProbeOptions options) : options_(std::move(options)) {
  // Top-level RAPL zones are the CPU packages ("intel-rapl:0"; AMD uses the same driver);
  // sub-zones ("intel-rapl:0:0", core/dram) would count the same energy twice.
  std::error_code ec;
  std::vector<std::filesystem::path> zones;
  for (const auto& e : std::filesystem::directory_iterator(options_.powercap, ec)) {
    auto name = e.path().filename().string();
    auto colon = name.find(':');
    if (colon == std::string::npos || name.find(':', colon + 1) != std::string::npos) continue;
    if (name.rfind("intel-rapl", 0) != 0 && name.rfind("amd-rapl", 0) != 0) continue;
    zones.push_back(e.path());
  }
  std::sort(zones.begin(), zones.end());
  std::string why;
  for (const auto& z : zones) {
    int err = 0;
    auto raw = read_u64(z / "energy_uj", &err);
    if (!raw) {
      if (why.empty())
        why = fmt::format("{} is not readable ({})", (z / "energy_uj").string(), err ? errno_text(err) : "not a number");
      continue;
    }
    Package p{z / "energy_uj", EnergyCounter(read_u64(z / "max_energy_range_uj").value_or(0))};
    p.counter.add(*raw);
    packages_.push_back(std::move(p));
  }
  if (packages_.empty())
    energy_missing_ = zones.empty() ? fmt::format("no RAPL package zone under {}", options_.powercap.string())
                                    : why + " (recent kernels let only root read it)";
}

HostSample HostProbe::read(std::int64_t t_ns) {
  HostSample s;
  s.t_ns = t_ns;
  char buf[4096];
  // /proc/stat: "cpu  user nice system idle iowait irq softirq steal ..."
  auto stat = read_small(options_.proc / "stat", buf, sizeof buf);
  if (stat.rfind("cpu ", 0) == 0) {
    auto line = stat.substr(0, stat.find('\n'));
    std::uint64_t values[8] = {};
    std::size_t k = 0, pos = 4;
    while (k < 8 && pos < line.size()) {
      while (pos < line.size() && line[pos] == ' ') ++pos;
      auto end = line.find(' ', pos);
      if (end == std::string_view::npos) end = line.size();
      auto v = parse_int(line.substr(pos, end - pos));
      values[k++] = v && *v >= 0 ? static_cast<std::uint64_t>(*v) : 0;
      pos = end;
    }
    std::uint64_t total = 0;
    for (auto v : values) total += v;
    std::uint64_t busy = total - values[3] - values[4];  // minus idle and iowait
    if (have_cpu_ && total > last_total_ && busy >= last_busy_)
      s.cpu_util_pct = 100.0 * static_cast<double>(busy - last_busy_) / static_cast<double>(total - last_total_);
    last_busy_ = busy;
    last_total_ = total;
    have_cpu_ = true;
  }
  // /proc/meminfo: used = MemTotal − MemAvailable (what `free` calls used, roughly).
  auto meminfo = read_small(options_.proc / "meminfo", buf, sizeof buf);
  std::optional<std::int64_t> total_kb, avail_kb;
  LineCursor lines(meminfo);
  std::string_view line;
  while (lines.next(line) && !(total_kb && avail_kb)) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto key = line.substr(0, colon);
    auto value = trim(line.substr(colon + 1));
    value = value.substr(0, value.find(' '));
    if (key == "MemTotal") total_kb = parse_int(value);
    else if (key == "MemAvailable") avail_kb = parse_int(value);
  }
  if (total_kb && avail_kb) s.mem_used_bytes = static_cast<double>(*total_kb - *avail_kb) * 1024.0;
  if (!packages_.empty()) {
    std::uint64_t sum = 0;
    for (auto& p : packages_) {
      if (auto raw = read_u64(p.energy_file)) p.counter.add(*raw);
      sum += p.counter.total();
    }
    s.cpu_energy_uj = static_cast<double>(sum);
  }
  return s;
}

}  // namespace scalelens::monitor
