#pragma once
// A problem found in the input or in the analysis. Never fatal: the file or figure it names is
// left out and the rest of the study goes on (DESIGN.md, "Errors").
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace scalelens {

enum class Severity { note, warning, error };

struct Diagnostic {
  Severity severity = Severity::warning;
  std::string code;           // stable, machine-readable: "few-repeats", "bad-csv", ...
  std::string message;        // one sentence for a person
  std::string path;           // file or folder it concerns, when there is one
  std::int64_t line = 0;      // 1-based line in `path`, 0 when not applicable
  std::string configuration;  // "label/world_size" when it concerns a configuration
};

// "label/p (path:line): message", the form every printed diagnostic takes.
std::string format_location(const Diagnostic& d);

// Diagnostics that say the same thing (severity, code, message, configuration) about several
// files, e.g. every repeat of an oversubscribed configuration, folded into one for people to read;
// machine-readable outputs keep them all. In the order of first appearance.
struct FoldedDiagnostic {
  Diagnostic first;
  std::size_t count = 1;  // how many said it
};
std::vector<FoldedDiagnostic> fold_repeats(const std::vector<Diagnostic>& all);

// As format_location, naming the first file and how many more: "ddp/4 (/runs/a and 2 more): …".
std::string format_location(const FoldedDiagnostic& d);

// Thread-safe collector, so readers running in parallel can report into one list.
class Diagnostics {
 public:
  void add(Diagnostic d);
  void warn(std::string code, std::string message, std::string path = {}, std::int64_t line = 0);
  void error(std::string code, std::string message, std::string path = {}, std::int64_t line = 0);
  void append(const std::vector<Diagnostic>& more);
  std::vector<Diagnostic> take();
  std::vector<Diagnostic> snapshot() const;
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Diagnostic> items_;
};

}  // namespace scalelens
