#include "serve/server.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "ingest/ingest.hpp"
#include "report/report_html.hpp"
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
      if (e.is_regular_file(e2)) {
        mix(static_cast<std::size_t>(e.file_size(e2)));
        mix(static_cast<std::size_t>(e.last_write_time(e2).time_since_epoch().count()));
      }
    };
    if (std::filesystem::is_directory(root, ec)) {
      std::filesystem::recursive_directory_iterator it(root, std::filesystem::directory_options::skip_permission_denied, ec), end;
      for (; !ec && it != end; it.increment(ec)) add(*it);
    } else if (std::filesystem::exists(root, ec)) {
      add(std::filesystem::directory_entry(root, ec));
    }
  }
  return h;
}

#if SCALELENS_HAVE_HTTPLIB

namespace {

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
  // Signals go to one thread that stops the server; every other thread (httplib's pool too) has
  // them blocked, so Ctrl-C is a clean shutdown rather than a kill in the middle of a response.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::mutex mutex;
  std::shared_ptr<const Snapshot> current = build_snapshot(o, 1);
  std::size_t fingerprint = study_fingerprint(o.inputs);
  auto snapshot = [&] {
    std::lock_guard lock(mutex);
    return current;
  };

  httplib::Server server;
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
    std::fprintf(stderr, "error: cannot listen on %s:%d (in use, or not an address of this machine)\n", o.host.c_str(),
                 o.port);
    return 1;
  }
  const auto& first = *current;
  std::printf("scalelens serve: http://%s:%d/  (%zu configurations, %zu runs; watching %zu input%s; Ctrl-C to stop)\n",
              o.host.find(':') != std::string::npos ? ("[" + o.host + "]").c_str() : o.host.c_str(), port,
              first.summary.configurations.size(), first.summary.runs.size(), o.inputs.size(),
              o.inputs.size() == 1 ? "" : "s");
  std::fflush(stdout);

  std::atomic<bool> stopping{false};
  std::mutex stop_mutex;
  std::condition_variable stop_cv;
  std::thread watcher([&] {
    std::unique_lock lock(stop_mutex);
    const auto period = std::chrono::milliseconds(static_cast<long>(std::max(0.1, o.poll_s) * 1000));
    while (!stop_cv.wait_for(lock, period, [&] { return stopping.load(); })) {
      lock.unlock();
      auto now = study_fingerprint(o.inputs);
      if (now != fingerprint) {
        fingerprint = now;
        auto next = build_snapshot(o, snapshot()->generation + 1);
        if (!o.quiet)
          std::printf("study changed: %zu configurations, %zu runs\n", next->summary.configurations.size(),
                      next->summary.runs.size());
        std::fflush(stdout);
        std::lock_guard guard(mutex);
        current = std::move(next);
      }
      lock.lock();
    }
  });
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (!o.quiet) std::fprintf(stderr, "\nscalelens serve: stopping\n");
    server.stop();
  });

  server.listen_after_bind();

  {
    std::lock_guard lock(stop_mutex);
    stopping = true;
  }
  stop_cv.notify_all();
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
