#pragma once
// Terminal manners (ripgrep/git style): colour and progress only on a terminal.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace scalelens::cli {

inline bool is_terminal(int fd) { return ::isatty(fd) == 1 && std::getenv("NO_COLOR") == nullptr; }

// A one-line progress bar on standard error, redrawn in place; silent when stderr is not a terminal.
class ProgressBar {
 public:
  ProgressBar(std::string what, bool enabled) : what_(std::move(what)), enabled_(enabled) {}
  ~ProgressBar() { finish(); }
  void update(std::size_t done, std::size_t total) {
    if (!enabled_ || total == 0) return;
    std::size_t percent = done * 100 / total;
    if (drawn_ && percent == last_percent_ && done != total) return;  // redraw only when it moves
    last_percent_ = percent;
    int filled = static_cast<int>(30.0 * static_cast<double>(done) / static_cast<double>(total));
    std::fprintf(stderr, "\r%s [%-30s] %zu/%zu", what_.c_str(), std::string(filled, '=').c_str(), done, total);
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fprintf(stderr, "\r\x1b[K");
    drawn_ = false;
  }

 private:
  std::string what_;
  bool enabled_;
  bool drawn_ = false;
  std::size_t last_percent_ = 0;
};

}  // namespace scalelens::cli
