#include "common/diagnostics.hpp"

#include "common/text.hpp"

#include <map>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace scalelens {

std::string format_location(const Diagnostic& d) {
  // Terminal text: file names, labels and messages quoting input are escaped (text.hpp printable).
  std::string where = printable(d.path);
  if (!where.empty() && d.line > 0) where += fmt::format(":{}", d.line);
  if (!d.configuration.empty()) where = where.empty() ? printable(d.configuration) : printable(d.configuration) + " (" + where + ")";
  return where.empty() ? printable(d.message) : where + ": " + printable(d.message);
}

std::vector<FoldedDiagnostic> fold_repeats(const std::vector<Diagnostic>& all) {
  std::vector<FoldedDiagnostic> out;
  std::map<std::tuple<Severity, std::string_view, std::string_view, std::string_view>, std::size_t> index;
  for (const auto& d : all) {
    // Line-specific diagnostics point at different places even when they read the same.
    if (d.line == 0) {
      auto [it, inserted] = index.try_emplace({d.severity, d.code, d.message, d.configuration}, out.size());
      if (!inserted) {
        ++out[it->second].count;
        continue;
      }
    }
    out.push_back({d, 1});
  }
  return out;
}

std::string format_location(const FoldedDiagnostic& d) {
  if (d.count == 1 || d.first.path.empty()) return format_location(d.first);
  Diagnostic shown = d.first;
  shown.path += fmt::format(" and {} more", d.count - 1);
  return format_location(shown);
}

void Diagnostics::add(Diagnostic d) {
  std::lock_guard lock(mutex_);
  items_.push_back(std::move(d));
}

void Diagnostics::warn(std::string code, std::string message, std::string path, std::int64_t line) {
  add(Diagnostic{Severity::warning, std::move(code), std::move(message), std::move(path), line, {}});
}

void Diagnostics::error(std::string code, std::string message, std::string path, std::int64_t line) {
  add(Diagnostic{Severity::error, std::move(code), std::move(message), std::move(path), line, {}});
}

void Diagnostics::append(const std::vector<Diagnostic>& more) {
  std::lock_guard lock(mutex_);
  items_.insert(items_.end(), more.begin(), more.end());
}

std::vector<Diagnostic> Diagnostics::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(items_, {});
}

std::vector<Diagnostic> Diagnostics::snapshot() const {
  std::lock_guard lock(mutex_);
  return items_;
}

std::size_t Diagnostics::size() const {
  std::lock_guard lock(mutex_);
  return items_.size();
}

}  // namespace scalelens
