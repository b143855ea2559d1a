#include "serve/server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <optional>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "ingest/ingest.hpp"
#include "report/report_html.hpp"
#include "common/text.hpp"
#include "common/walk.hpp"
#include "report/summary_writers.hpp"

#if SCALELENS_HAVE_HTTPLIB
#include <httplib.h>
#endif

namespace scalelens {

std::size_t study_fingerprint(const std::vector<std::string>& inputs) {
  std::size_t h = 1469598103934665603ULL;
  auto mix = [&h](std::size_t v) { h = (h ^ v) * 1099511628211ULL; };
  std::hash<std::string> hs;
  for (const auto& input : inputs) {
    std::error_code ec;
    std::filesystem::path root(input);
    auto add = [&](const std::filesystem::directory_entry& e) {
      std::error_code e2;
      mix(hs(e.path().string()));
      // Permissions too: a chmod changes what can be read, and neither size nor mtime.
      mix(static_cast<std::size_t>(e.symlink_status(e2).permissions()));
      if (e.is_regular_file(e2)) {
        mix(static_cast<std::size_t>(e.file_size(e2)));
        mix(static_cast<std::size_t>(e.last_write_time(e2).time_since_epoch().count()));
      }
    };
    if (std::filesystem::is_directory(root, ec)) {
      // One descriptor at a time whatever the depth; an unreadable folder is named by the ingest walk.
      walk_tree(root, [&](const std::filesystem::directory_entry& e) {
        add(e);
        return true;
      });
    } else if (std::filesystem::exists(root, ec)) {
      add(std::filesystem::directory_entry(root, ec));
    }
  }
  return h;
}

namespace {

// File systems whose changes made on other machines inotify never reports (a study on a
// cluster's shared storage, written by compute nodes, served from a login node).
const char* network_file_system(const std::filesystem::path& p) {
  struct statfs st {};
  if (::statfs(p.c_str(), &st) != 0) return nullptr;
  switch (static_cast<unsigned long>(st.f_type)) {
    case 0x6969: return "NFS";
    case 0x517B: return "SMB";
    case 0xFF534D42: return "CIFS";
    case 0xFE534D42: return "SMB2";
    case 0x0BD00BD0: return "Lustre";
    case 0x47504653: return "GPFS";
    case 0x19830326: return "BeeGFS";
    case 0x00C36400: return "CephFS";
    case 0x5346414F: return "AFS";
    case 0xAAD7AAEA: return "PanFS";
    case 0x65735546: return "FUSE";
    case 0x01021997: return "9P";
    default: return nullptr;
  }
}

}  // namespace

StudyWatcher::StudyWatcher(const std::vector<std::string>& inputs, const std::string& mode, double poll_s)
    : inputs_(inputs), poll_s_(std::max(0.1, poll_s)), period_s_(poll_s_) {
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (mode == "poll") {
    how_ = fmt::format("polling, from every {:g} s up to every 30 s while nothing changes (--watch poll)", poll_s_);
  } else {
    for (const auto& input : inputs_) {
      if (const char* fs = network_file_system(input); fs && mode == "auto") {
        how_ = fmt::format("polling from every {:g} s: {} is on {}, whose changes from other machines inotify does not see",
                           poll_s_, input, fs);
        polling_reason_ = true;
        break;
      }
    }
    if (!polling_reason_) {
      inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
      if (inotify_fd_ < 0) {
        how_ = fmt::format("polling from every {:g} s: inotify: {}", poll_s_, std::strerror(errno));
        polling_reason_ = true;
      } else {
        for (const auto& input : inputs_) {
          std::error_code ec;
          // A file input: its folder is watched (an editor or rsync replaces the file by renaming).
          roots_.push_back(std::filesystem::is_directory(input, ec) ? std::filesystem::path(input)
                                                                     : std::filesystem::absolute(input, ec).parent_path());
          watch_tree(roots_.back());
        }
        if (!watch_error_.empty()) {
          ::close(inotify_fd_);
          inotify_fd_ = -1;
          watches_.clear();
          how_ = fmt::format("polling from every {:g} s: {}", poll_s_, watch_error_);
          polling_reason_ = true;
        } else {
          how_ = fmt::format("inotify on {} folder{}", watches_.size(), watches_.size() == 1 ? "" : "s");
        }
      }
    }
  }
  if (inotify_fd_ < 0) fingerprint_ = study_fingerprint(inputs_);
}

StudyWatcher::~StudyWatcher() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

namespace {
// IN_ATTRIB: a chmod changes what can be read (a run folder made readable again kept its warning).
constexpr std::uint32_t kWatchMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
                                     IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
}

void StudyWatcher::watch_tree(const std::filesystem::path& root) {
  auto add = [&](const std::filesystem::path& dir) {
    if (!watch_error_.empty()) return;
    int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), kWatchMask);
    if (wd >= 0) {
      watches_[wd] = dir;
    } else if (errno == ENOSPC || errno == ENOMEM) {
      watch_error_ = fmt::format("inotify watch limit reached at {} ({} folders watched; raise fs.inotify.max_user_watches)",
                                 dir.string(), watches_.size());
    }
  };
  add(root);
  // One folder open at a time (common/walk.hpp): a deep study does not run out of descriptors. The
  // folders it cannot list or leaves out are named by the ingest walk of each snapshot; each folder
  // is watched once.
  walk_tree(root, [&](const std::filesystem::directory_entry& e) {
    std::error_code e2;
    if (!watch_error_.empty() || !e.is_directory(e2)) return false;
    add(e.path());
    return true;
  });
}

bool StudyWatcher::read_events() {
  bool changed = false;
  std::optional<std::filesystem::path> lost_root;
  alignas(inotify_event) char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(inotify_fd_, buf, sizeof buf);
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* e = reinterpret_cast<inotify_event*>(p);
      p += sizeof(inotify_event) + e->len;
      if (e->mask & IN_Q_OVERFLOW) {  // events were lost: watch every folder again
        changed = true;
        for (const auto& root : roots_) watch_tree(root);
        continue;
      }
      if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF))
        if (auto it = watches_.find(e->wd); it != watches_.end() && std::find(roots_.begin(), roots_.end(), it->second) != roots_.end())
          lost_root = it->second;
      if (e->mask & IN_IGNORED) {
        watches_.erase(e->wd);
        continue;
      }
      changed = true;
      if ((e->mask & (IN_CREATE | IN_MOVED_TO)) && (e->mask & IN_ISDIR) && e->len > 0) {
        auto it = watches_.find(e->wd);
        if (it != watches_.end()) watch_tree(it->second / e->name);  // a new run folder, maybe already filled
      } else if ((e->mask & IN_ATTRIB) && (e->mask & IN_ISDIR) && e->len > 0) {
        // A folder made readable could not be watched before: its tree is walked then, and only
        // then (rsync sets every folder's times: a walk each time would be the tree's size squared).
        auto it = watches_.find(e->wd);
        if (it != watches_.end()) {
          const auto dir = it->second / e->name;
          const int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), kWatchMask);
          if (wd >= 0 && !watches_.count(wd)) watch_tree(dir);
        }
      }
    }
  }
  if (!watch_error_.empty() && !polling_reason_) {
    poll_from_now(watch_error_);  // too many folders now
    changed = true;
  } else if (lost_root && !polling_reason_) {
    // `rm -rf runs && cp -r … runs`, rsync: nothing watches where a new folder appears at the
    // input's path, and the dashboard kept serving the old state for good.
    poll_from_now(fmt::format("{} was removed or moved away; a folder made again at its path is seen only by polling",
                              lost_root->string()));
    changed = true;
  }
  return changed;
}

void StudyWatcher::poll_from_now(const std::string& why) {
  ::close(inotify_fd_);
  inotify_fd_ = -1;
  watches_.clear();
  how_ = fmt::format("polling from every {:g} s: {}", poll_s_, why);
  // Said when it happens: a dashboard that now sees changes only every few seconds (with backoff, up
  // to 30 s) should not look stuck without a reason.
  std::fprintf(stderr, "scalelens serve: warning: %s\n", printable(how_).c_str());
  polling_reason_ = true;
  fingerprint_ = study_fingerprint(inputs_);
}

bool StudyWatcher::wait(double seconds) {
  pollfd p{stop_fd_, POLLIN, 0};
  int ms = seconds < 0 ? -1 : static_cast<int>(seconds * 1000);
  int r;
  do r = ::poll(&p, 1, ms); while (r < 0 && errno == EINTR);
  return r == 0;
}

bool StudyWatcher::wait_for_change() {
  using Clock = std::chrono::steady_clock;
  if (inotify_fd_ >= 0) {
    pollfd p[2] = {{stop_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    for (;;) {
      int r = ::poll(p, 2, -1);  // no timeout: an idle server does not wake up at all
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 || (p[0].revents & POLLIN)) return false;
      if (!(p[1].revents & POLLIN)) continue;
      if (!read_events()) continue;
      // A run being written changes many files at once: wait until poll_s has passed since the
      // last rebuild, then take everything that came meanwhile in one rebuild.
      auto since = std::chrono::duration<double>(Clock::now() - last_change_).count();
      if (!wait(std::max(0.05, poll_s_ - since))) return false;
      if (inotify_fd_ >= 0) read_events();
      last_change_ = Clock::now();
      return true;
    }
  }
  // Polling, with backoff: the period doubles while nothing changes (up to max(poll_s, 30 s)),
  // and is at least 50 times what one look at every file costs, so that polling a very large
  // study costs under 2% of a core.
  for (;;) {
    if (!wait(period_s_)) return false;
    auto start = Clock::now();
    auto now = study_fingerprint(inputs_);
    double cost = std::chrono::duration<double>(Clock::now() - start).count();
    if (now != fingerprint_) {
      fingerprint_ = now;
      period_s_ = std::max(poll_s_, 50 * cost);
      return true;
    }
    period_s_ = std::max({std::min(period_s_ * 2, std::max(poll_s_, 30.0)), 50 * cost});
  }
}

void StudyWatcher::stop() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(stop_fd_, &one, sizeof one);
}

#if SCALELENS_HAVE_HTTPLIB

namespace {

// Why host:port cannot be bound, as the kernel says it ("Address already in use"), for the
// error message; httplib only says that it failed.
std::string bind_failure(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return fmt::format("cannot resolve '{}': {}", host, ::gai_strerror(rc));
  std::string reason = "unknown reason";
  for (auto* a = found; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      reason = std::strerror(errno);
      continue;
    }
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // as httplib does
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0) reason = std::strerror(errno);
    else if (::listen(fd, 1) != 0) reason = std::strerror(errno);
    else reason = "it was free a moment later; try again";
    ::close(fd);
    if (reason.rfind("it was free", 0) != 0) break;
  }
  ::freeaddrinfo(found);
  return reason;
}

struct Snapshot {
  Study study;
  Summary summary;
  std::string summary_json, data_json, page;
  std::uint64_t generation = 0;
};

std::shared_ptr<const Snapshot> build_snapshot(const ServeOptions& o, std::uint64_t generation) {
  auto s = std::make_shared<Snapshot>();
  IngestOptions in;
  in.inputs = o.inputs;
  in.pattern = o.pattern;
  in.defaults = o.defaults;
  in.gpu_chart_point_budget = 0;  // one run is shown at a time: each GPU's chart at 2,000 points
  in.tabulate_epochs = true;      // held for as long as it is served: a row per epoch, not per rank and epoch
  s->study = ingest(in);
  s->summary = analyze(s->study, o.analysis);
  s->summary_json = render_summary_json(s->summary);
  s->data_json = render_report_data(s->summary_json, "null", "live");
  s->page = render_report_html(s->data_json);
  s->generation = generation;
  return s;
}

}  // namespace

int serve(const ServeOptions& o) {
  // A folder that does not exist would be served as an empty study for ever: a typo, said now.
  for (const auto& input : o.inputs) {
    std::error_code ec;
    if (!std::filesystem::exists(input, ec)) {
      std::fprintf(stderr, "scalelens serve: error: %s: %s\n", input.c_str(), unreachable_input(input, ec).message.c_str());
      return 2;
    }
  }
  // Signals go to one thread that stops the server; every other thread (httplib's pool too) has
  // them blocked, so Ctrl-C is a clean shutdown rather than a kill in the middle of a response.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // Watching starts before the first read, so that nothing written meanwhile is missed.
  StudyWatcher watch(o.inputs, o.watch, o.poll_s);
  std::mutex mutex;
  std::shared_ptr<const Snapshot> current = build_snapshot(o, 1);
  auto snapshot = [&] {
    std::lock_guard lock(mutex);
    return current;
  };

  httplib::Server server;
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second `serve` on the same
  // port started too, and one URL answered with two studies in turn.
  server.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // Only GETs are served: a request body (an 800 MB POST was read whole) is refused past 64 KiB.
  server.set_payload_max_length(64 << 10);
  // Connections that trickle a header byte at a time each hold a worker until httplib's read
  // timeout; 8 of them blocked the default pool. More workers raise that bar (they sleep on reads).
  server.new_task_queue = [] { return new httplib::ThreadPool(64); };
  server.set_default_headers({
      {"X-Content-Type-Options", "nosniff"},
      {"Cache-Control", "no-store"},
      {"Referrer-Policy", "no-referrer"},
      {"X-Frame-Options", "DENY"},
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
       "connect-src 'self'; font-src data:; frame-ancestors 'none'"},
  });
  const char* kJson = "application/json; charset=utf-8";
  auto page = [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(snapshot()->page, "text/html; charset=utf-8");
  };
  server.Get("/", page);
  server.Get("/index.html", page);
  server.Get("/api/summary", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(snapshot()->summary_json, kJson);
  });
  server.Get("/api/data", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(snapshot()->data_json, kJson);
  });
  server.Get("/api/version", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(fmt::format("{{\"generation\":{}}}", snapshot()->generation), kJson);
  });
  server.Get("/api/series", [&](const httplib::Request& req, httplib::Response& res) {
    auto s = snapshot();
    const std::string run = req.get_param_value("run");
    bool known = false;
    for (const auto& r : s->summary.runs) known = known || (!run.empty() && r.run_id == run);
    if (!known) {
      res.status = 404;
      res.set_content("{\"error\":\"unknown run\"}", kJson);
      return;
    }
    SeriesLimits limits;
    limits.gpu_point_budget = 1'000'000;  // one run at a time: full resolution up to 2000 points per series
    limits.step_budget = 500'000;
    res.set_content(render_series_json(s->study, s->summary, limits, run), kJson);
  });
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) res.set_content(fmt::format("{{\"error\":\"{}\"}}", res.status), "application/json");
  });

  int port = o.port;
  if (port == 0) {
    port = server.bind_to_any_port(o.host);
    if (port <= 0) port = -1;
  } else if (!server.bind_to_port(o.host, port)) {
    port = -1;
  }
  if (port < 0) {
    std::fprintf(stderr, "scalelens serve: error: cannot listen on %s:%d: %s\n", o.host.c_str(), o.port,
                 bind_failure(o.host, o.port).c_str());
    return 1;
  }
  const auto& first = *current;
  std::printf("scalelens serve: http://%s:%d/  (%zu configurations, %zu runs; watching %zu input%s; Ctrl-C to stop)\n",
              o.host.find(':') != std::string::npos ? ("[" + o.host + "]").c_str() : o.host.c_str(), port,
              first.summary.configurations.size(), first.summary.runs.size(), o.inputs.size(),
              o.inputs.size() == 1 ? "" : "s");
  std::fflush(stdout);
  if (watch.polling() && o.watch != "poll") std::fprintf(stderr, "scalelens serve: warning: %s\n", watch.how().c_str());
  else if (!o.quiet) std::fprintf(stderr, "scalelens serve: watching the study with %s\n", watch.how().c_str());

  std::thread watcher([&] {
    while (watch.wait_for_change()) {
      auto next = build_snapshot(o, snapshot()->generation + 1);
      if (!o.quiet)
        std::printf("study changed: %zu configurations, %zu runs\n", next->summary.configurations.size(),
                    next->summary.runs.size());
      std::fflush(stdout);
      std::lock_guard guard(mutex);
      current = std::move(next);
    }
  });
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (!o.quiet) std::fprintf(stderr, "\nscalelens serve: stopping\n");
    server.stop();
  });

  server.listen_after_bind();

  watch.stop();
  watcher.join();
  // Wake the signal thread if the server stopped for another reason.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  return 0;
}

#else

int serve(const ServeOptions&) {
  std::fprintf(stderr,
               "error: this scalelens was built without cpp-httplib, so 'serve' is not available; install\n"
               "libcpp-httplib-dev (scripts/setup-debian.sh does) and rebuild, or open report.html from 'scalelens report'.\n");
  return 1;
}

#endif

}  // namespace scalelens
