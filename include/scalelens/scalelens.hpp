#pragma once
// scalelens: log epochs and steps of a C++ training program into the run folder of
// `scalelens run` (header-only, POSIX, no dependency).
//
//   #include <scalelens/scalelens.hpp>
//   for (int e = 0; e < epochs; ++e) {
//     scalelens::EpochTimer t(e);      // logs the epoch when it goes out of scope
//     ...train...
//     t.set_samples(samples_this_rank);
//   }
//
// Outside `scalelens run` (SCALELENS_RUN_DIR unset) nothing is written. The CSV contract is in
// docs/collect.md: one line per epoch or step and rank, times in Unix-epoch nanoseconds; each
// line is a single O_APPEND write, so the ranks of a node can share the file.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <dlfcn.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace scalelens {

namespace detail {
inline std::int64_t read_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace detail

namespace detail {
// `scalelens run`'s clock (SCALELENS_CLOCK: "<start_ns>,<monotonic_ns at start>"): the run's start
// on the wall clock, and CLOCK_MONOTONIC's reading then.
struct RunClock {
  std::int64_t start_ns = 0, monotonic_ns = 0;
};

// The clock a SCALELENS_CLOCK value gives; none where it is unset or not two integers joined by a
// comma (then times are the wall clock's, as outside `scalelens run`). Shared with libscalelens-mpi.
inline std::optional<RunClock> parse_run_clock(const char* v) {
  if (!v) return std::nullopt;
  char* comma = nullptr;
  const long long start = std::strtoll(v, &comma, 10);
  if (comma == v || *comma != ',') return std::nullopt;
  char* end = nullptr;
  const long long monotonic = std::strtoll(comma + 1, &end, 10);
  if (end == comma + 1 || *end != '\0') return std::nullopt;
  return RunClock{start, monotonic};
}

// Now on `clock` (its start plus the monotonic time elapsed since), else on the wall clock.
inline std::int64_t now_on(const std::optional<RunClock>& clock) {
  if (clock) return clock->start_ns + (read_ns(CLOCK_MONOTONIC) - clock->monotonic_ns);
  return read_ns(CLOCK_REALTIME);
}
}  // namespace detail

// Inside `scalelens run`, a time on the run's clock (detail::RunClock), so that a step of the wall
// clock during the run (an NTP step) enters no time logged; else the wall clock.
inline std::int64_t now_ns() {
  static const std::optional<detail::RunClock> run_clock = detail::parse_run_clock(std::getenv("SCALELENS_CLOCK"));
  return detail::now_on(run_clock);
}

// The run folder, or "" outside `scalelens run`.
inline std::string run_dir() {
  const char* d = std::getenv("SCALELENS_RUN_DIR");
  return d ? d : "";
}

// A launcher's RANK inside the wrapper (torchrun under one wrapper per node) wins over the
// wrapper's own SCALELENS_RANK.
inline int rank() {
  for (const char* name : {"RANK", "SCALELENS_RANK"}) {
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    char* end = nullptr;
    long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0) return static_cast<int>(r);
  }
  return 0;
}

// Where profiler traces go, or "" outside `scalelens run`.
inline std::string trace_dir() {
  if (const char* t = std::getenv("SCALELENS_TRACE_DIR"); t && *t) return t;
  auto d = run_dir();
  return d.empty() ? d : d + "/traces";
}

namespace detail {

inline bool append_line(const char* file, const char* header, std::int64_t index, std::int64_t start_ns,
                        std::int64_t end_ns, std::optional<double> samples) {
  const std::string dir = run_dir();
  if (dir.empty()) return false;
  const std::string path = dir + "/" + file;
  if (::access(path.c_str(), F_OK) != 0) {
    // Written aside and linked into place: a concurrent appender never sees a headerless file.
    std::string aside = path + "." + std::to_string(::getpid()) + "." + std::to_string(now_ns());
    int fd = ::open(aside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      std::string h(header);
      bool ok = ::write(fd, h.data(), h.size()) == static_cast<ssize_t>(h.size());
      ::close(fd);
      if (ok) ::link(aside.c_str(), path.c_str());  // EEXIST: someone else was first, fine
      ::unlink(aside.c_str());
    }
  }
  char line[160];
  int n;
  if (samples)
    n = std::snprintf(line, sizeof line, "%d,%lld,%lld,%lld,%.17g\n", rank(), static_cast<long long>(index),
                      static_cast<long long>(start_ns), static_cast<long long>(end_ns), *samples);
  else
    n = std::snprintf(line, sizeof line, "%d,%lld,%lld,%lld,\n", rank(), static_cast<long long>(index),
                      static_cast<long long>(start_ns), static_cast<long long>(end_ns));
  if (n <= 0 || n >= static_cast<int>(sizeof line)) return false;
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, line, static_cast<std::size_t>(n)) == n;
  ::close(fd);
  return ok;
}

}  // namespace detail

// Appends one epoch / step of this rank; false outside `scalelens run` or when it cannot write.
inline bool log_epoch(std::int64_t epoch, std::int64_t start_ns, std::int64_t end_ns, std::optional<double> samples = {}) {
  return detail::append_line("epochs.csv", "rank,epoch,start_ns,end_ns,samples\n", epoch, start_ns, end_ns, samples);
}
inline bool log_step(std::int64_t step, std::int64_t start_ns, std::int64_t end_ns, std::optional<double> samples = {}) {
  return detail::append_line("steps.csv", "rank,step,start_ns,end_ns,samples\n", step, start_ns, end_ns, samples);
}

namespace detail {
// Step boundaries for libscalelens-mpi (scalelens run --mpi-comm), found at run time so that a
// program without the interposer loaded pays one failed lookup and nothing else.
using StepHook = void (*)(long long);
inline StepHook mpi_step_hook(bool begin) {
  static const StepHook hooks[2] = {reinterpret_cast<StepHook>(::dlsym(RTLD_DEFAULT, "scalelens_mpi_step_end")),
                                    reinterpret_cast<StepHook>(::dlsym(RTLD_DEFAULT, "scalelens_mpi_step_begin"))};
  return hooks[begin ? 1 : 0];
}
inline void no_hook(std::int64_t, bool) {}
inline void mpi_step_boundary(std::int64_t step, bool begin) {
  if (auto hook = mpi_step_hook(begin)) hook(step);
}
}  // namespace detail

// Times its own lifetime and logs it as one epoch (or step) when destroyed.
template <bool (*Log)(std::int64_t, std::int64_t, std::int64_t, std::optional<double>),
          void (*Boundary)(std::int64_t, bool) = detail::no_hook>
class IntervalTimer {
 public:
  explicit IntervalTimer(std::int64_t index, std::optional<double> samples = {})
      : index_(index), samples_(samples), start_ns_(now_ns()) {
    Boundary(index_, true);
  }
  IntervalTimer(const IntervalTimer&) = delete;
  IntervalTimer& operator=(const IntervalTimer&) = delete;
  ~IntervalTimer() {
    Boundary(index_, false);
    Log(index_, start_ns_, now_ns(), samples_);
  }
  void set_samples(double samples) { samples_ = samples; }

 private:
  std::int64_t index_;
  std::optional<double> samples_;
  std::int64_t start_ns_;
};

using EpochTimer = IntervalTimer<&log_epoch>;
using StepTimer = IntervalTimer<&log_step, &detail::mpi_step_boundary>;

}  // namespace scalelens
