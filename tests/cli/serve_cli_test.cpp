// `scalelens serve` as a user runs it: the real binary on a free port over a real folder.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include "support/run_binary.hpp"

using namespace scalelens::testing;
namespace fs = std::filesystem;

namespace {

struct Http {
  int status = 0;
  std::string headers, body;
};

// A raw request and its reply; the reply's status is 0 where the connection gave none. The server
// may close before it has read everything (a body it refuses), so sending stops at the first error.
Http http_request(int port, const std::string& request) {
  Http r;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return r;
  }
  for (std::size_t at = 0; at < request.size();) {
    const ssize_t n = ::send(fd, request.data() + at, request.size() - at, MSG_NOSIGNAL);
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
  std::string all;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) all.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  auto sp = all.find(' ');
  if (sp != std::string::npos) r.status = std::atoi(all.c_str() + sp + 1);
  auto split = all.find("\r\n\r\n");
  if (split != std::string::npos) r.headers = all.substr(0, split), r.body = all.substr(split + 4);
  return r;
}

Http http_get(int port, const std::string& target) {
  return http_request(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

// The server as a child process; its first line of output says the port.
class Server {
 public:
  explicit Server(const fs::path& dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"scalelens", "serve", dir.string(), "--port", "0", "--poll", "0.5"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    EXPECT_EQ(::pipe(out), 0);
    const std::string err_path = (err_dir_ / "stderr").string();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      if (int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644); e >= 0) ::dup2(e, 2);
      ::execv(SCALELENS_BIN, argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    out_ = out[0];
    std::string line;
    pollfd p{out_, POLLIN, 0};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      if (::poll(&p, 1, 200) <= 0) continue;
      char c[256];
      auto n = ::read(out_, c, sizeof c);
      if (n <= 0) break;
      line.append(c, static_cast<std::size_t>(n));
    }
    first_line_ = line;
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/)"))) port_ = std::stoi(m[1]);
  }
  ~Server() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }
  int port() const { return port_; }
  std::string err() const { return slurp(err_dir_ / "stderr"); }  // what it has said on stderr so far
  pid_t pid() const { return pid_; }
  const std::string& first_line() const { return first_line_; }
  // SIGINT, then the exit status (-1 when it did not stop within 10 s).
  int interrupt() {
    ::kill(pid_, SIGINT);
    for (int i = 0; i < 100; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        waited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }

 private:
  ScratchDir err_dir_;
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
  bool waited_ = false;
  std::string first_line_;
};

void write_run(const ScratchDir& dir, const std::string& name, const std::string& label, int p, double epoch_s) {
  auto ns = [](double s) { return std::to_string(static_cast<long long>(s * 1e9)); };
  dir.write(name + "/scalelens.json", "{\"run_id\": \"" + name + "\", \"label\": \"" + label + "\", \"world_size\": " +
                                          std::to_string(p) + ", \"samples_per_epoch\": 1000, \"start_ns\": 0, \"end_ns\": " +
                                          ns(3 * epoch_s) + "}");
  dir.write(name + "/epochs.csv", "rank,epoch,start_ns,end_ns\n0,0,0," + ns(epoch_s) + "\n0,1," + ns(epoch_s) + "," +
                                      ns(2 * epoch_s) + "\n0,2," + ns(2 * epoch_s) + "," + ns(3 * epoch_s) + "\n");
  dir.write(name + "/nodes/n0/gpu.csv",
            "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
            "0,0,GPU-a,50,,,200,,,\n" + ns(epoch_s) + ",0,GPU-a,90,,,300,,,\n" + ns(3 * epoch_s) + ",0,GPU-a,80,,,250,,,\n");
}

}  // namespace

TEST(ServeCli, ServesPageAndApiAndSeesANewRunWithinFiveSeconds) {
  ScratchDir study;
  write_run(study, "a1", "ddp", 1, 4.0);
  write_run(study, "a2", "ddp", 2, 2.2);
  Server server(study.path());
  ASSERT_GT(server.port(), 0) << server.first_line();

  auto page = http_get(server.port(), "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.headers.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(page.body.find(R"(id="scalelens-data">{"schema":"scalelens.report-data/1","mode":"live")"), std::string::npos)
      << page.body.substr(0, 300);

  auto summary = http_get(server.port(), "/api/summary");
  EXPECT_EQ(summary.status, 200);
  EXPECT_NE(summary.headers.find("application/json"), std::string::npos);
  EXPECT_NE(summary.body.find("\"schema\":\"scalelens.summary/2\""), std::string::npos) << summary.body.substr(0, 200);

  auto series = http_get(server.port(), "/api/series?run=a2");
  EXPECT_EQ(series.status, 200);
  EXPECT_NE(series.body.find("\"util\":[50,90,80]"), std::string::npos) << series.body;
  EXPECT_EQ(http_get(server.port(), "/api/series?run=nope").status, 404);

  // Nothing but the page and the API: no files, no path traversal.
  for (const char* path : {"/../../etc/passwd", "/a1/scalelens.json", "/%2e%2e/%2e%2e/etc/passwd", "/api/../a1/epochs.csv",
                           "/scalelens.json"}) {
    auto r = http_get(server.port(), path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << path;
    EXPECT_EQ(r.body.find("world_size"), std::string::npos) << path;
  }

  auto v0 = http_get(server.port(), "/api/version").body;
  write_run(study, "b4", "added-later", 4, 1.3);
  auto start = std::chrono::steady_clock::now();
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    seen = http_get(server.port(), "/api/summary").body.find("added-later") != std::string::npos;
  }
  EXPECT_TRUE(seen) << "the new run did not show within 5 s";
  EXPECT_NE(http_get(server.port(), "/api/version").body, v0);
  EXPECT_NE(http_get(server.port(), "/api/data").body.find("added-later"), std::string::npos);

  EXPECT_EQ(server.interrupt(), 0) << "Ctrl-C is a clean shutdown";
}

namespace {

// Waits up to 5 s for a run labelled `label` to show in /api/summary (or, `shown` false, to go).
bool shows_within_5s(int port, const std::string& label, bool shown = true) {
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    if ((http_get(port, "/api/summary").body.find(label) != std::string::npos) == shown) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// CPU seconds (user + system) process `pid` has used: fields 14 and 15 of /proc/<pid>/stat.
double cpu_seconds(pid_t pid) {
  auto stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace

// 100,000 files polled every 2 s cost a third of a core. Watched with inotify, an idle server
// over 5,000 files (a twentieth: polling them cost ~2% of a core) uses under 0.5% of one, and
// still sees a new run.
TEST(ServeCli, IdleOverManyFilesUsesNoCpuAndStillSeesANewRun) {
  ScratchDir study;
  write_run(study, "a1", "ddp", 1, 4.0);
  for (int dir = 0; dir < 50; ++dir)
    for (int f = 0; f < 100; ++f) study.write("old/d" + std::to_string(dir) + "/f" + std::to_string(f) + ".txt", "x\n");
  Server server(study.path());
  ASSERT_GT(server.port(), 0) << server.first_line();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double before = cpu_seconds(server.pid());
  const double seconds = 3.0;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double used = cpu_seconds(server.pid()) - before;
  EXPECT_LT(used / seconds, 0.005) << used << " CPU s in " << seconds << " s of idling";
  write_run(study, "b2", "added-later", 2, 2.2);
  EXPECT_TRUE(shows_within_5s(server.port(), "added-later"));
  // A run written into a folder made after the start (watched as it appears).
  write_run(study, "later/deeper/c4", "deeper-still", 4, 1.2);
  EXPECT_TRUE(shows_within_5s(server.port(), "deeper-still"));
  EXPECT_EQ(server.interrupt(), 0);
}

TEST(ServeCli, PollingStillSeesANewRun) {
  ScratchDir study;
  write_run(study, "a1", "ddp", 1, 4.0);
  Server server(study.path(), {"--watch", "poll"});
  ASSERT_GT(server.port(), 0) << server.first_line();
  write_run(study, "b2", "added-later", 2, 2.2);
  EXPECT_TRUE(shows_within_5s(server.port(), "added-later"));
  EXPECT_EQ(server.interrupt(), 0);
}

// The study folder removed and made again at its path (`rm -rf runs && cp -r … runs`, rsync): the
// dashboard served the empty state for good, as nothing watched the new folder.
TEST(ServeCli, AStudyFolderRemovedAndMadeAgainIsSeen) {
  ScratchDir parent;
  ScratchDir study;
  const fs::path runs = parent / "runs";
  write_run(study, "a1", "ddp", 1, 4.0);
  fs::copy(study.path(), runs, fs::copy_options::recursive);
  Server server(runs);
  ASSERT_GT(server.port(), 0) << server.first_line();
  EXPECT_TRUE(shows_within_5s(server.port(), "ddp"));
  fs::remove_all(runs);
  EXPECT_TRUE(shows_within_5s(server.port(), "ddp", false));  // the removal seen before the folder comes back
  write_run(study, "b2", "made-again", 2, 2.2);
  fs::copy(study.path(), runs, fs::copy_options::recursive);
  EXPECT_TRUE(shows_within_5s(server.port(), "made-again"));
  // The switch to polling is said when it happens, not only at the start.
  EXPECT_NE(server.err().find("warning: polling from every 0.5 s: " + runs.string() + " was removed or moved away"),
            std::string::npos)
      << server.err();
  EXPECT_EQ(server.interrupt(), 0);
}

TEST(ServeCli, MissingFolderIsAnErrorNotAnEmptyDashboard) {
  ScratchDir parent;
  auto r = run_scalelens("serve " + quoted(parent / "no-such-study") + " --port 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no-such-study: no such file or folder"), std::string::npos) << r.err;
  // An empty address said it served http://:6006/.
  auto no_host = run_scalelens("serve " + quoted(parent.path()) + " --port 0 --host ''");
  EXPECT_EQ(no_host.exit_code, 1);
  EXPECT_NE(no_host.err.find("give an address, e.g. 127.0.0.1"), std::string::npos) << no_host.err;
}

TEST(ServeCli, BusyPortIsAUsageError) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ScratchDir study;
  write_run(study, "a1", "ddp", 1, 4.0);
  auto r = run_scalelens("serve " + quoted(study.path()) + " --port " + std::to_string(ntohs(addr.sin_port)));
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot listen on 127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + ": Address already in use"),
            std::string::npos)
      << r.err;
}


// From a hostile-input hunt on serve: httplib's default SO_REUSEPORT let a second server bind the
// same port, and one URL answered with two studies in turn; a request body was read whole.
TEST(ServeCli, ASecondServerOnTheSamePortIsRefusedAndBodiesAreNotRead) {
  ScratchDir one, two;
  write_run(one, "a1", "first", 1, 4.0);
  write_run(two, "b1", "second", 1, 4.0);
  Server server(one.path());
  ASSERT_GT(server.port(), 0) << server.first_line();
  auto r = run_scalelens("serve " + quoted(two.path()) + " --port " + std::to_string(server.port()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Address already in use"), std::string::npos) << r.err;
  for (int i = 0; i < 5; ++i) EXPECT_NE(http_get(server.port(), "/api/summary").body.find("first"), std::string::npos);
  const std::string body(1 << 20, 'x');
  EXPECT_EQ(http_request(server.port(), "POST /api/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                                        "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body)
                .status,
            413);
  EXPECT_EQ(http_get(server.port(), "/api/version").status, 200);
  EXPECT_EQ(server.interrupt(), 0);
}

// A run folder made unreadable and readable again: the second chmod changed neither a file's size
// nor its time, and the page kept the unreadable-folder warning and the runs it lost. A chmod is
// now a change the server rebuilds on (seen here by its generation: root reads either way).
TEST(ServeCli, APermissionChangeIsSeen) {
  ScratchDir study;
  write_run(study, "a1", "ddp", 1, 4.0);
  write_run(study, "a2", "ddp", 2, 2.2);
  auto generation = [](int port) {
    const std::string body = http_get(port, "/api/version").body;
    const auto at = body.find(':');
    return at == std::string::npos ? -1 : std::atoi(body.c_str() + at + 1);
  };
  for (const char* watch : {"auto", "poll"}) {
    Server server(study.path(), {"--watch", watch});
    ASSERT_GT(server.port(), 0) << server.first_line();
    const int before = generation(server.port());
    ASSERT_GE(before, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // past the first poll
    fs::permissions(study / "a2", fs::perms::owner_read | fs::perms::owner_exec);
    bool rebuilt = false;
    for (int i = 0; i < 50 && !rebuilt; ++i) {
      rebuilt = generation(server.port()) > before;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(rebuilt) << "a chmod was not seen with --watch " << watch;
    fs::permissions(study / "a2", fs::perms::owner_all);
    EXPECT_EQ(server.interrupt(), 0);
  }
}
