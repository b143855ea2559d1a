#include "monitor/sampler.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <ctime>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "common/file_io.hpp"

namespace scalelens::monitor {

std::int64_t realtime_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

RunClock RunClock::starting_now() {
  // The monotonic clock read between two reads of the wall clock, so that the pair stands for
  // one instant (the mean of the two) however the thread is interrupted between them.
  const std::int64_t before = realtime_ns();
  const std::int64_t monotonic = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch()).count();
  const std::int64_t after = realtime_ns();
  return RunClock(before + (after - before) / 2, monotonic);
}

std::int64_t RunClock::now() const {
  return at(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

std::string RunClock::for_environment() const { return fmt::format("{},{}", wall_start_ns_, monotonic_start_ns_); }

namespace {

constexpr const char* kGpuHeader = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
constexpr const char* kHostHeader = "t_ns,cpu_util_pct,mem_used_bytes,cpu_energy_uj\n";
constexpr const char* kFigureNames[] = {"util_pct", "mem_util_pct", "mem_used_bytes", "power_w", "energy_mj", "sm_clock_mhz", "temp_c"};

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// False when the disk refused some of `bytes` (`error` says why); `written` counts what it took.
bool write_all(int fd, std::string_view bytes, std::string& error, const std::filesystem::path& path,
               std::size_t* written = nullptr) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) errno = EIO;  // nothing written and no error given: errno would be stale
      if (error.empty()) error = fmt::format("cannot write {}: {}", path.string(), errno_text(errno));
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    if (written) *written += static_cast<std::size_t>(n);
  }
  return true;
}

// Appends to `path`, writing `header` when the file is new or empty.
Result<int> open_csv(const std::filesystem::path& path, const char* header) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot create: {}", errno_text(errno)), path.string()};
  struct stat st {};
  std::string error;
  if (::fstat(fd, &st) == 0 && st.st_size == 0 && !write_all(fd, header, error, path)) {
    ::close(fd);
    return Error{error, path.string()};
  }
  return fd;
}

template <class T>
void put(std::string& out, T v, bool whole = false) {
  out.push_back(',');
  if (std::isnan(static_cast<double>(v))) return;  // empty field = not available
  if (whole) fmt::format_to(std::back_inserter(out), "{:.0f}", static_cast<double>(v));
  else fmt::format_to(std::back_inserter(out), "{}", v);
}

}  // namespace

Result<std::unique_ptr<Sampler>> Sampler::start(SamplerOptions options, std::unique_ptr<GpuSource> gpu,
                                                std::vector<std::size_t> selected,
                                                std::map<std::string, std::string> missing) {
  std::unique_ptr<Sampler> s(new Sampler());
  options.flush_s = std::clamp(options.flush_s, 0.0, 5.0);
  s->options_ = std::move(options);
  s->report_.missing = std::move(missing);
  if (gpu) {
    s->report_.gpu_source = std::string(gpu->kind());
    for (auto k : selected) s->report_.devices.push_back(gpu->devices().at(k));
    if (selected.empty() && !s->report_.missing.count("gpu"))
      s->report_.missing["gpu"] = fmt::format("{} found no GPU this job may use", gpu->kind());
  }
  s->gpu_ = std::move(gpu);
  s->selected_ = std::move(selected);
  s->stats_.resize(s->selected_.size());
  s->gpu_file_.path = s->options_.node_dir / "gpu.csv";
  s->host_file_.path = s->options_.node_dir / "host.csv";
  if (s->gpu_ && !s->selected_.empty()) {
    auto fd = open_csv(s->gpu_file_.path, kGpuHeader);
    if (!fd) return fd.error();
    s->gpu_file_.fd = fd.value();
  }
  if (s->options_.sample_host) {
    auto fd = open_csv(s->host_file_.path, kHostHeader);
    if (!fd) return fd.error();
    s->host_file_.fd = fd.value();
    s->host_ = std::make_unique<HostProbe>(s->options_.host_options);
    if (!s->host_->energy_missing().empty()) s->report_.missing["cpu_energy"] = s->host_->energy_missing();
  }
  s->clock_ = s->options_.clock ? *s->options_.clock : RunClock::starting_now();
  s->last_flush_ns_ = s->start_ns_ = monotonic_ns();
  s->thread_ = std::thread([p = s.get()] { p->loop(); });
  return s;
}

Sampler::~Sampler() { stop(); }

void Sampler::loop() {
  using clock = std::chrono::steady_clock;
  const auto interval = std::chrono::nanoseconds(static_cast<std::int64_t>(std::max(options_.interval_s, 0.001) * 1e9));
  auto next = clock::now();
  std::unique_lock lock(mutex_);
  while (!stop_requested_) {
    lock.unlock();
    sample_once();
    lock.lock();
    next += interval;
    auto now = clock::now();
    if (next < now) next = now;  // fell behind (a slow driver call): skip, do not burst
    wake_.wait_until(lock, next, [&] { return stop_requested_; });
  }
}

void Sampler::sample_once() {
  const std::int64_t t = clock_->now();
  ++report_.ticks;
  if (gpu_ && gpu_file_.fd >= 0) {
    gpu_->tick();
    const auto& devices = gpu_->devices();
    for (std::size_t i = 0; i < selected_.size(); ++i) {
      auto& st = stats_[i];
      ++st.reads;
      auto r = gpu_->read(selected_[i]);
      if (!r) {
        // A GPU that errs or disappears: no line for it at this time; the reason goes to the manifest.
        if (st.failures++ == 0) st.first_error = r.error().message;
        continue;
      }
      const auto& s = r.value();
      const auto& d = devices[selected_[i]];
      float figures[] = {s.util_pct, s.mem_util_pct, s.mem_used_bytes, s.power_w, static_cast<float>(s.energy_mj),
                         s.sm_clock_mhz, s.temp_c};
      for (unsigned f = 0; f < 7; ++f)
        if (!std::isnan(figures[f])) st.seen |= 1u << f;
      auto& out = gpu_file_.buffer;
      fmt::format_to(std::back_inserter(out), "{},{},{}", t, d.index, d.uuid);
      put(out, s.util_pct);
      put(out, s.mem_util_pct);
      put(out, s.mem_used_bytes, true);
      put(out, s.power_w);
      put(out, s.energy_mj);
      put(out, s.sm_clock_mhz, true);
      put(out, s.temp_c);
      out.push_back('\n');
    }
  }
  if (host_ && host_file_.fd >= 0) {
    auto h = host_->read(t);
    auto& out = host_file_.buffer;
    fmt::format_to(std::back_inserter(out), "{}", t);
    put(out, h.cpu_util_pct);
    put(out, h.mem_used_bytes, true);
    put(out, h.cpu_energy_uj, true);
    out.push_back('\n');
  }
  auto now = monotonic_ns();
  if (static_cast<double>(now - last_flush_ns_) >= options_.flush_s * 1e9 ||
      gpu_file_.buffer.size() + host_file_.buffer.size() > (1u << 16)) {
    flush(gpu_file_);
    flush(host_file_);
    last_flush_ns_ = now;
  }
}

void Sampler::flush(SampleFile& file) {
  if (file.fd >= 0 && !file.buffer.empty()) {
    // A write the disk cuts short (ENOSPC mid-buffer) leaves half a line: cut back to the last
    // newline it wrote, so the file ends at its last whole line and keeps every whole line the
    // disk took (cut back to before the flush, a flush of many lines lost those that fitted).
    struct stat st {};
    const off_t before = ::fstat(file.fd, &st) == 0 ? st.st_size : -1;
    std::string error;
    std::size_t written = 0;
    if (!write_all(file.fd, file.buffer, error, file.path, &written)) {
      const auto last_newline = std::string_view(file.buffer).substr(0, written).rfind('\n');
      const off_t whole = before + (last_newline == std::string_view::npos ? 0 : static_cast<off_t>(last_newline + 1));
      if (before >= 0 && ::ftruncate(file.fd, whole) != 0)
        error += fmt::format(" (and its last line could not be cut back: {})", errno_text(errno));
      stop_file(file, error);
    }
  }
  file.buffer.clear();
}

void Sampler::stop_file(SampleFile& file, const std::string& error) {
  if (file.fd >= 0) ::close(file.fd);
  file.fd = -1;
  // Not written again: the account says where its samples stop, which later lines would belie.
  file.stopped = fmt::format("{}; its samples stop {:.0f} s into the run", error,
                             static_cast<double>(monotonic_ns() - start_ns_) * 1e-9);
  if (options_.on_write_failure) options_.on_write_failure(file.stopped);
}

void Sampler::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    stop_requested_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  sample_once();  // the run's end, so that integrals reach it
  std::string stopped;
  for (SampleFile* file : {&gpu_file_, &host_file_}) {
    flush(*file);
    // close() is where a network file system reports a write it could not make.
    if (file->fd >= 0 && ::close(std::exchange(file->fd, -1)) != 0)
      stop_file(*file, fmt::format("cannot write {}: {} (on closing it)", file->path.string(), errno_text(errno)));
    if (!file->stopped.empty()) stopped += (stopped.empty() ? "" : "; ") + file->stopped;
  }
  for (std::size_t i = 0; i < stats_.size(); ++i) {
    const auto& st = stats_[i];
    const auto& d = report_.devices[i];
    if (st.failures > 0)
      report_.missing[fmt::format("gpu{}", d.index)] =
          st.failures == st.reads ? fmt::format("no reading of GPU {} succeeded: {}", d.index, st.first_error)
                                  : fmt::format("{} of {} readings of GPU {} failed (first: {})", st.failures, st.reads, d.index, st.first_error);
    if (st.failures < st.reads) {
      std::string lacking;
      for (unsigned f = 0; f < 7; ++f)
        if (!(st.seen & (1u << f))) lacking += (lacking.empty() ? "" : ", ") + std::string(kFigureNames[f]);
      if (!lacking.empty())
        report_.missing[fmt::format("gpu{}_figures", d.index)] = fmt::format("GPU {} does not report {}", d.index, lacking);
    }
  }
  if (!stopped.empty()) report_.missing["samples"] = stopped;
}

SamplerReport Sampler::report() const {
  std::lock_guard lock(mutex_);
  return report_;
}

}  // namespace scalelens::monitor
